package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/server/state"
)

// isPeer is a fake MOM's RPP side for the IS tests: an endpoint on the
// loopback address the server resolves node vm to.
type isPeer struct {
	t   *testing.T
	ep  *rpp.Endpoint
	srv netip.AddrPort // the server's IS address
	ctx context.Context
}

// isServer starts a server with node vm whose MOM is the returned peer;
// the server pings the down node after pingDelay.
func isServer(t *testing.T, pingDelay time.Duration) (*Server, *isPeer) {
	t.Helper()
	s, peers := isCluster(t, pingDelay, "vm")
	return s, peers[0]
}

// isCluster starts a server whose nodes are names, the i-th node's MOM
// being the i-th peer, on address 127.0.0.(i+1). The server pings down
// nodes after pingDelay (at the first peer's port).
func isCluster(t *testing.T, pingDelay time.Duration, names ...string) (*Server, []*isPeer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	addrs := map[string]netip.Addr{}
	var peers []*isPeer
	var nodes strings.Builder
	for i, name := range names {
		a := netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
		addrs[name] = a
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(a, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
		t.Cleanup(func() { ep.Close() })
		peers = append(peers, &isPeer{t: t, ep: ep, ctx: ctx})
		nodes.WriteString(name + " np=2\n")
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "server_priv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "server_priv", "nodes"), []byte(nodes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Home: home, ServerName: "vm", InitType: InitCold, Listener: ln, SchedPort: 1,
		RMPort: peers[0].ep.LocalAddr().(*net.UDPAddr).Port, AuthWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.run.Resolve = func(name string) []netip.Addr {
		if a, ok := addrs[name]; ok {
			return []netip.Addr{a}
		}
		return nil
	}
	s.is.PingDelay = pingDelay
	s.is.AddrsDelay = 100 * time.Millisecond
	s.is.PingAnswerWait = 0
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	for _, p := range peers {
		p.srv = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(s.port()))
	}
	return s, peers
}

func (p *isPeer) send(st *rpp.Stream, m *momproto.ISMessage) {
	p.t.Helper()
	m.Version = momproto.IS_PROTOCOL_VER
	if err := st.Send(m.Append(nil)); err != nil {
		p.t.Fatalf("send %s: %v", momproto.ISCommandName(m.Command), err)
	}
}

func (p *isPeer) recv(st *rpp.Stream) *momproto.ISMessage {
	p.t.Helper()
	b, err := st.Recv(p.ctx)
	if err != nil {
		p.t.Fatalf("recv: %v", err)
	}
	m, err := momproto.DecodeIS(b)
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

// hello opens the MOM's own IS stream and says hello on it.
func (p *isPeer) hello() *rpp.Stream {
	p.t.Helper()
	st, _ := p.helloAddrs()
	return st
}

// helloAddrs is hello, also returning the addresses the server answered
// with.
func (p *isPeer) helloAddrs() (*rpp.Stream, []uint32) {
	p.t.Helper()
	st, err := p.ep.Open(p.srv)
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(st, &momproto.ISMessage{Command: momproto.IS_HELLO})
	m := p.recv(st)
	if m.Command != momproto.IS_CLUSTER_ADDRS {
		p.t.Fatalf("answer to hello: %s", momproto.ISCommandName(m.Command))
	}
	return st, m.Addrs
}

// acceptPing accepts the server's ping stream and reads its IS_HELLO.
func (p *isPeer) acceptPing() *rpp.Stream {
	p.t.Helper()
	st, err := p.ep.Accept(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	if m := p.recv(st); m.Command != momproto.IS_HELLO {
		p.t.Fatalf("ping says %s", momproto.ISCommandName(m.Command))
	}
	return st
}

// status sends an IS_STATUS marked with note and waits until the node's
// status attribute shows it and the node is free.
func (p *isPeer) status(s *Server, st *rpp.Stream, note string) {
	p.t.Helper()
	p.send(st, &momproto.ISMessage{Command: momproto.IS_STATUS, Status: []string{"opsys=linux", "note=" + note, "state=free"}})
	waitFor(p.t, "status "+note, func() bool {
		bits, status := nodeVM(s)
		return bits&state.NodeStateDown == 0 && strings.Contains(status, "note="+note)
	})
}

// nodeVM returns node vm's state bits and status attribute.
func nodeVM(s *Server) (int, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.nodeByName["vm"]
	return n.State, n.Attrs.Get(pbsattr.NodeStatus)
}

// stillOpen reports whether st is still open: nothing ended it within d.
func stillOpen(st *rpp.Stream, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		_, err := st.Recv(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestPingCrossesMomHello: the server's start-up ping to a down node
// crosses the MOM's own open between the same two UDP ports (the ping
// found no stream for the node, then the MOM's hello arrived). A MOM
// that keeps its own stream and ignores the ping (nodesim) stays
// registered on its stream: the ping must not replace it. Before the
// fix the ping's stream became the node's at once and the server closed
// the MOM's stream, so the node was left unregistered until the MOM's
// next attempt.
func TestPingCrossesMomHello(t *testing.T) {
	s, mom := isServer(t, time.Hour)
	own := mom.hello()
	mom.status(s, own, "first")
	// The ping's check saw no stream for the node before the hello; the
	// status seen through s.mu orders the server's start before this.
	s.is.PingNode(mom.ctx, "vm")
	ping := mom.acceptPing()
	mom.status(s, own, "after-ping")
	if err := stillOpen(own, 300*time.Millisecond); err != nil {
		t.Fatalf("the MOM's own stream ended after the ping: %v", err)
	}
	// the unanswered ping is closed once the MOM reported on its stream
	if _, err := ping.Recv(mom.ctx); !errors.Is(err, io.EOF) {
		t.Errorf("ping stream: %v, want the server's GOODBYE", err)
	}
	if bits, _ := nodeVM(s); bits&state.NodeStateDown != 0 {
		t.Errorf("node state %#x, want up", bits)
	}
}

// TestPingAnsweredAfterMomHello: the same crossing with a MOM that, as
// pbs_mom does, answers the ping with IS_HELLO and carries on over the
// server's stream, closing its own. The server follows it to the ping's
// stream, and the end of the MOM's old stream does not mark the node
// down.
func TestPingAnsweredAfterMomHello(t *testing.T) {
	s, mom := isServer(t, time.Hour)
	own := mom.hello()
	mom.status(s, own, "first")
	s.is.PingNode(mom.ctx, "vm")
	ping := mom.acceptPing()
	mom.send(ping, &momproto.ISMessage{Command: momproto.IS_HELLO})
	if m := mom.recv(ping); m.Command != momproto.IS_CLUSTER_ADDRS {
		t.Fatalf("answer to hello on the ping: %s", momproto.ISCommandName(m.Command))
	}
	own.Close()
	select {
	case <-own.Done():
	case <-mom.ctx.Done():
		t.Fatal("the MOM's old stream did not close")
	}
	mom.status(s, ping, "on-ping")
	if err := stillOpen(ping, 300*time.Millisecond); err != nil {
		t.Fatalf("the ping's stream ended: %v", err)
	}
	if bits, _ := nodeVM(s); bits&state.NodeStateDown != 0 {
		t.Errorf("node state %#x after the old stream closed, want up", bits)
	}
}

// TestMomClosesBeforeAnsweringPing: the MOM's GOODBYE on its own stream
// reaches the server before its answer on the ping (the order the server
// reads them in is not fixed): the node is not marked down in between.
func TestMomClosesBeforeAnsweringPing(t *testing.T) {
	s, mom := isServer(t, time.Hour)
	own := mom.hello()
	mom.status(s, own, "first")
	s.is.PingNode(mom.ctx, "vm")
	ping := mom.acceptPing()
	own.Close()
	select {
	case <-own.Done():
	case <-mom.ctx.Done():
		t.Fatal("the MOM's old stream did not close")
	}
	time.Sleep(100 * time.Millisecond) // the server has read the GOODBYE
	mom.send(ping, &momproto.ISMessage{Command: momproto.IS_HELLO})
	if m := mom.recv(ping); m.Command != momproto.IS_CLUSTER_ADDRS {
		t.Fatalf("answer to hello on the ping: %s", momproto.ISCommandName(m.Command))
	}
	mom.status(s, ping, "on-ping")
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	for _, f := range logs {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "stream_eof") {
			t.Errorf("node marked down while its MOM moved to the ping:\n%s", b)
		}
	}
}

// TestPingAnsweredLate: the MOM reports on its own stream before it
// answers the ping (a server busy with thousands of MOMs after a
// restart): within pingAnswerWait the ping stays open, and the MOM going
// over to it is followed without marking the node down.
func TestPingAnsweredLate(t *testing.T) {
	s, mom := isServer(t, time.Hour)
	s.is.PingAnswerWait = time.Hour
	own := mom.hello()
	mom.status(s, own, "first")
	s.is.PingNode(mom.ctx, "vm")
	ping := mom.acceptPing()
	mom.status(s, own, "before-answer")
	if err := stillOpen(ping, 200*time.Millisecond); err != nil {
		t.Fatalf("the ping was closed before its wait: %v", err)
	}
	mom.send(ping, &momproto.ISMessage{Command: momproto.IS_HELLO})
	if m := mom.recv(ping); m.Command != momproto.IS_CLUSTER_ADDRS {
		t.Fatalf("answer to hello on the ping: %s", momproto.ISCommandName(m.Command))
	}
	own.Close()
	mom.status(s, ping, "on-ping")
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	for _, f := range logs {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "stream_eof") {
			t.Errorf("node marked down while its MOM moved to the ping:\n%s", b)
		}
	}
}

// TestMomHelloAfterUnansweredPing: the other order — the ping reaches a
// MOM that ignores it and then opens its own stream: the MOM's stream is
// the node's and the ping is closed.
func TestMomHelloAfterUnansweredPing(t *testing.T) {
	s, mom := isServer(t, 50*time.Millisecond)
	ping := mom.acceptPing()
	own := mom.hello()
	mom.status(s, own, "own")
	if _, err := ping.Recv(mom.ctx); !errors.Is(err, io.EOF) {
		t.Errorf("ping stream: %v, want the server's GOODBYE", err)
	}
	if err := stillOpen(own, 300*time.Millisecond); err != nil {
		t.Fatalf("the MOM's own stream ended: %v", err)
	}
}

// TestClusterAddrsResend: IS_CLUSTER_ADDRS goes again to every MOM
// after a hello only while some MOM holds a list without a node added
// since (capture 104); MOMs that all got the whole list with their own
// hello get nothing more (10,000 MOMs of nodes created before they said
// hello made 10,000 re-sends of the whole list to all of them).
func TestClusterAddrsResend(t *testing.T) {
	const vm, vm2 = 127<<24 | 1, 127<<24 | 2
	t.Run("lists current", func(t *testing.T) {
		s, moms := isCluster(t, time.Hour, "vm", "vm2")
		var streams []*rpp.Stream
		for _, m := range moms {
			st, addrs := m.helloAddrs()
			if !slices.Equal(addrs, []uint32{vm, vm2}) {
				t.Fatalf("addresses %v", addrs)
			}
			m.status(s, st, "up")
			streams = append(streams, st)
		}
		// well past the re-send delay, nothing more came
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		for i, st := range streams {
			if b, err := st.Recv(ctx); err == nil {
				m, _ := momproto.DecodeIS(b)
				t.Errorf("MOM %d got %s again", i, momproto.ISCommandName(m.Command))
			} else if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("MOM %d: %v", i, err)
			}
		}
	})
	t.Run("node added", func(t *testing.T) {
		s, moms := isCluster(t, time.Hour, "vm", "vm2")
		// vm2 is created after vm's MOM said hello
		s.mu.Lock()
		n2 := s.nodeByName["vm2"]
		s.nodes = s.nodes[:1]
		delete(s.nodeByName, "vm2")
		s.mu.Unlock()
		first, addrs := moms[0].helloAddrs()
		if !slices.Equal(addrs, []uint32{vm}) {
			t.Fatalf("vm's addresses %v", addrs)
		}
		s.mu.Lock()
		s.nodes = append(s.nodes, n2)
		s.nodeByName["vm2"] = n2
		s.mu.Unlock()
		second, addrs := moms[1].helloAddrs()
		if !slices.Equal(addrs, []uint32{vm, vm2}) {
			t.Fatalf("vm2's addresses %v", addrs)
		}
		// both get the whole list again (capture 104)
		for i, st := range []*rpp.Stream{first, second} {
			m := moms[i].recv(st)
			if m.Command != momproto.IS_CLUSTER_ADDRS || !slices.Equal(m.Addrs, []uint32{vm, vm2}) {
				t.Errorf("MOM %d: %s %v", i, momproto.ISCommandName(m.Command), m.Addrs)
			}
		}
	})
}

// TestShutdownQuiet: the server's shutdown closes the MOMs' streams
// without logging a stream_eof for each node (capture logs: "Starting to
// shutdown the server" is followed by "Server shutdown completed").
func TestShutdownQuiet(t *testing.T) {
	s, mom := isServer(t, time.Hour)
	own := mom.hello()
	mom.status(s, own, "up")
	s.Shutdown("Quick")
	if _, err := own.Recv(mom.ctx); !errors.Is(err, io.EOF) {
		t.Errorf("MOM's stream after the shutdown: %v, want the server's GOODBYE", err)
	}
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	for _, f := range logs {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "stream_eof") {
			t.Errorf("shutdown logged stream_eof:\n%s", b)
		}
	}
}
