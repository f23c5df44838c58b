package running

import (
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/state"
)

// hotStartPeriod is how long a hot start keeps trying to run the jobs
// requeued by an immediate shutdown on their hosts again.
const hotStartPeriod = 300 * time.Second

// Recover settles jobs a previous server left between states: a launch
// that was not confirmed is requeued (a new RunJob finds the job on the
// MOM as already running), and end-of-job or rerun processing that was
// cut short is resumed. The server calls it once at start, before it
// serves requests.
func (l *Link) Recover() {
	h := l.host
	h.Lock()
	var resume []func()
	tx := h.Begin()
	for j := h.Jobs().First(); j != nil; j = j.Next() {
		switch {
		case j.State == pbsattr.StateRunning && (j.Substate == pbsattr.SubPreRun || j.Substate == pbsattr.SubTrnOut):
			l.requeue(tx, j)
		case j.State == pbsattr.StateRunning && (j.Substate == pbsattr.SubRerun || j.Substate == pbsattr.SubRerun3):
			j := j
			l.book.beginEnd(state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost)))
			resume = append(resume, func() { l.endJob(j, 0, true) })
		case j.State == pbsattr.StateExiting:
			j := j
			exit, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobExitStatus))
			l.book.beginEnd(state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost)))
			resume = append(resume, func() { l.endJob(j, exit, false) })
		}
	}
	if !tx.Empty() {
		tx.Commit()
	}
	h.RefreshNodeJobs() // jobs kept running across a warm restart hold their nodes
	h.Unlock()
	for _, f := range resume {
		go f()
	}
}

// HotStart runs the jobs that an immediate shutdown requeued with their
// hosts kept (HOTSTART) on those hosts again: a first attempt at once,
// then every HotStartInterval for hotStartPeriod, as long as some are
// left (spec 12 §16.1). A job whose hosts are not up yet waits for the
// next round; the scheduler may meanwhile run it elsewhere.
func (l *Link) HotStart() {
	h := l.host
	deadline := time.Now().Add(hotStartPeriod)
	for {
		h.RLock()
		var pending []*state.Job
		for j := h.Jobs().First(); j != nil; j = j.Next() {
			if j.State == pbsattr.StateQueued && j.Attrs.Get(pbsattr.JobExecHost) != "" {
				pending = append(pending, j)
			}
		}
		h.RUnlock()
		left := 0
		for _, j := range pending {
			if !l.ln.runOnHosts(j) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		select {
		case <-l.cfg.Done:
			return
		case <-time.After(l.HotStartInterval):
		}
	}
}

// hostsSpec turns an exec_host value into the node specification of the
// same hosts ("vm/0+vm/1+vm2/0" → "vm:ppn=2+vm2").
func hostsSpec(execHost string) string {
	var order []string
	count := map[string]int{}
	for _, x := range state.ExecSlots(execHost) {
		if count[x.Host] == 0 {
			order = append(order, x.Host)
		}
		count[x.Host]++
	}
	parts := make([]string, len(order))
	for i, h := range order {
		parts[i] = h
		if count[h] > 1 {
			parts[i] += ":ppn=" + strconv.Itoa(count[h])
		}
	}
	return strings.Join(parts, "+")
}

// runOnHosts runs a hot-start job on the hosts of its exec_host. It
// reports whether the job no longer waits for that (it started, or it
// is no longer a queued hot-start job).
func (ln launcher) runOnHosts(j *state.Job) bool {
	l := ln.l
	h := l.host
	h.Lock()
	execHost := j.Attrs.Get(pbsattr.JobExecHost)
	if h.Jobs().Get(j.ID) != j || j.State != pbsattr.StateQueued || execHost == "" {
		h.Unlock()
		return true
	}
	placed, bad := h.Allocate(j, hostsSpec(execHost))
	if bad != nil {
		h.Unlock()
		return false // its hosts are not up (yet)
	}
	l.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job Run at hot start")
	tx := h.Begin()
	run, err := ln.prepareRun(tx, j, placed)
	if err != nil {
		h.Unlock()
		l.logError("hot_start", err.Error())
		return true
	}
	wait := tx.Commit()
	h.Unlock()
	if err := wait(); err != nil {
		ln.abandonRun(j, "cannot save job")
		return true
	}
	p := ln.sendJob(run)
	if ln.finishRun(j, p) && !l.book.endingWith(run.host) {
		go l.pollJob(j.ID)
	}
	return true
}
