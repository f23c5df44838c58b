// Tests of the transport under loss and silence: lost, duplicated and
// reordered datagrams, retransmission back-off, streams going stale, peer
// restarts and the age of unanswered messages.

package rpp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

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
