package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/link/remote"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// The job life cycle's server side, shared by the request handlers and
// the links: resolving a request's jobs, a job's completion and deletion,
// moves between local queues, and the RegistDep request through which
// servers register dependencies. The job-control requests themselves are
// package jobctl's (jobctl_state.go adapts the server to it).

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
		idxs, _, ok := state.ParseArrayRequest(r)
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
func (s *Server) permitted(c *handler.Conn, j *state.Job) bool {
	if c.Asker.Operator || c.Asker.Manager || j.OwnerUser() == c.Asker.User {
		return true
	}
	s.unauthorized(c, j)
	return false
}

func (s *Server) unknownJob(c *handler.Conn, id, msg string) {
	s.log.Log(logline.EventDebug, logline.ClassJob, id, "Unknown Job Id")
	c.Reject(batchreq.PBSE_UNKJOBID, msg)
}

// commitAndReply submits the batch ops (under the lock held by the caller), unlocks,
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

func (s *Server) flag(idx int) bool {
	return state.IsTrue(s.attrs.Get(idx))
}

// deleteJob deletes a non-running job: it becomes COMPLETE and is purged
// now or after keep_completed.
func (s *Server) deleteJob(tx *state.Txn, j *state.Job, requester string) {
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted at request of %s", requester)
	s.acct.Record(pbslog.AcctDelete, j.ID, "requestor="+requester)
	s.completeJob(tx, j, false)
}

// completeJob ends a job that did not run successfully (ok false) or
// did (ok true), handles its dependents and keep_completed, in tx.
func (s *Server) completeJob(tx *state.Txn, j *state.Job, ok bool) {
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
	tx.SetState(j, pbsattr.StateComplete, pbsattr.SubComplete)
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
	} else {
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state COMPLETE", qname)
		s.purgeJob(tx, j)
	}
	for _, x := range changed {
		if s.jobs.Get(x.ID) != nil {
			tx.SaveJob(x)
		}
	}
	for _, x := range doomed {
		if s.jobs.Get(x.ID) == nil || x.State == pbsattr.StateComplete {
			continue
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, x.ID, "Job deleted as result of dependency on job %s", j.ID)
		s.acct.Record(pbslog.AcctAbort, x.ID, "")
		s.consequent.note(x.ID, x.OwnerUser(), s.now())
		s.completeJob(tx, x, false)
	}
}

// moveJob moves a job between local queues, in tx.
func (s *Server) moveJob(tx *state.Txn, j *state.Job, from, to *state.Queue) {
	s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state %s", from.Name, state.StateName(j.State))
	tx.Dequeue(j)
	s.admission.ApplyDefaults(j, to)
	tx.Enqueue(j, to)
	s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop %s", to.Name, j.State, remote.HopCount(j))
	s.acct.Record(pbslog.AcctQueue, j.ID, "queue="+to.Name)
	if to.IsExec() {
		for _, p := range s.registerDeps(j) {
			tx.SaveJob(p)
		}
		if dependHolds(s, j) {
			j.Hold |= state.HoldSystem
			j.Substate = pbsattr.SubDepnHold
		}
	}
	s.evaluate(j)
	s.touch(j)
}

func (s *Server) handleRegistDep(c *handler.Conn, req *batchreq.Request) {
	if !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_IVALREQ, "")
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
		c.Reject(batchreq.PBSE_UNKJOBID, "")
		return
	}
	t := batchreq.DependName(body.DepType)
	child := body.ChildID
	if !strings.Contains(child, "@") {
		child += "@" + s.name
	}
	tx := s.db.Begin()
	switch body.Op {
	case batchreq.JOB_DEPEND_OP_REGISTER:
		if strings.HasPrefix(t, "before") && parent.OwnerUser() != body.Owner {
			s.mu.Unlock()
			c.Reject(batchreq.PBSE_PERM, "")
			return
		}
		s.addDep(parent, mirror(t), child)
		s.touch(parent)
		tx.SaveJob(parent)
	case batchreq.JOB_DEPEND_OP_UNREG:
		s.removeDep(parent, mirror(t), child)
		tx.SaveJob(parent)
	case batchreq.JOB_DEPEND_OP_RELEASE:
		s.removeDep(parent, t, child)
		s.releaseDepHold(parent)
		tx.SaveJob(parent)
	case batchreq.JOB_DEPEND_OP_DELETE:
		s.completeJob(tx, parent, false)
	default:
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	s.commitAndReply(c, tx.Ops(), batchreq.NullReply())
}
