package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/pbslog"
	"gopbs/server/store"
)

// relayTarget is a running job whose MOM must hear of a change.
type relayTarget struct {
	j    *Job
	host string
}

// runningTargets returns the running jobs among jobs with their mother
// superiors. Called with s.mu held.
func (s *Server) runningTargets(jobs []*Job) []relayTarget {
	var out []relayTarget
	for _, j := range jobs {
		if j.state == pbsattr.StateRunning {
			out = append(out, relayTarget{j: j, host: motherSuperior(j.attrs.get(pbsattr.JobExecHost))})
		}
	}
	return out
}

// hasResourceList reports whether a ModifyJob list changes Resource_List.
func hasResourceList(list batchreq.AttrList) bool {
	for _, a := range list {
		if a.Name == "Resource_List" {
			return true
		}
	}
	return false
}

// commitModify finishes a ModifyJob: it commits ops (s.mu is held and
// released here) and, when Resource_List entries of running jobs
// changed, relays the request to their MOMs, whose error is the reply
// (spec 10 §9.5).
func (s *Server) commitModify(c *conn, jobs []*Job, body *batchreq.Manage, ops []store.Op) {
	var relay []relayTarget
	if hasResourceList(body.Attrs) {
		relay = s.runningTargets(jobs)
	}
	if len(relay) == 0 {
		s.commitAndReply(c, ops, batchreq.NullReply())
		return
	}
	if !s.waitSaved(c, s.store.Submit(ops...)) {
		return
	}
	reply := batchreq.NullReply()
	for _, t := range relay {
		p, err := s.run.momRequest(t.host, batchreq.PBS_BATCH_ModifyJob,
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: t.j.id, Attrs: body.Attrs}, "")
		if p = relayReply(p, err); p.Code != 0 {
			reply = p
		}
	}
	c.send(reply)
}

// holdRunning relays a hold of running checkpointable jobs to their
// MOMs (spec 10 §9.3). It is called with s.mu held after the hold bits
// were set, commits ops and replies. On a MOM failure the hold is
// removed again; PBSE_NOSUP (no checkpoint support) is acknowledged.
func (s *Server) holdRunning(c *conn, jobs []*Job, body *batchreq.Manage, bits int, ops []store.Op) {
	var relay []relayTarget
	for _, t := range s.runningTargets(jobs) {
		if checkpointable(t.j.attrs.get(pbsattr.JobCheckpoint)) {
			relay = append(relay, t)
		}
	}
	if len(relay) == 0 {
		s.commitAndReply(c, ops, batchreq.NullReply())
		return
	}
	if !s.waitSaved(c, s.store.Submit(ops...)) {
		return
	}
	reply := batchreq.NullReply()
	for _, t := range relay {
		p, err := s.run.momRequest(t.host, batchreq.PBS_BATCH_HoldJob,
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: t.j.id, Attrs: body.Attrs}, "")
		p = relayReply(p, err)
		s.mu.Lock()
		if s.jobs[t.j.id] == t.j && t.j.state == pbsattr.StateRunning {
			if p.Code == 0 {
				// the MOM checkpoints and ends the job; its obit requeues
				// it, held
				t.j.substate = pbsattr.SubRerun
				s.acct.Record(pbslog.AcctCheckpoint, t.j.id, "Checkpointed and held")
			} else {
				if p.Code != batchreq.PBSE_NOSUP {
					// Without checkpoint support the hold
					// stays, for the job's next run (seed 001,
					// Hold Job Request; TORQUE dropped it).
					t.j.hold &^= bits
				}
				t.j.substate = pbsattr.SubRunning
			}
		}
		w := s.store.Submit(s.saveJobOp(t.j))
		s.mu.Unlock()
		w()
		if p.Code != 0 && p.Code != batchreq.PBSE_NOSUP {
			reply = p
		}
	}
	c.send(reply)
}
