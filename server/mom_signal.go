package server

import (
	"fmt"
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

// defaultKillDelay is the delay between SIGTERM and SIGKILL of a deleted
// running job when neither the request, the queue nor the server sets
// one (spec 10 §9.2).
const defaultKillDelay = 2

// staleExtension is the extension of the SignalJob requests TORQUE's
// server sends for qdel's SIGTERM and for relayed suspend/resume: six
// bytes of uninitialised memory, the low bytes of a heap address (spec
// 10 §6, table of requests; captures 62, 99, 100). The bytes carry no
// meaning and MOMs ignore them; GoPBS sends the ones of captures 99 and
// 100 so that the requests have TORQUE's size and shape.
const staleExtension = "\x40\x8e\xf2\x16\xd6\x55"

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
func (rl *runLink) runningTarget(c *handler.Conn, id string, needOper bool) (*state.Job, string) {
	s := rl.s
	s.mu.RLock()
	j := s.findJob(id)
	var owner, up bool
	var st pbsattr.JobStateNum
	var host string
	if j != nil {
		owner = j.OwnerUser() == c.Asker.User
		st = j.State
		host = motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		up = rl.nodeUp(host)
	}
	s.mu.RUnlock()
	oper := c.Asker.Operator || c.Asker.Manager
	switch {
	case j == nil:
		s.unknownJob(c, id, batchreq.MsgCannotLocateJob)
	case !oper && !owner:
		s.unauthorized(c, j)
		c.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
	case st == pbsattr.StateExiting || st == pbsattr.StateComplete:
		c.Reject(batchreq.PBSE_BADSTATE, "invalid state for job - "+state.StateName(st))
	case st != pbsattr.StateRunning:
		c.Reject(batchreq.PBSE_BADSTATE, "")
	case !oper && needOper:
		s.unauthorized(c, j)
		c.Reject(batchreq.PBSE_PERM, "")
	case !up && !(c.Request.Type == batchreq.PBS_BATCH_Rerun && c.Request.Extension == "force"):
		c.Reject(batchreq.PBSE_NORELYMOM, "")
	default:
		return j, host
	}
	return nil, ""
}

// unauthorized logs the security line of a refused job request.
func (s *Server) unauthorized(c *handler.Conn, j *state.Job) {
	s.log.Logf(logline.EventSecurity, logline.ClassJob, j.ID, "Unauthorized Request, request type: %d, Object: Job, Name: %s, request from: %s",
		c.Request.Type, j.ID, c.Asker.Requester())
}

// relayReply passes a MOM's reply (or a relay failure) to the client.
func relayReply(p *batchreq.Reply, err error) *batchreq.Reply {
	if err != nil {
		return batchreq.ErrorReply(batchreq.PBSE_NORELYMOM, "", "")
	}
	return p
}

// handleSignalJob relays qsig to the MOM (spec 10 §9.1).
func (rl *runLink) handleSignalJob(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	body := req.Body.(*batchreq.SignalJob)
	sig := strings.ToLower(body.Signal)
	susp := sig == "suspend" || sig == "resume"
	j, host := rl.runningTarget(c, body.JobID, susp)
	if j == nil {
		return
	}
	ext := ""
	if susp {
		ext = staleExtension
	}
	p, err := rl.momRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: body.Signal}, ext)
	p = relayReply(p, err)
	if p.Code == 0 && susp {
		s.mu.Lock()
		rl.mu.Lock()
		if sig == "suspend" {
			rl.suspended[j.ID] = true
		} else {
			delete(rl.suspended, j.ID)
		}
		rl.mu.Unlock()
		if s.jobs.Get(j.ID) == j && j.State == pbsattr.StateRunning {
			if sig == "suspend" {
				j.Substate = pbsattr.SubSuspend
			} else {
				j.Substate = pbsattr.SubRunning
			}
		}
		s.refreshNodeJobs()
		s.mu.Unlock()
	}
	c.Send(p)
}

// handleMessJob relays qmsg to the MOM.
func (rl *runLink) handleMessJob(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	body := req.Body.(*batchreq.MessJob)
	j, host := rl.runningTarget(c, body.JobID, false)
	if j == nil {
		return
	}
	p, err := rl.momRequest(host, batchreq.PBS_BATCH_MessJob, &batchreq.MessJob{JobID: j.ID, FileOpt: body.FileOpt, Message: body.Message}, "")
	p = relayReply(p, err)
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Message request to job status %d", p.Code)
	c.Send(p)
}

