package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/link/remote"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// jobTargets resolves the job id of a job request: a plain job, or every
// sub-job of an array ("N[]", optionally restricted by array_range=).
func (s *Server) jobTargets(id, ext string) ([]*state.Job, *state.Job) {
	j := s.findJob(id)
	if j == nil {
		return nil, nil
	}
	if j.Array == nil {
		return []*state.Job{j}, j
	}
	subs := append([]*state.Job(nil), j.Array.Subjobs...)
	if r, ok := strings.CutPrefix(ext, "array_range="); ok {
		idxs, _, ok := parseArrayRequest(r)
		if ok {
			want := map[int]bool{}
			for _, i := range idxs {
				want[i] = true
			}
			var sel []*state.Job
			for _, x := range subs {
				if want[x.ArrayIndex] {
					sel = append(sel, x)
				}
			}
			subs = sel
		}
	}
	return subs, j
}

// permitted reports whether the requester may act on the job (owner,
// operator or manager); otherwise it logs the security line.
func (s *Server) permitted(c *conn, j *state.Job) bool {
	if c.perm.oper || c.perm.mgr || j.OwnerUser() == c.req.User {
		return true
	}
	s.unauthorized(c, j)
	return false
}

// finishedState returns the text of the common job check's BADSTATE
// reply (spec 02 §8) for a job that is exiting or complete, or "" for a
// job in any other state.
func finishedState(j *state.Job) string {
	if j.State == pbsattr.StateExiting || j.State == pbsattr.StateComplete {
		return "invalid state for job - " + state.StateName(j.State)
	}
	return ""
}

func (s *Server) unknownJob(c *conn, id, msg string) {
	s.log.Log(logline.EventDebug, logline.ClassJob, id, "Unknown Job Id")
	c.reject(batchreq.PBSE_UNKJOBID, msg)
}

// commitAndReply submits ops (under the lock held by the caller), unlocks,
// waits for durability and sends reply p.
func (s *Server) commitAndReply(w replyWriter, ops []store.Op, p *batchreq.Reply) {
	if s.waitSaved(w, s.store.Submit(ops...)) {
		w.Send(p)
	}
}

// waitSaved unlocks s.mu and waits for a submitted batch. If the batch
// could not be saved it answers the request with a system error and
// returns false.
func (s *Server) waitSaved(w replyWriter, wait func() error) bool {
	s.mu.Unlock()
	if err := wait(); err != nil {
		w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job"))
		return false
	}
	return true
}

func (s *Server) handleDeleteJob(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	ext := req.Extension
	switch {
	case strings.HasPrefix(ext, "purgecomplete="):
		if !c.perm.oper && !c.perm.mgr {
			c.reject(batchreq.PBSE_PERM, "must have operator or manager privilege to use -c parameter")
			return
		}
		s.purgeComplete(c, ext)
		return
	case ext == "" || strings.HasPrefix(ext, "deldelay=") || ext == "delasync" || strings.HasPrefix(ext, "array_range="):
	case strings.HasPrefix(ext, "delpurge="):
		if !c.perm.oper && !c.perm.mgr && !s.flag(pbsattr.SrvOwnerPurge) {
			c.reject(batchreq.PBSE_PERM, "")
			return
		}
	default:
		if !c.perm.oper && !c.perm.mgr {
			c.reject(batchreq.PBSE_PERM, "must have operator or manager privilege to use -m parameter")
			return
		}
	}
	if ext == "delasync" {
		c.ok()
	}
	s.mu.Lock()
	targets, top := s.jobTargets(body.ObjName, ext)
	if top == nil {
		gone := s.removedAsConsequence(c, body.ObjName)
		s.mu.Unlock()
		if gone {
			// Removed by the deletion of a job it depended on, maybe
			// named earlier in the same qdel: it existed when the
			// client started, and it is deleted as asked.
			c.ok()
			return
		}
		s.unknownJob(c, body.ObjName, "")
		return
	}
	for _, j := range targets {
		if !s.permitted(c, j) {
			s.mu.Unlock()
			c.reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
			return
		}
	}
	var ops []store.Op
	var running []*state.Job
	for _, j := range targets {
		if j.State == pbsattr.StateComplete {
			continue
		}
		if j.State == pbsattr.StateRunning && !strings.HasPrefix(ext, "delpurge=") {
			running = append(running, j) // through the MOM (mom_signal.go)
			continue
		}
		ops = append(ops, s.deleteJob(j, c.requester())...)
		if j != top {
			// a sub-job deleted with its array: a later "qdel 5[1]" in
			// the same command was named while it existed
			s.consequent.note(j.ID, j.OwnerUser(), s.now())
		}
	}
	if top.Array != nil && len(top.Array.Subjobs) == 0 && s.jobs.Get(top.ID) != nil {
		ops = append(ops, s.purgeJob(top)...)
	}
	if len(running) > 0 {
		s.running.deleteRunning(c, c.asker(), running, ops, ext)
		return
	}
	s.refreshNodeJobs()
	s.commitAndReply(c, ops, batchreq.NullReply())
}

