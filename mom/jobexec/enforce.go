package jobexec

import (
	"fmt"
	"os"
	"syscall"

	"gopbs/internal/logline"
	"gopbs/mom/cgroup"
	"gopbs/mom/config"
	"gopbs/mom/procfs"
)

// memByCgroupLocked reports whether the job's mem limit is the kernel's
// memory.max of its cgroup ($enforce mem auto or cgroup, and the job's
// cgroup has the memory controller).
func (e *Engine) memByCgroupLocked(r *runningJob) bool {
	m := e.conf().EnforceMem
	return r.cg != nil && r.cgMemory && (m == config.EnforceAuto || m == config.EnforceCgroup)
}

// memPolledLocked reports whether the poll kills the job for mem: mem is
// enforced ($enforce mem is not off) and not by the cgroup.
func (e *Engine) memPolledLocked(r *runningJob) bool {
	return e.conf().EnforceMem != config.EnforceOff && !e.memByCgroupLocked(r)
}

// makeGroup gives the job a cgroup of its own when the engine has a
// cgroup root; its memory.max is the job's mem limit when mem is
// enforced by the cgroup. A job whose cgroup cannot be made runs without
// one (logged): its usage then comes from /proc alone.
func (e *Engine) makeGroup(r *runningJob) {
	root := e.opt.Cgroups
	if root == nil {
		return
	}
	var memMax uint64
	m := e.conf().EnforceMem
	withMemory := root.Memory() && (m == config.EnforceAuto || m == config.EnforceCgroup)
	if withMemory {
		memMax = r.limits.mem
	}
	g, err := root.Create(r.job.ID, memMax)
	if err != nil {
		e.log.Job(logline.EventError, r.job.ID, "job runs without a cgroup: "+err.Error())
		return
	}
	e.mu.Lock()
	r.cg, r.cgMemory = g, withMemory
	e.mu.Unlock()
}

// inGroup makes a process started with attr start in g, when not nil.
func inGroup(attr *syscall.SysProcAttr, g *cgroup.Group) {
	if g != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, g.FD()
	}
}

// sampleGroupLocked raises the job's usage from its cgroup: the CPU time
// of every process it has had (those already reaped included) and its
// memory high-water mark.
func (e *Engine) sampleGroupLocked(r *runningJob) {
	if r.cg == nil {
		return
	}
	s, err := r.cg.Stats()
	if err != nil {
		return
	}
	r.cgStats = s
	if cpu := int64(s.CPU.Seconds() * e.conf().CputMult); cpu > r.usage.CPUTime {
		r.usage.CPUTime = cpu
	}
	if s.MemPeak > r.usage.Mem {
		r.usage.Mem = s.MemPeak
	}
}

// oomMessageLocked returns the over-limit message of a job whose cgroup
// had a process killed for memory.max, or "".
func (e *Engine) oomMessageLocked(r *runningJob) string {
	if r.cg == nil || r.cgStats.OOMKills == 0 || r.limits.mem == 0 {
		return ""
	}
	used := max(r.cgStats.MemPeak, r.usage.Mem)
	return fmt.Sprintf("mem %d exceeded limit %d", used, r.limits.mem)
}

// memOverLimitLocked returns the message for a mem or pmem limit the
// poll finds passed, or "".
func (e *Engine) memOverLimitLocked(r *runningJob, ps []procfs.Proc) string {
	if msg := e.oomMessageLocked(r); msg != "" {
		return msg
	}
	if e.conf().EnforceMem == config.EnforceOff {
		return "" // TORQUE: the rlimits alone
	}
	page := uint64(os.Getpagesize())
	l := r.limits
	if l.mem > 0 && e.memPolledLocked(r) {
		var rss uint64
		for _, p := range ps {
			rss += p.RSS * page
		}
		if rss > l.mem {
			return fmt.Sprintf("mem %d exceeded limit %d", rss, l.mem)
		}
	}
	if l.pmem > 0 {
		for _, p := range ps {
			if p.RSS*page > l.pmem {
				return fmt.Sprintf("pmem exceeded limit %d", l.pmem)
			}
		}
	}
	return ""
}

// endGroup is the end of a job's cgroup: a last sample (the CPU time of
// every process it had; an out-of-memory kill that ended the job makes
// the job one killed over its mem limit, with the message in its stderr
// file as a poll's kill has it), a SIGKILL for whatever is left in it
// (processes that left the job's session) and its removal.
func (e *Engine) endGroup(r *runningJob, startFailed bool) {
	e.mu.Lock()
	g := r.cg
	if g == nil {
		e.mu.Unlock()
		return
	}
	e.sampleGroupLocked(r)
	msg := ""
	if !startFailed && r.overLimit == 0 {
		if msg = e.oomMessageLocked(r); msg != "" {
			r.overLimit, r.limitMsg = 1, msg
		}
	}
	r.cg = nil
	e.mu.Unlock()
	if msg != "" {
		e.noteLimitKill(r, msg)
	}
	_ = g.Kill()
	if err := g.Remove(); err != nil {
		e.log.Job(logline.EventError, r.job.ID, err.Error())
	}
}

// noteLimitKill logs a job's over-limit message and appends it to the
// job's stderr file (spec 11 §9).
func (e *Engine) noteLimitKill(r *runningJob, msg string) {
	e.log.Job(logline.EventJob, r.job.ID, msg)
	if e.opt.OnLimitKill != nil {
		e.opt.OnLimitKill(msg)
	}
	if p := r.stderrPath(); p != "" {
		if f, err := e.appendOutput(r, p); err == nil {
			fmt.Fprintf(f, "=>> PBS: job killed: %s\n", msg)
			f.Close()
		}
	}
}
