package jobexec

import (
	"context"
	"errors"
	"fmt"
	"gopbs/internal/logline"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Script results besides the script's own exit code (spec 11 §8.3).
const (
	scriptPermError   = -1
	scriptTimeout     = -4
	scriptKillFailure = -5
)

// scriptKind says how a prologue/epilogue is checked and run.
type scriptKind int

const (
	kindRoot   scriptKind = iota // owned by root, runs as root
	kindUser                     // owned by root, world r-x, runs as the user
	kindPerJob                   // owned by the job user, runs as the user
)

// scriptPath returns mom_priv/<name>, preferring <name>.<jobtype>.
func (e *Engine) scriptPath(name string, j *Job) string {
	base := filepath.Join(e.home, "mom_priv", name)
	if j.JobType != "" {
		if _, err := os.Stat(base + "." + j.JobType); err == nil {
			return base + "." + j.JobType
		}
	}
	return base
}

// checkScript validates ownership and mode. It returns (false, nil) for a
// missing script (silently skipped).
func checkScript(p string, kind scriptKind, uid uint32) (bool, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok {
		return true, fmt.Errorf("%s is not a regular file", p)
	}
	mode := fi.Mode().Perm()
	owner := uint32(0)
	if kind == kindPerJob {
		owner = uid
	}
	switch {
	case st.Uid != owner:
		return true, fmt.Errorf("%s has wrong owner %d", p, st.Uid)
	case mode&0o500 != 0o500:
		return true, fmt.Errorf("%s is not readable and executable by its owner", p)
	case mode&0o022 != 0:
		return true, fmt.Errorf("%s is writable by group or others", p)
	case kind == kindUser && mode&0o005 != 0o005:
		return true, fmt.Errorf("%s is not readable and executable by others", p)
	}
	return true, nil
}

// runScript runs one prologue/epilogue with $prologalarm as timeout and
// returns its result code (exit code, or a negative internal code).
func (e *Engine) runScript(ctx context.Context, r *runningJob, p string, kind scriptKind, args []string, stdout, stderr *os.File) int {
	present, err := checkScript(p, kind, r.cred.UID)
	if !present {
		return 0
	}
	if err != nil && e.conf().ReducePrologChecks {
		if fi, serr := os.Stat(p); serr == nil && fi.Mode().IsRegular() {
			err = nil // $reduce_prolog_checks: only require a regular file
		}
	}
	name := filepath.Base(p)
	if err != nil {
		e.log.Job(logline.EventJob, r.job.ID, fmt.Sprintf("%s: permission check failed: %v", name, err))
		return scriptPermError
	}
	cmd := exec.Command(p, args...)
	cmd.Env = e.scriptEnvironment(r)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Dir = filepath.Join(e.home, "mom_priv")
	if kind != kindRoot {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: r.cred.UID, Gid: r.cred.GID, Groups: r.cred.Groups}
		if fi, err := os.Stat(r.cred.Home); err == nil && fi.IsDir() {
			cmd.Dir = r.cred.Home
		} else {
			cmd.Dir = "/"
			if stderr != nil {
				fmt.Fprintf(stderr, "PBS: chdir to %s failed\n", r.cred.Home)
			}
		}
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		e.log.Job(logline.EventJob, r.job.ID, fmt.Sprintf("%s: cannot run: %v", name, err))
		return scriptPermError
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(e.conf().PrologAlarm)
	defer timer.Stop()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 256 + int(ws.Signal())
			}
			return ee.ExitCode()
		}
		return scriptPermError
	case <-timer.C:
	case <-ctx.Done():
	}
	e.log.Job(logline.EventJob, r.job.ID, fmt.Sprintf("%s: timed out after %v", name, e.conf().PrologAlarm))
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		<-done
		return scriptKillFailure
	}
	<-done
	return scriptTimeout
}

// runPrologues runs prologue (root), prologue.user and the per-job
// prologue; it returns the first non-zero result.
func (e *Engine) runPrologues(ctx context.Context, r *runningJob, stdout, stderr *os.File) int {
	j := r.job
	args := []string{j.ID, r.cred.Name, e.groupName(r), j.Name, j.ResourceString(), j.Queue, j.Account}
	scripts := []struct {
		path string
		kind scriptKind
	}{
		{e.scriptPath("prologue", j), kindRoot},
		{e.scriptPath("prologue.user", j), kindUser},
	}
	if p, ok := j.Resource("prologue"); ok && p != "" {
		scripts = append(scripts, struct {
			path string
			kind scriptKind
		}{p, kindPerJob})
	}
	for _, s := range scripts {
		if rc := e.runScript(ctx, r, s.path, s.kind, args, stdout, stderr); rc != 0 {
			e.log.Job(logline.EventJob, j.ID, fmt.Sprintf("prologue %s failed with %d", filepath.Base(s.path), rc))
			return rc
		}
	}
	return 0
}

