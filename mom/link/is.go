package link

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/momlog"
	"gopbs/momproto"
	"gopbs/rpp"
)

// isClient keeps the IS stream to one server (spec 10 §5.2): it opens the
// stream, says IS_HELLO, trusts the addresses of IS_CLUSTER_ADDRS and sends
// IS_STATUS every status_update_time and on demand. A stream that ends
// after the server had answered (server GOODBYE, retries exhausted) is
// reopened at once; one the server refused is retried with exponential
// back-off.
type isClient struct {
	m     *Mom
	name  string // "host[:port]" as configured
	host  string
	port  int
	ep    *rpp.Endpoint
	kc    chan struct{}    // immediate status wanted
	adopt chan *rpp.Stream // a stream the restarted server opened to us
	hc    chan struct{}    // status wanted after the hello delay

	mu           sync.Mutex
	stream       *rpp.Stream
	addr         netip.AddrPort
	answered     bool // the server spoke on the current stream
	hellosIn     int
	hellosOut    int
	clusterAddrs int
	lastFrom     time.Time
	lastFromWhat string
	lastTo       time.Time
	stopped      bool
	state        uint32 // INUSE_FREE or INUSE_BUSY as last reported
	stateKnown   bool
}

type isStats struct {
	name, addr                        string
	hellosIn, hellosOut, clusterAddrs int
	lastFrom, lastTo                  time.Time
	lastFromWhat                      string
}

func (m *Mom) newISClient(name string, ep *rpp.Endpoint) *isClient {
	host, port := splitHostPort(name, m.opt.ServerPort)
	return &isClient{m: m, name: name, host: host, port: port, ep: ep, kc: make(chan struct{}, 1), hc: make(chan struct{}, 1), adopt: make(chan *rpp.Stream, 1)}
}

func (c *isClient) stats() isStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return isStats{name: c.host, addr: c.addr.String(), hellosIn: c.hellosIn, hellosOut: c.hellosOut,
		clusterAddrs: c.clusterAddrs, lastFrom: c.lastFrom, lastTo: c.lastTo, lastFromWhat: c.lastFromWhat}
}

// kick asks for an immediate IS_STATUS.
func (c *isClient) kick() {
	select {
	case c.kc <- struct{}{}:
	default:
	}
}

// shutdown closes the stream with GOODBYE; the returned channel (nil
// without a stream) is closed when the GOODBYE exchange is over.
func (c *isClient) shutdown() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.stream == nil {
		return nil
	}
	c.stream.Close()
	return c.stream.Done()
}

func (c *isClient) run(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		if backoff > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		began := time.Now()
		err := c.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			c.mu.Lock()
			addr := c.addr
			c.mu.Unlock()
			c.m.log.Record(logline.EventSystem, momlog.ClassServer, "im_eof", "End of File from addr "+addr.String())
		} else {
			c.m.log.Record(logline.EventDebug, momlog.ClassServer, "is_update_stat",
				fmt.Sprintf("stream to server %s ended: %v", c.name, err))
		}
		c.mu.Lock()
		answered := c.answered
		c.mu.Unlock()
		switch {
		case answered && (err == nil || errors.Is(err, errStreamDead)):
			// The server closed a working stream in order (qterm), or
			// the stream was given up after twice status_update_time:
			// reopen at once.
			backoff = 0
		case time.Since(began) > time.Minute:
			backoff = 0
		case backoff == 0:
			// A server that refuses the stream (this node is not in its
			// node list) closes it at once: retry, but never in a loop.
			backoff = 2 * time.Second
		default:
			backoff = min(2*backoff, maxISBackoff)
		}
	}
}

// maxISBackoff bounds the wait between attempts to open the IS stream to
// a server that keeps refusing it.
const maxISBackoff = 60 * time.Second

// errStreamDead ends a session whose server stopped acknowledging.
var errStreamDead = errors.New("nothing acknowledged for twice status_update_time")

// session runs one stream until it ends; nil means the server closed it.
func (c *isClient) session(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	ip, err := c.m.resolve(rctx, c.host)
	cancel()
	if err != nil {
		return fmt.Errorf("resolve %s: %w", c.host, err)
	}
	addr := netip.AddrPortFrom(ip, uint16(c.port))
	c.m.addTrusted(ip)
	s, err := c.ep.Open(addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		s.Close()
		return ctx.Err()
	}
	c.stream, c.addr, c.answered = s, addr, false
	c.mu.Unlock()
	defer func() { s.Close() }() // whichever stream is current at the end
	c.m.log.Record(logline.EventSystem, momlog.ClassNA, "mom_server_check_connection", "sending hello to server "+c.host)
	c.send(s, &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO})
	c.mu.Lock()
	c.hellosOut++
	c.mu.Unlock()

	reader := func(s *rpp.Stream) chan error {
		done := make(chan error, 1)
		go func() { done <- c.read(ctx, s) }()
		return done
	}
	done := reader(s)
	ticker := time.NewTicker(c.m.conf().StatusUpdateTime)
	defer ticker.Stop()
	poll := time.NewTicker(c.m.conf().CheckPollTime)
	defer poll.Stop()
	var soon <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			if err == nil {
				// The server closed: finish the GOODBYE exchange before
				// reopening, so the new stream reuses the index.
				s.Close()
				select {
				case <-s.Done():
				case <-ctx.Done():
				case <-time.After(10 * time.Second):
				}
			}
			return err
		case ns := <-c.adopt:
			// The server restarted and opened a stream to us (its ping):
			// ours is dead on its side, so carry on over its stream,
			// which it knows as this node's.
			s.Close()
			s = ns
			c.mu.Lock()
			c.stream, c.answered = ns, true
			c.mu.Unlock()
			done = reader(ns)
			soon = time.After(0)
		case <-c.kc:
			soon = time.After(0)
		case <-c.hc:
			soon = time.After(c.m.opt.HelloStatusDelay)
		case <-soon:
			soon = nil
			c.sendStatus(ctx, s)
			// The periodic reports count from this one (captures 102,
			// 103: IS_STATUS 2 s after the hello, the next 45 s later).
			ticker.Reset(c.m.conf().StatusUpdateTime)
		case <-ticker.C:
			// A stream on which nothing got through for twice the
			// status interval is dead: reopen it (spec 10 §5.2).
			if s.Unanswered() > 2*c.m.conf().StatusUpdateTime {
				return errStreamDead
			}
			c.sendStatus(ctx, s)
		case <-poll.C:
			c.checkState(s)
		}
	}
}

