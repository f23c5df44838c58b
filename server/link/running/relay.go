package running

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
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
// superiors. Called with the lock held.
func runningTargets(jobs []*state.Job) []relayTarget {
	var out []relayTarget
	for _, j := range jobs {
		if j.State == pbsattr.StateRunning {
			out = append(out, relayTarget{j: j, host: state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))})
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

// CommitModify implements handler.Running: it finishes a ModifyJob,
// committing ops (the lock is held and released here) and, when
// Resource_List entries of running jobs changed, relaying the request to
// their MOMs, whose error is the reply (spec 10 §9.5).
func (l *Link) CommitModify(w handler.ReplyWriter, jobs []*state.Job, attrs batchreq.AttrList, ops []store.Op) {
	var relay []relayTarget
	if hasResourceList(attrs) {
		relay = runningTargets(jobs)
	}
	if len(relay) == 0 {
		handler.CommitAndReply(l.host, w, l.txOf(ops), batchreq.NullReply())
		return
	}
	if !l.commit(w, ops) {
		return
	}
	reply := batchreq.NullReply()
	for _, t := range relay {
		p, err := l.MomRequest(t.host, batchreq.PBS_BATCH_ModifyJob,
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: t.j.ID, Attrs: attrs}, "")
		if p = relayReply(p, err); p.Code != 0 {
			reply = p
		}
	}
	w.Send(reply)
}

// HoldRunning implements handler.Running: it relays a hold of running
// checkpointable jobs to their MOMs (spec 10 §9.3). It is called with
// the lock held after the hold bits were set, commits ops and replies.
// On a MOM failure the hold is removed again; PBSE_NOSUP (no checkpoint
// support) is acknowledged.
func (l *Link) HoldRunning(w handler.ReplyWriter, jobs []*state.Job, attrs batchreq.AttrList, bits int, ops []store.Op) {
	h := l.host
	var relay []relayTarget
	for _, t := range runningTargets(jobs) {
		if checkpointable(t.j.Attrs.Get(pbsattr.JobCheckpoint)) {
			relay = append(relay, t)
		}
	}
	if len(relay) == 0 {
		handler.CommitAndReply(h, w, l.txOf(ops), batchreq.NullReply())
		return
	}
	if !l.commit(w, ops) {
		return
	}
	reply := batchreq.NullReply()
	for _, t := range relay {
		p, err := l.MomRequest(t.host, batchreq.PBS_BATCH_HoldJob,
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: t.j.ID, Attrs: attrs}, "")
		p = relayReply(p, err)
		h.Lock()
		if h.Jobs().Get(t.j.ID) == t.j && t.j.State == pbsattr.StateRunning {
			if p.Code == 0 {
				// the MOM checkpoints and ends the job; its obit requeues
				// it, held
				t.j.Substate = pbsattr.SubRerun
				l.acct.Record(pbslog.AcctCheckpoint, t.j.ID, "Checkpointed and held")
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
		tx := h.Begin()
		tx.SaveJob(t.j)
		wait := tx.Commit()
		h.Unlock()
		wait()
		if p.Code != 0 && p.Code != batchreq.PBSE_NOSUP {
			reply = p
		}
	}
	w.Send(reply)
}

// txOf returns a transaction holding the store operations ops a handler
// collected (the lock is held).
func (l *Link) txOf(ops []store.Op) *state.Txn {
	tx := l.host.Begin()
	tx.Put(ops...)
	return tx
}

// commit makes ops durable: it submits them in a transaction, releases
// the lock and waits. If they could not be saved it answers the request
// with a system error and returns false.
func (l *Link) commit(w handler.ReplyWriter, ops []store.Op) bool {
	wait := l.txOf(ops).Commit()
	l.host.Unlock()
	if err := wait(); err != nil {
		w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job"))
		return false
	}
	return true
}
