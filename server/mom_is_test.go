package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/momproto"
	"gopbs/rpp"
)

// isPeer is a fake MOM's RPP side for the IS tests: an endpoint on the
// loopback address the server resolves node vm to.
type isPeer struct {
	t   *testing.T
	ep  *rpp.Endpoint
	srv netip.AddrPort
	ctx context.Context
}

// isServer starts a server with node vm whose MOM is the returned peer;
// the server pings the down node after pingDelay.
func isServer(t *testing.T, pingDelay time.Duration) (*Server, *isPeer) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
	t.Cleanup(func() { ep.Close() })
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "server_priv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "server_priv", "nodes"), []byte("vm np=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Home: home, ServerName: "vm", InitType: InitCold, Listener: ln, SchedPort: 1,
		RMPort: pc.LocalAddr().(*net.UDPAddr).Port, AuthWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.run.resolve = func(string) []netip.Addr { return []netip.Addr{netip.MustParseAddr("127.0.0.1")} }
	s.run.pingDelay = pingDelay
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return s, &isPeer{t: t, ep: ep, srv: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(s.port())), ctx: ctx}
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
	st, err := p.ep.Open(p.srv)
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(st, &momproto.ISMessage{Command: momproto.IS_HELLO})
	if m := p.recv(st); m.Command != momproto.IS_CLUSTER_ADDRS {
		p.t.Fatalf("answer to hello: %s", momproto.ISCommandName(m.Command))
	}
	return st
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
		state, status := nodeVM(s)
		return state&nsDown == 0 && strings.Contains(status, "note="+note)
	})
}

// nodeVM returns node vm's state bits and status attribute.
func nodeVM(s *Server) (int, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.nodeByName["vm"]
	return n.state, n.attrs.get(naStatus)
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
	s.run.pingNode(mom.ctx, "vm")
	ping := mom.acceptPing()
	mom.status(s, own, "after-ping")
	if err := stillOpen(own, 300*time.Millisecond); err != nil {
		t.Fatalf("the MOM's own stream ended after the ping: %v", err)
	}
	// the unanswered ping is closed once the MOM reported on its stream
	if _, err := ping.Recv(mom.ctx); !errors.Is(err, io.EOF) {
		t.Errorf("ping stream: %v, want the server's GOODBYE", err)
	}
	if state, _ := nodeVM(s); state&nsDown != 0 {
		t.Errorf("node state %#x, want up", state)
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
	s.run.pingNode(mom.ctx, "vm")
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
	if state, _ := nodeVM(s); state&nsDown != 0 {
		t.Errorf("node state %#x after the old stream closed, want up", state)
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
