package server

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// defaultJobStatRate is job_stat_rate's default (spec 10 §7).
const defaultJobStatRate = 45

// applyMomAttrs applies the resources_used and send-once attributes a
// MOM reports for a job; it reports whether session_id changed. Called
// with s.mu held.
func applyMomAttrs(j *state.Job, list batchreq.AttrList) bool {
	changed := false
	for _, a := range list {
		switch {
		case a.Name == "resources_used" && a.HasResource:
			j.Attrs.SetRes(pbsattr.JobResourcesUsed, strings.ToLower(a.Resource), a.Value)
		case a.Name == "session_id":
			if j.Attrs.Get(pbsattr.JobSessionID) != a.Value {
				j.Attrs.Set(pbsattr.JobSessionID, a.Value)
				changed = true
			}
		default:
			if idx := state.JobDefs.Find(a.Name); idx >= 0 && idx != state.UnknownJobAttr && state.JobDefs.Defs[idx].Type != pbsattr.TypeResourceList {
				j.Attrs.Set(idx, a.Value)
			}
		}
	}
	return changed
}

// handleJobObit serves a MOM's JobObit (spec 10 §8.3).
func (rl *runLink) handleJobObit(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	body := req.Body.(*batchreq.JobObit)
	if !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	// The requester must be the job's mother superior (spec 10 §8.3);
	// names are resolved outside the lock.
	s.mu.RLock()
	ms := ""
	if j := s.findJob(body.JobID); j != nil {
		ms = motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
	}
	s.mu.RUnlock()
	trusted := ms == "" || rl.fromHost(c.Remote.Addr(), ms)
	for try := 0; ; try++ {
		s.mu.Lock()
		j := s.findJob(body.JobID)
		if j != nil && !trusted {
			j = nil // only the mother superior may report the job's end
		}
		if j == nil {
			s.mu.Unlock()
			code := batchreq.PBSE_UNKJOBID
			if s.cfg.InitType == InitCold || s.cfg.InitType == InitCreate {
				code = batchreq.PBSE_CLEANEDOUT
			}
			s.log.Logf(logline.EventJob, logline.ClassJob, body.JobID, "Job Obit notice received from %s has error %d", c.Asker.Host, code)
			c.Reject(code, "")
			return
		}
		if j.State == pbsattr.StateExiting {
			s.mu.Unlock()
			c.Reject(batchreq.PBSE_ALRDYEXIT, "")
			return
		}
		if j.State != pbsattr.StateRunning {
			s.mu.Unlock()
			c.Reject(batchreq.PBSE_BADSTATE, "")
			return
		}
		if j.Substate == pbsattr.SubPreRun && try < 30 {
			// the launch has not finished yet: retry shortly
			s.mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		applyMomAttrs(j, body.Attrs)
		j.Attrs.Set(pbsattr.JobExitStatus, strconv.Itoa(body.ExitStatus))
		rerun := j.Substate == pbsattr.SubRerun || requeueOnExit(body.ExitStatus, state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)))
		if rerun {
			j.Substate = pbsattr.SubRerun
		}
		if !rerun {
			s.jobs.SetState(j, pbsattr.StateExiting, pbsattr.SubExiting)
		}
		s.life.Touch(j)
		host := motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		wait := s.store.Submit(state.SaveJob(j))
		s.mu.Unlock()
		wait()
		rl.beginEnd(host)
		c.OK()
		go rl.endJob(j, body.ExitStatus, rerun)
		return
	}
}

// Exit statuses of MOM-side start failures that requeue the job (spec
// 10 §8.4).
const (
	jobExecRetry    = -3 // transient failure: requeue
	jobExecInitAbt  = -4 // aborted on MOM restart: rerun if rerunnable
	jobExecInitRst  = -5 // aborted on MOM restart with a checkpoint: requeue
	jobExecInitRmg  = -6 // as -4 with a migratable checkpoint
	jobExecBadResrt = -7 // restart from checkpoint failed: rerun if rerunnable
)

// requeueOnExit reports whether an obit's exit status puts the job back
// in the queue instead of ending it.
func requeueOnExit(exit int, rerunable bool) bool {
	switch exit {
	case jobExecRetry, jobExecInitRst:
		return true
	case jobExecInitAbt, jobExecInitRmg, jobExecBadResrt:
		return rerunable
	}
	return false
}

// fromHost reports whether a peer address belongs to host. A host name
// that does not resolve is not held against the peer.
func (rl *runLink) fromHost(a netip.Addr, host string) bool {
	addrs := rl.resolve(host)
	if len(addrs) == 0 {
		return true
	}
	a = a.Unmap()
	for _, x := range addrs {
		if x == a || x.IsLoopback() && a.IsLoopback() {
			return true
		}
	}
	return false
}

