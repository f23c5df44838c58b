package link

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"gopbs/mom/jobexec"
	"gopbs/mom/momd"
)

// Recover loads the jobs saved in mom_priv/jobs at start-up (spec 11
// §11). mode is the restart option: RecoverPoll (-p, the default and zero
// value) re-attaches every job (the engine tracks its session by polling
// /proc and reports its end as usual); RecoverRequeue (-q) reports the
// jobs to the server as aborted on MOM restart (JOB_EXEC_INITABT) without
// killing them; RecoverPurge (-P) kills and forgets them without an obit;
// RecoverKill (-r) kills them and reports JOB_EXEC_INITABT. It returns the
// number of jobs found.
// A re-attached job keeps its start time (the start_time attribute), so
// its walltime goes on from where it was.
func (m *Mom) Recover(ctx context.Context, mode momd.RestartMode) (int, error) {
	dir := filepath.Join(m.opt.Home, "mom_priv", "jobs")
	names, err := filepath.Glob(filepath.Join(dir, "*.JB"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		j, err := loadJob(name)
		if err != nil {
			m.logErr("job_recov", err, name)
			continue
		}
		n++
		j.serverPort = serverPortOf(j.attrs, m.opt.ServerPort)
		if !j.here && j.stage >= stageRunning {
			// A job joined as a sister (im_persist.go).
			m.recoverSister(j, mode)
			continue
		}
		alive := j.sid > 0 && syscall.Kill(j.sid, 0) == nil
		kill := func() {
			if alive {
				syscall.Kill(-j.sid, syscall.SIGKILL)
			}
		}
		if mode == momd.RecoverPurge || j.stage < stageRunning || !j.server.IsValid() {
			kill() // -P, or a launch that never committed
			if j.stage >= stageRunning {
				m.recoverMS(j, false) // its sisters get IM_ABORT_JOB
			}
			m.purge(j)
			continue
		}
		ended := j.exit
		m.mu.Lock()
		m.nextOrder++
		j.order = m.nextOrder
		// session_id is "send once" per MOM process: a recovered job
		// reports it again (the obit after a -p restart carries it,
		// capture 103).
		j.stage, j.sidSent, j.exit = stageRunning, false, nil
		m.jobs[j.id] = j
		m.mu.Unlock()
		if ended != nil && mode != momd.RecoverPurge {
			// The job had ended before the restart: report that end
			// (its exit status, from the job file) in any mode. Its
			// sisters are told to end it too.
			m.recoverMS(j, false)
			m.JobExited(*ended)
			continue
		}
		if mode == momd.RecoverPoll {
			if err := m.exec.Adopt(&j.spec, j.sid, j.startTime(name)); err == nil {
				m.recoverMS(j, true)
				continue
			}
			m.logErr("job_recov", err, "cannot re-attach "+j.id)
		}
		m.recoverMS(j, false)
		if mode != momd.RecoverRequeue {
			kill()
		}
		m.JobExited(jobexec.Exit{JobID: j.id, SessionID: j.sid, Status: jobexec.JOB_EXEC_INITABT, StartFailed: true,
			Message: "aborted on MOM restart"})
	}
	return n, nil
}

// startTime returns when the job started: its start_time attribute (set
// by the server at launch), else the start time of the job file's fixed
// part, else the time the job file was last saved (at the start), else
// now.
func (j *job) startTime(file string) time.Time {
	if v, ok := j.attrs.Get("start_time"); ok {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec > 0 {
			return time.Unix(sec, 0)
		}
	}
	if j.stime > 0 {
		return time.Unix(j.stime, 0)
	}
	if fi, err := os.Stat(file); err == nil {
		return fi.ModTime()
	}
	return time.Now()
}
