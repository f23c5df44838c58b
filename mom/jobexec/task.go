package jobexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/procfs"
)

// Tasks of multi-node jobs (spec 10 §11, spec 11 §3): besides the top task
// (the job's shell, task 1 on the mother superior), a job may run tasks
// started through TM (pbsdsh, MPI launchers) on any of its nodes. A task
// runs as the job's user in a session of its own, with the job's
// environment and the TM variables of its node and virtual node.

// ErrUnknownTask is returned for a task id the job does not have.
var ErrUnknownTask = errors.New("unknown task")

// TaskSpec describes a task to start.
type TaskSpec struct {
	TaskID     int      // job-wide task id, chosen by the mother superior
	ParentTask int      // task that asked for it
	ParentNode int      // node of the task that asked for it
	NodeID     int      // PBS_NODENUM: this host's node number in the job
	VNode      int      // PBS_VNODENUM: the virtual node it runs on
	Argv       []string // program and arguments; Argv[0] is looked up in PATH
	// Env holds NAME=value entries added to (and overriding) the job's
	// environment.
	Env []string
	// Stdout and Stderr receive the task's output; nil appends to the
	// job's own output files on this host (mother superior).
	Stdout, Stderr *os.File
}

// task is one running or exited task.
type task struct {
	id         int
	parentNode int
	parentTask int
	sid        int
	cmd        *exec.Cmd // nil for a task adopted after a MOM restart
	done       chan struct{}
	status     int // valid once done is closed
}

// record returns the task file record of t in state status.
func (t *task) record(jobID string, status int32) TaskRecord {
	return TaskRecord{JobID: jobID, ParentNode: int32(t.parentNode), ParentTask: uint32(t.parentTask),
		TaskID: uint32(t.id), Status: status, SessionID: t.sid, ExitStatus: t.status}
}

// saveTask writes the task's record into the job's task file (spec 13
// §7), so that a restarted MOM finds the task again.
func (e *Engine) saveTask(r *runningJob, t *task, status int32) {
	// Under e.mu, so that a task ending after Purge leaves no file; a
	// closed engine (MOM exiting) leaves the files to the next one.
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.stop:
		return
	default:
	}
	if e.jobs[r.job.ID] != r {
		return
	}
	if err := WriteTaskRecord(e.TaskFilePath(r.job.Prefix), t.record(r.job.ID, status)); err != nil {
		e.log.Job(logline.EventJob, r.job.ID, fmt.Sprintf("cannot save task %d: %v", t.id, err))
	}
}

// AdoptTasks re-attaches the tasks a job's task file lists after a MOM
// restart (mode -p), the job itself being re-attached with Adopt (mother
// superior) or Join (sister): a task recorded as running whose session
// still has processes is tracked by polling /proc and counts as ended,
// with exit status 0, when none is left; a task recorded as exited keeps
// its exit status. The top task (1) of a mother superior is the job's
// shell, adopted with the job, and is skipped. It returns the highest
// task id seen.
func (e *Engine) AdoptTasks(jobID string) (int, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return 0, ErrUnknownJob
	}
	recs, err := ReadTaskFile(e.TaskFilePath(r.job.Prefix))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	alive := map[int]bool{}
	if procs, err := e.proc.All(); err == nil {
		for _, p := range live(procs) {
			alive[p.Session] = true
		}
	}
	highest := 0
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, rec := range recs {
		id := int(rec.TaskID)
		highest = max(highest, id)
		if rec.JobID != jobID || (id == 1 && !r.sister) {
			continue
		}
		t := &task{id: id, parentNode: int(rec.ParentNode), parentTask: int(rec.ParentTask), sid: rec.SessionID,
			status: rec.ExitStatus, done: make(chan struct{})}
		if rec.Status != TaskRunning || rec.SessionID <= 0 || !alive[rec.SessionID] {
			close(t.done)
		}
		if r.tasks == nil {
			r.tasks = map[int]*task{}
		}
		r.tasks[id] = t
	}
	return highest, nil
}

// endAdoptedTasksLocked marks the adopted tasks of r whose sessions have
// no live process left as ended. The caller holds e.mu.
func (e *Engine) endAdoptedTasksLocked(r *runningJob, bySession map[int][]procfs.Proc) {
	for _, t := range r.tasks {
		if t.cmd != nil {
			continue
		}
		select {
		case <-t.done:
			continue
		default:
		}
		if len(live(bySession[t.sid])) == 0 {
			close(t.done)
			_ = WriteTaskRecord(e.TaskFilePath(r.job.Prefix), t.record(r.job.ID, TaskExited))
			e.log.Job(logline.EventDebug, r.job.ID, fmt.Sprintf("scan_for_terminated: job %s task %d terminated, sid=%d", r.job.ID, t.id, t.sid))
		}
	}
}

