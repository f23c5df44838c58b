package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Terminal is a pseudo-terminal a test runs a program on, as a person at
// a terminal would: the program's standard input, output and error are
// the terminal's slave side, which is also its controlling terminal, and
// the test reads what it prints from the master side (with the
// terminal's own output processing, "\n" becoming "\r\n") and types on
// it.
type Terminal struct {
	master *os.File
	slave  *os.File // nil once closed

	mu     sync.Mutex
	out    bytes.Buffer
	grown  chan struct{} // closed and renewed whenever out grows
	closed chan struct{} // closed when the master side reads no more
}

// OpenTerminal allocates a pseudo-terminal of rows x cols characters
// (/dev/ptmx, unlocked with TIOCSPTLCK, its slave found with TIOCGPTN,
// its size set with TIOCSWINSZ) and starts collecting what is written to
// it. The caller closes it.
func OpenTerminal(rows, cols uint16) (*Terminal, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open pseudo-terminal master: %w", err)
	}
	fd := int(master.Fd())
	fail := func(what string, err error) (*Terminal, error) {
		master.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlock pseudo-terminal", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		return fail("pseudo-terminal number", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	slave, err := os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail("open "+name, err)
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		slave.Close()
		return fail("set the size of "+name, err)
	}
	t := &Terminal{master: master, slave: slave, grown: make(chan struct{}), closed: make(chan struct{})}
	go t.collect()
	return t, nil
}

// collect reads the master side until it fails: EIO once no process has
// the slave side open any more.
func (t *Terminal) collect() {
	buf := make([]byte, 4096)
	for {
		n, err := t.master.Read(buf)
		t.mu.Lock()
		if n > 0 {
			t.out.Write(buf[:n])
			close(t.grown)
			t.grown = make(chan struct{})
		}
		if err != nil {
			t.mu.Unlock()
			close(t.closed)
			return
		}
		t.mu.Unlock()
	}
}

// Attach makes the terminal cmd's standard input, output and error and
// its controlling terminal: cmd starts a new session (so it cannot also
// ask for a process group of its own; kill it through its session's
// process group, -cmd.Process.Pid). Call CloseSlave once cmd started.
func (t *Terminal) Attach(cmd *exec.Cmd) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = t.slave, t.slave, t.slave
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = false
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0 // the child's standard input
}

// Slave returns the test's descriptor of the slave side (nil after
// CloseSlave), to give to a program or to look at the terminal's modes.
func (t *Terminal) Slave() *os.File { return t.slave }

// CloseSlave closes the test's own descriptor of the slave side, so that
// the master side ends when the programs attached to it have exited.
func (t *Terminal) CloseSlave() {
	if t.slave != nil {
		t.slave.Close()
		t.slave = nil
	}
}

// Type writes s to the terminal as if typed on its keyboard.
func (t *Terminal) Type(s string) error {
	if _, err := t.master.WriteString(s); err != nil {
		return fmt.Errorf("type on the terminal: %w", err)
	}
	return nil
}

// Output returns everything the terminal showed so far.
func (t *Terminal) Output() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.out.String()
}

// WaitOutput waits at most limit until the terminal's output satisfies
// cond and returns that output; when the time runs out, or when the
// master side ends first, it returns what there was and an error.
func (t *Terminal) WaitOutput(limit time.Duration, cond func(string) bool) (string, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		t.mu.Lock()
		out, grown := t.out.String(), t.grown
		t.mu.Unlock()
		if cond(out) {
			return out, nil
		}
		select {
		case <-grown:
		case <-t.closed:
			t.mu.Lock()
			out = t.out.String()
			t.mu.Unlock()
			if cond(out) {
				return out, nil
			}
			return out, errors.New("the terminal closed before the output expected")
		case <-timer.C:
			return out, fmt.Errorf("no such terminal output within %v", limit)
		}
	}
}

// WaitClosed waits at most limit for the master side to end (every
// program attached to the slave side gone) and returns the whole output;
// it reports an error when the time runs out first.
func (t *Terminal) WaitClosed(limit time.Duration) (string, error) {
	select {
	case <-t.closed:
		return t.Output(), nil
	case <-time.After(limit):
		return t.Output(), fmt.Errorf("the terminal is still open after %v", limit)
	}
}

// Close closes both sides of the terminal.
func (t *Terminal) Close() error {
	t.CloseSlave()
	return t.master.Close()
}
