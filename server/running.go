package server

import (
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/state"
	"gopbs/server/store"
)

// replyWriter is how a request is answered by code that does not know the
// connection it came on: the transport's connections implement it.
type replyWriter = handler.ReplyWriter

// runningActions is what the job-control handlers ask of the MOM link for
// jobs that are running (the link implements it: mom_relay.go,
// mom_signal.go). Each method is called with Server.mu held, after the
// handler has made its changes and collected their store operations ops;
// it makes ops durable (releasing the lock), relays the request to the
// jobs' MOMs and answers through w.
type runningActions interface {
	// deleteRunning signals running jobs deleted by who to end (ext is
	// the DeleteJob extension, e.g. "deldelay=N").
	deleteRunning(w replyWriter, who handler.Asker, jobs []*state.Job, ops []store.Op, ext string)
	// holdRunning relays the hold (attrs, hold bits) of running
	// checkpointable jobs.
	holdRunning(w replyWriter, jobs []*state.Job, attrs batchreq.AttrList, bits int, ops []store.Op)
	// commitModify relays changes of Resource_List (attrs) of running
	// jobs.
	commitModify(w replyWriter, jobs []*state.Job, attrs batchreq.AttrList, ops []store.Op)
}