// Join registers a job for which this MOM is a sister node (IM_JOIN_JOB):
// the user is looked up and the job's limits computed, but no shell is
// started; tasks come with Spawn. The job ends with KillTasks and Purge and
// is never reported through OnExit.
func (e *Engine) Join(spec *Job, nodeID int) error {
	j := *spec
	if j.Prefix == "" {
		j.Prefix = j.ID
	}
	var cred *Credentials
	var err error
	for i := 0; i <= e.conf().ExtPwdRetry; i++ {
		if cred, err = e.opt.Lookup(j.User, j.Group); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("no password entry for user %s: %w", j.User, err)
	}
	r := &runningJob{job: &j, cred: cred, state: StateRunning, started: e.opt.Now(),
		sister: true, nodeID: nodeID, done: make(chan struct{})}
	if r.vnodes, err = ParseExecHost(j.ExecHost); err != nil {
		return err
	}
	if r.limits, err = e.computeLimits(&j, countHosts(r.vnodes)); err != nil {
		return err
	}
	r.out = e.planOutput(&j, cred)
	e.mu.Lock()
	if old, ok := e.jobs[j.ID]; ok && old.state != StateExited {
		e.mu.Unlock()
		return ErrJobExists
	}
	e.jobs[j.ID] = r
	e.mu.Unlock()
	if e.conf().TmpDir != "" {
		// The job's $tmpdir exists on every node (removed by Purge).
		if err := e.makeTmpdir(r); err != nil {
			e.mu.Lock()
			delete(e.jobs, j.ID)
			e.mu.Unlock()
			return err
		}
	}
	return nil
}

func countHosts(vnodes []Vnode) int {
	hosts := map[string]bool{}
	for _, v := range vnodes {
		hosts[v.Host] = true
	}
	return len(hosts)
}

// Spawn starts a task of a running job and returns once it runs (or
// failed to start).
func (e *Engine) Spawn(ctx context.Context, jobID string, ts TaskSpec) error {
	if len(ts.Argv) == 0 || ts.Argv[0] == "" {
		return errors.New("spawn: empty argument list")
	}
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	var running bool
	if ok {
		running = r.state == StateRunning || r.state == StateSuspended
		if _, dup := r.tasks[ts.TaskID]; dup || ts.TaskID == 1 && !r.sister {
			e.mu.Unlock()
			return fmt.Errorf("spawn: task %d exists", ts.TaskID)
		}
	}
	e.mu.Unlock()
	if !ok {
		return ErrUnknownJob
	}
	if !running {
		return ErrBadState
	}
	stdout, stderr := ts.Stdout, ts.Stderr
	if stdout == nil {
		f, err := e.appendOutput(r, r.stdoutPath())
		if err != nil {
			return fmt.Errorf("spawn: open stdout: %w", err)
		}
		defer f.Close()
		stdout = f
	}
	if stderr == nil {
		f, err := e.appendOutput(r, r.stderrPath())
		if err != nil {
			return fmt.Errorf("spawn: open stderr: %w", err)
		}
		defer f.Close()
		stderr = f
	}

	j := r.job
	shell := e.selectShell(j, r.cred)
	env := newEnvList()
	for _, kv := range e.jobEnvironment(r, shell) {
		n, v, _ := strings.Cut(kv, "=")
		env.Set(n, v)
	}
	env.Set("PBS_TASKNUM", strconv.Itoa(ts.TaskID))
	env.Set("PBS_NODENUM", strconv.Itoa(ts.NodeID))
	env.Set("PBS_VNODENUM", strconv.Itoa(ts.VNode))
	for _, kv := range ts.Env {
		if n, v, ok := strings.Cut(kv, "="); ok && n != "" {
			env.Set(n, v)
		}
	}
	environ := env.Environ()
	dir := r.cred.Home
	if v, ok := j.Var("PBS_O_INITDIR"); ok && v != "" {
		dir = v
	}
	chroot, _ := j.Var("PBS_O_ROOTDIR")
	spec := starterSpec{
		UID: r.cred.UID, GID: r.cred.GID, Groups: r.cred.Groups,
		Limits: r.limits.rlimits, Nice: r.limits.nice, OOMAdjust: e.conf().JobOOMScoreAdjust,
		Chroot: chroot, Dir: dir, Umask: e.outputUmask(j),
		Path: lookPath(ts.Argv[0], env.Get("PATH")), Argv: ts.Argv,
	}
	specJSON, err := json.Marshal(&spec)
	if err != nil {
		return err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer reportR.Close()
	cmd := exec.Command(e.opt.StarterPath, starterFlag, string(specJSON))
	cmd.Env = environ
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{reportW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	e.mu.Lock()
	inGroup(cmd.SysProcAttr, r.cg)
	e.mu.Unlock()
	err = cmd.Start()
	reportW.Close()
	if err != nil {
		return fmt.Errorf("spawn: start starter: %w", err)
	}
	_ = reportR.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := readStarterReport(reportR); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("spawn task %d: %w", ts.TaskID, err)
	}
	t := &task{id: ts.TaskID, parentNode: ts.ParentNode, parentTask: ts.ParentTask, sid: cmd.Process.Pid, cmd: cmd,
		done: make(chan struct{})}
	e.mu.Lock()
	if r.tasks == nil {
		r.tasks = map[int]*task{}
	}
	r.tasks[t.id] = t
	e.mu.Unlock()
	e.saveTask(r, t, TaskRunning)
	e.log.Job(logline.EventJob, jobID, fmt.Sprintf("start_process: task started, tid %d, sid %d, cmd %s", t.id, t.sid, ts.Argv[0]))
	go e.waitTask(r, t)
	return nil
}

// lookPath finds file in the directories of path (a PATH value; empty:
// execvp's default) as an executable regular file; a name with a slash, or
// one not found, is returned unchanged (the exec then reports the failure).
func lookPath(file, path string) string {
	if strings.Contains(file, "/") {
		return file
	}
	if path == "" {
		path = "/bin:/usr/bin" // what execvp(3) searches without PATH
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return file
}

// waitTask reaps a task and records its exit status (encoded as a job's:
// the exit code, or 256 + signal).
func (e *Engine) waitTask(r *runningJob, t *task) {
	_ = t.cmd.Wait()
	status := 0
	if ps := t.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				status = 256 + int(ws.Signal())
			case ws.Exited():
				status = ws.ExitStatus()
			}
		}
	}
	// Leftovers of the task's session go with it.
	e.killOne(r, t.sid, t.id, syscall.SIGKILL)
	e.mu.Lock()
	t.status = status
	e.mu.Unlock()
	e.saveTask(r, t, TaskExited)
	e.log.Job(logline.EventDebug, r.job.ID, fmt.Sprintf("scan_for_terminated: job %s task %d terminated, sid=%d", r.job.ID, t.id, t.sid))
	close(t.done)
}

