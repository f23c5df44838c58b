package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/logline"
	"gopbs/server/state"
	"gopbs/server/store"
)

// Jobs move to another server (a route_destinations entry or a qmove
// destination `queue@server[:port]`) the way a client submits one: the
// sending server connects from a privileged port, which makes it a
// trusted daemon for the receiver (spec 03), and sends QueueJob (with the
// job id, the destination queue and the job's attributes), JobScript,
// RdytoCommit and Commit (spec 02 §6.1, spec 12 §5). The receiver keeps
// the job id and counts one more hop; a job that has hopped more than
// maxHops times is refused with PBSE_HOPCOUNT.

// maxHops is the largest hop_count a server accepts (spec 02 §10:
// PBSE_HOPCOUNT "max job hop reached" beyond 10).
const maxHops = 10

// remoteTimeout bounds one server-to-server move.
const remoteTimeout = 10 * time.Second

// destination is a parsed queue destination.
type destination struct {
	queue  string
	addr   string // host:port of another server; "" for this server
	server string // the other server as written (host or host:port)
	bad    bool   // the host part is no host name or address
}

// parseDestination splits "queue", "queue@host" or "queue@host:port".
// The destination is this server when the host is the server's name (on
// its own port or without a port), or "localhost" or an address of this
// machine on the server's own port (15001 when not given); any other
// host is another server, at port 15001 unless given.
func (s *Server) parseDestination(d string) destination {
	queue, at, found := strings.Cut(d, "@")
	if !found || at == "" {
		return destination{queue: queue}
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
		return destination{queue: queue}
	}
	if port == "" {
		port = strconv.Itoa(batchreq.PBS_BATCH_SERVICE_PORT)
	}
	if port == own && isThisMachine(host) {
		return destination{queue: queue}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil || !validHostPattern(host) && !isAddr(host) || strings.Contains(host, "*") {
		return destination{queue: queue, server: at, bad: true}
	}
	return destination{queue: queue, addr: net.JoinHostPort(host, port), server: at}
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

// String writes the destination as queue@host:port.
func (d destination) String() string {
	if d.addr == "" {
		return d.queue
	}
	return d.queue + "@" + d.addr
}

// notSent are the attributes a server does not send with a moved job: the
// receiver sets them itself (state, place, times of this queue, the
// execution of a run that has not happened).
var notSent = map[int]bool{
	pbsattr.JobState: true, pbsattr.JobQueue: true, pbsattr.JobServer: true, pbsattr.JobHoldTypes: true, pbsattr.JobSubstate: true,
	pbsattr.JobQueueRank: true, pbsattr.JobQueueType: true, pbsattr.JobQtime: true, pbsattr.JobMtime: true, pbsattr.JobEtime: true,
	pbsattr.JobExecHost: true, pbsattr.JobSessionID: true,
}

// outgoing is a job being sent to another server, captured under the
// lock.
type outgoing struct {
	id        string
	dest      destination
	attrs     batchreq.AttrList
	scriptKey string
	// state to return to when the move fails
	state    pbsattr.JobStateNum
	substate pbsattr.Substate
}

// beginMove puts j in transit to dest and returns what the move sends.
// Array jobs do not move between servers (PBSE_IVALREQ). Called with s.mu
// held.
func (s *Server) beginMove(j *state.Job, dest destination) (*outgoing, int) {
	if j.Array != nil || j.Parent != nil {
		return nil, batchreq.PBSE_IVALREQ
	}
	out := &outgoing{id: j.ID, dest: dest, scriptKey: state.ScriptKey(j), state: j.State, substate: j.Substate}
	for _, v := range j.Attrs {
		if notSent[v.Index] {
			continue
		}
		out.attrs = append(out.attrs, wireAttr(state.JobDefs, v))
	}
	out.attrs = append(out.attrs, batchreq.NewAttr("Hold_Types", state.FormatHold(j.Hold&(state.HoldUser|state.HoldOther|state.HoldSystem))))
	s.jobs.SetState(j, pbsattr.StateTransit, pbsattr.SubTrnOut)
	return out, 0
}

// endMove finishes a move begun by beginMove: on success the job leaves
// this server; otherwise it returns to the state it had. It reports
// whether the job was still here. Called with s.mu held.
func (s *Server) endMove(j *state.Job, m *outgoing, sent bool) (ops []store.Op, here bool) {
	if s.jobs.Get(j.ID) != j || j.State != pbsattr.StateTransit {
		return nil, false
	}
	if sent {
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state TRANSIT", state.QueueName(j))
		hop, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobHopCount))
		ops = s.tracking.Track(j.ID, state.TrackEntry{Hop: hop + 1, Location: m.dest.server, State: pbsattr.JobStateNum(m.state).Letter(false)})
		return append(ops, s.purgeJob(j)...), true
	}
	s.jobs.SetState(j, m.state, m.substate)
	s.evaluate(j)
	return nil, true
}