// handleCheckpointJob relays qchkpt for checkpointable jobs (spec 10
// §9.3).
func (rl *runLink) handleCheckpointJob(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	id := req.Body.(*batchreq.Manage).ObjName
	j, host := rl.runningTarget(c, id, false)
	if j == nil {
		return
	}
	s.mu.RLock()
	ok := checkpointable(j.Attrs.Get(pbsattr.JobCheckpoint))
	s.mu.RUnlock()
	if !ok {
		c.Reject(batchreq.PBSE_IVALREQ, "job is not checkpointable")
		return
	}
	p, err := rl.momRequest(host, batchreq.PBS_BATCH_CheckpointJob, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: j.ID}, "")
	p = relayReply(p, err)
	if p.Code == 0 {
		s.acct.Record(pbslog.AcctCheckpoint, j.ID, "Checkpointed")
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

// handleRerunJob serves qrerun of a running job (spec 10 §9.4): SIGKILL
// with extension "rerun"; the obit then requeues it.
func (rl *runLink) handleRerunJob(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	id := req.Body.(*batchreq.JobID).ID
	j, host := rl.runningTarget(c, id, true)
	if j == nil {
		return
	}
	s.mu.Lock()
	if !state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)) {
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_NORERUN, "")
		return
	}
	s.mu.Unlock()
	m, err := rl.dialMom(host)
	if err != nil {
		if req.Extension != "force" {
			c.Reject(batchreq.PBSE_MOMREJECT, "")
			return
		}
		// qrerun -f: requeue without the MOM (spec 10 §9.4)
		s.mu.Lock()
		var ops []store.Op
		var mail *mail
		if s.jobs.Get(j.ID) == j && j.State == pbsattr.StateRunning {
			s.acct.Record(pbslog.AcctRerun, j.ID, "")
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Rerun at request of %s", c.Asker.Requester())
			mail = s.mailJob(j, 'o', true, fmt.Sprintf("rerun req to %s failed (rc=%d), forcibly requeueing job, previous output files may be lost", host, batchreq.PBSE_NORELYMOM))
			s.launch.requeue(j)
			ops = append(ops, state.SaveJob(j))
		}
		s.commitAndReply(c, ops, batchreq.NullReply())
		s.sendMail(j.ID, mail)
		return
	}
	defer m.Close()
	s.mu.Lock()
	old := j.Substate
	j.Substate = pbsattr.SubRerun
	s.acct.Record(pbslog.AcctRerun, j.ID, "")
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Rerun at request of %s", c.Asker.Requester())
	s.mu.Unlock()
	c.OK()
	p, err := m.Call(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: "SIGKILL"}, "rerun")
	if err != nil || p.Code != 0 {
		s.mu.Lock()
		if s.jobs.Get(j.ID) == j && j.Substate == pbsattr.SubRerun {
			j.Substate = old
		}
		s.mu.Unlock()
	}
}