// WaitTask blocks until a task of the job has exited (or ctx is done) and
// returns its exit status.
func (e *Engine) WaitTask(ctx context.Context, jobID string, taskID int) (int, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	var t *task
	if ok {
		t = r.tasks[taskID]
	}
	e.mu.Unlock()
	switch {
	case !ok:
		return 0, ErrUnknownJob
	case t == nil:
		return 0, ErrUnknownTask
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return t.status, nil
}

// Tasks returns the ids of the job's tasks on this host (the top task 1
// included on the mother superior), sorted.
func (e *Engine) Tasks(jobID string) ([]int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.jobs[jobID]
	if !ok {
		return nil, ErrUnknownJob
	}
	var ids []int
	if !r.sister {
		ids = append(ids, 1)
	}
	for id := range r.tasks {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids, nil
}

// SignalTask sends sig to every process of one task's session (task 1 is
// the job's shell).
func (e *Engine) SignalTask(jobID string, taskID int, sig syscall.Signal) error {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	sid := 0
	if ok {
		if t := r.tasks[taskID]; t != nil {
			sid = t.sid
		} else if taskID == 1 && !r.sister {
			sid = r.sid
		}
	}
	e.mu.Unlock()
	switch {
	case !ok:
		return ErrUnknownJob
	case sid == 0:
		return ErrUnknownTask
	}
	e.killOne(r, sid, taskID, sig)
	return nil
}

// KillTasks kills every task of a sister job (IM_KILL_JOB, IM_ABORT_JOB)
// and returns the job's usage, sampled before the kill.
func (e *Engine) KillTasks(jobID string) (Usage, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return Usage{}, ErrUnknownJob
	}
	if procs, err := e.proc.All(); err == nil {
		bySession := groupBySession(procs)
		e.mu.Lock()
		e.updateUsageLocked(r, e.jobProcsLocked(r, bySession), e.opt.Now())
		e.mu.Unlock()
	}
	e.killSession(r, syscall.SIGKILL)
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.sister {
		r.state = StateExited
	}
	return r.usage, nil
}

// AppendOutput opens the job's stdout (or stderr) file on this host for
// appending: the demultiplexer of a multi-node job writes what remote
// tasks send there.
func (e *Engine) AppendOutput(jobID string, stderr bool) (*os.File, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return nil, ErrUnknownJob
	}
	if stderr {
		return e.appendOutput(r, r.stderrPath())
	}
	return e.appendOutput(r, r.stdoutPath())
}

// stdoutPath is the file holding the job's stdout.
func (r *runningJob) stdoutPath() string {
	if r.out.joined == 'e' {
		return r.out.errPath
	}
	return r.out.outPath
}

// sessionsLocked returns the sessions of the job's live processes: the top
// task's and every task's that has not been reaped.
func (r *runningJob) sessionsLocked() []int {
	var out []int
	if r.sid > 0 {
		out = append(out, r.sid)
	}
	for _, t := range r.tasks {
		select {
		case <-t.done:
		default:
			out = append(out, t.sid)
		}
	}
	return out
}

// jobProcsLocked returns the processes of all of the job's sessions.
func (e *Engine) jobProcsLocked(r *runningJob, bySession map[int][]procfs.Proc) []procfs.Proc {
	var ps []procfs.Proc
	for _, sid := range r.sessionsLocked() {
		ps = append(ps, bySession[sid]...)
	}
	return ps
}