// Epilogue runs the per-job epilogue, epilogue.user and epilogue (root) of
// an exited job with TORQUE's ten arguments, their output appended to the
// job's output files. It returns the first non-zero script result (epilogue
// results do not change the job's exit status).
func (e *Engine) Epilogue(ctx context.Context, jobID string) (int, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	var ex Exit
	if ok && r.exit != nil {
		ex = *r.exit
	}
	e.mu.Unlock()
	if !ok {
		return 0, ErrUnknownJob
	}
	if ex.JobID == "" {
		return 0, ErrBadState
	}
	if r.cred == nil {
		return 0, nil // failed before the user was known
	}
	j := r.job
	args := []string{j.ID, r.cred.Name, e.groupName(r), j.Name, strconv.Itoa(ex.SessionID),
		j.ResourceString(), ex.Usage.String(), j.Queue, j.Account, strconv.Itoa(ex.Status)}
	stdout, stderr := e.reopenOutputs(r)
	defer stdout.Close()
	if stderr != stdout {
		defer stderr.Close()
	}
	var scripts []struct {
		path string
		kind scriptKind
	}
	if p, ok := j.Resource("epilogue"); ok && p != "" {
		scripts = append(scripts, struct {
			path string
			kind scriptKind
		}{p, kindPerJob})
	}
	scripts = append(scripts,
		struct {
			path string
			kind scriptKind
		}{e.scriptPath("epilogue.user", j), kindUser},
		struct {
			path string
			kind scriptKind
		}{e.scriptPath("epilogue", j), kindRoot})
	first := 0
	for _, s := range scripts {
		if rc := e.runScript(ctx, r, s.path, s.kind, args, stdout, stderr); rc != 0 {
			e.log.Job(logline.EventJob, j.ID, fmt.Sprintf("epilogue %s failed with %d", filepath.Base(s.path), rc))
			if first == 0 {
				first = rc
			}
		}
	}
	return first, nil
}

// runPrecancel runs mom_priv/epilogue.precancel as the user with output to
// /dev/null (SIGTERM delete path).
func (e *Engine) runPrecancel(ctx context.Context, r *runningJob) {
	if r.cred == nil {
		return
	}
	j := r.job
	e.mu.Lock()
	sid, used := r.sid, r.usage
	e.mu.Unlock()
	args := []string{j.ID, r.cred.Name, e.groupName(r), j.Name, strconv.Itoa(sid),
		j.ResourceString(), used.String(), j.Queue, j.Account, ""}
	e.runScript(ctx, r, e.scriptPath("epilogue.precancel", j), kindUser, args, nil, nil)
}

// groupName returns egroup, or the name of the user's group id.
func (e *Engine) groupName(r *runningJob) string {
	if r.job.Group != "" {
		return r.job.Group
	}
	return lookupGroupName(r.cred.GID)
}

// SisterPrologue runs prologue.parallel (root) and prologue.user.parallel
// (user) for a job joining this MOM as a sister node (IM_JOIN_JOB), with
// output to /dev/null and the prologue arguments. It returns the first
// non-zero result.
func (e *Engine) SisterPrologue(ctx context.Context, spec *Job) (int, error) {
	r, err := e.detachedJob(spec)
	if err != nil {
		return 0, err
	}
	args := []string{spec.ID, r.cred.Name, e.groupName(r), spec.Name, spec.ResourceString(), spec.Queue, spec.Account}
	if rc := e.runScript(ctx, r, e.scriptPath("prologue.parallel", spec), kindRoot, args, nil, nil); rc != 0 {
		return rc, nil
	}
	return e.runScript(ctx, r, e.scriptPath("prologue.user.parallel", spec), kindUser, args, nil, nil), nil
}

// SisterEpilogue runs epilogue.parallel (root) and epilogue.user.parallel
// (user) on a sister node when the job ends there (IM_KILL_JOB), with the
// epilogue arguments (session id, usage and exit status as known on the
// sister).
func (e *Engine) SisterEpilogue(ctx context.Context, spec *Job, sid int, used Usage, exitStatus int) (int, error) {
	r, err := e.detachedJob(spec)
	if err != nil {
		return 0, err
	}
	args := []string{spec.ID, r.cred.Name, e.groupName(r), spec.Name, strconv.Itoa(sid),
		spec.ResourceString(), used.String(), spec.Queue, spec.Account, strconv.Itoa(exitStatus)}
	first := e.runScript(ctx, r, e.scriptPath("epilogue.user.parallel", spec), kindUser, args, nil, nil)
	if rc := e.runScript(ctx, r, e.scriptPath("epilogue.parallel", spec), kindRoot, args, nil, nil); first == 0 {
		first = rc
	}
	return first, nil
}

// detachedJob builds the per-job context of scripts for a job the engine
// does not run itself.
func (e *Engine) detachedJob(spec *Job) (*runningJob, error) {
	cred, err := e.opt.Lookup(spec.User, spec.Group)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.ID, err)
	}
	j := *spec
	return &runningJob{job: &j, cred: cred}, nil
}