func (c *isClient) sendStatus(ctx context.Context, s *rpp.Stream) {
	c.mu.Lock()
	ok := c.answered
	c.mu.Unlock()
	if !ok {
		return // the server has not answered our hello yet
	}
	c.m.statusCycle(ctx)
	status := c.m.StatusStrings(ctx)
	c.mu.Lock()
	c.state, c.stateKnown = c.m.nodeState(), true
	c.mu.Unlock()
	c.send(s, &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_STATUS, Status: status})
	// The usage poll follows the status cycle (TORQUE samples the jobs
	// right after its status report, captures 45 and 96).
	if p, ok := c.m.exec.(Poller); ok {
		p.PollNow()
	}
}

// checkState pushes a change between free and busy at once as IS_UPDATE
// instead of waiting for the next status (spec 10 §5.7).
func (c *isClient) checkState(s *rpp.Stream) {
	state := c.m.nodeState()
	c.mu.Lock()
	changed := c.answered && c.stateKnown && state != c.state
	c.state = state
	c.mu.Unlock()
	if changed {
		c.send(s, &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_UPDATE, State: state})
	}
}

func (c *isClient) send(s *rpp.Stream, msg *momproto.ISMessage) {
	if err := s.Send(msg.Append(nil)); err == nil {
		c.mu.Lock()
		c.lastTo = c.m.opt.Now()
		c.mu.Unlock()
	}
}

// read handles the server's messages on the stream.
func (c *isClient) read(ctx context.Context, s *rpp.Stream) error {
	for {
		b, err := s.Recv(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		msg, err := momproto.DecodeIS(b)
		if err != nil {
			c.m.logErr("is_request", err, "bad IS message from "+c.name)
			return err
		}
		c.mu.Lock()
		c.answered = true
		c.lastFrom = c.m.opt.Now()
		c.lastFromWhat = momproto.ISCommandName(msg.Command)
		c.mu.Unlock()
		switch msg.Command {
		case momproto.IS_NULL:
		case momproto.IS_HELLO:
			c.mu.Lock()
			c.hellosIn++
			c.mu.Unlock()
			c.send(s, &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO})
			signalCh(c.hc)
		case momproto.IS_CLUSTER_ADDRS:
			c.mu.Lock()
			c.clusterAddrs++
			c.mu.Unlock()
			c.m.trustClusterAddrs(msg.Addrs)
			signalCh(c.hc)
		default:
			return fmt.Errorf("unknown IS command %d", msg.Command)
		}
	}
}

func signalCh(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (m *Mom) trustClusterAddrs(addrs []uint32) {
	for _, a := range addrs {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], a)
		m.addTrusted(netip.AddrFrom4(b))
	}
}

// adoptStream hands a stream the server at addr opened to us to the IS
// client of that server. It reports false when no client takes it.
func (m *Mom) adoptStream(s *rpp.Stream) bool {
	addr := s.RemoteAddr().Addr()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.servers {
		c.mu.Lock()
		same := c.addr.Addr() == addr && !c.stopped
		if same {
			c.hellosIn++
		}
		c.mu.Unlock()
		if same {
			select {
			case c.adopt <- s:
				return true
			default:
				return false // one adoption is already pending
			}
		}
	}
	return false
}

// Outcomes of isIncoming.
const (
	isContinue  = iota // keep reading the stream
	isStop             // close the stream
	isHandedOff        // the stream now belongs to an IS client
)

// isIncoming serves an IS message on a stream the server opened to the
// RPP port (its start-up ping): IS_HELLO is answered with IS_HELLO and the
// stream becomes the MOM's IS stream to that server, where the status
// follows (spec 10 §5.2).
func (m *Mom) isIncoming(ctx context.Context, s *rpp.Stream, b []byte) int {
	msg, err := momproto.DecodeIS(b)
	if err != nil {
		m.logErr("is_request", err, "")
		return isStop
	}
	if !m.Trusted(s.RemoteAddr().Addr()) {
		m.log.Error(0, "", "is_request", "bad attempt to connect from "+s.RemoteAddr().Addr().String())
		return isStop
	}
	switch msg.Command {
	case momproto.IS_NULL:
	case momproto.IS_HELLO:
		s.Send((&momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO}).Append(nil))
		if m.adoptStream(s) {
			return isHandedOff
		}
		m.Cycle()
	case momproto.IS_CLUSTER_ADDRS:
		m.trustClusterAddrs(msg.Addrs)
		m.Cycle()
	default:
		return isStop
	}
	return isContinue
}

// nodeState returns the INUSE bits MOM reports in IS_UPDATE.
func (m *Mom) nodeState() uint32 {
	switch {
	case m.reportedDown():
		return momproto.INUSE_DOWN
	case m.busy():
		return momproto.INUSE_BUSY
	}
	return momproto.INUSE_FREE
}
