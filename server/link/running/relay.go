package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// relayTarget is a running job whose MOM must hear of a change.
type relayTarget struct {
	j    *state.Job
	host string
}

// runningTargets returns the running jobs among jobs with their mother
// superiors. Called with s.mu held.
func runningTargets(jobs []*state.Job) []relayTarget {
	var out []relayTarget
	for _, j := range jobs {
		if j.State == pbsattr.StateRunning {
			out = append(out, relayTarget{j: j, host: motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))})
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
func (rl *runLink) commitModify(w replyWriter, jobs []*state.Job, attrs batchreq.AttrList, ops []store.Op) {
	s := rl.s
	var relay []relayTarget
	if hasResourceList(attrs) {
		relay = runningTargets(jobs)
	}
	if len(relay) == 0 {
		s.commitAndReply(w, ops, batchreq.NullReply())
		return
	}
	if !s.waitSaved(w, s.store.Submit(ops...)) {
		return
	}
	reply := batchreq.NullReply()
	for _, t := range relay {
		p, err := rl.momRequest(t.host, batchreq.PBS_BATCH_ModifyJob,
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: t.j.ID, Attrs: attrs}, "")
		if p = relayReply(p, err); p.Code != 0 {
			reply = p
		}
	}
	w.Send(reply)
}

// holdRunning relays a hold of running checkpointable jobs to their
// MOMs (spec 10 §9.3). It is called with s.mu held after the hold bits
// were set, commits ops and replies. On a MOM failure the hold is
// removed again; PBSE_NOSUP (no checkpoint support) is acknowledged.
func (rl *runLink) holdRunning(w replyWriter, jobs []*state.Job, attrs batchreq.AttrList, bits int, ops []store.Op) {
	s := rl.s
	var relay []relayTarget
	for _, t := range runningTargets(jobs) {
		if checkpointable(t.j.Attrs.Get(pbsattr.JobCheckpoint)) {
			relay = append(relay, t)
		}
	}
	if len(relay) == 0 {
		s.commitAndReply(w, ops, batchreq.NullReply())
		return
	}
	if !s.waitSaved(w, s.store.Submit(ops...)) {
		return
	}
	reply := batchreq.NullReply()
	for _, t := range relay {
		p, err := rl.momRequest(t.host, batchreq.PBS_BATCH_HoldJob,
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: t.j.ID, Attrs: attrs}, "")
		p = relayReply(p, err)
		s.mu.Lock()
		if s.jobs.Get(t.j.ID) == t.j && t.j.State == pbsattr.StateRunning {
			if p.Code == 0 {
				// the MOM checkpoints and ends the job; its obit requeues
				// it, held
				t.j.Substate = pbsattr.SubRerun
				s.acct.Record(pbslog.AcctCheckpoint, t.j.ID, "Checkpointed and held")
			} else {
				if p.Code != batchreq.PBSE_NOSUP {
					// Without checkpoint support the hold
					// stays, for the job's next run (seed 001,
					// Hold Job Request; TORQUE dropped it).
					t.j.Hold &^= bits
				}
				t.j.Substate = pbsattr.SubRunning
			}
		}
		w := s.store.Submit(state.SaveJob(t.j))
		s.mu.Unlock()
		w()
		if p.Code != 0 && p.Code != batchreq.PBSE_NOSUP {
			reply = p
		}
	}
	w.Send(reply)
}
