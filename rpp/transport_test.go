package rpp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// faultConn wraps a PacketConn and injects loss, duplication and
// reordering into the datagrams written through it, driven by a seeded
// generator. It also records what was written.
type faultConn struct {
	net.PacketConn
	mu       sync.Mutex
	rng      *rand.Rand
	loss     float64
	dup      float64
	reorder  float64
	held     []heldDatagram
	sent     []Packet
	disabled bool
}

type heldDatagram struct {
	b  []byte
	to net.Addr
}

func (c *faultConn) WriteTo(b []byte, to net.Addr) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, err := Parse(b); err == nil {
		p.Payload = append([]byte(nil), p.Payload...)
		c.sent = append(c.sent, p)
	}
	if c.disabled {
		return len(b), nil // a dead peer: everything vanishes
	}
	if c.rng != nil {
		if c.rng.Float64() < c.loss {
			return len(b), nil
		}
		if c.rng.Float64() < c.reorder {
			c.held = append(c.held, heldDatagram{append([]byte(nil), b...), to})
			return len(b), nil
		}
	}
	if _, err := c.PacketConn.WriteTo(b, to); err != nil {
		return 0, err
	}
	if c.rng != nil && c.rng.Float64() < c.dup {
		_, _ = c.PacketConn.WriteTo(b, to)
	}
	// Release held datagrams after a newer one: they arrive out of order.
	for _, h := range c.held {
		_, _ = c.PacketConn.WriteTo(h.b, h.to)
	}
	c.held = c.held[:0]
	return len(b), nil
}

func (c *faultConn) packets() []Packet {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Packet(nil), c.sent...)
}

func listen(t *testing.T) net.PacketConn {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func addrOf(e *Endpoint) netip.AddrPort {
	return e.LocalAddr().(*net.UDPAddr).AddrPort()
}

func fastOpts(key uint32) *Options {
	return &Options{Timeout: 20 * time.Millisecond, Retry: 50, OpenKey: key}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type pair struct {
	a, b   *Endpoint
	ca, cb *faultConn
}

func newPair(t *testing.T, optsA, optsB *Options) *pair {
	t.Helper()
	p := &pair{ca: &faultConn{PacketConn: listen(t)}, cb: &faultConn{PacketConn: listen(t)}}
	p.a = NewEndpoint(p.ca, optsA)
	p.b = NewEndpoint(p.cb, optsB)
	t.Cleanup(func() { p.a.Close(); p.b.Close() })
	return p
}

func wireShape(ps []Packet) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %d %d", p.Type, p.Stream, p.Seq))
	}
	return out
}

