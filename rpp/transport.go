package rpp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Defaults of the stream transport (spec 10 §2.4).
const (
	DefaultTimeout = 4 * time.Second // retransmission interval
	DefaultRetry   = 48              // resends before a stream goes stale
	DefaultWindow  = 60              // unacknowledged packets per stream

	// MaxBackoff bounds the doublings of the retransmission interval on
	// repeated loss: the interval grows to at most 2^MaxBackoff times the
	// timeout (32 s with the default 4 s).
	MaxBackoff = 3

	// DefaultMaxStreams is the default bound on an endpoint's streams.
	DefaultMaxStreams = 4096

	// DefaultReadBuffer is the default receive buffer of an endpoint's
	// socket.
	DefaultReadBuffer = 1 << 20
)

// Errors of the stream transport.
var (
	// ErrStale is returned by a stream whose peer stopped acknowledging
	// (retries exhausted) or that was discarded because the peer
	// restarted.
	ErrStale = errors.New("rpp: stream is stale")
	// ErrClosed is returned for operations on a closed stream or endpoint.
	ErrClosed = errors.New("rpp: stream closed")
)

// Options tune an Endpoint. The zero value gives TORQUE's defaults.
type Options struct {
	// Timeout is the first retransmission interval of unacknowledged
	// packets (default DefaultTimeout); it doubles on repeated loss (at
	// most MaxBackoff times) and is restored by the next ACK.
	Timeout time.Duration
	// Retry is how many times a packet may be resent (default
	// DefaultRetry); its stream goes stale when they are used up or when
	// the packet waited Timeout × (Retry+1) for an ACK.
	Retry int
	// Window is the number of packets a stream may have unacknowledged
	// (default DefaultWindow).
	Window int
	// Throttle is a pause inserted after every datagram sent (mom config
	// $rpp_throttle).
	Throttle time.Duration
	// OpenKey is the first open key; when zero it is time() & 0xFFF as
	// TORQUE initialises it.
	OpenKey uint32
	// MaxStreams bounds the streams of the endpoint (default
	// DefaultMaxStreams); a HELLO1 beyond it is ignored, so that a flood
	// of opens cannot exhaust memory.
	MaxStreams int
	// Indexes, when set, numbers this endpoint's streams in a space
	// shared with other endpoints.
	Indexes *IndexSet
	// ReadBuffer is the receive buffer asked for the socket (default
	// DefaultReadBuffer). The system's limit (net.core.rmem_max) applies
	// unless the process may exceed it (root on Linux). A server that
	// thousands of MOMs say hello to at once needs more than the default
	// to take the bursts of their acknowledgements without loss.
	ReadBuffer int
	// Logf, when set, receives a line for every dropped datagram.
	Logf func(format string, args ...any)
}

// Endpoint is an RPP endpoint on one datagram socket: it opens streams to
// other endpoints, accepts the streams they open, and runs the
// retransmission timers. All methods are safe for concurrent use.
type Endpoint struct {
	pc   net.PacketConn
	opts Options

	mu      sync.Mutex
	streams []*Stream // indexed by local stream index; nil = free
	open    int       // non-nil entries of streams
	key     uint32    // next open key
	backlog []*Stream // connected streams not yet accepted
	closed  bool

	acceptReady chan struct{} // signalled when backlog grows or endpoint closes
	done        chan struct{}
	wg          sync.WaitGroup
}

// SetMaxStreams changes the bound on the endpoint's streams (Options.
// MaxStreams; n <= 0 restores DefaultMaxStreams). Streams already open
// stay; opens beyond the new bound are ignored. A server sizes it from
// its number of nodes, which changes while it runs.
func (e *Endpoint) SetMaxStreams(n int) {
	if n <= 0 {
		n = DefaultMaxStreams
	}
	e.mu.Lock()
	e.opts.MaxStreams = n
	e.mu.Unlock()
}

// NewEndpoint starts an RPP endpoint on pc, which it owns from now on: it
// reads every datagram arriving on pc until Close. Tests inject loss,
// reordering and duplication by passing a wrapping net.PacketConn.
func NewEndpoint(pc net.PacketConn, opts *Options) *Endpoint {
	e := &Endpoint{
		pc:          pc,
		acceptReady: make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.Timeout <= 0 {
		e.opts.Timeout = DefaultTimeout
	}
	if e.opts.Retry <= 0 {
		e.opts.Retry = DefaultRetry
	}
	if e.opts.Window <= 0 {
		e.opts.Window = DefaultWindow
	}
	if e.opts.MaxStreams <= 0 {
		e.opts.MaxStreams = DefaultMaxStreams
	}
	// A full window of a few streams is hundreds of kilobytes: make room
	// for it where the socket allows (errors only mean a smaller buffer).
	if e.opts.ReadBuffer <= 0 {
		e.opts.ReadBuffer = DefaultReadBuffer
	}
	setReadBuffer(pc, e.opts.ReadBuffer)
	e.key = e.opts.OpenKey
	if e.key == 0 {
		e.key = uint32(time.Now().Unix()) & 0xFFF
	}
	e.wg.Add(2)
	go e.readLoop()
	go e.timerLoop()
	return e
}

// LocalAddr returns the address of the endpoint's socket.
func (e *Endpoint) LocalAddr() net.Addr { return e.pc.LocalAddr() }

// Close closes the socket and fails every stream with ErrClosed. It sends
// no GOODBYE; close the streams first for an orderly shutdown.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for _, s := range e.streams {
		if s != nil {
			s.fail(ErrClosed)
			e.free(s)
		}
	}
	e.streams = nil
	e.mu.Unlock()
	close(e.done)
	err := e.pc.Close()
	e.wg.Wait()
	signal(e.acceptReady)
	return err
}

