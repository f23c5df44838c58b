// Tests of the transport's conversations (transport.go): their shape on
// the wire, fragmentation, garbage, the window and the read buffer; and
// the lossy links and endpoint pairs the transport's tests share.

package rpp

import (
	"bytes"
	"context"
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

func (e *Endpoint) streamCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count()
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