// TestConversationShape checks the packet sequence of one request/reply
// conversation against the shape of capture 24 (momctl -q loadave): HELLO1
// with the initiator's index and the open key, HELLO2, ACK of the key,
// EOD/ACK pairs, then GOODBYE answered by ACK and the peer's own GOODBYE.
func TestConversationShape(t *testing.T) {
	// No loss here: a long timeout keeps retransmissions out of the
	// compared packet lists even on a slow machine.
	p := newPair(t, &Options{Timeout: 5 * time.Second, OpenKey: 0x37C}, &Options{Timeout: 5 * time.Second, OpenKey: 0x100})
	ctx := ctxT(t)
	// Occupy index 0 on the responder so its index differs from the
	// initiator's, as in the capture (MOM's stream 0 is its IS stream).
	dummy, _ := p.b.Open(netip.MustParseAddrPort("127.0.0.1:9"))
	defer dummy.Close()

	s, err := p.a.Open(addrOf(p.b))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send([]byte("+1+1+2+7loadave")); err != nil {
		t.Fatal(err)
	}
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := r.Recv(ctx)
	if err != nil || string(msg) != "+1+1+2+7loadave" {
		t.Fatalf("Recv = %q, %v", msg, err)
	}
	if err := r.Send([]byte("3+1002+12loadave=0.37")); err != nil {
		t.Fatal(err)
	}
	reply, err := s.Recv(ctx)
	if err != nil || string(reply) != "3+1002+12loadave=0.37" {
		t.Fatalf("reply = %q, %v", reply, err)
	}
	if err := s.Send([]byte("+1+1+1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if m, err := r.Recv(ctx); err != nil || string(m) != "+1+1+1" {
		t.Fatalf("Recv = %q, %v", m, err)
	}
	if _, err := r.Recv(ctx); err != io.EOF {
		t.Fatalf("Recv after GOODBYE = %v, want io.EOF", err)
	}
	r.Close()
	waitFor(t, func() bool { return len(p.cb.packets()) >= 6 && len(p.ca.packets()) >= 7 })
	time.Sleep(50 * time.Millisecond)

	wantA := []string{
		"HELLO1 0 892", // 0x37C
		"ACK 1 892",
		"EOD 1 0",
		"ACK 1 0",
		"EOD 1 1",
		"GOODBYE 1 2",
		"ACK 1 1",
	}
	wantB := []string{
		"HELLO2 0 1",
		"ACK 0 0",
		"EOD 0 0",
		"ACK 0 1",
		"ACK 0 2",
		"GOODBYE 0 1",
	}
	gotA := wireShape(p.ca.packets())
	var gotB []string
	for _, l := range wireShape(p.cb.packets()) {
		if l != "HELLO1 0 256" { // the dummy stream's open attempts
			gotB = append(gotB, l)
		}
	}
	if fmt.Sprint(gotA) != fmt.Sprint(wantA) {
		t.Errorf("initiator sent\n%q\nwant\n%q", gotA, wantA)
	}
	if fmt.Sprint(gotB) != fmt.Sprint(wantB) {
		t.Errorf("responder sent\n%q\nwant\n%q", gotB, wantB)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFragmentation(t *testing.T) {
	p := newPair(t, &Options{Timeout: 100 * time.Millisecond, OpenKey: 1}, &Options{Timeout: 100 * time.Millisecond, OpenKey: 2})
	ctx := ctxT(t)
	sizes := []int{0, 1, MaxPayload - 1, MaxPayload, MaxPayload + 1, 2 * MaxPayload, 6405, 100000}
	s, _ := p.a.Open(addrOf(p.b))
	for i, n := range sizes {
		if err := s.Send(bytes.Repeat([]byte{byte('a' + i)}, n)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		m, err := r.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m, bytes.Repeat([]byte{byte('a' + i)}, n)) {
			t.Fatalf("message %d: got %d bytes, want %d", i, len(m), n)
		}
	}
	// The 6405-byte message travels as DATA(4070) + EOD(2335), as the
	// real MOM sent it; a 4070-byte one ends with an empty EOD.
	var frags []string
	seen := map[uint32]bool{}
	for _, pk := range p.ca.packets() {
		if (pk.Type == RPP_DATA || pk.Type == RPP_EOD) && !seen[pk.Seq] {
			seen[pk.Seq] = true // retransmissions are not new fragments
			frags = append(frags, fmt.Sprintf("%s%d", pk.Type, len(pk.Payload)))
		}
	}
	want := "[EOD0 EOD1 EOD4069 DATA4070 EOD0 DATA4070 EOD1 DATA4070 DATA4070 EOD0 DATA4070 EOD2335"
	if got := fmt.Sprint(frags); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("fragments %s, want prefix %s", got, want)
	}
}

// TestFaults runs conversations in both directions over links that lose,
// duplicate and reorder datagrams; every message must arrive intact, once
// and in order.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name                string
		loss, dup, reorder  float64
		seedA, seedB, count uint64
	}{
		{"loss", 0.3, 0, 0, 1, 2, 40},
		{"duplication", 0, 0.5, 0, 3, 4, 40},
		{"reordering", 0, 0, 0.4, 5, 6, 40},
		{"all", 0.2, 0.2, 0.2, 7, 8, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A packet and its ACK each cross a lossy link: at 30% loss a
			// round trip fails half the time, and fastOpts' 50 retries
			// (about one second with back-off) run out now and then, which
			// makes the stream stale; that is TestStaleAfterRetries' subject, not this
			// test's. Give the streams time enough to get through (a GOODBYE
			// whose ACK was lost after the peer let go still waits them out).
			optsA, optsB := fastOpts(10), fastOpts(20)
			optsA.Retry, optsB.Retry = 150, 150
			p := newPair(t, optsA, optsB)
			for _, c := range []struct {
				fc   *faultConn
				seed uint64
			}{{p.ca, tc.seedA}, {p.cb, tc.seedB}} {
				c.fc.mu.Lock()
				c.fc.rng = rand.New(rand.NewPCG(c.seed, 99))
				c.fc.loss, c.fc.dup, c.fc.reorder = tc.loss, tc.dup, tc.reorder
				c.fc.mu.Unlock()
			}
			ctx := ctxT(t)
			s, _ := p.a.Open(addrOf(p.b))
			msg := func(dir string, i uint64) []byte {
				// some messages span several fragments
				return append([]byte(fmt.Sprintf("%s-%d:", dir, i)), bytes.Repeat([]byte{'x'}, int(i%5)*3000)...)
			}
			go func() {
				for i := range tc.count {
					s.Send(msg("ab", i))
				}
			}()
			r, err := p.b.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for i := range tc.count {
					r.Send(msg("ba", i))
				}
			}()
			for i := range tc.count {
				m, err := r.Recv(ctx)
				if err != nil {
					t.Fatalf("b: message %d: %v", i, err)
				}
				if !bytes.Equal(m, msg("ab", i)) {
					t.Fatalf("b: message %d = %.20q...", i, m)
				}
				m, err = s.Recv(ctx)
				if err != nil {
					t.Fatalf("a: message %d: %v", i, err)
				}
				if !bytes.Equal(m, msg("ba", i)) {
					t.Fatalf("a: message %d = %.20q...", i, m)
				}
			}
			s.Close()
			if _, err := r.Recv(ctx); err != io.EOF {
				t.Fatalf("after GOODBYE: %v", err)
			}
			r.Close()
			// Both sides release their stream once the GOODBYEs are done.
			waitFor(t, func() bool { return p.a.streamCount() == 0 && p.b.streamCount() == 0 })
		})
	}
}

