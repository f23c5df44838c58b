package running

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
	"gopbs/server/jobmail"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// defaultJobStatRate is job_stat_rate's default (spec 10 §7).
const defaultJobStatRate = 45

// applyMomAttrs applies the resources_used and send-once attributes a
// MOM reports for a job; it reports whether session_id changed. Called
// with the lock held.
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

// JobObit serves a MOM's JobObit (spec 10 §8.3).
func (l *Link) JobObit(c *handler.Conn, req *batchreq.Request) {
	h := l.host
	body := req.Body.(*batchreq.JobObit)
	if !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	// The requester must be the job's mother superior (spec 10 §8.3);
	// names are resolved outside the lock.
	h.RLock()
	ms := ""
	if j := h.FindJob(body.JobID); j != nil {
		ms = state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
	}
	h.RUnlock()
	trusted := ms == "" || l.fromHost(c.Remote.Addr(), ms)
	for try := 0; ; try++ {
		h.Lock()
		j := h.FindJob(body.JobID)
		if j != nil && !trusted {
			j = nil // only the mother superior may report the job's end
		}
		if j == nil {
			h.Unlock()
			code := batchreq.PBSE_UNKJOBID
			if l.cfg.Clean {
				code = batchreq.PBSE_CLEANEDOUT
			}
			l.log.Logf(logline.EventJob, logline.ClassJob, body.JobID, "Job Obit notice received from %s has error %d", c.Asker.Host, code)
			c.Reject(code, "")
			return
		}
		if j.State == pbsattr.StateExiting {
			h.Unlock()
			c.Reject(batchreq.PBSE_ALRDYEXIT, "")
			return
		}
		if j.State != pbsattr.StateRunning {
			h.Unlock()
			c.Reject(batchreq.PBSE_BADSTATE, "")
			return
		}
		if j.Substate == pbsattr.SubPreRun && try < 30 {
			// the launch has not finished yet: retry shortly
			h.Unlock()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		applyMomAttrs(j, body.Attrs)
		j.Attrs.Set(pbsattr.JobExitStatus, strconv.Itoa(body.ExitStatus))
		rerun := j.Substate == pbsattr.SubRerun || requeueOnExit(body.ExitStatus, state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)))
		if rerun {
			j.Substate = pbsattr.SubRerun
		}
		tx := h.Begin()
		if !rerun {
			tx.SetState(j, pbsattr.StateExiting, pbsattr.SubExiting)
		}
		h.Touch(j)
		host := state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		tx.SaveJob(j)
		wait := tx.Commit()
		h.Unlock()
		wait()
		l.book.beginEnd(host)
		c.Send(batchreq.NullReply())
		go l.endJob(j, body.ExitStatus, rerun)
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
func (l *Link) fromHost(a netip.Addr, host string) bool {
	addrs := l.Resolve(host)
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
// stderr and stage-out files (spec 10 §8.5). Called with the lock held.
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
func (l *Link) endJob(j *state.Job, exit int, rerun bool) {
	h := l.host
	h.Lock()
	execHost := j.Attrs.Get(pbsattr.JobExecHost)
	host := state.MotherSuperior(execHost)
	defer l.book.endDone(host)
	if h.Jobs().Get(j.ID) != j {
		h.Unlock()
		return
	}
	var copyReq, delReq *batchreq.CopyFiles
	var mails []*jobmail.Mail
	if !rerun {
		mails = append(mails, l.exitMail(j, exit))
		if c := limitComment(j); exit == -10 && c != "" {
			l.log.Log(logline.EventJob, logline.ClassJob, j.ID, c)
		}
		l.log.Logf(logline.EventJobUsage, logline.ClassJob, j.ID, "Exit_status=%d", exit)
		l.acct.Record(pbslog.AcctEnd, j.ID, AcctJobText(j)+"session="+j.Attrs.Get(pbsattr.JobSessionID)+
			" end="+strconv.FormatInt(h.Now().Unix(), 10)+" Exit_status="+strconv.Itoa(exit)+acctUsage(j))
		l.logOnJobExit(j, pbsattr.SubExiting)
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
		l.logOnJobExit(j, pbsattr.SubStageOut)
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
		tx := h.Begin()
		released = h.ReleaseDependents(tx, j, exit == 0)
		if !tx.Empty() {
			relWait = tx.Commit()
		}
	}
	h.Unlock()
	if relWait != nil {
		relWait()
	}
	if released {
		h.SchedNotify(batchreq.SCH_SCHEDULE_NEW)
	}

	if m, err := l.dialMom(host); err != nil {
		l.logError("on_job_exit", err.Error())
	} else {
		if rerun && !l.onServerHost(host) {
			// RERUN: the MOM returns the job's spooled stdout and
			// stderr with MvJobFile on a connection of its own.
			if p, err := m.Call(batchreq.PBS_BATCH_Rerun, &batchreq.JobID{ID: j.ID}, ""); err == nil && p.Code != 0 {
				text := "rerun req to " + host + " failed (rc=" + strconv.Itoa(p.Code) + ")"
				l.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, text)
				h.Lock()
				mails = append(mails, l.mailJob(j, 'o', true, text))
				h.Unlock()
			}
		}
		if copyReq != nil {
			if p, err := m.Call(batchreq.PBS_BATCH_CopyFiles, copyReq, ""); err == nil && p.Code != 0 {
				text := "Post job file processing error; job " + j.ID + " on host " + execHost
				l.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, text)
				h.Lock()
				j.Attrs.Set(pbsattr.JobSchedHint, text+"\n"+p.Text)
				mails = append(mails, l.mailJob(j, 'o', true, text+"\n"+p.Text))
				h.Unlock()
			}
		}
		if delReq != nil {
			if p, err := m.Call(batchreq.PBS_BATCH_DelFiles, delReq, ""); err == nil && p.Code != 0 {
				text := "Unable to delete files for job " + j.ID + ", on host " + execHost
				l.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, text)
				h.Lock()
				mails = append(mails, l.mailJob(j, 'o', true, text+"\n"+p.Text))
				h.Unlock()
			}
		}
		m.Call(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: j.ID}, "")
		m.Close()
	}

	h.Lock()
	if h.Jobs().Get(j.ID) != j {
		h.Unlock()
		return
	}
	tx := h.Begin()
	if rerun {
		l.requeue(tx, j)
		if h.Shutting() && execHost != "" {
			// HOTSTART: a job requeued by qterm -t immediate keeps
			// its hosts, where a hot start runs it again first
			// (spec 10 §8.6 RERUN3, spec 12 §16.1).
			j.Attrs.Set(pbsattr.JobExecHost, execHost)
		}
	} else {
		l.logOnJobExit(j, pbsattr.SubStageOut)
		j.Substate = pbsattr.SubExited
		l.logOnJobExit(j, pbsattr.SubExited)
		l.book.forget(j.ID)
		h.Complete(tx, j, exit == 0)
		h.RefreshNodeJobs()
	}
	wait := tx.Commit()
	h.Unlock()
	wait()
	for _, m := range mails {
		l.mail.Send(j.ID, m)
	}
	h.SchedNotify(batchreq.SCH_SCHEDULE_TERM)
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
// over a limit. Called with the lock held.
func (l *Link) exitMail(j *state.Job, exit int) *jobmail.Mail {
	if exit >= 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "Exit_status=%d", exit)
		for _, r := range j.Attrs.Resources(pbsattr.JobResourcesUsed) {
			b.WriteString("\nresources_used." + r.Resource + "=" + r.Value)
		}
		return l.mailJob(j, 'e', false, b.String())
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
	return l.mailJob(j, 'a', true, text)
}

