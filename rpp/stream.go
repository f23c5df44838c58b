package rpp

import (
	"context"
	"io"
	"net/netip"
	"time"
)

// Stream states (spec 10 §2.3). Only the ones the transport needs are
// distinguished; closing is tracked by flags.
type streamState uint8

const (
	stateOpenPend streamState = iota + 1 // initiator: HELLO1 sent
	stateOpenWait                        // responder: HELLO2 sent, waiting for its ACK
	stateConnect                         // open
)

// oooLimit bounds how far ahead of the expected sequence number packets
// are buffered; anything further is dropped unacknowledged.
const oooLimit = 4 * DefaultWindow

// Stream is one RPP stream: a reliable, ordered sequence of whole messages
// in each direction between two endpoints. All methods are safe for
// concurrent use; messages are delivered in order to Recv.
type Stream struct {
	e         *Endpoint
	index     uint32 // our index
	peer      uint32 // the peer's index (known after HELLO1/HELLO2)
	remote    netip.AddrPort
	key       uint32 // open key
	responder bool
	accepted  bool
	state     streamState

	// sending
	nextSeq uint32
	outq    []*outPacket // waiting for the connection or the window
	unacked []*outPacket // sent, waiting for an ACK (or HELLO2)

	// receiving
	expect uint32
	ooo    map[uint32]Packet
	frag   []byte
	msgs   [][]byte

	closing      bool // Close called or peer said GOODBYE: our GOODBYE is queued
	goodbyeAcked bool
	peerGoodbye  bool
	localClosed  bool      // Close called by the application
	lingerUntil  time.Time // set when our GOODBYE was acknowledged but the peer's is missing
	err          error     // ErrStale / ErrClosed once failed

	// Per-stream retransmission settings (OpenWith); zero = the endpoint's.
	rto   time.Duration
	retry int
	// backoff is how many times in a row the retransmission interval was
	// doubled because packets went unanswered; an ACK that acknowledges
	// something resets it.
	backoff uint

	wake chan struct{} // closed and replaced on every state change
	done chan struct{} // closed when the stream's index is released
}

// Done returns a channel closed when the stream is over and its index
// released: both GOODBYEs were exchanged, it went stale, or the endpoint
// was closed.
func (s *Stream) Done() <-chan struct{} { return s.done }

// broadcast wakes every goroutine waiting on the stream.
func (s *Stream) broadcast() {
	close(s.wake)
	s.wake = make(chan struct{})
}

type outPacket struct {
	typ     Type
	seq     uint32
	payload []byte
	first   time.Time // first transmission
	sent    time.Time // latest transmission
	tries   int
}

// RemoteAddr returns the peer's address and port.
func (s *Stream) RemoteAddr() netip.AddrPort { return s.remote }

// Index returns the stream's index in the local endpoint's table.
func (s *Stream) Index() uint32 { return s.index }

// Send queues msg as one message (DATA fragments and a final EOD) and
// returns; the transport delivers it reliably in order.
func (s *Stream) Send(msg []byte) error {
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closing || s.localClosed {
		return ErrClosed
	}
	for {
		if len(msg) >= MaxPayload {
			s.enqueue(RPP_DATA, msg[:MaxPayload])
			msg = msg[MaxPayload:]
			continue
		}
		s.enqueue(RPP_EOD, msg)
		break
	}
	s.pump()
	return nil
}

