package jobexec

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/momlog"
	"gopbs/mom/procfs"
)

// monitor runs the poll cycle (spec 11 §9): PollInterval after the
// previous cycle, or at once when PollNow asks for one. TORQUE's MOM polls
// in step with its status reports: with the default $check_poll_time and
// $status_update_time (45 s each) the sample comes right after each
// IS_STATUS (capture 96: the IS_STATUS at 02:35:57.2, "walltime 9 exceeded
// limit 5" in the same second; capture 45: a job's usage sampled in the
// second after the IS_STATUS), so pbs_mom calls PollNow after each status
// it sends and the cycles follow the status cycle.
func (e *Engine) monitor() {
	defer e.wg.Done()
	t := time.NewTimer(e.opt.PollInterval)
	defer t.Stop()
	// A request that comes right after a cycle is that cycle's: the
	// monitor's interval and the status cycle's are alike (45 s), so the
	// timer and PollNow can fire within moments of each other, and a
	// second cycle would escalate an over-limit job's kill at once.
	minGap := min(e.opt.PollInterval/2, time.Second)
	var last time.Time
	adopted := time.NewTicker(adoptedCheck)
	defer adopted.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-adopted.C:
			e.checkAdopted()
			continue
		case <-t.C:
		case <-e.pollNow:
			if time.Since(last) < minGap {
				continue
			}
		}
		last = time.Now()
		e.Poll()
		t.Reset(e.opt.PollInterval)
	}
}

// adoptedCheck is how often the sessions of adopted jobs (recovered after
// a MOM restart, not children of this MOM) are looked at: TORQUE's MOM
// noticed such a job's end 2 s after it (capture 103: sleep 60 ended at
// 02:39:34.2, "found exited session" at 02:39:36), not at its next poll.
const adoptedCheck = time.Second

// checkAdopted ends the adopted jobs whose session has no live process
// left.
func (e *Engine) checkAdopted() {
	e.pollMu.Lock()
	defer e.pollMu.Unlock()
	e.mu.Lock()
	var adopted []*runningJob
	for _, r := range e.jobs {
		if r.adopted && r.sid > 0 && !r.finishing && (r.state == StateRunning || r.state == StateSuspended) {
			adopted = append(adopted, r)
		}
	}
	e.mu.Unlock()
	if len(adopted) == 0 {
		return
	}
	procs, err := e.proc.All()
	if err != nil {
		return
	}
	bySession := groupBySession(procs)
	for _, r := range adopted {
		if len(live(bySession[r.sid])) == 0 {
			e.endAdopted(r)
		}
	}
}

// endAdopted finishes an adopted job whose session is gone.
func (e *Engine) endAdopted(r *runningJob) {
	e.log.Record(logline.EventJob, momlog.ClassJob, "scan_non_child_tasks",
		fmt.Sprintf("found exited session %d for task 1 in job %s", r.sid, r.job.ID))
	e.finish(r, 0, 0, "", false)
}

// PollNow asks the monitor for a poll cycle at once, without waiting for it;
// the next periodic cycle comes a full poll interval after this one.
// pbs_mom calls it after each IS_STATUS it sends.
func (e *Engine) PollNow() {
	select {
	case e.pollNow <- struct{}{}:
	default: // a cycle is already asked for
	}
}

// Poll runs one sampling and enforcement cycle now: it raises every running
// job's usage and acts on the jobs over a limit. A job over a limit for the
// first time has the message logged and appended to its stderr file and
// gets SIGTERM (OVERLMT1); the next cycle sends SIGTERM again (OVERLMT2),
// the one after SIGKILL. The job's exit status becomes JOB_EXEC_OVERLIMIT.
func (e *Engine) Poll() {
	e.pollMu.Lock()
	defer e.pollMu.Unlock()
	procs, err := e.proc.All()
	if err != nil {
		return
	}
	bySession := groupBySession(procs)
	type action struct {
		r      *runningJob
		step   int // 1: first kill (message), 2: SIGTERM again, 3: SIGKILL
		msg    string
		exited bool
	}
	var actions []action
	now := e.opt.Now()
	e.mu.Lock()
	for _, r := range e.jobs {
		if !r.sampledLocked() {
			continue
		}
		e.endAdoptedTasksLocked(r, bySession)
		ps := e.jobProcsLocked(r, bySession)
		e.updateUsageLocked(r, ps, now)
		// An adopted job ends with its top task's session; the tasks
		// it started through TM end with it, as a job's do.
		if r.adopted && len(live(bySession[r.sid])) == 0 {
			actions = append(actions, action{r: r, exited: true})
			continue
		}
		if r.state != StateRunning {
			continue
		}
		switch r.overLimit {
		case 1:
			r.overLimit = 2
			actions = append(actions, action{r: r, step: 2})
			continue
		case 2:
			actions = append(actions, action{r: r, step: 3})
			continue
		}
		if msg := e.overLimitLocked(r, ps); msg != "" {
			r.overLimit = 1
			r.limitMsg = msg
			r.limitKill = time.Now()
			actions = append(actions, action{r: r, step: 1, msg: msg})
		}
	}
	e.mu.Unlock()
	e.periodicCheckpoints(now)
	for _, a := range actions {
		switch {
		case a.exited:
			e.endAdopted(a.r)
		case a.step == 1:
			e.noteLimitKill(a.r, a.msg)
			e.killSession(a.r, syscall.SIGTERM)
		case a.step == 2:
			e.killSession(a.r, syscall.SIGTERM)
		case a.step == 3:
			e.killSession(a.r, syscall.SIGKILL)
		}
	}
}

