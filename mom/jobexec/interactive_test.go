package jobexec

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/internal/capture"
	"gopbs/internal/e2e"
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

// capturedHandshake returns the blocks of capture 81's connection from
// the MOM to qsub -I: the MOM's job id block (job 9.vm) and qsub's
// terminal settings (TERM=unknown with uninitialised bytes after its
// NUL, ^C ^\ DEL ^U ^D ^Z, WINSIZE 24,80,0,0).
func capturedHandshake(t *testing.T) (jobID, settings []byte) {
	t.Helper()
	dir := filepath.Join(e2e.Shared(t), "captures")
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		if sc.ID != 81 {
			continue
		}
		c, err := capture.ReadFile(filepath.Join(dir, sc.Pcap))
		if err != nil {
			t.Fatal(err)
		}
		for _, cn := range c.Conns {
			if int(cn.Server.Port()) != sc.QsubListenPort {
				continue
			}
			fromMOM, fromQsub := cn.Stream(true), cn.Stream(false)
			const n = interTermSize + interControlSize + interWinSize
			if len(fromMOM) < interJobIDSize || len(fromQsub) < n {
				t.Fatalf("capture: %d bytes from the MOM, %d from qsub", len(fromMOM), len(fromQsub))
			}
			return fromMOM[:interJobIDSize], fromQsub[:n]
		}
	}
	t.Skip("capture 81 (qsub -I) not found")
	return nil, nil
}

// TestInteractiveCaptureHandshake plays qsub's side of capture 81 with
// its very bytes: the MOM's job id block must equal the captured one byte
// for byte, and the captured settings (garbage after TERM's NUL included)
// must give the job's shell TERM=unknown, a 24x80 terminal and qsub's
// control characters.
func TestInteractiveCaptureHandshake(t *testing.T) {
	idBlock, settings := capturedHandshake(t)
	te := newTestEnv(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out := make(chan string, 1)
	go func() {
		defer close(out)
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(15 * time.Second))
		got := make([]byte, interJobIDSize)
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, idBlock) {
			t.Errorf("job id block differs from the capture (%v):\n got %q\nwant %q", err, bytes.TrimRight(got, "\x00"), bytes.TrimRight(idBlock, "\x00"))
		}
		if _, err := c.Write(settings); err != nil {
			t.Error(err)
			return
		}
		// a non-login shell with no prompt: only the commands' output
		if _, err := c.Write([]byte("echo TERM=$TERM; stty size; stty -a | tr ';' '\\n' | grep -E '^ *(intr|quit|erase|kill|eof|susp) ' | tr -d ' '; exit\n")); err != nil {
			t.Error(err)
			return
		}
		var buf bytes.Buffer
		_, _ = io.Copy(&buf, c)
		out <- buf.String()
	}()
	j := te.job("9.vm", "")
	j.InteractivePort = ln.Addr().(*net.TCPAddr).Port
	j.InteractiveCmd = "PS1= exec bash --norc --noprofile -i"
	setVar(j, "PBS_O_HOST", "127.0.0.1")
	if _, err := te.eng.Start(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	te.waitExit(15 * time.Second)
	text := <-out
	for _, want := range []string{"TERM=unknown\r\n", "24 80\r\n", "intr=^C\r\nquit=^\\\r\nerase=^?\r\nkill=^U\r\neof=^D\r\n", "susp=^Z\r\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, text)
		}
	}
}

func TestParseWinsize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want unix.Winsize
	}{
		{"WINSIZE 24,80,0,0", unix.Winsize{Row: 24, Col: 80}},
		{"WINSIZE 50,132,640,480", unix.Winsize{Row: 50, Col: 132, Xpixel: 640, Ypixel: 480}},
		{"WINSIZE 33,101", unix.Winsize{Row: 33, Col: 101}},
		// unusable sizes give the default 24x80
		{"WINSIZE 0,80,0,0", unix.Winsize{Row: 24, Col: 80}},
		{"WINSIZE 70000,80,0,0", unix.Winsize{Row: 24, Col: 80}},
		{"WINSIZE x,y", unix.Winsize{Row: 24, Col: 80}},
		{"", unix.Winsize{Row: 24, Col: 80}},
	} {
		if got := parseWinsize(tc.in); got != tc.want {
			t.Errorf("parseWinsize(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseWinsize: qsub's WINSIZE block comes from the network; any
// bytes give a usable terminal size.
func FuzzParseWinsize(f *testing.F) {
	f.Add([]byte("WINSIZE 24,80,0,0\x00\x00\xd0K"))
	f.Add([]byte("WINSIZE ,,,,,"))
	f.Fuzz(func(t *testing.T, block []byte) {
		ws := parseWinsize(cString(block))
		if ws.Row == 0 || ws.Col == 0 {
			t.Errorf("parseWinsize(%q) = %+v", block, ws)
		}
	})
}