// Recv returns the next whole message. It returns io.EOF after the peer
// closed the stream and every message before its GOODBYE was read,
// ErrStale when the peer stopped answering, ErrClosed after Close.
func (s *Stream) Recv(ctx context.Context) ([]byte, error) {
	e := s.e
	for {
		e.mu.Lock()
		switch {
		case s.localClosed:
			e.mu.Unlock()
			return nil, ErrClosed
		case len(s.msgs) > 0:
			m := s.msgs[0]
			s.msgs[0] = nil
			s.msgs = s.msgs[1:]
			e.mu.Unlock()
			return m, nil
		case s.peerGoodbye:
			e.mu.Unlock()
			return nil, io.EOF
		case s.err != nil:
			err := s.err
			e.mu.Unlock()
			return nil, err
		}
		wake := s.wake
		e.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close sends GOODBYE once everything queued before it is acknowledged
// and releases the stream when the peer has acknowledged it. It does not
// wait; Flush first to wait for delivery.
func (s *Stream) Close() error {
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.localClosed {
		return nil
	}
	s.localClosed = true
	s.broadcast()
	if s.err != nil {
		e.free(s)
		return nil
	}
	s.startClose()
	return nil
}

// Abandon forgets the stream at once without a word to the peer (no
// GOODBYE): for a stream the peer has discarded already. An endpoint that
// opens a second stream to the address and port it has a stream open to
// makes the peer discard the first one, a HELLO1 with a new key reading
// as a restart (spec 10 §2.3); a GOODBYE sent on the first one afterwards
// would land on the second, which the peer may have given the same index,
// and close it there. Recv and Send of an abandoned stream fail with
// ErrClosed.
func (s *Stream) Abandon() {
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	s.localClosed = true
	s.fail(ErrClosed)
	e.free(s)
}

// Unanswered returns how long the oldest packet still awaiting its
// acknowledgement (or the open handshake) has been waiting, 0 if none.
// Applications use it to give up on a peer sooner than the retries do
// (pbs_mom reopens its IS stream after twice status_update_time).
func (s *Stream) Unanswered() time.Duration {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	var oldest time.Time
	for _, o := range s.unacked {
		if !o.first.IsZero() && (oldest.IsZero() || o.first.Before(oldest)) {
			oldest = o.first
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return time.Since(oldest)
}

// Flush waits until every message sent so far has been acknowledged.
func (s *Stream) Flush(ctx context.Context) error {
	e := s.e
	for {
		e.mu.Lock()
		pending := len(s.outq) > 0 || s.unackedData()
		err := s.err
		wake := s.wake
		e.mu.Unlock()
		if err != nil {
			return err
		}
		if !pending {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// heardData reports whether the peer's DATA or EOD reached the stream:
// its first packet has been delivered or is held out of order.
func (s *Stream) heardData() bool {
	return s.expect > 0 || len(s.ooo) > 0
}

func (s *Stream) unackedData() bool {
	for _, o := range s.unacked {
		if o.typ == RPP_DATA || o.typ == RPP_EOD {
			return true
		}
	}
	return false
}

// The methods below are called with s.e.mu held.

func (s *Stream) enqueue(t Type, payload []byte) {
	s.outq = append(s.outq, &outPacket{typ: t, seq: s.nextSeq, payload: append([]byte(nil), payload...)})
	s.nextSeq++
}

// queueControl sends a HELLO1/HELLO2 that is retransmitted until answered.
func (s *Stream) queueControl(p Packet) {
	s.unacked = append(s.unacked, &outPacket{typ: p.Type, seq: p.Seq})
	s.transmit(s.unacked[len(s.unacked)-1], time.Now())
}

func (s *Stream) packet(o *outPacket) Packet {
	switch o.typ {
	case RPP_HELLO1:
		return Packet{Type: RPP_HELLO1, Stream: s.index, Seq: s.key}
	case RPP_HELLO2:
		return Packet{Type: RPP_HELLO2, Stream: s.peer, Seq: s.index}
	}
	return Packet{Type: o.typ, Stream: s.peer, Seq: o.seq, Payload: o.payload}
}

func (s *Stream) transmit(o *outPacket, now time.Time) {
	if o.first.IsZero() {
		o.first = now
	}
	o.sent = now
	s.e.send(s.remote, s.packet(o))
}

// pump moves queued packets into the window once the stream is connected.
func (s *Stream) pump() {
	if s.state != stateConnect || s.err != nil {
		return
	}
	now := time.Now()
	for len(s.outq) > 0 && len(s.unacked) < s.e.opts.Window {
		o := s.outq[0]
		if o.typ == RPP_GOODBYE && len(s.unacked) > 0 {
			break // GOODBYE goes after everything else is acknowledged
		}
		s.outq = s.outq[1:]
		s.unacked = append(s.unacked, o)
		s.transmit(o, now)
	}
}

func (s *Stream) resendAll() {
	now := time.Now()
	for _, o := range s.unacked {
		s.transmit(o, now)
	}
}

func (s *Stream) ack(seq uint32) {
	s.e.send(s.remote, Packet{Type: RPP_ACK, Stream: s.peer, Seq: seq})
}

func (s *Stream) setConnected() {
	s.backoff = 0
	s.removeUnacked(func(o *outPacket) bool { return o.typ == RPP_HELLO1 || o.typ == RPP_HELLO2 })
	s.state = stateConnect
	s.e.connected(s)
	s.pump()
	s.broadcast()
}

func (s *Stream) removeUnacked(match func(*outPacket) bool) bool {
	found := false
	kept := s.unacked[:0]
	for _, o := range s.unacked {
		if match(o) {
			found = true
			continue
		}
		kept = append(kept, o)
	}
	for i := len(kept); i < len(s.unacked); i++ {
		s.unacked[i] = nil
	}
	s.unacked = kept
	return found
}

func (s *Stream) handleHello2(p Packet) {
	switch {
	case s.state == stateOpenPend:
		s.peer = p.Seq
		s.ack(s.key)
		s.setConnected()
	case s.peer == p.Seq && !s.responder:
		s.ack(s.key) // our ACK was lost
	}
}

func (s *Stream) handleAck(seq uint32) {
	if s.state == stateOpenWait {
		if seq == s.key {
			s.setConnected()
		}
		return
	}
	if s.state != stateConnect {
		return
	}
	goodbye := false
	if !s.removeUnacked(func(o *outPacket) bool {
		if (o.typ == RPP_DATA || o.typ == RPP_EOD || o.typ == RPP_GOODBYE) && o.seq == seq {
			goodbye = o.typ == RPP_GOODBYE
			return true
		}
		return false
	}) {
		return // duplicate ACK
	}
	s.backoff = 0 // the peer is answering: back to the spec's interval
	if goodbye {
		s.goodbyeAcked = true
		s.maybeFinish()
	}
	s.pump()
	s.broadcast()
}

func (s *Stream) handleData(p Packet) {
	if s.state == stateOpenWait {
		// The ACK of our HELLO2 was lost but the initiator is sending:
		// it is connected.
		s.setConnected()
	}
	if s.state != stateConnect {
		return
	}
	d := int32(p.Seq - s.expect)
	switch {
	case d < 0: // duplicate
		s.ack(p.Seq)
		return
	case d > oooLimit:
		return
	case d > 0:
		if s.ooo == nil {
			s.ooo = make(map[uint32]Packet)
		}
		s.ooo[p.Seq] = p
		s.ack(p.Seq)
		return
	}
	s.ack(p.Seq)
	s.deliver(p)
	for {
		q, ok := s.ooo[s.expect]
		if !ok {
			break
		}
		delete(s.ooo, s.expect)
		s.deliver(q)
	}
}

// deliver processes the in-order packet p.
func (s *Stream) deliver(p Packet) {
	s.expect = p.Seq + 1
	switch p.Type {
	case RPP_DATA:
		s.frag = append(s.frag, p.Payload...)
	case RPP_EOD:
		msg := append(s.frag, p.Payload...)
		s.frag = nil
		if msg == nil {
			msg = []byte{}
		}
		if !s.localClosed {
			s.msgs = append(s.msgs, msg)
		}
		s.broadcast()
	case RPP_GOODBYE:
		s.peerGoodbye = true
		s.frag = nil
		s.ooo = nil
		s.broadcast()
		s.startClose() // answer with our own GOODBYE
		s.maybeFinish()
	}
}

// startClose queues our GOODBYE after the data already queued.
func (s *Stream) startClose() {
	if s.closing {
		return
	}
	s.closing = true
	s.enqueue(RPP_GOODBYE, nil)
	s.pump()
}

// maybeFinish releases the stream once both sides said GOODBYE and ours
// was acknowledged: its index is free for the next open at once, as the
// captures show (a MOM reopening its IS stream after the server's GOODBYE
// gets the same index again).
func (s *Stream) maybeFinish() {
	if s.goodbyeAcked && s.peerGoodbye {
		s.e.free(s)
	}
}

// tick retransmits overdue packets and expires streams.
//
// The first retransmission comes after the spec's timeout (§2.4); every
// further round of retransmissions without an ACK in between doubles the
// interval (up to MaxBackoff doublings), and an ACK that acknowledges
// something brings it back to the timeout. A stream goes stale when a
// packet was resent Retry times or has waited timeout × (Retry+1) for
// its ACK, the moment TORQUE's constant schedule gives up: back-off
// spaces the retransmissions out on a lossy or dead path without making
// a dead peer take longer to notice.
func (s *Stream) tick(now time.Time) {
	if !s.lingerUntil.IsZero() {
		if now.After(s.lingerUntil) {
			s.e.free(s)
		}
		return
	}
	if s.goodbyeAcked && !s.peerGoodbye {
		// We closed and the peer acknowledged but has not said GOODBYE
		// itself: wait a while for it, then forget the stream.
		s.lingerUntil = now.Add(2 * s.timeout())
		return
	}
	interval := s.interval()
	deadline := s.timeout() * time.Duration(s.retries()+1)
	resent := false
	for _, o := range s.unacked {
		overdue := now.Sub(o.sent) >= interval
		if now.Sub(o.first) >= deadline || (overdue && o.tries >= s.retries()) {
			s.e.logf("rpp: stream %d to %v stale after %d retries of %v", s.index, s.remote, o.tries, s.packet(o))
			s.fail(ErrStale)
			s.e.free(s)
			return
		}
		if !overdue {
			continue
		}
		o.tries++
		s.transmit(o, now)
		resent = true
	}
	if resent && s.backoff < MaxBackoff {
		s.backoff++
	}
}

// fail ends the stream with err; queued data is dropped.
func (s *Stream) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.outq, s.unacked, s.ooo = nil, nil, nil
	s.broadcast()
}

func (s *Stream) timeout() time.Duration {
	if s.rto > 0 {
		return s.rto
	}
	return s.e.opts.Timeout
}

// interval is the current retransmission interval: the spec's timeout
// doubled once per consecutive round of unanswered retransmissions, at
// most MaxBackoff times.
func (s *Stream) interval() time.Duration {
	return s.timeout() << s.backoff
}

func (s *Stream) retries() int {
	if s.retry > 0 {
		return s.retry
	}
	return s.e.opts.Retry
}