// sampleAll raises the usage of every running job from one reading of
// /proc, without enforcing limits. A job's end does it (finish), as
// TORQUE's MOM does: the other jobs running then get their usage sampled
// (captures 82, 87, 74: of two jobs ending together, the second reports
// the memory it used, the first, gone by then, 0kb).
func (e *Engine) sampleAll() {
	procs, err := e.proc.All()
	if err != nil {
		return
	}
	bySession := groupBySession(procs)
	now := e.opt.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.jobs {
		if r.sampledLocked() {
			e.updateUsageLocked(r, e.jobProcsLocked(r, bySession), now)
		}
	}
}

// sampledLocked reports whether polls sample the job: it runs (or is
// suspended) and has a session, or is a sister's part of a job.
func (r *runningJob) sampledLocked() bool {
	return (r.sid > 0 || r.sister) && (r.state == StateRunning || r.state == StateSuspended)
}

func groupBySession(procs []procfs.Proc) map[int][]procfs.Proc {
	bySession := map[int][]procfs.Proc{}
	for _, p := range procs {
		bySession[p.Session] = append(bySession[p.Session], p)
	}
	return bySession
}

func live(ps []procfs.Proc) []procfs.Proc {
	var out []procfs.Proc
	for _, p := range ps {
		if p.State != 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// updateUsageLocked raises the high-water marks from a sample of the
// session's processes and refreshes walltime as of now.
func (e *Engine) updateUsageLocked(r *runningJob, ps []procfs.Proc, now time.Time) {
	var ticks, rss, vsize uint64
	for _, p := range ps {
		ticks += p.CPUTicks()
		rss += p.RSS
		vsize += p.VSize
	}
	cpu := int64(float64(ticks) / procfs.ClockTicks * e.conf().CputMult)
	if cpu > r.usage.CPUTime {
		r.usage.CPUTime = cpu
	}
	if m := rss * uint64(os.Getpagesize()); m > r.usage.Mem {
		r.usage.Mem = m
	}
	if vsize > r.usage.VMem {
		r.usage.VMem = vsize
	}
	e.sampleGroupLocked(r)
	if !r.started.IsZero() {
		r.usage.Walltime = e.walltimeLocked(r, now)
	}
}

// walltimeLocked returns the job's walltime at now in seconds: the whole
// seconds of the clock since the start less the time suspended, times
// $wallmult. TORQUE counts in whole clock seconds: a job started at
// 02:35:48.23 has walltime 9 at 02:35:57.x and 10 at 02:35:58.2 (capture
// 96), not the elapsed time rounded down.
func (e *Engine) walltimeLocked(r *runningJob, now time.Time) int64 {
	if r.started.IsZero() {
		return r.usage.Walltime
	}
	d := wholeSeconds(r.started, now) - r.suspendedFor
	if r.state == StateSuspended && !r.suspendedAt.IsZero() {
		d -= wholeSeconds(r.suspendedAt, now)
	}
	if d < 0 {
		d = 0
	}
	return int64(float64(d/time.Second) * e.conf().WallMult)
}

// wholeSeconds returns the whole clock seconds from from to to (both
// truncated to the second), as a duration.
func wholeSeconds(from, to time.Time) time.Duration {
	return time.Duration(to.Unix()-from.Unix()) * time.Second
}

// overLimitLocked returns the over-limit message for the first exceeded
// limit, or "".
func (e *Engine) overLimitLocked(r *runningJob, ps []procfs.Proc) string {
	l := r.limits
	u := r.usage
	if l.cput > 0 && u.CPUTime > l.cput {
		return fmt.Sprintf("cput %d exceeded limit %d", u.CPUTime, l.cput)
	}
	if l.pcput > 0 {
		for _, p := range ps {
			if c := int64(float64(p.UTime+p.STime) / procfs.ClockTicks * e.conf().CputMult); c > l.pcput {
				return fmt.Sprintf("pcput exceeded limit %d", l.pcput)
			}
		}
	}
	if msg := e.memOverLimitLocked(r, ps); msg != "" {
		return msg
	}
	var vsize uint64
	for _, p := range ps {
		vsize += p.VSize
	}
	if l.vmem > 0 && vsize > l.vmem {
		return fmt.Sprintf("vmem %d exceeded limit %d", vsize, l.vmem)
	}
	if l.pvmem > 0 {
		for _, p := range ps {
			if p.VSize > l.pvmem {
				return fmt.Sprintf("pvmem exceeded limit %d", l.pvmem)
			}
		}
	}
	if l.walltime > 0 && u.Walltime > l.walltime {
		return fmt.Sprintf("walltime %d exceeded limit %d", u.Walltime, l.walltime)
	}
	return ""
}