func (s *Server) flag(idx int) bool {
	return state.IsTrue(s.attrs.Get(idx))
}

// deleteJob deletes a non-running job: it becomes COMPLETE and is purged
// now or after keep_completed.
func (s *Server) deleteJob(j *state.Job, requester string) []store.Op {
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted at request of %s", requester)
	s.acct.Record(pbslog.AcctDelete, j.ID, "requestor="+requester)
	return s.completeJob(j, false)
}

// completeJob ends a job that did not run successfully (ok false) or
// did (ok true), handles its dependents and keep_completed.
func (s *Server) completeJob(j *state.Job, ok bool) []store.Op {
	var ops []store.Op
	changed, doomed := s.parentGone(j, ok)
	if p := j.Parent; p != nil && p.Array != nil {
		c, d := s.arrayEnded(p, ok)
		changed = append(append(changed, c...), p)
		doomed = append(doomed, d...)
	}
	if p := j.Parent; p != nil && p.Array != nil && j.Hold&state.HoldSlotLimit == 0 {
		// a slot of the array is free: release one sibling held by the
		// slot limit
		for _, x := range p.Array.Subjobs {
			if x != j && x.Hold&state.HoldSlotLimit != 0 {
				x.Hold &^= state.HoldSlotLimit
				s.evaluate(x)
				changed = append(changed, x)
				break
			}
		}
	}
	s.jobs.SetState(j, pbsattr.StateComplete, pbsattr.SubComplete)
	s.log.Logf(logline.EventJob, logline.ClassJob, "NULL", "on_job_exit valid pjob: %p (substate=%d)", j, pbsattr.SubComplete)
	now := s.now().Unix()
	j.Attrs.Set(pbsattr.JobCompTime, strconv.FormatInt(now, 10))
	keep := s.keepCompleted(j.Queue)
	qname := ""
	if j.Queue != nil {
		qname = j.Queue.Name
	}
	if keep > 0 {
		j.PurgeAt = now + keep
		s.jobs.Watch(j)
		s.touch(j)
		ops = append(ops, state.SaveJob(j))
	} else {
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state COMPLETE", qname)
		ops = append(ops, s.purgeJob(j)...)
	}
	for _, x := range changed {
		if s.jobs.Get(x.ID) != nil {
			ops = append(ops, state.SaveJob(x))
		}
	}
	for _, x := range doomed {
		if s.jobs.Get(x.ID) == nil || x.State == pbsattr.StateComplete {
			continue
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, x.ID, "Job deleted as result of dependency on job %s", j.ID)
		s.acct.Record(pbslog.AcctAbort, x.ID, "")
		s.consequent.note(x.ID, x.OwnerUser(), s.now())
		ops = append(ops, s.completeJob(x, false)...)
	}
	return ops
}

