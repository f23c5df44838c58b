package jobexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/checkpoint"
)

// Errors of Checkpoint.
var (
	// ErrNoCheckpoint: pbs_mom has no $checkpoint_script.
	ErrNoCheckpoint = errors.New("checkpointing is not configured")
	// ErrNotCheckpointable: the job's Checkpoint is n.
	ErrNotCheckpointable = errors.New("job is not checkpointable")
	// ErrCheckpointBusy: a checkpoint of the job is being taken.
	ErrCheckpointBusy = errors.New("a checkpoint of the job is in progress")
)

// ckptState is a running job's checkpoint bookkeeping.
type ckptState struct {
	opts checkpoint.Options
	last time.Time // when the last checkpoint of this run was taken (or the start)
	name string    // the last checkpoint taken or restarted from
	at   time.Time // when name was taken
	busy bool      // a checkpoint is being taken
	keep bool      // the job ended for a checkpoint: keep its checkpoints for the restart
}

// checkpointBase is where jobs' checkpoint directories are made:
// PBS_HOME/checkpoint.
func (e *Engine) checkpointBase() string { return filepath.Join(e.home, "checkpoint") }

// checkpointDir returns the job's checkpoint directory: <dir>/<job id>.CK
// where dir is the job's checkpoint_dir (or qsub -c dir=), else
// PBS_HOME/checkpoint.
func (e *Engine) checkpointDir(r *runningJob) string {
	base := e.checkpointBase()
	if r.ckpt.opts.Dir != "" {
		base = r.ckpt.opts.Dir
	}
	if d := r.job.CheckpointDir; filepath.IsAbs(d) {
		base = d
	}
	return filepath.Join(base, r.job.ID+".CK")
}