// stageOutPairs returns the CopyFiles pairs delivering a job's stdout,
// stderr and stage-out files (spec 10 §8.5). Called with s.mu held.
func stageOutPairs(j *state.Job, prefix string) []batchreq.FilePair {
	join := j.Attrs.Get(pbsattr.JobJoinPath)
	keep := j.Attrs.Get(pbsattr.JobKeepFiles)
	var out []batchreq.FilePair
	std := func(letter, suffix string, path string, joined bool) {
		if joined || strings.Contains(keep, letter) && keep != "n" || path == "" {
			return
		}
		if _, p, ok := strings.Cut(path, ":"); ok && p == "/dev/null" || path == "/dev/null" {
			return
		}
		out = append(out, batchreq.FilePair{Flag: 1, Local: prefix + suffix, Remote: path})
	}
	if !j.Attrs.Has(pbsattr.JobInteractive) { // an interactive job's output went to the terminal
		std("o", ".OU", j.Attrs.Get(pbsattr.JobOutputPath), join == "eo")
		std("e", ".ER", j.Attrs.Get(pbsattr.JobErrorPath), join == "oe")
	}
	return append(out, stagePairs(j.Attrs.Get(pbsattr.JobStageout))...)
}

// stagePairs parses a stagein/stageout value, "local@host:remote" entries.
func stagePairs(v string) []batchreq.FilePair {
	var out []batchreq.FilePair
	for _, e := range state.ParseArst(v) {
		if local, remote, ok := strings.Cut(e, "@"); ok {
			out = append(out, batchreq.FilePair{Flag: 3, Local: local, Remote: remote})
		}
	}
	return out
}

// stageFiles builds a CopyFiles/DelFiles body; the group travels only for
// array sub-jobs, as observed (spec 10 §8.5).
func stageFiles(j *state.Job, dir int, pairs []batchreq.FilePair) *batchreq.CopyFiles {
	group := ""
	if j.Parent != nil {
		group = j.Attrs.Get(pbsattr.JobEgroup)
	}
	return &batchreq.CopyFiles{JobID: j.ID, Owner: j.OwnerUser(), ExecUser: j.Attrs.Get(pbsattr.JobEuser),
		ExecGroup: group, Direction: dir, Pairs: pairs}
}