// purgeComplete handles qdel -c: completed jobs with comp_time <= t are
// purged.
func (s *Server) purgeComplete(c *conn, ext string) {
	t, _ := strconv.ParseInt(strings.TrimPrefix(ext, "purgecomplete="), 10, 64)
	s.mu.Lock()
	var ops []store.Op
	for j := s.jobs.First(); j != nil; {
		next := j.Next()
		if j.State == pbsattr.StateComplete {
			ct, _ := strconv.ParseInt(j.Attrs.Get(pbsattr.JobCompTime), 10, 64)
			if ct <= t {
				ops = append(ops, s.purgeJob(j)...)
			}
		}
		j = next
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
}

func (s *Server) handleHoldRelease(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	hold := req.Type == batchreq.PBS_BATCH_HoldJob
	// The common job checks come first (spec 02 §10: chk, then the
	// Hold_Types list, then the privilege its letters need).
	s.mu.Lock()
	targets, top := s.jobTargets(body.ObjName, req.Extension)
	if top == nil {
		s.mu.Unlock()
		s.unknownJob(c, body.ObjName, "")
		return
	}
	for _, j := range targets {
		if !s.permitted(c, j) {
			s.mu.Unlock()
			c.reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
			return
		}
	}
	for _, j := range targets {
		if msg := finishedState(j); msg != "" {
			s.mu.Unlock()
			c.reject(batchreq.PBSE_BADSTATE, msg)
			return
		}
	}
	if len(body.Attrs) != 1 || body.Attrs[0].Name != "Hold_Types" {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	letters := body.Attrs[0].Value
	bits, ok := state.ParseHold(letters)
	if !ok {
		s.mu.Unlock()
		c.rejectAttr(batchreq.PBSE_BADATVAL, &body.Attrs[0])
		return
	}
	if bits&state.HoldSystem != 0 && !c.perm.mgr || bits&state.HoldOther != 0 && !c.perm.oper && !c.perm.mgr {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_PERM, "")
		return
	}
	var ops []store.Op
	for _, j := range targets {
		if hold {
			j.Hold |= bits
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Holds %s set at request of %s", letters, c.requester())
		} else {
			j.Hold &^= bits
			if bits&state.HoldSystem != 0 {
				// dependencies released by hand are dropped
				if j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold {
					j.Substate = pbsattr.SubHeld
				}
			}
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Holds %s released at request of %s", letters, c.requester())
		}
		if j.State != pbsattr.StateRunning {
			if j.Hold == 0 && (j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold) {
				j.Substate = pbsattr.SubHeld
			}
			s.evaluate(j)
		}
		s.touch(j)
		ops = append(ops, state.SaveJob(j))
	}
	if hold {
		s.running.holdRunning(c, targets, body.Attrs, bits, ops) // checkpoint-hold of running jobs (mom_relay.go)
		return
	}
	released := false
	for _, j := range targets {
		released = released || j.State == pbsattr.StateQueued
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
	if released {
		// a released job asks for a cycle, remembered if one is in
		// progress (schedNotify); the tick would drop it then
		s.sched.Notify(batchreq.SCH_SCHEDULE_NEW)
	}
}

func (s *Server) handleModifyJob(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	async := req.Type == batchreq.PBS_BATCH_AsyModifyJob
	if async {
		c.ok()
	}
	s.mu.Lock()
	targets, top := s.jobTargets(body.ObjName, req.Extension)
	if top == nil {
		s.mu.Unlock()
		s.unknownJob(c, body.ObjName, batchreq.MsgCannotLocateJob)
		return
	}
	var ops []store.Op
	for _, j := range targets {
		if !s.permitted(c, j) {
			s.mu.Unlock()
			c.reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
			return
		}
		if p := s.modifyJob(c, j, body.Attrs); p != nil {
			s.mu.Unlock()
			c.send(p)
			return
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Modified at request of %s", c.requester())
		ops = append(ops, state.SaveJob(j))
	}
	if commentOnly(body.Attrs) {
		// The scheduler sets a comment on every job it cannot run, one
		// request after the other: an fdatasync per comment would make
		// its first cycle over a full queue last seconds. A comment is
		// acknowledged once it survives a crash of the server.
		if s.waitSaved(c, s.store.SubmitLogged(ops...)) {
			c.ok()
		}
		return
	}
	s.running.commitModify(c, targets, body.Attrs, ops) // relays resource changes of running jobs (mom_relay.go)
}

// commentOnly reports whether a ModifyJob sets nothing but the job's
// comment (an attribute only operators, managers and the scheduler may
// set).
func commentOnly(list batchreq.AttrList) bool {
	if len(list) == 0 {
		return false
	}
	for _, a := range list {
		if state.JobDefs.Find(a.Name) != pbsattr.JobComment {
			return false
		}
	}
	return true
}

// modifyJob applies a ModifyJob attribute list atomically.
func (s *Server) modifyJob(c *conn, j *state.Job, list batchreq.AttrList) *batchreq.Reply {
	if j.State == pbsattr.StateComplete || j.State == pbsattr.StateExiting {
		return batchreq.ErrorReply(batchreq.PBSE_BADSTATE, "", "invalid state for job - "+state.StateName(j.State))
	}
	if j.State == pbsattr.StateTransit {
		return batchreq.ErrorReply(batchreq.PBSE_BADSTATE, "", "")
	}
	na := j.Attrs.Clone()
	hold := j.Hold
	depChanged, nodesChanged := false, false
	for i := range list {
		a := &list[i]
		idx := state.JobDefs.Find(a.Name)
		if idx < 0 || idx == state.UnknownJobAttr {
			return batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)
		}
		d := state.JobDefs.Defs[idx]
		if !c.perm.writable(d.Perm) {
			return batchreq.ErrorReply(batchreq.PBSE_ATTRRO, "", "")
		}
		if j.State == pbsattr.StateRunning && d.Flags&pbsattr.FlagAltRun == 0 {
			return batchreq.BadAttrReply(batchreq.PBSE_MODATRRUN, a)
		}
		switch d.Type {
		case pbsattr.TypeResourceList:
			res := strings.ToLower(a.Resource)
			rd, ok := state.Resources[res]
			if !ok {
				if j.Queue == nil || j.Queue.IsExec() {
					return batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
				}
				rd = state.ResourceDef{Type: pbsattr.TypeString}
			}
			if rd.Perm != 0 && !c.perm.writable(rd.Perm) { // known state.Resources only
				return batchreq.ErrorReply(batchreq.PBSE_ATTRRO, "", "")
			}
			v, ok := state.DecodeValue(rd.Type, a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			old, had := na.LookupRes(idx, res)
			if j.State == pbsattr.StateRunning && had && v != "" && !c.perm.oper && !c.perm.mgr {
				// seed 001: a running job's limits may only be lowered by its owner
				if cmp, ok := state.CompareResource(rd.Type, v, old); ok && cmp > 0 {
					return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
				}
			}
			na.SetRes(idx, res, v)
			if res == "nodes" {
				nodesChanged = true
				na.SetRes(idx, "nodect", strconv.Itoa(nodeCount(v)))
				na.SetRes(idx, "neednodes", v)
			}
			if j.Queue != nil && v != "" {
				limit, ok := j.Queue.Attrs.LookupRes(pbsattr.QueueResourcesMax, res)
				if !ok {
					limit, ok = s.attrs.LookupRes(pbsattr.SrvResourcesMax, res)
				}
				if ok {
					if cmp, ok := state.CompareResource(rd.Type, v, limit); ok && cmp > 0 {
						return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "")
					}
				}
			}
		case pbsattr.TypeHold:
			h, ok := state.ParseHold(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			changedBits := h ^ (hold & 7)
			if changedBits&state.HoldSystem != 0 && !c.perm.mgr || changedBits&state.HoldOther != 0 && !c.perm.oper && !c.perm.mgr {
				return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
			}
			hold = hold&^7 | h
		case pbsattr.TypeDepend:
			deps, ok := s.parseDepend(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			na.Set(idx, formatDepend(deps))
			depChanged = true
		default:
			v, ok := d.Decode(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			if idx == pbsattr.JobVariableList {
				v = a.Value
			}
			na.Set(idx, v)
		}
	}
	if nodesChanged && j.Queue != nil && j.Queue.IsExec() && !s.feasible(na.GetRes(pbsattr.JobResourceList, "nodes")) {
		// the submission's check (job_admit.go), with its code and text
		return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", msgInfeasible)
	}
	j.Attrs = na
	j.Hold = hold
	if depChanged && j.Queue != nil && j.Queue.IsExec() {
		s.registerDeps(j)
		if dependHolds(s, j) {
			j.Hold |= state.HoldSystem
			j.Substate = pbsattr.SubDepnHold
		}
	}
	if j.State != pbsattr.StateRunning {
		if j.Hold&state.HoldSystem == 0 && (j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold) {
			j.Substate = pbsattr.SubHeld
		}
		s.evaluate(j)
	}
	s.touch(j)
	return nil
}

func (s *Server) handleMoveJob(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.MoveJob)
	s.mu.Lock()
	j := s.findJob(body.JobID)
	if j == nil {
		s.mu.Unlock()
		s.unknownJob(c, body.JobID, batchreq.MsgCannotLocateJob)
		return
	}
	if !s.permitted(c, j) {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
		return
	}
	if j.State != pbsattr.StateQueued && j.State != pbsattr.StateHeld && j.State != pbsattr.StateWaiting {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADSTATE, finishedState(j))
		return
	}
	dest := s.parseDestination(body.Destination)
	if dest.Addr != "" || dest.Bad {
		s.moveRemote(c, j, dest)
		return
	}
	qname := dest.Queue
	if qname == "" {
		qname = s.attrs.Get(pbsattr.SrvDefaultQueue)
	}
	q := s.queueByName[qname]
	if q == nil {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_UNKQUE, "")
		return
	}
	old := j.Queue
	if p := s.admit(j, q, c.host, c.perm.mgr); p != nil {
		s.mu.Unlock()
		c.send(p)
		return
	}
	ops := s.moveJob(j, old, q)
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job moved to %s at request of %s", q.Name, c.requester())
	s.commitAndReply(c, ops, batchreq.NullReply())
}

// moveJob moves a job between local queues.
func (s *Server) moveJob(j *state.Job, from, to *state.Queue) []store.Op {
	s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state %s", from.Name, state.StateName(j.State))
	s.jobs.Dequeue(j)
	s.applyDefaults(j, to)
	s.jobs.Enqueue(j, to)
	s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop %s", to.Name, j.State, remote.HopCount(j))
	s.acct.Record(pbslog.AcctQueue, j.ID, "queue="+to.Name)
	var ops []store.Op
	if to.IsExec() {
		for _, p := range s.registerDeps(j) {
			ops = append(ops, state.SaveJob(p))
		}
		if dependHolds(s, j) {
			j.Hold |= state.HoldSystem
			j.Substate = pbsattr.SubDepnHold
		}
	}
	s.evaluate(j)
	s.touch(j)
	return append(ops, state.SaveJob(j))
}

func (s *Server) handleOrderJob(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.MoveJob)
	s.mu.Lock()
	a, b := s.findJob(body.JobID), s.findJob(body.Destination)
	switch {
	case a == nil:
		s.mu.Unlock()
		s.unknownJob(c, body.JobID, batchreq.MsgCannotLocateJob)
		return
	case b == nil:
		s.mu.Unlock()
		s.unknownJob(c, body.Destination, batchreq.MsgCannotLocateJob)
		return
	case !s.permitted(c, a) || !s.permitted(c, b):
		s.mu.Unlock()
		c.reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
		return
	case finishedState(a) != "":
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADSTATE, finishedState(a))
		return
	case finishedState(b) != "":
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADSTATE, finishedState(b))
		return
	case a.State == pbsattr.StateRunning || b.State == pbsattr.StateRunning:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADSTATE, "")
		return
	}
	var ops []store.Op
	if a.Queue != b.Queue {
		qa, qb := a.Queue, b.Queue
		if p := s.admit(a, qb, c.host, true); p != nil {
			s.mu.Unlock()
			c.send(p)
			return
		}
		if p := s.admit(b, qa, c.host, true); p != nil {
			s.mu.Unlock()
			c.send(p)
			return
		}
		ops = append(ops, s.moveJob(a, qa, qb)...)
		ops = append(ops, s.moveJob(b, qb, qa)...)
	}
	a.Rank, b.Rank = b.Rank, a.Rank
	ops = append(ops, state.SaveJob(a), state.SaveJob(b))
	s.commitAndReply(c, ops, batchreq.NullReply())
}

