package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/store"
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

// routeJob tries to move one job out of its route queue.
func (s *Server) routeJob(j *Job, now int64) []store.Op {
	q := j.queue
	switch {
	case j.state == pbsattr.StateTransit || j.state == pbsattr.StateComplete || j.state == pbsattr.StateRunning || j.state == pbsattr.StateExiting:
		return nil
	case j.state == pbsattr.StateHeld && !isTrue(q.attrs.get(pbsattr.QueueRouteHeldJobs)):
		return nil
	case j.state == pbsattr.StateWaiting && !isTrue(q.attrs.get(pbsattr.QueueRouteWaitingJobs)):
		return nil
	case !isTrue(q.attrs.get(pbsattr.QueueStarted)):
		return nil
	}
	if lt, ok := q.long(pbsattr.QueueRouteLifetime); ok && lt > 0 {
		qt := s.serverLongOf(j.attrs.get(pbsattr.JobQtime))
		if now-qt > lt {
			s.log.Log(logline.EventJob, logline.ClassJob, j.id, "Route queue lifetime exceeded")
			s.acct.Record(pbslog.AcctAbort, j.id, "")
			return s.completeJob(j, false)
		}
	}
	if j.routeTried == nil {
		j.routeTried = map[string]bool{}
	}
	if j.routeLater == nil {
		j.routeLater = map[string]bool{}
	}
	temporary := len(j.routeLater) > 0
	for _, entry := range parseArst(q.attrs.get(pbsattr.QueueRouteDestinations)) {
		dest := s.parseDestination(entry)
		if dest.bad {
			continue // no server can be reached there
		}
		if dest.addr != "" {
			// another server: the move runs without the lock and
			// reports back (remote.go)
			key := dest.String()
			if j.routeTried[key] || j.routeLater[key] {
				continue
			}
			m, code := s.beginMove(j, dest)
			if code != 0 {
				j.routeTried[key] = true
				continue
			}
			go s.routeRemote(j, m)
			return nil
		}
		name := dest.queue
		if j.routeTried[name] {
			continue
		}
		dq := s.queueByName[name]
		if dq == nil || dq == q {
			j.routeTried[name] = true
			continue
		}
		if p := s.admitFrom(j, dq, "", false, true); p != nil {
			if temporaryRejection(p.Code) {
				temporary = true
			} else {
				j.routeTried[name] = true
			}
			continue
		}
		j.routeTried, j.routeLater = nil, nil
		return s.moveJob(j, q, dq)
	}
	if temporary {
		j.routeLater = nil
		retry := s.serverLongOf(q.attrs.get(pbsattr.QueueRouteRetryTime))
		if retry <= 0 {
			retry = defaultRouteRetry
		}
		j.routeRetryAt = now + retry
		return nil
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, j.id, "%s", batchreq.ErrorText(batchreq.PBSE_ROUTEREJ))
	s.acct.Record(pbslog.AcctAbort, j.id, "")
	return s.completeJob(j, false)
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