// endJob runs the end-of-job processing after an obit (spec 10 §8.5,
// §8.6): stage-out and DeleteJob on one MOM connection, accounting, then
// COMPLETE (or requeue for a rerun) and a TERM cycle for the scheduler.
//
// The caller has counted the exchange with beginEnd; endJob counts it
// down.
func (rl *runLink) endJob(j *state.Job, exit int, rerun bool) {
	s := rl.s
	s.mu.Lock()
	execHost := j.Attrs.Get(pbsattr.JobExecHost)
	host := motherSuperior(execHost)
	defer rl.endDone(host)
	if s.jobs.Get(j.ID) != j {
		s.mu.Unlock()
		return
	}
	var copyReq, delReq *batchreq.CopyFiles
	var mails []*mail
	if !rerun {
		mails = append(mails, rl.exitMail(j, exit))
		if c := limitComment(j); exit == -10 && c != "" {
			s.log.Log(logline.EventJob, logline.ClassJob, j.ID, c)
		}
		s.log.Logf(logline.EventJobUsage, logline.ClassJob, j.ID, "Exit_status=%d", exit)
		s.acct.Record(pbslog.AcctEnd, j.ID, acctJobText(j)+"session="+j.Attrs.Get(pbsattr.JobSessionID)+
			" end="+strconv.FormatInt(s.now().Unix(), 10)+" Exit_status="+strconv.Itoa(exit)+acctUsage(j))
		rl.logOnJobExit(j, pbsattr.SubExiting)
		prefix := j.Attrs.Get(pbsattr.JobHashname)
		if prefix == "" {
			prefix = filePrefix(j.ID)
		}
		if pairs := stageOutPairs(j, prefix); len(pairs) > 0 {
			copyReq = stageFiles(j, batchreq.STAGE_DIR_OUT, pairs)
		}
		if pairs := stagePairs(j.Attrs.Get(pbsattr.JobStagein)); len(pairs) > 0 {
			delReq = stageFiles(j, batchreq.STAGE_DIR_IN, pairs)
		}
		j.Substate = pbsattr.SubStageOut
		rl.logOnJobExit(j, pbsattr.SubStageOut)
	} else {
		// RERUN1 and RERUN2 (spec 10 §8.6): stage-out files only,
		// then the stage-in files are deleted.
		if pairs := stagePairs(j.Attrs.Get(pbsattr.JobStageout)); len(pairs) > 0 {
			copyReq = stageFiles(j, batchreq.STAGE_DIR_OUT, pairs)
		}
		if pairs := stagePairs(j.Attrs.Get(pbsattr.JobStagein)); len(pairs) > 0 {
			delReq = stageFiles(j, batchreq.STAGE_DIR_IN, pairs)
		}
		j.Substate = pbsattr.SubRerun3
	}
	var released bool
	var relWait func() error
	if !rerun {
		// dependents are released on entering end-of-job processing
		// (spec 10 §8.5); Complete finds nothing left to do for them
		tx := s.db.Begin()
		released = s.life.ReleaseDependents(tx, j, exit == 0)
		if !tx.Empty() {
			relWait = tx.Commit()
		}
	}
	s.mu.Unlock()
	if relWait != nil {
		relWait()
	}
	if released {
		rl.s.sched.Notify(batchreq.SCH_SCHEDULE_NEW)
	}

	if m, err := rl.dialMom(host); err != nil {
		s.logError("on_job_exit", err.Error())
	} else {
		if rerun && !rl.onServerHost(host) {
			// RERUN: the MOM returns the job's spooled stdout and
			// stderr with MvJobFile on a connection of its own.
			if p, err := m.Call(batchreq.PBS_BATCH_Rerun, &batchreq.JobID{ID: j.ID}, ""); err == nil && p.Code != 0 {
				text := "rerun req to " + host + " failed (rc=" + strconv.Itoa(p.Code) + ")"
				s.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, text)
				s.mu.Lock()
				mails = append(mails, s.mailJob(j, 'o', true, text))
				s.mu.Unlock()
			}
		}
		if copyReq != nil {
			if p, err := m.Call(batchreq.PBS_BATCH_CopyFiles, copyReq, ""); err == nil && p.Code != 0 {
				text := "Post job file processing error; job " + j.ID + " on host " + execHost
				s.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, text)
				s.mu.Lock()
				j.Attrs.Set(pbsattr.JobSchedHint, text+"\n"+p.Text)
				mails = append(mails, s.mailJob(j, 'o', true, text+"\n"+p.Text))
				s.mu.Unlock()
			}
		}
		if delReq != nil {
			if p, err := m.Call(batchreq.PBS_BATCH_DelFiles, delReq, ""); err == nil && p.Code != 0 {
				text := "Unable to delete files for job " + j.ID + ", on host " + execHost
				s.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, text)
				s.mu.Lock()
				mails = append(mails, s.mailJob(j, 'o', true, text+"\n"+p.Text))
				s.mu.Unlock()
			}
		}
		m.Call(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: j.ID}, "")
		m.Close()
	}

	s.mu.Lock()
	if s.jobs.Get(j.ID) != j {
		s.mu.Unlock()
		return
	}
	var ops []store.Op
	if rerun {
		s.launch.requeue(j)
		if s.shutting && execHost != "" {
			// HOTSTART: a job requeued by qterm -t immediate keeps
			// its hosts, where a hot start runs it again first
			// (spec 10 §8.6 RERUN3, spec 12 §16.1).
			j.Attrs.Set(pbsattr.JobExecHost, execHost)
		}
		ops = append(ops, state.SaveJob(j))
	} else {
		rl.logOnJobExit(j, pbsattr.SubStageOut)
		j.Substate = pbsattr.SubExited
		rl.logOnJobExit(j, pbsattr.SubExited)
		rl.forget(j.ID)
		tx := s.db.Begin()
		s.life.Complete(tx, j, exit == 0)
		ops = tx.Ops()
		s.refreshNodeJobs()
	}
	wait := s.store.Submit(ops...)
	s.mu.Unlock()
	wait()
	for _, m := range mails {
		s.sendMail(j.ID, m)
	}
	rl.s.sched.Notify(batchreq.SCH_SCHEDULE_TERM)
}

// acctUsage returns the resources_used pairs an E record carries after
// Exit_status, each preceded by a blank, in resource name order
// ("resources_used.cput=00:00:01 resources_used.mem=3412kb ..."), or ""
// when the job's usage is not known. TORQUE 2.5.13 ends its E records at
// Exit_status; later TORQUE releases and OpenPBS append the usage, and
// accounting tools read it (a deliberate difference, README).
func acctUsage(j *state.Job) string {
	used := j.Attrs.Resources(pbsattr.JobResourcesUsed)
	if len(used) == 0 {
		return ""
	}
	pairs := make([]string, 0, len(used))
	for _, r := range used {
		if r.Value != "" {
			pairs = append(pairs, " resources_used."+r.Resource+"="+r.Value)
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "")
}

// exitMail is the mail for a job's end (spec 10 §8.4, spec 12 §15): the
// end mail, or a forced abort mail for start failures and jobs killed
// over a limit. Called with s.mu held.
func (rl *runLink) exitMail(j *state.Job, exit int) *mail {
	s := rl.s
	if exit >= 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Exit_status=%d", exit)
		for _, r := range j.Attrs.Resources(pbsattr.JobResourcesUsed) {
			b.WriteString("\nresources_used." + r.Resource + "=" + r.Value)
		}
		return s.mailJob(j, 'e', false, b.String())
	}
	text := "Job cannot be executed\nSee Administrator for help"
	switch exit {
	case -2:
		text = "Job cannot be executed\nSee job standard error file"
	case -10:
		text = "Job exceeded some resource limit (walltime, mem, etc.). Job was aborted\nSee Administrator for help"
		if c := limitComment(j); c != "" {
			text += "\n" + c
		}
	}
	return s.mailJob(j, 'a', true, text)
}

