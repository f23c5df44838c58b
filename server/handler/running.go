package handler

import (
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// Running is what the job-control handlers ask of the MOM link for jobs
// that are running. Each method is called with the server's lock held,
// after the handler has made its changes and taken their store batch
// ops; it makes ops durable (releasing the lock), relays the request to
// the jobs' MOMs and answers through w.
type Running interface {
	// DeleteRunning signals running jobs deleted by who to end (ext is
	// the DeleteJob extension, e.g. "deldelay=N").
	DeleteRunning(w ReplyWriter, who Asker, jobs []*state.Job, ops []store.Op, ext string)
	// HoldRunning relays the hold (attrs, hold bits) of running
	// checkpointable jobs.
	HoldRunning(w ReplyWriter, jobs []*state.Job, attrs batchreq.AttrList, bits int, ops []store.Op)
	// CommitModify relays changes of Resource_List (attrs) of running
	// jobs.
	CommitModify(w ReplyWriter, jobs []*state.Job, attrs batchreq.AttrList, ops []store.Op)
}

// LogUnauthorized writes the security line of a request of type reqType
// on the job id that who may not make.
func LogUnauthorized(log *pbslog.Logger, reqType int, id string, who *Asker) {
	log.Logf(logline.EventSecurity, logline.ClassJob, id, "Unauthorized Request, request type: %d, Object: Job, Name: %s, request from: %s",
		reqType, id, who.Requester())
}
