package server

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/link/remote"
	"gopbs/server/state"
	"gopbs/server/store"
)

// The server's side of moves to other servers (server/link/remote sends
// them): which destinations are this server, and the job's state while
// it is in transit.

// parseDestination splits "queue", "queue@host" or "queue@host:port".
// The destination is this server when the host is the server's name (on
// its own port or without a port), or "localhost" or an address of this
// machine on the server's own port (15001 when not given); any other
// host is another server, at port 15001 unless given.
func (s *Server) parseDestination(d string) remote.Destination {
	queue, at, found := strings.Cut(d, "@")
	if !found || at == "" {
		return remote.Destination{Queue: queue}
	}
	host, port := at, ""
	if h, p, err := net.SplitHostPort(at); err == nil {
		host, port = h, p
	}
	own := ""
	if a, ok := s.Addr().(*net.TCPAddr); ok {
		own = strconv.Itoa(a.Port)
	}
	if strings.EqualFold(host, s.name) && (port == "" || port == own) {
		return remote.Destination{Queue: queue}
	}
	if port == "" {
		port = strconv.Itoa(batchreq.PBS_BATCH_SERVICE_PORT)
	}
	if port == own && isThisMachine(host) {
		return remote.Destination{Queue: queue}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil || !state.ValidHostPattern(host) && !isAddr(host) || strings.Contains(host, "*") {
		return remote.Destination{Queue: queue, Server: at, Bad: true}
	}
	return remote.Destination{Queue: queue, Addr: net.JoinHostPort(host, port), Server: at}
}

// isAddr reports whether host is an IP address literal (without an IPv6
// zone).
func isAddr(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == ""
}

// isThisMachine reports whether host is "localhost" or an address
// literal of this machine (names are not resolved: a move must not wait
// for a name service).
func isThisMachine(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsLoopback() || isLocalAddr(a)
}

// beginMove puts j in transit to dest and returns what the move sends.
// Array jobs do not move between servers (PBSE_IVALREQ). Called with s.mu
// held.
func (s *Server) beginMove(j *state.Job, dest remote.Destination) (*remote.Move, int) {
	if j.Array != nil || j.Parent != nil {
		return nil, batchreq.PBSE_IVALREQ
	}
	out := &remote.Move{ID: j.ID, Dest: dest, ScriptKey: state.ScriptKey(j), State: j.State, Substate: j.Substate}
	for _, v := range j.Attrs {
		if !remote.Sent(v.Index) {
			continue
		}
		out.Attrs = append(out.Attrs, handler.WireAttr(state.JobDefs, v))
	}
	out.Attrs = append(out.Attrs, batchreq.NewAttr("Hold_Types", state.FormatHold(j.Hold&(state.HoldUser|state.HoldOther|state.HoldSystem))))
	s.jobs.SetState(j, pbsattr.StateTransit, pbsattr.SubTrnOut)
	return out, 0
}

// endMove finishes a move begun by beginMove: on success the job leaves
// this server; otherwise it returns to the state it had. It reports
// whether the job was still here. Called with s.mu held.
func (s *Server) endMove(j *state.Job, m *remote.Move, sent bool) (ops []store.Op, here bool) {
	if s.jobs.Get(j.ID) != j || j.State != pbsattr.StateTransit {
		return nil, false
	}
	if sent {
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state TRANSIT", state.QueueName(j))
		hop, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobHopCount))
		ops = s.tracking.Track(j.ID, state.TrackEntry{Hop: hop + 1, Location: m.Dest.Server, State: pbsattr.JobStateNum(m.State).Letter(false)})
		tx := s.db.Begin()
		tx.Put(ops...)
		s.purgeJob(tx, j)
		return tx.Ops(), true
	}
	s.jobs.SetState(j, m.State, m.Substate)
	s.evaluate(j)
	return nil, true
}

// moveRemote serves a MoveJob to another server: the reply waits for the
// move. Called with s.mu held; returns with it released.
func (s *Server) moveRemote(w replyWriter, requester string, j *state.Job, dest remote.Destination) {
	if dest.Bad {
		s.mu.Unlock()
		w.Reject(batchreq.PBSE_BADHOST, "bad destination server "+dest.Server)
		return
	}
	m, code := s.beginMove(j, dest)
	if code != 0 {
		s.mu.Unlock()
		w.Reject(code, "")
		return
	}
	s.mu.Unlock()
	err := s.sendJob(m)
	s.mu.Lock()
	ops, here := s.endMove(j, m, err == nil)
	switch {
	case !here:
		s.mu.Unlock()
		w.Reject(batchreq.PBSE_UNKJOBID, "")
		return
	case err != nil:
		s.mu.Unlock()
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job move to %s failed: %v", dest, err)
		if p := remote.Refusal(err); p != nil {
			w.Send(batchreq.ErrorReply(p.Code, "", remote.Message(p)))
		} else {
			w.Reject(batchreq.PBSE_ROUTEREJ, "cannot send job to "+dest.Addr)
		}
		return
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job moved to %s at request of %s", dest, requester)
	s.commitAndReply(w, ops, batchreq.NullReply())
}

// routeRemote sends a job of a route queue to another server (run in its
// own goroutine); on failure the next tick tries the job's next
// destination.
func (s *Server) routeRemote(j *state.Job, m *remote.Move) {
	// A job routed as it is committed is sent only once the commit
	// (which writes its script) is durable: saving the job in transit
	// after it orders this write after the commit's (and a warm start
	// queues a job saved in transit again).
	s.mu.Lock()
	var wait func() error
	if s.jobs.Get(j.ID) == j {
		wait = s.store.Submit(state.SaveJob(j))
	}
	s.mu.Unlock()
	var err error
	if wait == nil {
		err = fmt.Errorf("move %s: job gone", m.ID)
	} else if err = wait(); err == nil {
		err = s.sendJob(m)
	}
	s.mu.Lock()
	ops, here := s.endMove(j, m, err == nil)
	if here {
		key := m.Dest.String()
		switch p := remote.Refusal(err); {
		case err == nil:
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routed to %s", m.Dest)
		case p != nil && !temporaryRejection(p.Code):
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routing to %s failed: %v", m.Dest, err)
			j.RouteTried[key] = true
		default:
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routing to %s failed: %v", m.Dest, err)
			j.RouteLater[key] = true
		}
		j.RouteRetryAt = 0
	}
	wait = nil
	if len(ops) > 0 {
		wait = s.store.Submit(ops...)
	}
	s.mu.Unlock()
	if wait != nil {
		wait()
	}
}

// sendJob sends a job to another server (without s.mu held).
func (s *Server) sendJob(m *remote.Move) error {
	script, err := s.store.Get(store.Script, m.ScriptKey)
	if err != nil {
		return fmt.Errorf("move %s: read script: %w", m.ID, err)
	}
	return remote.Send(m, script)
}
