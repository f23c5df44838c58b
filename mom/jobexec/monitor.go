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

// monitor samples /proc every poll interval, updates usage and enforces
// limits (spec 11 §9).
func (e *Engine) monitor() {
	defer e.wg.Done()
	t := time.NewTicker(e.opt.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.Poll()
		}
	}
}

// Poll runs one sampling and enforcement cycle now (also called by the
// monitor every poll interval).
func (e *Engine) Poll() {
	procs, err := e.proc.All()
	if err != nil {
		return
	}
	bySession := map[int][]procfs.Proc{}
	for _, p := range procs {
		bySession[p.Session] = append(bySession[p.Session], p)
	}
	type action struct {
		r      *runningJob
		step   int // 1: first kill (message), 2: SIGTERM again, 3: SIGKILL
		msg    string
		exited bool
	}
	var actions []action
	e.mu.Lock()
	for _, r := range e.jobs {
		if (r.sid <= 0 && !r.sister) || (r.state != StateRunning && r.state != StateSuspended) {
			continue
		}
		e.endAdoptedTasksLocked(r, bySession)
		ps := e.jobProcsLocked(r, bySession)
		e.updateUsageLocked(r, ps)
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
			actions = append(actions, action{r: r, step: 1, msg: msg})
		}
	}
	e.mu.Unlock()
	for _, a := range actions {
		switch {
		case a.exited:
			e.log.Record(logline.EventJob, momlog.ClassJob, "scan_non_child_tasks",
				fmt.Sprintf("found exited session %d for task 1 in job %s", a.r.sid, a.r.job.ID))
			e.finish(a.r, 0, 0, "", false)
		case a.step == 1:
			e.log.Job(logline.EventJob, a.r.job.ID, a.msg)
			if p := a.r.stderrPath(); p != "" {
				if f, err := e.appendOutput(a.r, p); err == nil {
					fmt.Fprintf(f, "=>> PBS: job killed: %s\n", a.msg)
					f.Close()
				}
			}
			e.killSession(a.r, syscall.SIGTERM)
		case a.step == 2:
			e.killSession(a.r, syscall.SIGTERM)
		case a.step == 3:
			e.killSession(a.r, syscall.SIGKILL)
		}
	}
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
// session's processes and refreshes walltime.
func (e *Engine) updateUsageLocked(r *runningJob, ps []procfs.Proc) {
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
	if !r.started.IsZero() {
		r.usage.Walltime = e.walltimeLocked(r, time.Now())
	}
}

func (e *Engine) walltimeLocked(r *runningJob, now time.Time) int64 {
	if r.started.IsZero() {
		return r.usage.Walltime
	}
	d := now.Sub(r.started) - r.suspendedFor
	if r.state == StateSuspended && !r.suspendedAt.IsZero() {
		d -= now.Sub(r.suspendedAt)
	}
	if d < 0 {
		d = 0
	}
	return int64(d.Seconds() * e.conf().WallMult)
}

// overLimitLocked returns the over-limit message for the first exceeded
// limit, or "".
func (e *Engine) overLimitLocked(r *runningJob, ps []procfs.Proc) string {
	l := r.limits
	u := r.usage
	page := uint64(os.Getpagesize())
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
	var vsize, rss uint64
	for _, p := range ps {
		vsize += p.VSize
		rss += p.RSS * page
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
	if !e.opt.DisableMemEnforcement {
		// GoPBS extension: TORQUE only sets rlimits for mem/pmem.
		if l.mem > 0 && rss > l.mem {
			return fmt.Sprintf("mem %d exceeded limit %d", rss, l.mem)
		}
		if l.pmem > 0 {
			for _, p := range ps {
				if p.RSS*page > l.pmem {
					return fmt.Sprintf("pmem exceeded limit %d", l.pmem)
				}
			}
		}
	}
	if l.walltime > 0 && u.Walltime > l.walltime {
		return fmt.Sprintf("walltime %d exceeded limit %d", u.Walltime, l.walltime)
	}
	return ""
}