func (e *Endpoint) streamCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count()
}

// tickAt runs the endpoint's retransmission timer once as if the clock
// read now. Tests give the endpoint an hour-long timeout, so its own timer
// never fires, and drive the schedule with fake times: deterministic
// however loaded the machine is.
func tickAt(e *Endpoint, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.streams {
		if s != nil {
			s.tick(now)
		}
	}
}

// firstSent returns when the oldest unacknowledged packet of s was first
// sent.
func firstSent(t *testing.T, s *Stream) time.Time {
	t.Helper()
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if len(s.unacked) == 0 {
		t.Fatal("nothing unacknowledged")
	}
	return s.unacked[0].first
}

func setDisabled(c *faultConn, v bool) {
	c.mu.Lock()
	c.disabled = v
	c.mu.Unlock()
}

// countSent counts the datagrams of type typ and sequence seq written
// through c.
func countSent(c *faultConn, typ Type, seq uint32) int {
	n := 0
	for _, pk := range c.packets() {
		if pk.Type == typ && pk.Seq == seq {
			n++
		}
	}
	return n
}

// connectedPair opens a stream from a (hour-long timeout: retransmitted
// only by tickAt) to b and exchanges one message.
func connectedPair(t *testing.T, retry int) (*pair, *Stream) {
	t.Helper()
	p := newPair(t, &Options{Timeout: time.Hour, Retry: retry, OpenKey: 1}, fastOpts(2))
	ctx := ctxT(t)
	s, _ := p.a.Open(addrOf(p.b))
	s.Send([]byte("hello"))
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Recv(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return s.Unanswered() == 0 })
	return p, s
}