// moveRefused wraps the receiving server's refusal of a moved job.
type moveRefused struct{ reply *batchreq.Reply }

func (e *moveRefused) Error() string {
	return fmt.Sprintf("refused with %d %s", e.reply.Code, e.reply.Text)
}

// refusal returns the reply with which another server refused a move,
// or nil when err is a transport failure.
func refusal(err error) *batchreq.Reply {
	var r *moveRefused
	if errors.As(err, &r) {
		return r.reply
	}
	return nil
}

// sendJob sends a job to another server (without s.mu held): QueueJob,
// JobScript, RdytoCommit, Commit, then Disconnect.
func (s *Server) sendJob(m *outgoing) error {
	script, err := s.store.Get(store.Script, m.scriptKey)
	if err != nil {
		return fmt.Errorf("move %s: read script: %w", m.id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	nc, err := dialReserved(ctx, m.dest.addr)
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", m.id, m.dest, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(remoteTimeout))
	r := dis.NewReader(nc)
	steps := []struct {
		typ  int
		body batchreq.Body
	}{
		{batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: m.id, Destination: m.dest.queue, Attrs: m.attrs}},
		{batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{JobID: m.id, Data: script}},
		{batchreq.PBS_BATCH_RdytoCommit, &batchreq.JobID{ID: m.id}},
		{batchreq.PBS_BATCH_Commit, &batchreq.JobID{ID: m.id}},
	}
	for _, st := range steps {
		req := batchreq.NewRequest(st.typ, momUser, st.body)
		if _, err := nc.Write(req.Append(nil)); err != nil {
			return fmt.Errorf("move %s to %s: send %s: %w", m.id, m.dest, batchreq.RequestName(st.typ), err)
		}
		p, err := batchreq.ReadReply(r)
		if err != nil {
			return fmt.Errorf("move %s to %s: reply to %s: %w", m.id, m.dest, batchreq.RequestName(st.typ), err)
		}
		if p.Code != 0 {
			return &moveRefused{p}
		}
	}
	nc.Write(batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, momUser, nil).Append(nil))
	return nil
}

// countHop raises the hop_count of a job received from another server
// and refuses it when it has hopped too often. Called with s.mu held.
func countHop(j *state.Job) *batchreq.Reply {
	n, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobHopCount))
	n++
	if n > maxHops {
		return batchreq.ErrorReply(batchreq.PBSE_HOPCOUNT, "", "max job hop reached")
	}
	j.Attrs.Set(pbsattr.JobHopCount, strconv.Itoa(n))
	return nil
}

// moveRemote serves a MoveJob to another server: the reply waits for the
// move. Called with s.mu held; returns with it released.
func (s *Server) moveRemote(c *conn, j *state.Job, dest destination) {
	if dest.bad {
		s.mu.Unlock()
		c.reject(batchreq.PBSE_BADHOST, "bad destination server "+dest.server)
		return
	}
	m, code := s.beginMove(j, dest)
	if code != 0 {
		s.mu.Unlock()
		c.reject(code, "")
		return
	}
	s.mu.Unlock()
	err := s.sendJob(m)
	s.mu.Lock()
	ops, here := s.endMove(j, m, err == nil)
	switch {
	case !here:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_UNKJOBID, "")
		return
	case err != nil:
		s.mu.Unlock()
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job move to %s failed: %v", dest, err)
		if p := refusal(err); p != nil {
			c.send(batchreq.ErrorReply(p.Code, "", remoteMessage(p)))
		} else {
			c.reject(batchreq.PBSE_ROUTEREJ, "cannot send job to "+dest.addr)
		}
		return
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job moved to %s at request of %s", dest, c.requester())
	s.commitAndReply(c, ops, batchreq.NullReply())
}

// remoteMessage is the MSG part of another server's refusal, passed on to
// the client.
func remoteMessage(p *batchreq.Reply) string {
	if _, msg, ok := strings.Cut(p.Text, " MSG="); ok {
		return msg
	}
	return ""
}

// routeRemote sends a job of a route queue to another server (run in its
// own goroutine); on failure the next tick tries the job's next
// destination.
func (s *Server) routeRemote(j *state.Job, m *outgoing) {
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
		err = fmt.Errorf("move %s: job gone", m.id)
	} else if err = wait(); err == nil {
		err = s.sendJob(m)
	}
	s.mu.Lock()
	ops, here := s.endMove(j, m, err == nil)
	if here {
		key := m.dest.String()
		switch p := refusal(err); {
		case err == nil:
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routed to %s", m.dest)
		case p != nil && !temporaryRejection(p.Code):
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routing to %s failed: %v", m.dest, err)
			j.RouteTried[key] = true
		default:
			s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job routing to %s failed: %v", m.dest, err)
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

// hopCount is a job's hop_count as the "enqueuing into" log line shows
// it: 1 for a job submitted here.
func hopCount(j *state.Job) string {
	if h := j.Attrs.Get(pbsattr.JobHopCount); h != "" {
		return h
	}
	return "1"
}
