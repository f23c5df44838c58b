package jobexec

import (
	"context"
	"fmt"
	"gopbs/internal/logline"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// signalNames maps TORQUE signal names (without "SIG") to numbers.
var signalNames = map[string]syscall.Signal{
	"NULL": 0, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"ILL": syscall.SIGILL, "TRAP": syscall.SIGTRAP, "ABRT": syscall.SIGABRT, "IOT": syscall.SIGIOT,
	"BUS": syscall.SIGBUS, "FPE": syscall.SIGFPE, "KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1,
	"SEGV": syscall.SIGSEGV, "USR2": syscall.SIGUSR2, "PIPE": syscall.SIGPIPE, "ALRM": syscall.SIGALRM,
	"TERM": syscall.SIGTERM, "STKFLT": syscall.SIGSTKFLT, "CHLD": syscall.SIGCHLD, "CLD": syscall.SIGCHLD,
	"CONT": syscall.SIGCONT, "STOP": syscall.SIGSTOP, "TSTP": syscall.SIGTSTP, "TTIN": syscall.SIGTTIN,
	"TTOU": syscall.SIGTTOU, "URG": syscall.SIGURG, "XCPU": syscall.SIGXCPU, "XFSZ": syscall.SIGXFSZ,
	"VTALRM": syscall.SIGVTALRM, "PROF": syscall.SIGPROF, "WINCH": syscall.SIGWINCH, "IO": syscall.SIGIO,
	"POLL": syscall.SIGIO, "PWR": syscall.SIGPWR, "SYS": syscall.SIGSYS,
}

// ParseSignal parses a SignalJob signal: a number, or a name with or without
// the "SIG" prefix (case-insensitive), "NULL" = 0.
func ParseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > 64 {
			return 0, ErrUnknownSignal
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	name = strings.TrimPrefix(name, "SIG")
	if sig, ok := signalNames[name]; ok {
		return sig, nil
	}
	return 0, ErrUnknownSignal
}

// Signal delivers a SignalJob request (spec 10 §9.1): "suspend", "resume",
// or a signal name/number sent to every process of the job's session.
// rerun marks the job as being rerun (its exit status becomes 0).
// SIGKILL is delivered gracefully (SIGTERM, wait up to KillGrace, SIGKILL).
func (e *Engine) Signal(ctx context.Context, jobID, signal string, rerun bool) error {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return ErrUnknownJob
	}
	// TORQUE's MOM starts a job before it reads its next request, so a
	// signal never finds the job still starting: wait for the start here.
	e.waitStarted(ctx, r)
	switch strings.ToLower(signal) {
	case "suspend":
		if !e.inState(r, StateRunning) {
			return ErrBadState
		}
		e.killSession(r, syscall.SIGTSTP)
		e.killSession(r, syscall.SIGSTOP)
		e.mu.Lock()
		r.state, r.suspendedAt = StateSuspended, e.opt.Now()
		e.mu.Unlock()
		return nil
	case "resume":
		if !e.inState(r, StateSuspended) {
			return ErrBadState
		}
		e.killSession(r, syscall.SIGCONT)
		e.resumed(r)
		return nil
	}
	sig, err := ParseSignal(signal)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if rerun {
		r.rerun = true
	}
	state := r.state
	e.mu.Unlock()
	if state == StateExited || state == StateStarting {
		return nil // nothing to signal yet (the start goes on)
	}
	if sig == syscall.SIGTERM {
		e.runPrecancel(ctx, r)
		if state == StateSuspended {
			e.killSession(r, syscall.SIGCONT)
			e.resumed(r)
			select {
			case <-time.After(e.opt.ResumeDelay):
			case <-ctx.Done():
			}
		}
	}
	found := e.killSession(r, sig)
	if found == 0 && (sig == 0 || sig == syscall.SIGKILL) && r.adopted {
		e.finish(r, 0, 0, "", false)
	}
	return nil
}

// startWait bounds how long a signal waits for its job's start.
const startWait = 5 * time.Second

// waitStarted returns once job r is no longer starting (its shell runs,
// or the start failed), after startWait, or when ctx ends.
func (e *Engine) waitStarted(ctx context.Context, r *runningJob) {
	deadline := time.Now().Add(startWait)
	for e.inState(r, StateStarting) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-r.done:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (e *Engine) resumed(r *runningJob) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.state == StateSuspended {
		r.suspendedFor += wholeSeconds(r.suspendedAt, e.opt.Now())
		r.suspendedAt = time.Time{}
		r.state = StateRunning
	}
}