// TestBackoff: the first retransmission comes after the timeout, each
// further unanswered round doubles the interval up to 2^MaxBackoff times
// the timeout, and an ACK brings it back to the timeout.
func TestBackoff(t *testing.T) {
	const T = time.Hour
	p, s := connectedPair(t, 1000)
	setDisabled(p.cb, true) // b's ACKs vanish
	s.Send([]byte("lost"))
	t0 := firstSent(t, s)
	// at: fake time of the tick; want: EOD seq 1 transmissions after it.
	steps := []struct {
		at   time.Duration
		want int
	}{
		{T - time.Minute, 1},
		{T, 2},                 // first retransmission after the timeout
		{3*T - time.Minute, 2}, // then 2T
		{3 * T, 3},
		{7*T - time.Minute, 3}, // then 4T
		{7 * T, 4},
		{15*T - time.Minute, 4}, // then 8T
		{15 * T, 5},
		{23*T - time.Minute, 5}, // bounded: 8T again, not 16T
		{23 * T, 6},
		{31 * T, 7},
	}
	for _, st := range steps {
		tickAt(p.a, t0.Add(st.at))
		if n := countSent(p.ca, RPP_EOD, 1); n != st.want {
			t.Fatalf("after tick at t0+%v: EOD seq 1 sent %d times, want %d", st.at, n, st.want)
		}
	}
	if 1<<MaxBackoff != 8 {
		t.Fatalf("MaxBackoff = %d; the table above assumes 3", MaxBackoff)
	}
	// b answers again: the next retransmission is acknowledged and the
	// interval is back to the timeout.
	setDisabled(p.cb, false)
	tickAt(p.a, t0.Add(39*T))
	waitFor(t, func() bool { return s.Unanswered() == 0 })
	setDisabled(p.cb, true)
	s.Send([]byte("lost again"))
	t1 := firstSent(t, s)
	tickAt(p.a, t1.Add(T-time.Minute))
	tickAt(p.a, t1.Add(T))
	if n := countSent(p.ca, RPP_EOD, 2); n != 2 {
		t.Fatalf("after an ACK the retransmission interval did not reset: EOD seq 2 sent %d times by t1+T, want 2", n)
	}
}

// TestStaleAfterRetries: a stream goes stale when a packet waited
// timeout × (Retry+1) for its ACK, as TORQUE's constant schedule gives up,
// or when it was resent Retry times; with back-off fewer resends fit in.
func TestStaleAfterRetries(t *testing.T) {
	const T = time.Hour
	p, s := connectedPair(t, 3)
	setDisabled(p.cb, true) // b stops answering
	s.Send([]byte("anyone?"))
	t0 := firstSent(t, s)
	for _, at := range []time.Duration{T, 3 * T, 4*T - time.Minute} {
		tickAt(p.a, t0.Add(at))
	}
	if err := s.Send([]byte("still there?")); err != nil {
		t.Fatalf("Send before the deadline = %v", err)
	}
	tickAt(p.a, t0.Add(4*T))
	ctx := ctxT(t)
	if _, err := s.Recv(ctx); !errors.Is(err, ErrStale) {
		t.Fatalf("Recv = %v, want ErrStale", err)
	}
	if err := s.Send([]byte("x")); !errors.Is(err, ErrStale) {
		t.Fatalf("Send = %v, want ErrStale", err)
	}
	if n := countSent(p.ca, RPP_EOD, 1); n != 3 { // sent at 0, T, 3T
		t.Errorf("EOD seq 1 sent %d times, want 3", n)
	}
	if p.a.streamCount() != 0 {
		t.Error("stale stream not released")
	}

}

func TestOpenToNobodyGoesStale(t *testing.T) {
	pc := listen(t)
	e := NewEndpoint(pc, &Options{Timeout: 5 * time.Millisecond, Retry: 2})
	defer e.Close()
	dead := listen(t)
	addr := dead.LocalAddr().(*net.UDPAddr).AddrPort()
	dead.Close()
	s, _ := e.Open(addr)
	if _, err := s.Recv(ctxT(t)); !errors.Is(err, ErrStale) {
		t.Fatalf("Recv = %v, want ErrStale", err)
	}
	if e.streamCount() != 0 {
		t.Error("stale stream not released")
	}
}

// TestPeerRestart: a HELLO1 with a new key from the same address and port
// discards the streams the old incarnation had opened.
func TestPeerRestart(t *testing.T) {
	pcA := listen(t)
	addrA := pcA.LocalAddr().String()
	a := NewEndpoint(pcA, fastOpts(5))
	b := NewEndpoint(listen(t), fastOpts(6))
	defer b.Close()
	ctx := ctxT(t)
	s, _ := a.Open(addrOf(b))
	s.Send([]byte("one"))
	old, err := b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Recv(ctx); err != nil {
		t.Fatal(err)
	}
	a.Close()
	pcA2, err := net.ListenPacket("udp", addrA)
	if err != nil {
		t.Skipf("cannot rebind %s: %v", addrA, err)
	}
	a2 := NewEndpoint(pcA2, fastOpts(500))
	defer a2.Close()
	s2, _ := a2.Open(addrOf(b))
	s2.Send([]byte("two"))
	if _, err := old.Recv(ctx); !errors.Is(err, ErrStale) {
		t.Fatalf("old stream Recv = %v, want ErrStale", err)
	}
	n, err := b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := n.Recv(ctx); err != nil || string(m) != "two" {
		t.Fatalf("new stream Recv = %q, %v", m, err)
	}
}