// makeCheckpointDir makes the job's checkpoint directory, owned by the
// job's user (mode 0700), made as the user where it is not under
// PBS_HOME/checkpoint.
func (e *Engine) makeCheckpointDir(r *runningJob) (string, error) {
	dir := e.checkpointDir(r)
	if filepath.Dir(dir) == e.checkpointBase() {
		if err := os.MkdirAll(e.checkpointBase(), 0o755); err != nil {
			return "", fmt.Errorf("checkpoint directory: %w", err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("checkpoint directory: %w", err)
		}
		if err := os.Lchown(dir, int(r.cred.UID), int(r.cred.GID)); err != nil {
			return "", fmt.Errorf("checkpoint directory: %w", err)
		}
		return dir, nil
	}
	err := asUser(r.cred, func() error {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		return os.Chmod(dir, 0o700)
	})
	if err != nil {
		return "", fmt.Errorf("checkpoint directory: %w", err)
	}
	return dir, nil
}

// checkpointJob describes the job to its checkpoint programs.
func (e *Engine) checkpointJob(r *runningJob, sid int) checkpoint.Job {
	group := r.job.Group
	if group == "" {
		group = strconv.Itoa(int(r.cred.GID))
	}
	return checkpoint.Job{
		SessionID: sid, ID: r.job.ID, User: r.cred.Name, Group: group, Dir: e.checkpointDir(r),
		Env: e.jobEnvironment(r, e.selectShell(r.job, r.cred)), Home: r.cred.Home,
		Cred: &syscall.Credential{Uid: r.cred.UID, Gid: r.cred.GID, Groups: r.cred.Groups},
	}
}

// Checkpoint takes a checkpoint of a running job with $checkpoint_script.
// With hold (HoldJob: qhold of a running job, the server's shutdown) the
// job is then ended (SIGTERM, SIGKILL after the grace time) and reported
// with exit status 0, its checkpoints kept for its restart; without
// (CheckpointJob: qchkpt, periodic checkpoints) it goes on.
func (e *Engine) Checkpoint(ctx context.Context, jobID string, hold bool) error {
	script := e.conf().CheckpointScript
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	switch {
	case !ok || r.sister:
		e.mu.Unlock()
		return ErrUnknownJob
	case script == "":
		e.mu.Unlock()
		return ErrNoCheckpoint
	case r.state != StateRunning && r.state != StateSuspended || r.finishing || r.sid == 0:
		e.mu.Unlock()
		return ErrBadState
	case r.ckpt.opts.Never:
		e.mu.Unlock()
		return ErrNotCheckpointable
	case r.ckpt.busy:
		e.mu.Unlock()
		return ErrCheckpointBusy
	}
	r.ckpt.busy = true
	sid, depth := r.sid, r.ckpt.opts.Depth
	e.mu.Unlock()

	now := e.opt.Now()
	name := checkpoint.Name(jobID, now)
	signal := 0
	if hold {
		signal = int(syscall.SIGTERM)
	}
	dir, err := e.makeCheckpointDir(r)
	if err == nil {
		err = checkpoint.Run(ctx, script, e.checkpointJob(r, sid), name, signal, depth, e.conf().PrologAlarm)
	}
	if err == nil {
		err = checkpoint.Record(dir, name, depth)
	}
	e.mu.Lock()
	r.ckpt.busy = false
	if err == nil {
		r.ckpt.last, r.ckpt.name, r.ckpt.at = now, name, now
		if hold {
			r.rerun, r.ckpt.keep = true, true
		}
	}
	e.mu.Unlock()
	if err != nil {
		e.log.Job(logline.EventError|logline.EventJob, jobID, "checkpoint failed: "+err.Error())
		return err
	}
	e.log.Job(logline.EventJob, jobID, "checkpoint "+name+" taken in "+dir)
	if hold {
		go e.killSession(r, syscall.SIGKILL)
	}
	return nil
}

// periodicCheckpoints starts a checkpoint of each running job whose
// periodic checkpoint is due (Checkpoint c=<minutes>, or c / periodic with
// $checkpoint_interval minutes). Called by Poll.
func (e *Engine) periodicCheckpoints(now time.Time) {
	if e.conf().CheckpointScript == "" {
		return
	}
	def := time.Duration(e.conf().CheckpointInterval) * time.Minute
	var due []string
	e.mu.Lock()
	for id, r := range e.jobs {
		o := r.ckpt.opts
		every := o.Interval
		if every == 0 {
			every = def
		}
		if !o.Periodic || o.Never || every <= 0 || r.ckpt.busy || r.state != StateRunning || r.sid == 0 || r.finishing {
			continue
		}
		if now.Sub(r.ckpt.last) >= every {
			r.ckpt.last = now // one attempt per period, taken or not
			due = append(due, id)
		}
	}
	e.mu.Unlock()
	for _, id := range due {
		go e.Checkpoint(context.Background(), id, false) //nolint:errcheck // logged by Checkpoint
	}
}

// restartPoint returns the program and arguments that restart the job
// from the checkpoint the server named (Job.CheckpointName) with
// $restart_script, with the variables to add to its environment; ok is
// false when the job starts from its script (no checkpoint named, no
// $restart_script, or the checkpoint is gone: logged).
func (e *Engine) restartPoint(r *runningJob) (argv, env []string, ok bool) {
	name := r.job.CheckpointName
	if name == "" {
		return nil, nil, false
	}
	script := e.conf().RestartScript
	dir := e.checkpointDir(r)
	why := ""
	if script == "" {
		why = "no $restart_script"
	} else if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		why = err.Error()
	}
	if why != "" {
		e.log.Job(logline.EventJob, r.job.ID, "cannot restart from checkpoint "+name+" ("+why+"): the job starts from its script")
		return nil, nil, false
	}
	cj := e.checkpointJob(r, r.job.RestartSession)
	r.ckpt.name = name
	return checkpoint.RestartArgs(script, cj, name), []string{"PBS_CHECKPOINT_DIR=" + dir, "PBS_CHECKPOINT_NAME=" + name}, true
}

// removeCheckpoints removes the job's checkpoint directory unless the job
// ended for a checkpoint it restarts from (Purge).
func (e *Engine) removeCheckpoints(r *runningJob) {
	if r.ckpt.keep || r.cred == nil {
		return
	}
	dir := e.checkpointDir(r)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		e.log.Job(logline.EventError, r.job.ID, "remove checkpoints: "+err.Error())
	}
}