// killSession sends sig to every process of the job's session (kill_task,
// spec 11 §9.1) and returns the number of live processes found.
func (e *Engine) killSession(r *runningJob, sig syscall.Signal) int {
	type target struct{ sid, task int }
	e.mu.Lock()
	var targets []target
	if r.sid > 0 {
		targets = append(targets, target{r.sid, 1})
	}
	for _, t := range r.tasks {
		select {
		case <-t.done:
		default:
			targets = append(targets, target{t.sid, t.id})
		}
	}
	e.mu.Unlock()
	total := 0
	for _, t := range targets {
		total += e.killOne(r, t.sid, t.task, sig)
	}
	return total
}

// Walks of kill_task (spec 11 §9.1). TORQUE's MOM walks a session more
// than once. Its logs show, for SIGTERM and SIGKILL, a walk repeated while
// it finds live processes and then six more times over what is left, the
// zombies ("not killing process (pid=N/state=Z)" six times over: captures
// 96 and 99-101 after 2 resp. 1 walks with live processes, 62 after 10;
// the SIGKILL walk over a finished job's zombies, six times in 58, 62, 96
// and 101). Other signals went six times to the same live processes
// (58: SIGUSR1, 99/100: SIGTSTP, SIGSTOP, SIGCONT); GoPBS sends those
// once, as a job would see a signal repeated six times.
const (
	// killIdleWalks is how many walks finding no live process end a
	// SIGTERM or SIGKILL delivery.
	killIdleWalks = 6
	// killMaxWalks bounds a delivery to processes that outlive it.
	killMaxWalks = 20
)

// killOne sends sig to every process of one task's session and returns
// the number of live processes found (summed over the walks).
func (e *Engine) killOne(r *runningJob, sid, taskID int, sig syscall.Signal) int {
	if sid <= 0 {
		return 0
	}
	id := r.job.ID
	self := os.Getpid()
	total := 0
	terminating := sig == syscall.SIGTERM || sig == syscall.SIGKILL
	graced := map[int]bool{} // processes given the graceful SIGKILL already
	for walk, idle := 0, 0; walk < killMaxWalks; walk++ {
		ps, err := e.proc.Session(sid)
		if err != nil {
			return total
		}
		n, seen := 0, 0
		for _, p := range ps {
			if p.PID == self {
				continue
			}
			seen++
			if p.State == 'Z' {
				e.log.Job(logline.EventJob, id, fmt.Sprintf("kill_task: not killing process (pid=%d/state=Z) with sig %d", p.PID, sig))
				continue
			}
			n++
			if sig != syscall.SIGKILL || graced[p.PID] {
				// A process that outlived its graceful SIGKILL (stuck
				// in the kernel) is not waited for again.
				e.log.Job(logline.EventJob, id, fmt.Sprintf("kill_task: killing pid %d task %d with sig %d", p.PID, taskID, sig))
				_ = syscall.Kill(p.PID, sig)
				continue
			}
			graced[p.PID] = true
			e.log.Job(logline.EventJob, id, fmt.Sprintf("kill_task: killing pid %d task %d gracefully with sig %d", p.PID, taskID, syscall.SIGTERM))
			_ = syscall.Kill(p.PID, syscall.SIGTERM)
			if state := e.awaitGone(id, p.PID); state != 0 && state != 'Z' {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
		total += n
		if !terminating || seen == 0 {
			break
		}
		if n == 0 {
			if idle++; idle == killIdleWalks {
				break
			}
		}
	}
	return total
}

// awaitGone looks at a process every KillCheck for up to KillGrace after
// its graceful SIGTERM, logging its state each time it is still there, as
// TORQUE does ("process (pid=16980/state=R) after sig 9", then
// "(pid=16980/state=Z)", captures 58, 105, 106). It returns 0 once the
// process is gone, 'Z' once it is a zombie, else its state at the end.
func (e *Engine) awaitGone(jobID string, pid int) byte {
	deadline := time.Now().Add(e.opt.KillGrace)
	for {
		p, err := e.proc.Proc(pid)
		if err != nil {
			return 0
		}
		e.log.Job(logline.EventJob, jobID, fmt.Sprintf("kill_task: process (pid=%d/state=%c) after sig %d", pid, p.State, syscall.SIGKILL))
		if p.State == 'Z' || time.Now().After(deadline) {
			return p.State
		}
		time.Sleep(e.opt.KillCheck)
	}
}

// inState reports whether the job is in state s.
func (e *Engine) inState(r *runningJob, s State) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return r.state == s
}
