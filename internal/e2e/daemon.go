package e2e

import (
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// StopGrace is how long Daemon.Stop waits by default after SIGTERM
// before it kills the daemon's process group.
const StopGrace = 5 * time.Second

// Daemon is a long-running program a test started: a GoPBS daemon, or a
// namespace wrapper that execs one.
type Daemon struct {
	// Name names the daemon in messages.
	Name string
	// Cmd is the running command.
	Cmd *exec.Cmd
	// Grace is how long Stop waits after SIGTERM (zero: StopGrace).
	Grace time.Duration

	out  syncBuffer
	done chan struct{}
	err  error // the exit error, once done is closed
}

// Start starts cmd as a daemon called name, in a process group of its
// own. Its standard output and error, unless the caller directed them
// elsewhere, are kept for Output; once the daemon has exited, children
// still holding them open are not waited for longer than cmd.WaitDelay
// (5 s if unset). When the test ends the daemon is stopped (Stop) and, if
// the test failed, the end of its output logged.
func Start(t testing.TB, name string, cmd *exec.Cmd) *Daemon {
	t.Helper()
	d := &Daemon{Name: name, Cmd: cmd, done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = &d.out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &d.out
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		d.Stop()
		if out := d.Output(); t.Failed() && out != "" {
			t.Logf("%s output:\n%s", name, tail(out, 20000))
		}
	})
	return d
}

// Output returns what the daemon wrote so far to the standard output and
// error Start kept.
func (d *Daemon) Output() string { return d.out.String() }

// Done is closed when the daemon has exited.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Alive reports whether the daemon still runs.
func (d *Daemon) Alive() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// Err returns the daemon's exit error (nil for exit status 0), or nil
// while it runs.
func (d *Daemon) Err() error {
	if d.Alive() {
		return nil
	}
	return d.err
}

// Signal sends sig to the daemon's process (not its group); nothing
// happens once it has exited.
func (d *Daemon) Signal(sig syscall.Signal) {
	if d.Alive() {
		_ = d.Cmd.Process.Signal(sig)
	}
}

// Stop sends SIGTERM, waits Grace for the exit, then kills the daemon's
// process group, and returns once the daemon has exited.
func (d *Daemon) Stop() {
	if !d.Alive() {
		return
	}
	grace := d.Grace
	if grace == 0 {
		grace = StopGrace
	}
	d.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(grace):
		d.Kill()
	}
}

// Kill sends SIGKILL to the daemon's process group and waits for the
// daemon to exit.
func (d *Daemon) Kill() {
	if !d.Alive() {
		return
	}
	_ = syscall.Kill(-d.Cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
}

// Wait waits at most limit for the daemon to exit and returns its exit
// error; the test fails when it does not exit in time.
func (d *Daemon) Wait(t testing.TB, limit time.Duration) error {
	t.Helper()
	select {
	case <-d.done:
		return d.err
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %v", d.Name, limit)
		return nil
	}
}

// WaitListening waits until a TCP connection to addr succeeds. The test
// fails, showing the daemon's output, when the daemon exits first or
// limit passes.
func (d *Daemon) WaitListening(t testing.TB, addr string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			nc.Close()
			return
		}
		if !d.Alive() {
			t.Fatalf("%s exited (%v) before listening on %s:\n%s", d.Name, d.err, addr, tail(d.Output(), 20000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s after %v:\n%s", d.Name, addr, limit, tail(d.Output(), 20000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
