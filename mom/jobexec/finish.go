// This file ends a job: it reaps the job's shell (wait), kills what is left
// of its session, computes its final status and usage and reports the Exit
// through Options.OnExit (finish); Wait hands the Exit to its callers.

package jobexec

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"gopbs/internal/logline"
)

// wait reaps the job's shell and finishes the job.
func (e *Engine) wait(r *runningJob) {
	err := r.cmd.Wait()
	status := 0
	var cpu int64
	if ps := r.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				status = 256 + int(ws.Signal())
			case ws.Exited():
				status = ws.ExitStatus()
			}
		}
		cpu = int64((ps.UserTime() + ps.SystemTime()).Seconds())
	} else if err != nil {
		status = JOB_EXEC_FAIL2
	}
	if r.inter != nil {
		r.inter.finish()
	}
	e.mu.Lock()
	killed := r.limitKill
	xcpu := ""
	if status == 256+int(syscall.SIGXCPU) && r.limits.pcput > 0 && r.overLimit == 0 {
		// The shell passed its RLIMIT_CPU (pcput, spec 11 §7): a
		// job killed over its limit.
		xcpu = fmt.Sprintf("pcput exceeded limit %d", r.limits.pcput)
		r.overLimit, r.limitMsg = 1, xcpu
	}
	e.mu.Unlock()
	if xcpu != "" {
		e.noteLimitKill(r, xcpu)
	}
	if !killed.IsZero() {
		// The shell died of a poll's SIGTERM: TORQUE's MOM, busy
		// signalling when it died, notices at its next loop turn, a
		// second later (capture 96: the kill at 02:35:57, the SIGKILL
		// walk over the zombies, the end and the obit at 02:35:58.26,
		// walltime 10).
		time.Sleep(time.Until(killed.Add(overLimitEndDelay)))
	}
	// TORQUE's MOM logs the shell's end after killing what is left of
	// the session (captures 58, 62, 96, 99: the SIGKILL walk, then
	// scan_for_terminated, then "job was terminated").
	e.finishNoting(r, status, cpu, "", false,
		fmt.Sprintf("scan_for_terminated: job %s task 1 terminated, sid=%d", r.job.ID, r.sid))
}

// overLimitEndDelay is how long after a poll's over-limit SIGTERM the end
// of the job it killed is processed.
const overLimitEndDelay = time.Second

// finish kills leftovers, computes the final status and usage and reports
// the exit. cpu is CPU time (seconds) known from wait's rusage.
func (e *Engine) finish(r *runningJob, status int, cpu int64, msg string, startFailed bool) {
	e.finishNoting(r, status, cpu, msg, startFailed, "")
}

// finishNoting is finish that also logs note (a debug event of the job),
// when not empty, once the leftover processes are killed.
func (e *Engine) finishNoting(r *runningJob, status int, cpu int64, msg string, startFailed bool, note string) {
	logNote := func() {
		if note != "" {
			e.log.Job(logline.EventDebug, r.job.ID, note)
		}
	}
	e.mu.Lock()
	if r.state == StateExited || r.finishing {
		e.mu.Unlock()
		logNote()
		return
	}
	r.finishing = true
	sid := r.sid
	e.mu.Unlock()
	if sid > 0 && !r.noKill {
		e.killSession(r, syscall.SIGKILL)
	}
	if !r.noKill {
		e.endGroup(r, startFailed)
	}
	logNote()
	if sid > 0 {
		// The job's own processes are gone: this sample gives it its
		// final walltime and the other running jobs fresh usage.
		e.sampleAll()
	}
	e.mu.Lock()
	if sid > 0 {
		if c := int64(float64(cpu) * e.conf().CputMult); c > r.usage.CPUTime {
			r.usage.CPUTime = c
		}
	}
	if !startFailed {
		switch {
		case r.overLimit > 0:
			status = JOB_EXEC_OVERLIMIT
			msg = r.limitMsg
		case r.rerun:
			status = 0
		}
	}
	r.state = StateExited
	ex := Exit{JobID: r.job.ID, SessionID: sid, Status: status, Usage: r.usage, StartFailed: startFailed, Message: msg,
		CheckpointName: r.ckpt.name, CheckpointTime: r.ckpt.at}
	r.exit = &ex
	e.mu.Unlock()
	if sid > 0 {
		e.log.Job(logline.EventJob, r.job.ID, "job was terminated")
		_ = WriteTaskRecord(e.TaskFilePath(r.job.Prefix), TaskRecord{JobID: r.job.ID, TaskID: 1, Status: TaskExited, SessionID: sid, ExitStatus: status})
	} else {
		e.log.Job(logline.EventDebug, r.job.ID, "job start failed: "+msg)
	}
	close(r.done)
	if e.opt.OnExit != nil && !r.sister {
		go e.opt.OnExit(ex)
	}
}

// Wait blocks until the job has ended (or ctx is done) and returns its Exit.
func (e *Engine) Wait(ctx context.Context, jobID string) (Exit, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return Exit{}, ErrUnknownJob
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return Exit{}, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return *r.exit, nil
}
