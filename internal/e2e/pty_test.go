package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestTerminal(t *testing.T) {
	term, err := OpenTerminal(24, 80)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer term.Close()
	// The shell sees a terminal of 24x80 as its controlling terminal
	// (/dev/tty opens), and its input is typed.
	cmd := exec.Command("sh", "-c", `stty size; echo ok >/dev/tty; read line; echo "got:$line"; exit 3`)
	term.Attach(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.CloseSlave()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if out, err := term.WaitOutput(10*time.Second, func(s string) bool { return strings.Contains(s, "ok\r\n") }); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if err := term.Type("typed\n"); err != nil {
		t.Fatal(err)
	}
	out, err := term.WaitClosed(10 * time.Second)
	if err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	// the line discipline turns "\n" into "\r\n" and echoes what is typed
	if want := "24 80\r\nok\r\ntyped\r\ngot:typed\r\n"; out != want {
		t.Errorf("terminal output %q, want %q", out, want)
	}
	if err := <-done; err == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("exit %v", err)
	}
	if _, err := term.WaitOutput(time.Second, func(s string) bool { return strings.Contains(s, "never") }); err == nil {
		t.Error("WaitOutput found output that never came")
	}
}
