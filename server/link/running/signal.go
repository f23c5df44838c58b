package running

import (
	"fmt"
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
	"gopbs/server/store"
)

// defaultKillDelay is the delay between SIGTERM and SIGKILL of a deleted
// running job when neither the request, the queue nor the server sets
// one (spec 10 §9.2).
const defaultKillDelay = 2

// StaleExtension is the extension of the SignalJob requests TORQUE's
// server sends for qdel's SIGTERM and for relayed suspend/resume: six
// bytes of uninitialised memory, the low bytes of a heap address (spec
// 10 §6, table of requests; captures 62, 99, 100). The bytes carry no
// meaning and MOMs ignore them; GoPBS sends the ones of captures 99 and
// 100 so that the requests have TORQUE's size and shape.
const StaleExtension = "\x40\x8e\xf2\x16\xd6\x55"

// runningTarget looks up the job of a relayed request and checks that
// it is running and that the requester may act on it. It returns the
// mother superior host or sends the rejection and returns "".
//
// The checks come in TORQUE's order (spec 02 §8 and §10): the common job
// checks (unknown job; a requester who is neither the owner nor an
// operator or manager; a job exiting or complete), then the state (the job
// must be running), and only then the operator privilege that suspend,
// resume and rerun need: the owner's qrerun of a queued job is "Request
// invalid for state of job", not "Unauthorized Request".
func (l *Link) runningTarget(c *handler.Conn, req *batchreq.Request, id string, needOper bool) (*state.Job, string) {
	h := l.host
	h.RLock()
	j := h.FindJob(id)
	var owner, up bool
	var st pbsattr.JobStateNum
	var host string
	if j != nil {
		owner = j.OwnerUser() == c.Asker.User
		st = j.State
		host = state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		up = h.NodeUp(host)
	}
	h.RUnlock()
	oper := c.Asker.Operator || c.Asker.Manager
	switch {
	case j == nil:
		l.unknownJob(c, id, batchreq.MsgCannotLocateJob)
	case !oper && !owner:
		handler.LogUnauthorized(l.log, req.Type, j.ID, &c.Asker)
		c.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
	case st == pbsattr.StateExiting || st == pbsattr.StateComplete:
		c.Reject(batchreq.PBSE_BADSTATE, "invalid state for job - "+state.StateName(st))
	case st != pbsattr.StateRunning:
		c.Reject(batchreq.PBSE_BADSTATE, "")
	case !oper && needOper:
		handler.LogUnauthorized(l.log, req.Type, j.ID, &c.Asker)
		c.Reject(batchreq.PBSE_PERM, "")
	case !up && !(req.Type == batchreq.PBS_BATCH_Rerun && req.Extension == "force"):
		c.Reject(batchreq.PBSE_NORELYMOM, "")
	default:
		return j, host
	}
	return nil, ""
}

// relayReply passes a MOM's reply (or a relay failure) to the client.
func relayReply(p *batchreq.Reply, err error) *batchreq.Reply {
	if err != nil {
		return batchreq.ErrorReply(batchreq.PBSE_NORELYMOM, "", "")
	}
	return p
}

// SignalJob relays qsig to the MOM (spec 10 §9.1).
func (l *Link) SignalJob(c *handler.Conn, req *batchreq.Request) {
	h := l.host
	body := req.Body.(*batchreq.SignalJob)
	sig := strings.ToLower(body.Signal)
	susp := sig == "suspend" || sig == "resume"
	j, host := l.runningTarget(c, req, body.JobID, susp)
	if j == nil {
		return
	}
	ext := ""
	if susp {
		ext = StaleExtension
	}
	p, err := l.MomRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: body.Signal}, ext)
	p = relayReply(p, err)
	if p.Code == 0 && susp {
		h.Lock()
		l.book.setSuspended(j.ID, sig == "suspend")
		if h.Jobs().Get(j.ID) == j && j.State == pbsattr.StateRunning {
			if sig == "suspend" {
				j.Substate = pbsattr.SubSuspend
			} else {
				j.Substate = pbsattr.SubRunning
			}
		}
		h.RefreshNodeJobs()
		h.Unlock()
	}
	c.Send(p)
}

// MessJob relays qmsg to the MOM.
func (l *Link) MessJob(c *handler.Conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.MessJob)
	j, host := l.runningTarget(c, req, body.JobID, false)
	if j == nil {
		return
	}
	p, err := l.MomRequest(host, batchreq.PBS_BATCH_MessJob, &batchreq.MessJob{JobID: j.ID, FileOpt: body.FileOpt, Message: body.Message}, "")
	p = relayReply(p, err)
	l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Message request to job status %d", p.Code)
	c.Send(p)
}

