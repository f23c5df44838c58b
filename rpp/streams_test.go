// Tests of the streams' life: reopening with the same key, index sharing
// and reuse after release, OpenWith, the bound on streams, crossing opens
// and abandoning a stream the peer has replaced.

package rpp

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

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