// deleteRunning handles qdel of running jobs (spec 10 §9.2): each gets
// the D record and SIGTERM through its MOM, and SIGKILL after the kill
// delay if it is still running. Called with s.mu held and the ops of the
// other targets; it unlocks, commits and replies.
func (rl *runLink) deleteRunning(w replyWriter, who handler.Asker, jobs []*state.Job, ops []store.Op, ext string) {
	s := rl.s
	type target struct {
		j     *state.Job
		host  string
		delay int64
	}
	var ts []target
	type mailFor struct {
		id string
		m  *mail
	}
	var mails []mailFor
	for _, j := range jobs {
		rl.mu.Lock()
		busy := rl.deleting[j.ID]
		rl.deleting[j.ID] = true
		rl.mu.Unlock()
		if busy {
			s.mu.Unlock()
			w.Reject(batchreq.PBSE_IVALREQ, "job cancel in progress")
			return
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted at request of %s", who.Requester())
		s.acct.Record(pbslog.AcctDelete, j.ID, "requestor="+who.Requester())
		if who.User != j.OwnerUser() {
			mails = append(mails, mailFor{j.ID, s.mailJob(j, 'd', true, "Job deleted at request of "+who.Requester())})
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
			delay = s.serverLong(pbsattr.SrvKillDelay, defaultKillDelay)
		}
		ts = append(ts, target{j: j, host: motherSuperior(j.Attrs.Get(pbsattr.JobExecHost)), delay: delay})
	}
	if !s.waitSaved(w, s.store.Submit(ops...)) { // no ops: nothing to wait for
		return
	}
	for _, m := range mails {
		go s.sendMail(m.id, m.m)
	}
	reply := batchreq.NullReply()
	for _, t := range ts {
		p, err := rl.momRequest(t.host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: t.j.ID, Signal: "SIGTERM"}, staleExtension)
		s.log.Logf(logline.EventJob, logline.ClassJob, t.j.ID, "Job sent signal SIGTERM on delete")
		switch {
		case err != nil:
			rl.forget(t.j.ID)
			reply = batchreq.ErrorReply(batchreq.PBSE_NORELYMOM, "", "")
			continue
		case p.Code == batchreq.PBSE_UNKJOBID:
			s.log.Logf(logline.EventJob, logline.ClassJob, t.j.ID, "MOM rejected signal during delete")
			rl.purgeDeleted(t.j, "")
			continue
		}
		go rl.killLater(t.j, t.host, time.Duration(t.delay)*time.Second)
		go rl.watchDeleted(t.j, t.host, time.Duration(t.delay)*time.Second)
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
func (rl *runLink) watchDeleted(j *state.Job, host string, delay time.Duration) {
	s := rl.s
	s.mu.RLock()
	force := time.Duration(s.serverLong(pbsattr.SrvJobForceCancelTime, 0)) * time.Second
	nanny := s.serverFlag(pbsattr.SrvJobNanny)
	s.mu.RUnlock()
	var forceC, nannyC <-chan time.Time
	if force > 0 {
		forceC = time.After(force)
	}
	if nanny {
		nannyC = time.After(delay + rl.nannyInterval)
	}
	for forceC != nil || nannyC != nil {
		select {
		case <-s.done:
			return
		case <-forceC:
			forceC = nil
			if rl.purgeDeleted(j, "purging job without checking MOM") {
				return
			}
		case <-nannyC:
			s.mu.RLock()
			alive := s.jobs.Get(j.ID) == j && (j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting)
			s.mu.RUnlock()
			if !alive {
				return
			}
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "exiting job '%s' still exists, sending a SIGKILL", j.ID)
			p, err := rl.momRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: "SIGKILL"}, "")
			if err == nil && p.Code == batchreq.PBSE_UNKJOBID && rl.purgeDeleted(j, "") {
				return
			}
			nannyC = time.After(rl.nannyInterval)
		}
	}
}

// purgeDeleted ends a deleted job on the server alone, freeing its
// nodes. It reports whether the job was still there.
func (rl *runLink) purgeDeleted(j *state.Job, why string) bool {
	s := rl.s
	s.mu.Lock()
	if s.jobs.Get(j.ID) != j || j.State == pbsattr.StateComplete {
		s.mu.Unlock()
		return false
	}
	if why != "" {
		s.log.Log(logline.EventJob, logline.ClassJob, j.ID, why)
	}
	rl.forget(j.ID)
	tx := s.db.Begin()
	s.life.Complete(tx, j, false)
	ops := tx.Ops()
	s.refreshNodeJobs()
	wait := s.store.Submit(ops...)
	s.mu.Unlock()
	wait()
	rl.s.sched.Notify(batchreq.SCH_SCHEDULE_TERM)
	return true
}

// killLater sends SIGKILL to a deleted job still running after delay.
func (rl *runLink) killLater(j *state.Job, host string, delay time.Duration) {
	select {
	case <-rl.s.done:
		return
	case <-time.After(delay):
	}
	s := rl.s
	s.mu.RLock()
	still := s.jobs.Get(j.ID) == j && j.State == pbsattr.StateRunning
	s.mu.RUnlock()
	if !still {
		return
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job sent signal SIGKILL on delete")
	rl.momRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: j.ID, Signal: "SIGKILL"}, "")
}

// handleRescQuery answers pbs_rescquery: for nodes=<spec> whether the
// specification could be satisfied now (1), later (0) or never (-1)
// (spec 12 §10.2).
func (rl *runLink) handleRescQuery(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	body, ok := req.Body.(*batchreq.Resc)
	if !ok {
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	var r batchreq.RescQueryReply
	s.mu.RLock()
	for _, q := range body.Queries {
		avail, alloc := 0, 0
		if spec, ok := strings.CutPrefix(q, "nodes="); ok {
			probe := &state.Job{}
			if _, bad := s.allocate(probe, spec); bad == nil {
				avail = 1
			} else if !s.admission.Satisfiable(spec) {
				avail = -1
			}
		}
		r.Avail = append(r.Avail, avail)
		r.Alloc = append(r.Alloc, alloc)
		r.Resvd = append(r.Resvd, 0)
		r.Down = append(r.Down, 0)
	}
	s.mu.RUnlock()
	c.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_RescQuery, Resc: r})
}
