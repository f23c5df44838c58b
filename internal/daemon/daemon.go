// Package daemon puts a GoPBS daemon (pbs_server, pbs_mom, pbs_sched) in
// the background the way a Go program can: it cannot fork, so the
// foreground process starts its own executable again in a new session,
// with an environment variable marking the copy, and exits; the copy sees
// the marker and runs the service.
//
// The parent may wait for the copy to report its start-up (Detach with
// WaitReady, the copy calling Child.Ready), so that errors such as a held
// lock or a port in use reach the user's terminal and the exit status.
//
// Use:
//
//	child := daemon.Child(markerEnv)
//	if !foreground && child == nil {
//		return daemon.Detach(daemon.Options{Env: markerEnv, WaitReady: true})
//	}
//	... start up ...
//	child.Ready(err) // nil-safe: does nothing in the foreground
package daemon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ErrExited is the error of Detach when the background copy ended (or
// closed its report channel) without reporting its start-up.
var ErrExited = errors.New("exited during start-up")

// readyWord is what a copy that started reports to the waiting parent.
const readyWord = "ready\n"

// reportPrefix starts the marker's value when the parent waits for the
// report; the descriptor number follows.
const reportPrefix = "report:"

// reportFD is the descriptor of the report pipe in the copy (the first of
// exec.Cmd.ExtraFiles).
const reportFD = 3

// Options say how Detach starts the background copy.
type Options struct {
	// Env is the name of the marker variable, e.g. GOPBS_MOM_DAEMONIZED
	// (required).
	Env string
	// Args is the argument vector of the copy, Args[0] being the name it
	// shows; nil means os.Args. The executable is always this one
	// (os.Executable).
	Args []string
	// ExtraArgs are appended to Args (pbs_server adds -f).
	ExtraArgs []string
	// Dir is the working directory of the copy; "" keeps the current one.
	Dir string
	// Output receives the copy's standard output and error (opened for
	// appending, created 0644); "" means /dev/null. Standard input is
	// always /dev/null.
	Output string
	// WaitReady makes Detach wait until the copy calls Child.Ready (or
	// ends) and return the error the copy reported.
	WaitReady bool
}

// Detach starts the background copy of this program in a new session and
// returns once it runs — with WaitReady, once it reported its start-up:
// nil for success, else an error carrying the copy's message (or
// ErrExited). The caller then exits.
func Detach(opt Options) error {
	if opt.Env == "" {
		return errors.New("daemon: Options.Env is required")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	args := opt.Args
	if args == nil {
		args = os.Args
	}
	if len(args) == 0 {
		args = []string{exe}
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	defer null.Close()
	out := null
	if opt.Output != "" {
		if out, err = os.OpenFile(opt.Output, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		defer out.Close()
	}
	cmd := exec.Command(exe, append(append([]string(nil), args[1:]...), opt.ExtraArgs...)...)
	cmd.Args[0] = args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, out, out
	cmd.Dir = opt.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	marker := "1"
	var r, w *os.File
	if opt.WaitReady {
		if r, w, err = os.Pipe(); err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		defer r.Close()
		cmd.ExtraFiles = []*os.File{w}
		marker = reportPrefix + strconv.Itoa(reportFD)
	}
	cmd.Env = append(withoutVar(os.Environ(), opt.Env), opt.Env+"="+marker)
	err = cmd.Start()
	if w != nil {
		w.Close() // the copy holds the only write end now
	}
	if err != nil {
		return fmt.Errorf("daemon: start %s: %w", exe, err)
	}
	if !opt.WaitReady {
		return cmd.Process.Release()
	}
	msg, _ := io.ReadAll(r)
	switch s := string(msg); {
	case s == readyWord:
		return cmd.Process.Release()
	case strings.TrimSpace(s) == "":
		_ = cmd.Wait()
		return ErrExited
	default:
		// The copy failed and exits; reap it.
		_ = cmd.Wait()
		return errors.New(strings.TrimSuffix(s, "\n"))
	}
}

// withoutVar drops name's entries from an environment list.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// Proc is the background copy's side.
type Proc struct {
	once   sync.Once
	report *os.File // nil when the parent does not wait
}

// Child returns the background copy's side when this process is one (the
// marker variable env is set), else nil. Call it once, early: it takes
// over the report channel (which later children and re-executions do not
// inherit) and leaves the marker set to a plain "1", so that a copy
// executing itself again stays in the background.
func Child(env string) *Proc {
	v, ok := os.LookupEnv(env)
	if !ok || v == "" {
		return nil
	}
	p := &Proc{}
	if s, ok := strings.CutPrefix(v, reportPrefix); ok {
		if fd, err := strconv.Atoi(s); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
			p.report = os.NewFile(uintptr(fd), "daemon-report")
		}
	}
	os.Setenv(env, "1")
	return p
}

// Ready reports the start-up outcome to a waiting parent: nil when the
// service runs, else the error that ends it (the parent prints it). Only
// the first call counts; on a nil Proc (foreground) it does nothing.
func (p *Proc) Ready(err error) {
	if p == nil {
		return
	}
	p.once.Do(func() {
		if p.report == nil {
			return
		}
		msg := readyWord
		if err != nil {
			msg = err.Error() + "\n"
			if msg == readyWord {
				msg = "start-up failed: " + msg
			}
		}
		_, _ = io.WriteString(p.report, msg)
		p.report.Close()
	})
}
