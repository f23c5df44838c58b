package jobctl

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
)

// Move serves a MoveJob: to a queue of this server, or through
// State.MoveRemote to another server.
func Move(st State, w handler.ReplyWriter, who *handler.Asker, req *batchreq.Request) {
	body := req.Body.(*batchreq.MoveJob)
	st.Lock()
	j := st.FindJob(body.JobID)
	if j == nil {
		st.Unlock()
		unknownJob(st, w, body.JobID, batchreq.MsgCannotLocateJob)
		return
	}
	if !permitted(st, who, req.Type, j) {
		st.Unlock()
		w.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
		return
	}
	if j.State != pbsattr.StateQueued && j.State != pbsattr.StateHeld && j.State != pbsattr.StateWaiting {
		st.Unlock()
		w.Reject(batchreq.PBSE_BADSTATE, finishedState(j))
		return
	}
	qname, remote := st.MoveRemote(w, who, j, body.Destination)
	if remote {
		return
	}
	if qname == "" {
		qname = st.Attrs().Get(pbsattr.SrvDefaultQueue)
	}
	q := st.Queue(qname)
	if q == nil {
		st.Unlock()
		w.Reject(batchreq.PBSE_UNKQUE, "")
		return
	}
	old := j.Queue
	if p := st.Admit(j, q, who.Host, who.Manager); p != nil {
		st.Unlock()
		w.Send(p)
		return
	}
	tx := st.Begin()
	st.Move(tx, j, old, q)
	st.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job moved to %s at request of %s", q.Name, who.Requester())
	handler.CommitAndReply(st, w, tx, batchreq.NullReply())
}

// Order serves an OrderJob: two jobs swap their places (queue and
// rank).
func Order(st State, w handler.ReplyWriter, who *handler.Asker, req *batchreq.Request) {
	body := req.Body.(*batchreq.MoveJob)
	st.Lock()
	a, b := st.FindJob(body.JobID), st.FindJob(body.Destination)
	switch {
	case a == nil:
		st.Unlock()
		unknownJob(st, w, body.JobID, batchreq.MsgCannotLocateJob)
		return
	case b == nil:
		st.Unlock()
		unknownJob(st, w, body.Destination, batchreq.MsgCannotLocateJob)
		return
	case !permitted(st, who, req.Type, a) || !permitted(st, who, req.Type, b):
		st.Unlock()
		w.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
		return
	case finishedState(a) != "":
		st.Unlock()
		w.Reject(batchreq.PBSE_BADSTATE, finishedState(a))
		return
	case finishedState(b) != "":
		st.Unlock()
		w.Reject(batchreq.PBSE_BADSTATE, finishedState(b))
		return
	case a.State == pbsattr.StateRunning || b.State == pbsattr.StateRunning:
		st.Unlock()
		w.Reject(batchreq.PBSE_BADSTATE, "")
		return
	}
	tx := st.Begin()
	if a.Queue != b.Queue {
		qa, qb := a.Queue, b.Queue
		if p := st.Admit(a, qb, who.Host, true); p != nil {
			st.Unlock()
			w.Send(p)
			return
		}
		if p := st.Admit(b, qa, who.Host, true); p != nil {
			st.Unlock()
			w.Send(p)
			return
		}
		st.Move(tx, a, qa, qb)
		st.Move(tx, b, qb, qa)
	}
	a.Rank, b.Rank = b.Rank, a.Rank
	tx.SaveJob(a)
	tx.SaveJob(b)
	handler.CommitAndReply(st, w, tx, batchreq.NullReply())
}
