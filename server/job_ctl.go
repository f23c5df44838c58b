package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/store"
)

// jobTargets resolves the job id of a job request: a plain job, or every
// sub-job of an array ("N[]", optionally restricted by array_range=).
func (s *Server) jobTargets(id, ext string) ([]*Job, *Job) {
	j := s.findJob(id)
	if j == nil {
		return nil, nil
	}
	if j.array == nil {
		return []*Job{j}, j
	}
	subs := append([]*Job(nil), j.array.subjobs...)
	if r, ok := strings.CutPrefix(ext, "array_range="); ok {
		idxs, _, ok := parseArrayRequest(r)
		if ok {
			want := map[int]bool{}
			for _, i := range idxs {
				want[i] = true
			}
			var sel []*Job
			for _, x := range subs {
				if want[x.arrayIdx] {
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
func (s *Server) permitted(c *conn, j *Job) bool {
	if c.perm.oper || c.perm.mgr || j.ownerUser() == c.req.User {
		return true
	}
	s.unauthorized(c, j)
	return false
}

// finishedState returns the text of the common job check's BADSTATE
// reply (spec 02 §8) for a job that is exiting or complete, or "" for a
// job in any other state.
func finishedState(j *Job) string {
	if j.state == pbsattr.StateExiting || j.state == pbsattr.StateComplete {
		return "invalid state for job - " + stateName(j.state)
	}
	return ""
}

func (s *Server) unknownJob(c *conn, id, msg string) {
	s.log.Log(logline.EventDebug, logline.ClassJob, id, "Unknown Job Id")
	c.reject(batchreq.PBSE_UNKJOBID, msg)
}

// commitAndReply submits ops (under the lock held by the caller), unlocks,
// waits for durability and sends reply p.
func (s *Server) commitAndReply(c *conn, ops []store.Op, p *batchreq.Reply) {
	if s.waitSaved(c, s.store.Submit(ops...)) {
		c.send(p)
	}
}

// waitSaved unlocks s.mu and waits for a submitted batch. If the batch
// could not be saved it answers the request with a system error and
// returns false.
func (s *Server) waitSaved(c *conn, wait func() error) bool {
	s.mu.Unlock()
	if err := wait(); err != nil {
		c.send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job"))
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
	var running []*Job
	for _, j := range targets {
		if j.state == pbsattr.StateComplete {
			continue
		}
		if j.state == pbsattr.StateRunning && !strings.HasPrefix(ext, "delpurge=") {
			running = append(running, j) // through the MOM (mom_signal.go)
			continue
		}
		ops = append(ops, s.deleteJob(j, c.requester())...)
		if j != top {
			// a sub-job deleted with its array: a later "qdel 5[1]" in
			// the same command was named while it existed
			s.consequent.note(j.id, j.ownerUser(), s.now())
		}
	}
	if top.array != nil && len(top.array.subjobs) == 0 && s.jobs[top.id] != nil {
		ops = append(ops, s.purgeJob(top)...)
	}
	if len(running) > 0 {
		s.deleteRunning(c, running, ops, ext)
		return
	}
	s.refreshNodeJobs()
	s.commitAndReply(c, ops, batchreq.NullReply())
}

func (s *Server) flag(idx int) bool {
	return isTrue(s.attrs.get(idx))
}

// deleteJob deletes a non-running job: it becomes COMPLETE and is purged
// now or after keep_completed.
func (s *Server) deleteJob(j *Job, requester string) []store.Op {
	s.log.Logf(logline.EventJob, logline.ClassJob, j.id, "Job deleted at request of %s", requester)
	s.acct.Record(pbslog.AcctDelete, j.id, "requestor="+requester)
	return s.completeJob(j, false)
}

// completeJob ends a job that did not run successfully (ok false) or
// did (ok true), handles its dependents and keep_completed.
func (s *Server) completeJob(j *Job, ok bool) []store.Op {
	var ops []store.Op
	changed, doomed := s.parentGone(j, ok)
	if p := j.parent; p != nil && p.array != nil {
		c, d := s.arrayEnded(p, ok)
		changed = append(append(changed, c...), p)
		doomed = append(doomed, d...)
	}
	if p := j.parent; p != nil && p.array != nil && j.hold&holdSlot == 0 {
		// a slot of the array is free: release one sibling held by the
		// slot limit
		for _, x := range p.array.subjobs {
			if x != j && x.hold&holdSlot != 0 {
				x.hold &^= holdSlot
				s.evaluate(x)
				changed = append(changed, x)
				break
			}
		}
	}
	s.setState(j, pbsattr.StateComplete, pbsattr.SubComplete)
	s.log.Logf(logline.EventJob, logline.ClassJob, "NULL", "on_job_exit valid pjob: %p (substate=%d)", j, pbsattr.SubComplete)
	now := s.now().Unix()
	j.attrs.set(pbsattr.JobCompTime, strconv.FormatInt(now, 10))
	keep := s.keepCompleted(j.queue)
	qname := ""
	if j.queue != nil {
		qname = j.queue.name
	}
	if keep > 0 {
		j.purgeAt = now + keep
		s.watchJob(j)
		s.touch(j)
		ops = append(ops, s.saveJobOp(j))
	} else {
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.id, "dequeuing from %s, state COMPLETE", qname)
		ops = append(ops, s.purgeJob(j)...)
	}
	for _, x := range changed {
		if s.jobs[x.id] != nil {
			ops = append(ops, s.saveJobOp(x))
		}
	}
	for _, x := range doomed {
		if s.jobs[x.id] == nil || x.state == pbsattr.StateComplete {
			continue
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, x.id, "Job deleted as result of dependency on job %s", j.id)
		s.acct.Record(pbslog.AcctAbort, x.id, "")
		s.consequent.note(x.id, x.ownerUser(), s.now())
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
	for j := s.head; j != nil; {
		next := j.next
		if j.state == pbsattr.StateComplete {
			ct, _ := strconv.ParseInt(j.attrs.get(pbsattr.JobCompTime), 10, 64)
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
	bits, ok := parseHold(letters)
	if !ok {
		s.mu.Unlock()
		c.rejectAttr(batchreq.PBSE_BADATVAL, &body.Attrs[0])
		return
	}
	if bits&holdSystem != 0 && !c.perm.mgr || bits&holdOther != 0 && !c.perm.oper && !c.perm.mgr {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_PERM, "")
		return
	}
	var ops []store.Op
	for _, j := range targets {
		if hold {
			j.hold |= bits
			s.log.Logf(logline.EventJob, logline.ClassJob, j.id, "Holds %s set at request of %s", letters, c.requester())
		} else {
			j.hold &^= bits
			if bits&holdSystem != 0 {
				// dependencies released by hand are dropped
				if j.substate == pbsattr.SubDepnHold || j.substate == pbsattr.SubSyncHold {
					j.substate = pbsattr.SubHeld
				}
			}
			s.log.Logf(logline.EventJob, logline.ClassJob, j.id, "Holds %s released at request of %s", letters, c.requester())
		}
		if j.state != pbsattr.StateRunning {
			if j.hold == 0 && (j.substate == pbsattr.SubDepnHold || j.substate == pbsattr.SubSyncHold) {
				j.substate = pbsattr.SubHeld
			}
			s.evaluate(j)
		}
		s.touch(j)
		ops = append(ops, s.saveJobOp(j))
	}
	if hold {
		s.holdRunning(c, targets, body, bits, ops) // checkpoint-hold of running jobs (mom_relay.go)
		return
	}
	released := false
	for _, j := range targets {
		released = released || j.state == pbsattr.StateQueued
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
	if released {
		// a released job asks for a cycle, remembered if one is in
		// progress (schedNotify); the tick would drop it then
		s.run.schedNotify(batchreq.SCH_SCHEDULE_NEW)
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
		s.log.Logf(logline.EventJob, logline.ClassJob, j.id, "Job Modified at request of %s", c.requester())
		ops = append(ops, s.saveJobOp(j))
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
	s.commitModify(c, targets, body, ops) // relays resource changes of running jobs (mom_relay.go)
}

// commentOnly reports whether a ModifyJob sets nothing but the job's
// comment (an attribute only operators, managers and the scheduler may
// set).
func commentOnly(list batchreq.AttrList) bool {
	if len(list) == 0 {
		return false
	}
	for _, a := range list {
		if jobDefs.find(a.Name) != pbsattr.JobComment {
			return false
		}
	}
	return true
}

// modifyJob applies a ModifyJob attribute list atomically.
func (s *Server) modifyJob(c *conn, j *Job, list batchreq.AttrList) *batchreq.Reply {
	if j.state == pbsattr.StateComplete || j.state == pbsattr.StateExiting {
		return batchreq.ErrorReply(batchreq.PBSE_BADSTATE, "", "invalid state for job - "+stateName(j.state))
	}
	if j.state == pbsattr.StateTransit {
		return batchreq.ErrorReply(batchreq.PBSE_BADSTATE, "", "")
	}
	na := j.attrs.clone()
	hold := j.hold
	depChanged := false
	for i := range list {
		a := &list[i]
		idx := jobDefs.find(a.Name)
		if idx < 0 || idx == unknownJobAttr {
			return batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)
		}
		d := jobDefs.defs[idx]
		if !c.perm.writable(d.perm) {
			return batchreq.ErrorReply(batchreq.PBSE_ATTRRO, "", "")
		}
		if j.state == pbsattr.StateRunning && d.flags&pbsattr.FlagAltRun == 0 {
			return batchreq.BadAttrReply(batchreq.PBSE_MODATRRUN, a)
		}
		switch d.typ {
		case pbsattr.TypeResourceList:
			res := strings.ToLower(a.Resource)
			rd, ok := resources[res]
			if !ok {
				if j.queue == nil || j.queue.isExec() {
					return batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
				}
				rd = rescDef{typ: pbsattr.TypeString}
			}
			if rd.perm != 0 && !c.perm.writable(rd.perm) { // known resources only
				return batchreq.ErrorReply(batchreq.PBSE_ATTRRO, "", "")
			}
			v, ok := decodeValue(rd.typ, a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			old, had := na.lookupRes(idx, res)
			if j.state == pbsattr.StateRunning && had && v != "" && !c.perm.oper && !c.perm.mgr {
				// seed 001: a running job's limits may only be lowered by its owner
				if cmp, ok := compareResource(rd.typ, v, old); ok && cmp > 0 {
					return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
				}
			}
			na.setRes(idx, res, v)
			if res == "nodes" {
				na.setRes(idx, "nodect", strconv.Itoa(nodeCount(v)))
				na.setRes(idx, "neednodes", v)
			}
			if j.queue != nil && v != "" {
				limit, ok := j.queue.attrs.lookupRes(pbsattr.QueueResourcesMax, res)
				if !ok {
					limit, ok = s.attrs.lookupRes(pbsattr.SrvResourcesMax, res)
				}
				if ok {
					if cmp, ok := compareResource(rd.typ, v, limit); ok && cmp > 0 {
						return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "")
					}
				}
			}
		case pbsattr.TypeHold:
			h, ok := parseHold(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			changedBits := h ^ (hold & 7)
			if changedBits&holdSystem != 0 && !c.perm.mgr || changedBits&holdOther != 0 && !c.perm.oper && !c.perm.mgr {
				return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
			}
			hold = hold&^7 | h
		case pbsattr.TypeDepend:
			deps, ok := s.parseDepend(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			na.set(idx, formatDepend(deps))
			depChanged = true
		default:
			v, ok := d.decode(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			if idx == pbsattr.JobVariableList {
				v = a.Value
			}
			na.set(idx, v)
		}
	}
	j.attrs = na
	j.hold = hold
	if depChanged && j.queue != nil && j.queue.isExec() {
		s.registerDeps(j)
		if dependHolds(s, j) {
			j.hold |= holdSystem
			j.substate = pbsattr.SubDepnHold
		}
	}
	if j.state != pbsattr.StateRunning {
		if j.hold&holdSystem == 0 && (j.substate == pbsattr.SubDepnHold || j.substate == pbsattr.SubSyncHold) {
			j.substate = pbsattr.SubHeld
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
	if j.state != pbsattr.StateQueued && j.state != pbsattr.StateHeld && j.state != pbsattr.StateWaiting {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADSTATE, finishedState(j))
		return
	}
	dest := s.parseDestination(body.Destination)
	if dest.addr != "" || dest.bad {
		s.moveRemote(c, j, dest)
		return
	}
	qname := dest.queue
	if qname == "" {
		qname = s.attrs.get(pbsattr.SrvDefaultQueue)
	}
	q := s.queueByName[qname]
	if q == nil {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_UNKQUE, "")
		return
	}
	old := j.queue
	if p := s.admit(j, q, c.host, c.perm.mgr); p != nil {
		s.mu.Unlock()
		c.send(p)
		return
	}
	ops := s.moveJob(j, old, q)
	s.log.Logf(logline.EventJob, logline.ClassJob, j.id, "Job moved to %s at request of %s", q.name, c.requester())
	s.commitAndReply(c, ops, batchreq.NullReply())
}

// moveJob moves a job between local queues.
func (s *Server) moveJob(j *Job, from, to *Queue) []store.Op {
	s.log.Logf(logline.EventDebug2, logline.ClassJob, j.id, "dequeuing from %s, state %s", from.name, stateName(j.state))
	s.dequeue(j)
	s.applyDefaults(j, to)
	s.enqueue(j, to)
	s.log.Logf(logline.EventDebug2, logline.ClassJob, j.id, "enqueuing into %s, state %d hop %s", to.name, j.state, hopCount(j))
	s.acct.Record(pbslog.AcctQueue, j.id, "queue="+to.name)
	var ops []store.Op
	if to.isExec() {
		for _, p := range s.registerDeps(j) {
			ops = append(ops, s.saveJobOp(p))
		}
		if dependHolds(s, j) {
			j.hold |= holdSystem
			j.substate = pbsattr.SubDepnHold
		}
	}
	s.evaluate(j)
	s.touch(j)
	return append(ops, s.saveJobOp(j))
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
	case a.state == pbsattr.StateRunning || b.state == pbsattr.StateRunning:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADSTATE, "")
		return
	}
	var ops []store.Op
	if a.queue != b.queue {
		qa, qb := a.queue, b.queue
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
	a.rank, b.rank = b.rank, a.rank
	ops = append(ops, s.saveJobOp(a), s.saveJobOp(b))
	s.commitAndReply(c, ops, batchreq.NullReply())
}

func (s *Server) handleRegistDep(c *conn, req *batchreq.Request) {
	if !c.perm.svr {
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	body := req.Body.(*batchreq.RegistDep)
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
		if strings.HasPrefix(t, "before") && parent.ownerUser() != body.Owner {
			s.mu.Unlock()
			c.reject(batchreq.PBSE_PERM, "")
			return
		}
		s.addDep(parent, mirror(t), child)
		s.touch(parent)
		ops = append(ops, s.saveJobOp(parent))
	case batchreq.JOB_DEPEND_OP_UNREG:
		s.removeDep(parent, mirror(t), child)
		ops = append(ops, s.saveJobOp(parent))
	case batchreq.JOB_DEPEND_OP_RELEASE:
		s.removeDep(parent, t, child)
		s.releaseDepHold(parent)
		ops = append(ops, s.saveJobOp(parent))
	case batchreq.JOB_DEPEND_OP_DELETE:
		ops = append(ops, s.completeJob(parent, false)...)
	default:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
}
