// Package locate serves the locate and track family: LocateJob, where a
// job is, and TrackJob, a later location another server reports for a
// job that moved there (spec 02 §3.13, §10; spec 13 §10).
package locate

import (
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/state"
	"gopbs/server/store"
)

// State is what the family needs of the server.
type State interface {
	// RLock and RUnlock guard a read of the state, Lock a change.
	RLock()
	RUnlock()
	Lock()
	Unlock()
	// HasJob reports whether the job named as clients name it is on this
	// server. Called under the lock.
	HasJob(id string) bool
	// Tracking returns the tracking table. Called under the lock.
	Tracking() *state.Tracking
	// ServerName returns this server's name.
	ServerName() string
	// Commit is called with the lock held: it submits ops to the store,
	// releases the lock, waits until they are durable and sends p through
	// w, or a system error if they could not be saved.
	Commit(w handler.ReplyWriter, ops []store.Op, p *batchreq.Reply)
}

// TrackJob records the location another server reports for a job; only
// servers may send it.
func TrackJob(st State, w handler.ReplyWriter, who handler.Asker, b *batchreq.TrackJob) {
	if !who.Privileged {
		w.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	st.Lock()
	if st.HasJob(b.JobID) {
		st.Unlock()
		w.Send(batchreq.NullReply()) // the job is here: this server knows better
		return
	}
	ops := st.Tracking().Track(b.JobID, state.TrackEntry{Hop: b.HopCount, Location: b.Location, State: b.State})
	if len(ops) == 0 {
		st.Unlock()
		w.Send(batchreq.NullReply())
		return
	}
	st.Commit(w, ops, batchreq.NullReply())
}

// LocateJob answers where a job is: this server, the location the
// tracking table knows, or PBSE_UNKJOBID.
func LocateJob(st State, w handler.ReplyWriter, b *batchreq.JobID) {
	st.RLock()
	here := st.HasJob(b.ID)
	e, tracked := st.Tracking().Find(b.ID, st.ServerName())
	st.RUnlock()
	switch {
	case here:
		w.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: st.ServerName()})
	case tracked:
		w.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: e.Location})
	default:
		w.Reject(batchreq.PBSE_UNKJOBID, "")
	}
}
