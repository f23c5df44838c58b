package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

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

// routeJob tries to move one job out of its route queue, in tx.
func (s *Server) routeJob(tx *state.Txn, j *state.Job, now int64) {
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
		qt := s.serverLongOf(j.Attrs.Get(pbsattr.JobQtime))
		if now-qt > lt {
			s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Route queue lifetime exceeded")
			s.acct.Record(pbslog.AcctAbort, j.ID, "")
			s.completeJob(tx, j, false)
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
		dest := s.parseDestination(entry)
		if dest.Bad {
			continue // no server can be reached there
		}
		if dest.Addr != "" {
			// another server: the move runs without the lock and
			// reports back (remote.go)
			key := dest.String()
			if j.RouteTried[key] || j.RouteLater[key] {
				continue
			}
			m, code := s.beginMove(j, dest)
			if code != 0 {
				j.RouteTried[key] = true
				continue
			}
			go s.routeRemote(j, m)
			return
		}
		name := dest.Queue
		if j.RouteTried[name] {
			continue
		}
		dq := s.queueByName[name]
		if dq == nil || dq == q {
			j.RouteTried[name] = true
			continue
		}
		if p := s.admission.AdmitRouted(j, dq); p != nil {
			if temporaryRejection(p.Code) {
				temporary = true
			} else {
				j.RouteTried[name] = true
			}
			continue
		}
		j.RouteTried, j.RouteLater = nil, nil
		s.moveJob(tx, j, q, dq)
		return
	}
	if temporary {
		j.RouteLater = nil
		retry := s.serverLongOf(q.Attrs.Get(pbsattr.QueueRouteRetryTime))
		if retry <= 0 {
			retry = defaultRouteRetry
		}
		j.RouteRetryAt = now + retry
		return
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "%s", batchreq.ErrorText(batchreq.PBSE_ROUTEREJ))
	s.acct.Record(pbslog.AcctAbort, j.ID, "")
	s.completeJob(tx, j, false)
}

func (s *Server) serverLongOf(v string) int64 {
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return n
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