// Open starts opening a stream to the endpoint at addr and returns it at
// once. Messages sent before the peer answered are queued; if the peer
// never answers the stream goes stale after the retries.
func (e *Endpoint) Open(addr netip.AddrPort) (*Stream, error) {
	return e.OpenWith(addr, 0, 0)
}

// OpenWith is Open with the stream's own retransmission interval and
// retry count (zero keeps the endpoint's), as pbs_server lowers them to
// 2 s × 2 while it pings nodes. The endpoint's timer runs at a quarter
// of the endpoint's Timeout, which bounds how finely a shorter interval
// is honoured.
func (e *Endpoint) OpenWith(addr netip.AddrPort, timeout time.Duration, retry int) (*Stream, error) {
	addr = unmap(addr)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	s := e.newStream(addr)
	s.rto, s.retry = timeout, retry
	s.state = stateOpenPend
	s.key = e.key
	e.key++
	s.queueControl(Packet{Type: RPP_HELLO1, Stream: s.index, Seq: s.key})
	s.pump()
	return s, nil
}

// Accept waits for a stream opened by a peer and returns it once the open
// handshake completed.
func (e *Endpoint) Accept(ctx context.Context) (*Stream, error) {
	for {
		e.mu.Lock()
		if len(e.backlog) > 0 {
			s := e.backlog[0]
			e.backlog = e.backlog[1:]
			if len(e.backlog) > 0 {
				signal(e.acceptReady)
			}
			e.mu.Unlock()
			return s, nil
		}
		closed := e.closed
		e.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		select {
		case <-e.acceptReady:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// newStream allocates the lowest free index. Called with e.mu held.
func (e *Endpoint) newStream(addr netip.AddrPort) *Stream {
	s := &Stream{e: e, remote: addr, wake: make(chan struct{}), done: make(chan struct{})}
	if e.opts.Indexes != nil {
		s.index = e.opts.Indexes.alloc()
	} else {
		s.index = uint32(len(e.streams))
		for i, old := range e.streams {
			if old == nil {
				s.index = uint32(i)
				break
			}
		}
	}
	for int(s.index) >= len(e.streams) {
		e.streams = append(e.streams, nil)
	}
	e.streams[s.index] = s
	e.open++
	return s
}

// free releases a stream's index. Called with e.mu held.
func (e *Endpoint) free(s *Stream) {
	if int(s.index) < len(e.streams) && e.streams[s.index] == s {
		e.streams[s.index] = nil
		e.open--
		if e.opts.Indexes != nil {
			e.opts.Indexes.release(s.index)
		}
		close(s.done)
	}
	for i, b := range e.backlog {
		if b == s {
			e.backlog = append(e.backlog[:i], e.backlog[i+1:]...)
			break
		}
	}
}

// IndexSet numbers streams. Endpoints given the same IndexSet share one
// space of stream indexes, as the RPP sockets of one TORQUE daemon do
// (pbs_mom's streams on its RM port and on its reserved client port are
// numbered together). The zero value is ready to use.
type IndexSet struct {
	mu   sync.Mutex
	used []bool
}

func (x *IndexSet) alloc() uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, u := range x.used {
		if !u {
			x.used[i] = true
			return uint32(i)
		}
	}
	x.used = append(x.used, true)
	return uint32(len(x.used) - 1)
}

func (x *IndexSet) release(i uint32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if int(i) < len(x.used) {
		x.used[i] = false
	}
}

func (e *Endpoint) lookup(index uint32, from netip.AddrPort) *Stream {
	if int(index) >= len(e.streams) {
		return nil
	}
	s := e.streams[index]
	if s == nil || s.remote != from {
		return nil // unknown stream, or a datagram from the wrong address/port
	}
	return s
}

func (e *Endpoint) logf(format string, args ...any) {
	if e.opts.Logf != nil {
		e.opts.Logf(format, args...)
	}
}

// send writes one datagram. Called with e.mu held; UDP writes do not block
// for long.
func (e *Endpoint) send(to netip.AddrPort, p Packet) {
	if e.closed {
		return
	}
	if _, err := e.pc.WriteTo(p.Marshal(), net.UDPAddrFromAddrPort(to)); err != nil {
		e.logf("rpp: send %v to %v: %v", p, to, err)
	}
	if e.opts.Throttle > 0 {
		time.Sleep(e.opts.Throttle)
	}
}

func (e *Endpoint) readLoop() {
	defer e.wg.Done()
	buf := make([]byte, MaxPacket+1)
	for {
		n, addr, err := e.pc.ReadFrom(buf)
		if err != nil {
			select {
			case <-e.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			e.logf("rpp: read: %v", err)
			time.Sleep(10 * time.Millisecond) // e.g. ICMP-induced errors; do not spin
			continue
		}
		from, ok := addrPort(addr)
		if !ok {
			continue
		}
		p, err := Parse(buf[:n])
		if err == nil {
			err = p.Check()
		}
		if err != nil {
			e.logf("rpp: datagram from %v dropped: %v", from, err)
			continue
		}
		p.Payload = append([]byte(nil), p.Payload...)
		e.mu.Lock()
		if !e.closed {
			e.handle(from, p)
		}
		e.mu.Unlock()
	}
}

// handle processes one valid packet. Called with e.mu held.
func (e *Endpoint) handle(from netip.AddrPort, p Packet) {
	switch p.Type {
	case RPP_HELLO1:
		e.handleHello1(from, p)
	case RPP_HELLO2:
		s := e.lookup(p.Stream, from)
		if s == nil {
			e.logf("rpp: HELLO2 for unknown stream %d from %v", p.Stream, from)
			return
		}
		s.handleHello2(p)
	case RPP_ACK:
		if s := e.lookup(p.Stream, from); s != nil {
			s.handleAck(p.Seq)
		}
	case RPP_DATA, RPP_EOD, RPP_GOODBYE:
		s := e.lookup(p.Stream, from)
		if s == nil {
			e.logf("rpp: %v from %v for unknown stream", p, from)
			return
		}
		s.handleData(p)
	}
}

func (e *Endpoint) handleHello1(from netip.AddrPort, p Packet) {
	var stale []*Stream
	for _, s := range e.streams {
		if s == nil || s.remote != from || !s.responder {
			continue
		}
		if s.key == p.Seq && s.peer == p.Stream && !s.closing && s.err == nil && !s.heardData() {
			s.resendAll() // a retransmitted HELLO1: our HELLO2 was lost
			return
		}
		// Otherwise the peer restarted, or reopened with the same key
		// after closing the old stream (keys are time-based). A stream
		// that has carried the peer's data is past its handshake: the
		// peer sends DATA only once our HELLO2 reached it, and then no
		// more HELLO1, so a HELLO1 with its key and index comes from a
		// new incarnation that restarted within the same second.
		stale = append(stale, s)
	}
	// A new open key from the same address and port: the peer restarted,
	// so whatever it had open with us is gone.
	for _, s := range stale {
		s.fail(ErrStale)
		e.free(s)
	}
	if p.Seq >= e.key {
		e.key = p.Seq + 1
	}
	if e.count() >= e.opts.MaxStreams {
		e.logf("rpp: HELLO1 from %v ignored: %d streams open", from, e.opts.MaxStreams)
		return
	}
	s := e.newStream(from)
	s.responder = true
	s.state = stateOpenWait
	s.key = p.Seq
	s.peer = p.Stream
	s.queueControl(Packet{Type: RPP_HELLO2, Stream: p.Stream, Seq: s.index})
	s.pump()
}

func (e *Endpoint) timerLoop() {
	defer e.wg.Done()
	tick := e.opts.Timeout / 4
	if tick < time.Millisecond {
		tick = time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-e.done:
			return
		case now := <-t.C:
			e.mu.Lock()
			for _, s := range e.streams {
				if s != nil {
					s.tick(now)
				}
			}
			e.mu.Unlock()
		}
	}
}

// connected queues a stream for Accept. Called with e.mu held.
func (e *Endpoint) connected(s *Stream) {
	if s.responder && !s.accepted {
		s.accepted = true
		e.backlog = append(e.backlog, s)
		signal(e.acceptReady)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	switch a := a.(type) {
	case *net.UDPAddr:
		return unmap(a.AddrPort()), true
	case interface{ AddrPort() netip.AddrPort }:
		return unmap(a.AddrPort()), true
	}
	ap, err := netip.ParseAddrPort(a.String())
	return unmap(ap), err == nil
}

func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// ListenReserved binds a UDP socket on ip to the first free privileged
// port counting down from 1023 (to 512), as TORQUE daemons and RM clients
// bind their RPP client side. It needs root (or CAP_NET_BIND_SERVICE).
func ListenReserved(ip netip.Addr) (net.PacketConn, error) {
	var last error
	for port := 1023; port >= 512; port-- {
		pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port))))
		if err == nil {
			return pc, nil
		}
		last = err
		if errors.Is(err, os.ErrPermission) {
			break
		}
	}
	return nil, fmt.Errorf("rpp: no free reserved UDP port: %w", last)
}

// count returns the number of streams. Called with e.mu held.
func (e *Endpoint) count() int { return e.open }
