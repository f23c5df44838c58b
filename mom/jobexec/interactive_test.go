package jobexec

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeQsub plays qsub -I: it accepts MOM's connection, checks the job id
// block, sends TERM, control characters and window size (as in capture 81),
// types a command line and returns everything the terminal printed.
func fakeQsub(t *testing.T, ln net.Listener, jobID, typed string) <-chan string {
	out := make(chan string, 1)
	go func() {
		defer close(out)
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		id := make([]byte, interJobIDSize)
		if _, err := io.ReadFull(c, id); err != nil || cString(id) != jobID {
			t.Errorf("job id block %q, %v", cString(id), err)
			return
		}
		term := make([]byte, interTermSize)
		copy(term, "TERM=xterm-test\x00garbage")
		win := make([]byte, interWinSize)
		copy(win, "WINSIZE 33,101,0,0")
		c.Write(term)
		c.Write([]byte{0x03, 0x1c, 0x7f, 0x15, 0x04, 0x1a})
		c.Write(win)
		time.Sleep(300 * time.Millisecond)
		c.Write([]byte(typed))
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var buf bytes.Buffer
		io.Copy(&buf, c)
		out <- buf.String()
	}()
	return out
}

func TestInteractiveJob(t *testing.T) {
	te := newTestEnv(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	out := fakeQsub(t, ln, "70.srv", "echo hello-$PBS_ENVIRONMENT-$TERM; stty size; exit 7\n")
	j := te.job("70.srv", "")
	j.InteractivePort = port
	setVar(j, "PBS_O_HOST", "127.0.0.1")
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := te.eng.Status("70.srv"); !strings.HasPrefix(st.Terminal, "/dev/pts/") {
		t.Errorf("terminal %q", st.Terminal)
	}
	ex := te.waitExit(15 * time.Second)
	if ex.Status != 7 || ex.SessionID != sid {
		t.Errorf("exit %+v", ex)
	}
	text := <-out
	for _, want := range []string{"hello-PBS_INTERACTIVE-xterm-test\r\n", "33 101\r\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, text)
		}
	}

	// qsub not listening: the start fails.
	j = te.job("71.srv", "")
	j.InteractivePort = port
	setVar(j, "PBS_O_HOST", "127.0.0.1")
	ln.Close()
	if _, err := te.eng.Start(context.Background(), j); err == nil {
		t.Error("start without qsub succeeded")
	}
	te.waitExit(5 * time.Second)
}

func setVar(j *Job, name, value string) {
	for i := range j.Variables {
		if j.Variables[i].Name == name {
			j.Variables[i].Value = value
			return
		}
	}
	j.Variables = append(j.Variables, Var{name, value})
}
