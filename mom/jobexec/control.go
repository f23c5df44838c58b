package jobexec

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/config"
)

// Adopt re-attaches a job whose processes survived a MOM restart (restart
// mode -p): its session is tracked by polling /proc and the job ends when no
// process of the session is left (exit status 0, as TORQUE reports it).
func (e *Engine) Adopt(spec *Job, sid int, started time.Time) error {
	j := *spec
	if j.Prefix == "" {
		j.Prefix = j.ID
	}
	cred, err := e.opt.Lookup(j.User, j.Group)
	if err != nil {
		return fmt.Errorf("adopt %s: %w", j.ID, err)
	}
	r := &runningJob{job: &j, cred: cred, sid: sid, adopted: true, started: started,
		state: StateRunning, done: make(chan struct{})}
	r.vnodes, _ = ParseExecHost(j.ExecHost)
	hosts := map[string]bool{}
	for _, v := range r.vnodes {
		hosts[v.Host] = true
	}
	r.limits, _ = e.computeLimits(&j, len(hosts))
	r.out = e.planOutput(&j, cred)
	if e.opt.Cgroups != nil {
		if g, err := e.opt.Cgroups.Open(j.ID); err == nil {
			m := e.conf().EnforceMem
			r.cg = g
			r.cgMemory = e.opt.Cgroups.Memory() && (m == config.EnforceAuto || m == config.EnforceCgroup)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "aux", j.ID)); err == nil {
		r.nodefile = filepath.Join(e.home, "aux", j.ID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.jobs[j.ID]; ok && old.state != StateExited {
		return ErrJobExists
	}
	e.jobs[j.ID] = r
	return nil
}

// Abort ends a job with the given exit status without waiting for it to
// exit: MOM restart with -r (kill=true, JOB_EXEC_INITABT) or -q (kill=false:
// the processes keep running, the job is reported for requeue).
func (e *Engine) Abort(jobID string, status int, kill bool) error {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	if ok && !kill {
		r.noKill = true // finish must not touch the processes
	}
	e.mu.Unlock()
	if !ok {
		return ErrUnknownJob
	}
	e.finish(r, status, 0, "aborted", true)
	return nil
}

// Modify applies a ModifyJob of a running job: the given Resource_List
// entries replace or extend the job's, and the polled limits are
// re-evaluated ("alter" mode: the rlimits of running processes are not
// changed). A bad value is rejected and nothing is changed.
func (e *Engine) Modify(jobID string, resources []Resource) error {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return ErrUnknownJob
	}
	j := *r.job
	j.Resources = append([]Resource(nil), r.job.Resources...)
	for _, nr := range resources {
		replaced := false
		for i := range j.Resources {
			if j.Resources[i].Name == nr.Name {
				j.Resources[i].Value, replaced = nr.Value, true
			}
		}
		if !replaced {
			j.Resources = append(j.Resources, nr)
		}
	}
	hosts := map[string]bool{}
	for _, v := range r.vnodes {
		hosts[v.Host] = true
	}
	ls, err := e.computeLimits(&j, len(hosts))
	if err != nil {
		return err
	}
	e.mu.Lock()
	r.job.Resources = j.Resources
	ls.rlimits, ls.nice = r.limits.rlimits, r.limits.nice
	r.limits = ls
	e.mu.Unlock()
	return nil
}

// Purge forgets a job and removes its files (DeleteJob, spec 10 §8.7):
// $tmpdir/<jobid> (if created here), aux/<jobid>, aux/<jobid>gpu and
// mom_priv/jobs/<prefix>.SC/.TK/.JB. A job still running is killed first.
// Spool files are not touched.
func (e *Engine) Purge(jobID string) error {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	var running, started bool
	if ok {
		running, started = r.state != StateExited, r.sid > 0
	}
	e.mu.Unlock()
	if !ok {
		return ErrUnknownJob
	}
	if running {
		e.finish(r, JOB_EXEC_FAIL2, 0, "purged", !started)
	}
	e.mu.Lock()
	delete(e.jobs, jobID)
	e.mu.Unlock()
	if r.tmpdirCreated {
		_ = os.RemoveAll(r.tmpdir)
	}
	e.removeCheckpoints(r)
	_ = os.Remove(filepath.Join(e.home, "aux", jobID))
	_ = os.Remove(filepath.Join(e.home, "aux", jobID+"gpu"))
	jobs := filepath.Join(e.home, "mom_priv", "jobs")
	for _, suffix := range []string{".TK", ".JB"} {
		_ = os.Remove(filepath.Join(jobs, r.job.Prefix+suffix))
	}
	if err := os.Remove(filepath.Join(jobs, r.job.Prefix+".SC")); err == nil {
		e.log.Job(logline.EventDebug, jobID, "removed job script")
	}
	return nil
}