// TestGarbage: datagrams that are not RPP, carry a bad CRC or name
// unknown streams are dropped without disturbing a working stream.
func TestGarbage(t *testing.T) {
	p := newPair(t, fastOpts(1), fastOpts(2))
	ctx := ctxT(t)
	s, _ := p.a.Open(addrOf(p.b))
	s.Send([]byte("before"))
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	junk, err := net.Dial("udp", p.b.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer junk.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	good := Packet{Type: RPP_EOD, Stream: 0, Seq: 7, Payload: []byte("x")}.Marshal()
	bad := append([]byte(nil), good...)
	bad[0] ^= 1
	for _, d := range [][]byte{nil, []byte("hello"), bytes.Repeat([]byte{'F'}, 26), bad, good,
		Packet{Type: RPP_ACK, Stream: 77}.Marshal(), Packet{Type: RPP_HELLO2, Stream: 3, Seq: 4}.Marshal()} {
		junk.Write(d)
	}
	for range 200 {
		b := make([]byte, rng.IntN(5000))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		junk.Write(b)
	}
	s.Send([]byte("after"))
	for _, want := range []string{"before", "after"} {
		if m, err := r.Recv(ctx); err != nil || string(m) != want {
			t.Fatalf("Recv = %q, %v; want %q", m, err, want)
		}
	}
}

func TestWindow(t *testing.T) {
	p := newPair(t, &Options{Timeout: time.Hour, Window: 3, OpenKey: 1}, fastOpts(2))
	ctx := ctxT(t)
	s, _ := p.a.Open(addrOf(p.b))
	s.Send([]byte("m0"))
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Recv(ctx)
	p.cb.mu.Lock()
	p.cb.disabled = true // from now on no ACK reaches a
	p.cb.mu.Unlock()
	for i := range 10 {
		s.Send([]byte{byte(i)})
	}
	time.Sleep(50 * time.Millisecond)
	n := 0
	for _, pk := range p.ca.packets() {
		if pk.Type == RPP_EOD && pk.Seq > 0 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d packets in flight without ACKs, want the window of 3", n)
	}
}

// TestReopenSameKey: a client that closed its stream and reopens from the
// same port with the same (time-based) open key gets a new stream, not a
// retransmission of the old one.
func TestReopenSameKey(t *testing.T) {
	b := NewEndpoint(listen(t), fastOpts(6))
	defer b.Close()
	ctx := ctxT(t)
	pc := listen(t)
	addr := pc.LocalAddr().String()
	for i := range 2 {
		if i > 0 {
			var err error
			if pc, err = net.ListenPacket("udp", addr); err != nil {
				t.Skipf("cannot rebind %s: %v", addr, err)
			}
		}
		a := NewEndpoint(pc, fastOpts(0x37C))
		s, _ := a.Open(addrOf(b))
		s.Send([]byte{byte('0' + i)})
		r, err := b.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := r.Recv(ctx); err != nil || m[0] != byte('0'+i) {
			t.Fatalf("open %d: %q, %v", i, m, err)
		}
		s.Close()
		if _, err := r.Recv(ctx); err != io.EOF {
			t.Fatalf("open %d: %v", i, err)
		}
		r.Close()
		time.Sleep(30 * time.Millisecond)
		a.Close()
	}
}

func TestSharedIndexes(t *testing.T) {
	var x IndexSet
	a := NewEndpoint(listen(t), &Options{Timeout: time.Hour, Indexes: &x})
	b := NewEndpoint(listen(t), &Options{Timeout: time.Hour, Indexes: &x})
	defer a.Close()
	defer b.Close()
	nowhere := netip.MustParseAddrPort("127.0.0.1:9")
	s0, _ := a.Open(nowhere)
	s1, _ := b.Open(nowhere)
	s2, _ := a.Open(nowhere)
	if s0.Index() != 0 || s1.Index() != 1 || s2.Index() != 2 {
		t.Fatalf("indexes %d %d %d, want 0 1 2", s0.Index(), s1.Index(), s2.Index())
	}
	b.Close() // releases index 1
	if s3, _ := a.Open(nowhere); s3.Index() != 1 {
		t.Fatalf("index %d after release, want 1", s3.Index())
	}
}

func TestDone(t *testing.T) {
	p := newPair(t, fastOpts(1), fastOpts(2))
	ctx := ctxT(t)
	s, _ := p.a.Open(addrOf(p.b))
	s.Send([]byte("x"))
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Recv(ctx)
	s.Close()
	if _, err := r.Recv(ctx); err != io.EOF {
		t.Fatal(err)
	}
	for _, st := range []*Stream{s, r} {
		select {
		case <-st.Done():
		case <-ctx.Done():
			t.Fatal("stream not released after the GOODBYE exchange")
		}
	}
	// The released index is reused by the next open.
	if n, _ := p.a.Open(addrOf(p.b)); n.Index() != s.Index() {
		t.Errorf("new stream index %d, want %d", n.Index(), s.Index())
	}
}

func TestOpenWith(t *testing.T) {
	pc := listen(t)
	e := NewEndpoint(pc, &Options{Timeout: 20 * time.Millisecond})
	defer e.Close()
	dead := listen(t)
	addr := dead.LocalAddr().(*net.UDPAddr).AddrPort()
	defer dead.Close() // bound but silent: HELLO1s vanish
	start := time.Now()
	s, _ := e.OpenWith(addr, 20*time.Millisecond, 2)
	if _, err := s.Recv(ctxT(t)); !errors.Is(err, ErrStale) {
		t.Fatalf("Recv = %v, want ErrStale", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stale after %v with 2 retries of 20ms", d)
	}
}

func TestMaxStreams(t *testing.T) {
	b := NewEndpoint(listen(t), &Options{Timeout: time.Hour, MaxStreams: 2})
	defer b.Close()
	for key := uint32(1); key <= 10; key++ {
		// Each open from its own socket: a new key from the same address
		// and port would replace the earlier stream (a peer restart).
		c, err := net.Dial("udp", b.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(Packet{Type: RPP_HELLO1, Stream: 0, Seq: key}.Marshal())
	}
	waitFor(t, func() bool { return b.streamCount() >= 2 })
	time.Sleep(50 * time.Millisecond)
	if n := b.streamCount(); n != 2 {
		t.Errorf("%d streams, want the bound of 2", n)
	}
	// A raised bound admits more opens (a server whose nodes grew).
	b.SetMaxStreams(4)
	for key := uint32(11); key <= 20; key++ {
		c, err := net.Dial("udp", b.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(Packet{Type: RPP_HELLO1, Stream: 0, Seq: key}.Marshal())
	}
	waitFor(t, func() bool { return b.streamCount() >= 4 })
	time.Sleep(50 * time.Millisecond)
	if n := b.streamCount(); n != 4 {
		t.Errorf("%d streams, want the raised bound of 4", n)
	}
}

func TestUnanswered(t *testing.T) {
	p := newPair(t, &Options{Timeout: time.Hour, OpenKey: 1}, fastOpts(2))
	ctx := ctxT(t)
	s, _ := p.a.Open(addrOf(p.b))
	s.Send([]byte("x"))
	r, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Recv(ctx)
	waitFor(t, func() bool { return s.Unanswered() == 0 })
	p.cb.mu.Lock()
	p.cb.disabled = true // no more ACKs
	p.cb.mu.Unlock()
	s.Send([]byte("y"))
	time.Sleep(30 * time.Millisecond)
	if d := s.Unanswered(); d < 30*time.Millisecond || d > 10*time.Second {
		t.Errorf("Unanswered = %v after 30ms without an ACK", d)
	}
}

// TestCrossingOpens: two endpoints open streams to each other at the same
// moment, between the same two ports (a MOM saying hello while the
// server pings it). Both streams connect, neither is taken for a peer
// restart, and each carries its own messages.
func TestCrossingOpens(t *testing.T) {
	for round := range 20 {
		p := newPair(t, fastOpts(uint32(100+round)), fastOpts(uint32(100+round)))
		var wg sync.WaitGroup
		var ab, ba *Stream
		wg.Add(2)
		go func() { defer wg.Done(); ab, _ = p.a.Open(addrOf(p.b)) }()
		go func() { defer wg.Done(); ba, _ = p.b.Open(addrOf(p.a)) }()
		wg.Wait()
		ctx := ctxT(t)
		ab.Send([]byte("from a"))
		ba.Send([]byte("from b"))
		inB, err := p.b.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inA, err := p.a.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			st   *Stream
			want string
		}{{inB, "from a"}, {inA, "from b"}} {
			m, err := c.st.Recv(ctx)
			if err != nil || string(m) != c.want {
				t.Fatalf("round %d: got %q, %v; want %q", round, m, err, c.want)
			}
		}
		// both directions still work after the crossing
		inB.Send([]byte("reply to a"))
		if m, err := ab.Recv(ctx); err != nil || string(m) != "reply to a" {
			t.Fatalf("round %d: reply on a's stream: %q, %v", round, m, err)
		}
		if m := p.a.streamCount(); m != 2 {
			t.Errorf("round %d: a has %d streams, want 2", round, m)
		}
	}
}

// TestReadBuffer: the endpoint asks for Options.ReadBuffer; as root on
// Linux it gets it even beyond net.core.rmem_max.
func TestReadBuffer(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux")
	}
	pc := listen(t)
	e := NewEndpoint(pc, &Options{ReadBuffer: 64 << 20})
	defer e.Close()
	rc, err := pc.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var gerr error
	rc.Control(func(fd uintptr) { got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) })
	if gerr != nil {
		t.Fatal(gerr)
	}
	if got < 64<<20 {
		t.Errorf("SO_RCVBUF = %d, want at least %d", got, 64<<20)
	}
}

// TestAbandonAfterReopen: once a second stream to the same peer is open,
// the peer has discarded the first; abandoning the first sends nothing,
// and the second goes on. (Closing the first instead would send a GOODBYE
// that the peer, having given the second stream the first one's index,
// takes for the second's.)
func TestAbandonAfterReopen(t *testing.T) {
	for _, abandon := range []bool{true, false} {
		p := newPair(t, fastOpts(10), fastOpts(20))
		ctx := ctxT(t)
		first, _ := p.a.Open(addrOf(p.b))
		first.Send([]byte("one"))
		r1, err := p.b.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := r1.Recv(ctx); err != nil || string(m) != "one" {
			t.Fatalf("first stream: %q, %v", m, err)
		}
		second, _ := p.a.Open(addrOf(p.b))
		second.Send([]byte("two"))
		if _, err := r1.Recv(ctx); !errors.Is(err, ErrStale) {
			t.Fatalf("first stream at the peer after the second open: %v, want ErrStale", err)
		}
		r2, err := p.b.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r2.Index() != r1.Index() {
			t.Logf("the peer gave the second stream index %d, the first had %d", r2.Index(), r1.Index())
		}
		if m, err := r2.Recv(ctx); err != nil || string(m) != "two" {
			t.Fatalf("second stream: %q, %v", m, err)
		}
		if !abandon {
			// What the MOM did before: the ghost GOODBYE closes the
			// second stream at the peer.
			first.Close()
			second.Send([]byte("three"))
			m, err := r2.Recv(ctx)
			if err == nil && string(m) == "three" {
				m, err = r2.Recv(ctx)
			}
			if !errors.Is(err, io.EOF) {
				t.Fatalf("closing the first stream did not end the second at the peer (%q, %v): the hazard Abandon avoids is gone", m, err)
			}
			continue
		}
		first.Abandon()
		if _, err := first.Recv(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Recv of the abandoned stream: %v, want ErrClosed", err)
		}
		for _, msg := range []string{"three", "four"} {
			second.Send([]byte(msg))
			if m, err := r2.Recv(ctx); err != nil || string(m) != msg {
				t.Fatalf("second stream after the first was abandoned: %q, %v", m, err)
			}
		}
		for _, pk := range p.ca.packets() {
			if pk.Type == RPP_GOODBYE {
				t.Errorf("GOODBYE sent: %v", pk)
			}
		}
		if n := p.a.streamCount(); n != 1 {
			t.Errorf("%d streams at the opener, want 1", n)
		}
	}
}