// CheckpointJob relays qchkpt for checkpointable jobs (spec 10 §9.3).
func (l *Link) CheckpointJob(c *handler.Conn, req *batchreq.Request) {
	h := l.host
	id := req.Body.(*batchreq.Manage).ObjName
	j, host := l.runningTarget(c, req, id, false)
	if j == nil {
		return
	}
	h.RLock()
	ok := checkpointable(j.Attrs.Get(pbsattr.JobCheckpoint))
	h.RUnlock()
	if !ok {
		c.Reject(batchreq.PBSE_IVALREQ, "job is not checkpointable")
		return
	}
	p, err := l.MomRequest(host, batchreq.PBS_BATCH_CheckpointJob, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: j.ID}, "")
	p = relayReply(p, err)
	if p.Code == 0 {
		l.acct.Record(pbslog.AcctCheckpoint, j.ID, "Checkpointed")
	}
	c.Send(p)
}

// checkpointable reports whether a Checkpoint value allows a checkpoint:
// s, c, c=<interval> or enabled among its comma-separated tokens.
func checkpointable(v string) bool {
	for _, t := range strings.Split(v, ",") {
		t = strings.TrimSpace(t)
		if t == "s" || t == "c" || t == "enabled" || strings.HasPrefix(t, "c=") {
			return true
		}
	}
	return false
}

// RerunJob serves qrerun of a running job (spec 10 §9.4): SIGKILL with
// extension "rerun"; the obit then requeues it.
func (l *Link) RerunJob(c *handler.Conn, req *batchreq.Request) {
	h := l.host
	id := req.Body.(*batchreq.JobID).ID
	j, host := l.runningTarget(c, req, id, true)
	if j == nil {
		return
	}
	h.Lock()
	if !state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)) {
		h.Unlock()
		c.Reject(batchreq.PBSE_NORERUN, "")
		return
	}
	h.Unlock()
	m, err := l.dialMom(host)
	if err != nil {
		if req.Extension != "force" {
			c.Reject(batchreq.PBSE_MOMREJECT, "")
			return
		}
		// qrerun -f: requeue without the MOM (spec 10 §9.4)
		h.Lock()
		tx := h.Begin()
		var mail *jobmail.Mail
		if h.Jobs().Get(j.ID) == j && j.State == pbsattr.StateRunning {
			l.acct.Record(pbslog.AcctRerun, j.ID, "")
			l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Rerun at request of %s", c.Asker.Requester())
			mail = l.mailJob(j, 'o', true, fmt.Sprintf("rerun req to %s failed (rc=%d), forcibly requeueing job, previous output files may be lost", host, batchreq.PBSE_NORELYMOM))
			l.requeue(tx, j)
		}
		handler.CommitAndReply(h, c, tx, batchreq.NullReply())
		l.mail.Send(j.ID, mail)
		return
	}
	defer m.Close()
	h.Lock()
	old := j.Substate
	j.Substate = pbsattr.SubRerun
	l.acct.Record(pbslog.AcctRerun, j.ID, "")
	l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Rerun at request of %s", c.Asker.Requester())
	h.Unlock()
	c.Send(batchreq.NullReply())
	p, err := m.Call(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: "SIGKILL"}, "rerun")
	if err != nil || p.Code != 0 {
		h.Lock()
		if h.Jobs().Get(j.ID) == j && j.Substate == pbsattr.SubRerun {
			j.Substate = old
		}
		h.Unlock()
	}
}

