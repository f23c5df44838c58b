package route

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
	"gopbs/server/transport"
)

// The server's side of moves to other servers (server/link/remote sends
// them): which destinations are this server, and the job's state while
// it is in transit.

// Self names this server: its name (server_name) and the port it listens
// on ("" if unknown).
type Self struct {
	Name string
	Port string
}

// Destination parses a destination as ParseDestination does for this
// server.
func (r *Router) Destination(d string) remote.Destination { return ParseDestination(d, r.h.Self()) }

// ParseDestination splits "queue", "queue@host" or "queue@host:port".
// The destination is this server (self) when the host is the server's
// name (on its own port or without a port), or "localhost" or an address
// of this machine on the server's own port (15001 when not given); any
// other host is another server, at port 15001 unless given.
func ParseDestination(d string, self Self) remote.Destination {
	queue, at, found := strings.Cut(d, "@")
	if !found || at == "" {
		return remote.Destination{Queue: queue}
	}
	host, port := at, ""
	if h, p, err := net.SplitHostPort(at); err == nil {
		host, port = h, p
	}
	own := self.Port
	if strings.EqualFold(host, self.Name) && (port == "" || port == own) {
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
	return a.IsLoopback() || transport.IsLocalAddr(a)
}

// BeginMove puts j in transit to dest and returns what the move sends.
// Array jobs do not move between servers (PBSE_IVALREQ). Called with the
// lock held.
func (r *Router) BeginMove(j *state.Job, dest remote.Destination) (*remote.Move, int) {
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
	r.h.Jobs().SetState(j, pbsattr.StateTransit, pbsattr.SubTrnOut)
	return out, 0
}

// endMove finishes a move begun by BeginMove, in tx: on success the job
// leaves this server; otherwise it returns to the state it had. It
// reports whether the job was still here. Called with the lock held.
func (r *Router) endMove(tx *state.Txn, j *state.Job, m *remote.Move, sent bool) (here bool) {
	h := r.h
	if h.Jobs().Get(j.ID) != j || j.State != pbsattr.StateTransit {
		return false
	}
	if sent {
		h.Log().Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state TRANSIT", state.QueueName(j))
		hop, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobHopCount))
		tx.Put(h.Tracking().Track(j.ID, state.TrackEntry{Hop: hop + 1, Location: m.Dest.Server, State: pbsattr.JobStateNum(m.State).Letter(false)})...)
		h.Purge(tx, j)
		return true
	}
	h.Jobs().SetState(j, m.State, m.Substate)
	h.Evaluate(tx, j)
	return true
}

// MoveRemote serves a MoveJob to another server: the reply waits for the
// move. Called with the lock held; returns with it released.
func (r *Router) MoveRemote(w handler.ReplyWriter, requester string, j *state.Job, dest remote.Destination) {
	h := r.h
	if dest.Bad {
		h.Unlock()
		w.Reject(batchreq.PBSE_BADHOST, "bad destination server "+dest.Server)
		return
	}
	m, code := r.BeginMove(j, dest)
	if code != 0 {
		h.Unlock()
		w.Reject(code, "")
		return
	}
	h.Unlock()
	err := r.send(m)
	h.Lock()
	tx := h.Begin()
	here := r.endMove(tx, j, m, err == nil)
	switch {
	case !here:
		h.Unlock()
		w.Reject(batchreq.PBSE_UNKJOBID, "")
		return
	case err != nil:
		h.Unlock()
		h.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job move to %s failed: %v", dest, err)
		if p := remote.Refusal(err); p != nil {
			w.Send(batchreq.ErrorReply(p.Code, "", remote.Message(p)))
		} else {
			w.Reject(batchreq.PBSE_ROUTEREJ, "cannot send job to "+dest.Addr)
		}
		return
	}
	h.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job moved to %s at request of %s", dest, requester)
	handler.CommitAndReply(h, w, tx, batchreq.NullReply())
}

// routeRemote sends a job of a route queue to another server (run in its
// own goroutine); on failure the next tick tries the job's next
// destination.
func (r *Router) routeRemote(j *state.Job, m *remote.Move) {
	h := r.h
	// A job routed as it is committed is sent only once the commit
	// (which writes its script) is durable: saving the job in transit
	// after it orders this write after the commit's (and a warm start
	// queues a job saved in transit again).
	h.Lock()
	var wait func() error
	if h.Jobs().Get(j.ID) == j {
		tx := h.Begin()
		tx.SaveJob(j)
		wait = tx.Commit()
	}
	h.Unlock()
	var err error
	if wait == nil {
		err = fmt.Errorf("move %s: job gone", m.ID)
	} else if err = wait(); err == nil {
		err = r.send(m)
	}
	h.Lock()
	tx := h.Begin()
	if r.endMove(tx, j, m, err == nil) {
		key := m.Dest.String()
		switch p := remote.Refusal(err); {
		case err == nil:
			h.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routed to %s", m.Dest)
		case p != nil && !temporaryRejection(p.Code):
			h.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routing to %s failed: %v", m.Dest, err)
			j.RouteTried[key] = true
		default:
			h.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routing to %s failed: %v", m.Dest, err)
			j.RouteLater[key] = true
		}
		j.RouteRetryAt = 0
	}
	wait = nil
	if !tx.Empty() {
		wait = tx.Commit()
	}
	h.Unlock()
	if wait != nil {
		wait()
	}
}

// send sends a job to another server (without the lock held).
func (r *Router) send(m *remote.Move) error {
	script, err := r.h.Script(m.ScriptKey)
	if err != nil {
		return fmt.Errorf("move %s: read script: %w", m.ID, err)
	}
	return remote.Send(m, script)
}
