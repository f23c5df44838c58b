// Package route moves jobs on from where they are queued: out of a route
// queue into the first of its route_destinations that admits them (a
// queue of this server, or one of another server), and to another
// server's queue at a qmove (spec 12 §5, §14). It knows which
// destinations are this server (ParseDestination) and keeps a job's
// state while it is in transit to another server; the sending itself is
// server/link/remote's. The server is seen through Host.
package route

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// Host is the server as routing sees it. Its methods are called with
// the server's lock held, except Lock and Script.
type Host interface {
	Lock()
	Unlock()
	Log() *pbslog.Logger
	Acct() *pbslog.Accounting
	// Begin starts a transaction of the state.
	Begin() *state.Txn
	Jobs() *state.Jobs
	// Tracking is the table of the jobs that moved to other servers.
	Tracking() *state.Tracking
	// Queue returns the queue of that name, or nil.
	Queue(name string) *state.Queue
	// Self names this server for ParseDestination.
	Self() Self
	// AdmitRouted runs the admission checks for a job routed into q.
	AdmitRouted(j *state.Job, q *state.Queue) *batchreq.Reply
	// Move moves a job from one queue of this server to another, in tx.
	Move(tx *state.Txn, j *state.Job, from, to *state.Queue)
	// Abort ends a job that cannot be routed (it did not run), in tx.
	Abort(tx *state.Txn, j *state.Job)
	// Purge removes a job that left the server, in tx.
	Purge(tx *state.Txn, j *state.Job)
	// Evaluate sets a job's state from its holds, execution time and
	// dependencies.
	Evaluate(tx *state.Txn, j *state.Job)
	// Script reads a job's script from the store (without the lock).
	Script(key string) ([]byte, error)
}

// Router routes jobs over a Host.
type Router struct{ h Host }

// New returns the Router over h.
func New(h Host) *Router { return &Router{h: h} }

// defaultRouteRetry is route_retry_time when unset (seconds).
const defaultRouteRetry = 30

// temporaryRejection reports whether an admission error may go away
// (the job is retried later) rather than being permanent.
func temporaryRejection(code int) bool {
	switch code {
	case batchreq.PBSE_QUNOENB, batchreq.PBSE_MAXQUED, batchreq.PBSE_MAXUSERQUED:
		return true
	}
	return false
}

// Route tries to move one job out of its route queue, in tx; now is the
// time in seconds.
func (r *Router) Route(tx *state.Txn, j *state.Job, now int64) {
	h := r.h
	q := j.Queue
	switch {
	case j.State == pbsattr.StateTransit || j.State == pbsattr.StateComplete || j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting:
		return
	case j.State == pbsattr.StateHeld && !state.IsTrue(q.Attrs.Get(pbsattr.QueueRouteHeldJobs)):
		return
	case j.State == pbsattr.StateWaiting && !state.IsTrue(q.Attrs.Get(pbsattr.QueueRouteWaitingJobs)):
		return
	case !state.IsTrue(q.Attrs.Get(pbsattr.QueueStarted)):
		return
	}
	if lt, ok := q.Long(pbsattr.QueueRouteLifetime); ok && lt > 0 {
		qt := leadingNumber(j.Attrs.Get(pbsattr.JobQtime))
		if now-qt > lt {
			h.Log().Log(logline.EventJob, logline.ClassJob, j.ID, "Route queue lifetime exceeded")
			h.Acct().Record(pbslog.AcctAbort, j.ID, "")
			h.Abort(tx, j)
			return
		}
	}
	if j.RouteTried == nil {
		j.RouteTried = map[string]bool{}
	}
	if j.RouteLater == nil {
		j.RouteLater = map[string]bool{}
	}
	temporary := len(j.RouteLater) > 0
	for _, entry := range state.ParseArst(q.Attrs.Get(pbsattr.QueueRouteDestinations)) {
		dest := r.Destination(entry)
		if dest.Bad {
			continue // no server can be reached there
		}
		if dest.Addr != "" {
			// another server: the move runs without the lock and
			// reports back (transit.go)
			key := dest.String()
			if j.RouteTried[key] || j.RouteLater[key] {
				continue
			}
			m, code := r.BeginMove(j, dest)
			if code != 0 {
				j.RouteTried[key] = true
				continue
			}
			go r.routeRemote(j, m)
			return
		}
		name := dest.Queue
		if j.RouteTried[name] {
			continue
		}
		dq := h.Queue(name)
		if dq == nil || dq == q {
			j.RouteTried[name] = true
			continue
		}
		if p := h.AdmitRouted(j, dq); p != nil {
			if temporaryRejection(p.Code) {
				temporary = true
			} else {
				j.RouteTried[name] = true
			}
			continue
		}
		j.RouteTried, j.RouteLater = nil, nil
		h.Move(tx, j, q, dq)
		return
	}
	if temporary {
		j.RouteLater = nil
		retry := leadingNumber(q.Attrs.Get(pbsattr.QueueRouteRetryTime))
		if retry <= 0 {
			retry = defaultRouteRetry
		}
		j.RouteRetryAt = now + retry
		return
	}
	h.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "%s", batchreq.ErrorText(batchreq.PBSE_ROUTEREJ))
	h.Acct().Record(pbslog.AcctAbort, j.ID, "")
	h.Abort(tx, j)
}

// leadingNumber is the number the decimal digits at the start of v make
// (0 if none).
func leadingNumber(v string) int64 {
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return n
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