// DeleteRunning implements handler.Running: qdel of running jobs (spec
// 10 §9.2). Each gets the D record and SIGTERM through its MOM, and
// SIGKILL after the kill delay if it is still running. Called with the
// lock held and the ops of the other targets; it unlocks, commits and
// replies.
func (l *Link) DeleteRunning(w handler.ReplyWriter, who handler.Asker, jobs []*state.Job, ops []store.Op, ext string) {
	h := l.host
	type target struct {
		j     *state.Job
		host  string
		delay int64
	}
	var ts []target
	type mailFor struct {
		id string
		m  *jobmail.Mail
	}
	var mails []mailFor
	for _, j := range jobs {
		if !l.book.startDelete(j.ID) {
			h.Unlock()
			w.Reject(batchreq.PBSE_IVALREQ, "job cancel in progress")
			return
		}
		l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted at request of %s", who.Requester())
		l.acct.Record(pbslog.AcctDelete, j.ID, "requestor="+who.Requester())
		if who.User != j.OwnerUser() {
			mails = append(mails, mailFor{j.ID, l.mailJob(j, 'd', true, "Job deleted at request of "+who.Requester())})
		}
		delay := int64(-1)
		if v, ok := strings.CutPrefix(ext, "deldelay="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				delay = n
			}
		}
		if delay < 0 && j.Queue != nil {
			if n, ok := j.Queue.Long(pbsattr.QueueKillDelay); ok {
				delay = n
			}
		}
		if delay < 0 {
			delay = attrLong(h.Attrs(), pbsattr.SrvKillDelay, defaultKillDelay)
		}
		ts = append(ts, target{j: j, host: state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost)), delay: delay})
	}
	if !l.commit(w, ops) { // no ops: nothing to wait for
		return
	}
	for _, m := range mails {
		go l.mail.Send(m.id, m.m)
	}
	reply := batchreq.NullReply()
	for _, t := range ts {
		p, err := l.MomRequest(t.host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: t.j.ID, Signal: "SIGTERM"}, StaleExtension)
		l.log.Logf(logline.EventJob, logline.ClassJob, t.j.ID, "Job sent signal SIGTERM on delete")
		switch {
		case err != nil:
			l.book.forget(t.j.ID)
			reply = batchreq.ErrorReply(batchreq.PBSE_NORELYMOM, "", "")
			continue
		case p.Code == batchreq.PBSE_UNKJOBID:
			l.log.Logf(logline.EventJob, logline.ClassJob, t.j.ID, "MOM rejected signal during delete")
			l.purgeDeleted(t.j, "")
			continue
		}
		go l.killLater(t.j, t.host, time.Duration(t.delay)*time.Second)
		go l.watchDeleted(t.j, t.host, time.Duration(t.delay)*time.Second)
	}
	w.Send(reply)
}

// nannyInterval is how often the job nanny re-sends SIGKILL to a deleted
// job that has not ended (spec 10 §9.2).
const nannyInterval = 60 * time.Second

// watchDeleted runs after a running job's delete was acknowledged: with
// job_force_cancel_time the job is purged without the MOM once it
// passes; with job_nanny SIGKILL is repeated every minute after
// delay+60 s while the job still exists.
func (l *Link) watchDeleted(j *state.Job, host string, delay time.Duration) {
	h := l.host
	h.RLock()
	attrs := h.Attrs()
	force := time.Duration(attrLong(attrs, pbsattr.SrvJobForceCancelTime, 0)) * time.Second
	nanny := state.IsTrue(attrs.Get(pbsattr.SrvJobNanny))
	h.RUnlock()
	var forceC, nannyC <-chan time.Time
	if force > 0 {
		forceC = time.After(force)
	}
	if nanny {
		nannyC = time.After(delay + l.NannyInterval)
	}
	for forceC != nil || nannyC != nil {
		select {
		case <-l.cfg.Done:
			return
		case <-forceC:
			forceC = nil
			if l.purgeDeleted(j, "purging job without checking MOM") {
				return
			}
		case <-nannyC:
			h.RLock()
			alive := h.Jobs().Get(j.ID) == j && (j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting)
			h.RUnlock()
			if !alive {
				return
			}
			l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "exiting job '%s' still exists, sending a SIGKILL", j.ID)
			p, err := l.MomRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: "SIGKILL"}, "")
			if err == nil && p.Code == batchreq.PBSE_UNKJOBID && l.purgeDeleted(j, "") {
				return
			}
			nannyC = time.After(l.NannyInterval)
		}
	}
}

// purgeDeleted ends a deleted job on the server alone, freeing its
// nodes. It reports whether the job was still there.
func (l *Link) purgeDeleted(j *state.Job, why string) bool {
	h := l.host
	h.Lock()
	if h.Jobs().Get(j.ID) != j || j.State == pbsattr.StateComplete {
		h.Unlock()
		return false
	}
	if why != "" {
		l.log.Log(logline.EventJob, logline.ClassJob, j.ID, why)
	}
	l.book.forget(j.ID)
	tx := h.Begin()
	h.Complete(tx, j, false)
	h.RefreshNodeJobs()
	wait := tx.Commit()
	h.Unlock()
	wait()
	h.SchedNotify(batchreq.SCH_SCHEDULE_TERM)
	return true
}

// killLater sends SIGKILL to a deleted job still running after delay.
func (l *Link) killLater(j *state.Job, host string, delay time.Duration) {
	select {
	case <-l.cfg.Done:
		return
	case <-time.After(delay):
	}
	h := l.host
	h.RLock()
	still := h.Jobs().Get(j.ID) == j && j.State == pbsattr.StateRunning
	h.RUnlock()
	if !still {
		return
	}
	l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job sent signal SIGKILL on delete")
	l.MomRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: "SIGKILL"}, "")
}