// limitComment returns the comment of a job a GoPBS MOM killed over a
// limit ("job killed: walltime 9 exceeded limit 5", set from the obit),
// or "". Called with s.mu held.
func limitComment(j *state.Job) string {
	if c := j.Attrs.Get(pbsattr.JobComment); strings.HasPrefix(c, "job killed: ") {
		return c
	}
	return ""
}

func (rl *runLink) logOnJobExit(j *state.Job, sub pbsattr.Substate) {
	s := rl.s
	s.log.Logf(logline.EventJob, logline.ClassJob, "NULL", "on_job_exit valid pjob: %p (substate=%d)", j, sub)
}

// pollRunning sends a StatusJob to the MOM of each running job once
// every job_stat_rate seconds, spread by queue rank (spec 10 §7).
func (rl *runLink) pollRunning(sec int64) {
	s := rl.s
	s.mu.RLock()
	rate := s.serverLong(pbsattr.SrvJobStatRate, defaultJobStatRate)
	poll := s.attrs.Get(pbsattr.SrvPollJobs) == "" || s.serverFlag(pbsattr.SrvPollJobs)
	var ids []string
	if poll && rate > 0 {
		for _, j := range s.jobs.Holding() {
			if j.State == pbsattr.StateRunning && j.Substate == pbsattr.SubRunning && (j.Rank+sec)%rate == 0 {
				ids = append(ids, j.ID)
			}
		}
	}
	s.mu.RUnlock()
	for _, id := range ids {
		go rl.pollJob(id)
	}
}

// beginEnd counts an end-of-job exchange with the MOM on host as begun;
// endJob counts it down when done.
func (rl *runLink) beginEnd(host string) {
	rl.mu.Lock()
	rl.ending[host]++
	rl.mu.Unlock()
}

// endDone counts an end-of-job exchange with the MOM on host as done.
func (rl *runLink) endDone(host string) {
	rl.mu.Lock()
	if rl.ending[host]--; rl.ending[host] <= 0 {
		delete(rl.ending, host)
	}
	rl.mu.Unlock()
}

// endingWith reports whether an end-of-job exchange with the MOM on host
// is in progress. The StatusJob right after a launch is skipped then:
// TORQUE talks to a MOM over one connection at a time (captures 83-85).
func (rl *runLink) endingWith(host string) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.ending[host] > 0
}

// pollJob asks a running job's MOM for its status and applies the
// reply.
func (rl *runLink) pollJob(id string) {
	s := rl.s
	s.mu.RLock()
	j := s.jobs.Get(id)
	if j == nil || j.State != pbsattr.StateRunning {
		s.mu.RUnlock()
		return
	}
	host := motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
	up := rl.nodeUp(host)
	s.mu.RUnlock()
	if !up {
		return
	}
	p, err := rl.momRequest(host, batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.jobs.Get(id) != j || j.State != pbsattr.StateRunning {
		s.mu.Unlock()
		return
	}
	var ops []store.Op
	switch {
	case p.Code == batchreq.PBSE_UNKJOBID:
		s.log.Logf(logline.EventJob, logline.ClassJob, id, "Job does not exist on node")
		s.acct.Record(pbslog.AcctAbort, id, "")
		rl.forget(id)
		tx := s.db.Begin()
		s.life.Complete(tx, j, false)
		ops = tx.Ops()
		s.refreshNodeJobs()
	case p.Code == 0:
		for _, o := range p.Status {
			if o.Name == id {
				applyMomAttrs(j, o.Attrs)
				ops = append(ops, state.SaveJob(j))
			}
		}
	}
	var wait func() error
	if len(ops) > 0 {
		wait = s.store.Submit(ops...)
	}
	s.mu.Unlock()
	if wait != nil {
		wait()
	}
}

func (rl *runLink) isSuspended(id string) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.suspended[id]
}

// forget drops the link's bookkeeping of a job.
func (rl *runLink) forget(id string) {
	rl.mu.Lock()
	delete(rl.suspended, id)
	delete(rl.deleting, id)
	rl.mu.Unlock()
}