// limitComment returns the comment of a job a GoPBS MOM killed over a
// limit ("job killed: walltime 9 exceeded limit 5", set from the obit),
// or "". Called with the lock held.
func limitComment(j *state.Job) string {
	if c := j.Attrs.Get(pbsattr.JobComment); strings.HasPrefix(c, "job killed: ") {
		return c
	}
	return ""
}

// pollJob asks a running job's MOM for its status and applies the
// reply.
func (l *Link) pollJob(id string) {
	h := l.host
	h.RLock()
	j := h.Jobs().Get(id)
	if j == nil || j.State != pbsattr.StateRunning {
		h.RUnlock()
		return
	}
	host := state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
	up := h.NodeUp(host)
	h.RUnlock()
	if !up {
		return
	}
	p, err := l.MomRequest(host, batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	if err != nil {
		return
	}
	h.Lock()
	if h.Jobs().Get(id) != j || j.State != pbsattr.StateRunning {
		h.Unlock()
		return
	}
	tx := h.Begin()
	switch {
	case p.Code == batchreq.PBSE_UNKJOBID:
		l.log.Logf(logline.EventJob, logline.ClassJob, id, "Job does not exist on node")
		l.acct.Record(pbslog.AcctAbort, id, "")
		l.book.forget(id)
		h.Complete(tx, j, false)
		h.RefreshNodeJobs()
	case p.Code == 0:
		for _, o := range p.Status {
			if o.Name == id {
				applyMomAttrs(j, o.Attrs)
				tx.SaveJob(j)
			}
		}
	}
	var wait func() error
	if !tx.Empty() {
		wait = tx.Commit()
	}
	h.Unlock()
	if wait != nil {
		wait()
	}
}