func (s *Server) handleRegistDep(c *conn, req *batchreq.Request) {
	if !c.perm.svr {
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	body := req.Body.(*batchreq.RegistDep)
	if body.DepType == batchreq.JOB_DEPEND_TYPE_SYNCWITH {
		s.handleSyncDep(c, body) // sync_sets.go
		return
	}
	s.mu.Lock()
	parent := s.findJob(body.ParentID)
	if parent == nil {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_UNKJOBID, "")
		return
	}
	t := batchreq.DependName(body.DepType)
	child := body.ChildID
	if !strings.Contains(child, "@") {
		child += "@" + s.name
	}
	var ops []store.Op
	switch body.Op {
	case batchreq.JOB_DEPEND_OP_REGISTER:
		if strings.HasPrefix(t, "before") && parent.OwnerUser() != body.Owner {
			s.mu.Unlock()
			c.reject(batchreq.PBSE_PERM, "")
			return
		}
		s.addDep(parent, mirror(t), child)
		s.touch(parent)
		ops = append(ops, state.SaveJob(parent))
	case batchreq.JOB_DEPEND_OP_UNREG:
		s.removeDep(parent, mirror(t), child)
		ops = append(ops, state.SaveJob(parent))
	case batchreq.JOB_DEPEND_OP_RELEASE:
		s.removeDep(parent, t, child)
		s.releaseDepHold(parent)
		ops = append(ops, state.SaveJob(parent))
	case batchreq.JOB_DEPEND_OP_DELETE:
		ops = append(ops, s.completeJob(parent, false)...)
	default:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
}
