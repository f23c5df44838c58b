package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/sched/momquery"
)

// TestNode runs one simulated node against a fake server endpoint: it
// must say IS_HELLO, then report IS_STATUS, answer the scheduler's RM
// query (through the scheduler's own client) and accept a job launch.
func TestNode(t *testing.T) {
	srvPC, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rpp.NewEndpoint(srvPC, nil)
	defer srv.Close()
	srvAddr := netip.MustParseAddrPort(srvPC.LocalAddr().String())

	rmPort := freeUDPPort(t)
	n := &node{addr: netip.MustParseAddr("127.0.0.1"), name: "simnode00001", np: 4, physKB: 1 << 20,
		server: srvAddr, interval: 200 * time.Millisecond, stats: &counters{}}
	if err := n.listen(rmPort, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.ln = ln
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go n.run(ctx, 0)

	st, err := srv.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []int
	for len(cmds) < 2 {
		b, err := st.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m, err := momproto.DecodeIS(b)
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, m.Command)
		if m.Command == momproto.IS_HELLO {
			st.Send((&momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_CLUSTER_ADDRS, Addrs: []uint32{0x7f000001}}).Append(nil))
		}
		if m.Command == momproto.IS_STATUS && len(m.Status) < 10 {
			t.Errorf("short status %q", m.Status)
		}
	}
	if cmds[0] != momproto.IS_HELLO || cmds[1] != momproto.IS_STATUS {
		t.Errorf("IS commands %v, want HELLO then STATUS", cmds)
	}

	q := momquery.NewRPP(rmPort)
	defer q.Close()
	answers, err := q.Query(ctx, "127.0.0.1", momquery.Lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ncpus=4", "arch=linux", "physmem=1048576kb", "loadave=0.00", "max_load=4", "ideal_load=4"}
	for i := range want {
		if i >= len(answers) || answers[i] != want[i] {
			t.Fatalf("RM answers %q, want %q", answers, want)
		}
	}

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := dis.NewReader(c)
	for _, tc := range []struct {
		req    *batchreq.Request
		choice int
	}{
		{batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "PBS_Server", &batchreq.QueueJob{JobID: "1.vm"}), batchreq.BATCH_REPLY_CHOICE_Queue},
		{batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "PBS_Server", &batchreq.JobFile{JobID: "1.vm", Data: []byte("x")}), batchreq.BATCH_REPLY_CHOICE_NULL},
		{batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "PBS_Server", &batchreq.JobID{ID: "1.vm"}), batchreq.BATCH_REPLY_CHOICE_RdytoCommit},
		{batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "PBS_Server", &batchreq.JobID{ID: "1.vm"}), batchreq.BATCH_REPLY_CHOICE_Commit},
	} {
		c.Write(tc.req.Append(nil))
		p, err := batchreq.ReadReply(r)
		if err != nil {
			t.Fatalf("%s: %v", batchreq.RequestName(tc.req.Type), err)
		}
		if p.Code != 0 || p.Choice != tc.choice {
			t.Errorf("%s: code %d choice %d, want 0 and %d", batchreq.RequestName(tc.req.Type), p.Code, p.Choice, tc.choice)
		}
	}
	if e := n.stats.errors.Load(); e != 0 {
		t.Errorf("%d errors", e)
	}
}

func TestNodeAddrs(t *testing.T) {
	got, err := nodeAddrs(netip.MustParseAddr("127.1.0.253"), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.1.0.253", "127.1.0.254", "127.1.1.1", "127.1.1.2"}
	for i, a := range got {
		if a.String() != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if _, err := nodeAddrs(netip.MustParseAddr("127.255.255.250"), 10); err == nil {
		t.Error("ran past the loopback network without an error")
	}
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

// fakeServer is the server's IS endpoint for the restart tests.
type fakeServer struct {
	t    *testing.T
	ep   *rpp.Endpoint
	addr netip.AddrPort
	ctx  context.Context
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
	t.Cleanup(func() { ep.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return &fakeServer{t: t, ep: ep, addr: netip.MustParseAddrPort(pc.LocalAddr().String()), ctx: ctx}
}

// expect reads the next IS message of st and checks its command.
func (f *fakeServer) expect(st *rpp.Stream, cmd int) {
	f.t.Helper()
	b, err := st.Recv(f.ctx)
	if err != nil {
		f.t.Fatalf("waiting for %s: %v", momproto.ISCommandName(cmd), err)
	}
	m, err := momproto.DecodeIS(b)
	if err != nil || m.Command != cmd {
		f.t.Fatalf("got %v (%v), want %s", m, err, momproto.ISCommandName(cmd))
	}
}

func (f *fakeServer) send(st *rpp.Stream, cmd int) {
	f.t.Helper()
	if err := st.Send((&momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: cmd}).Append(nil)); err != nil {
		f.t.Fatal(err)
	}
}

// startNode runs a node reporting to f every interval.
func startNode(t *testing.T, f *fakeServer, interval time.Duration) (*node, int) {
	t.Helper()
	rmPort := freeUDPPort(t)
	n := &node{addr: netip.MustParseAddr("127.0.0.1"), name: "simnode00001", np: 4, physKB: 1 << 20,
		server: f.addr, interval: interval, stats: &counters{}}
	if err := n.listen(rmPort, 0); err != nil {
		t.Fatal(err)
	}
	go n.run(f.ctx, 0)
	return n, rmPort
}

// TestNodeAnswersPing: like pbs_mom, a node answers the IS_HELLO of a
// stream the server opened to it (a restarted server's ping) and goes on
// over that stream, closing its own.
func TestNodeAnswersPing(t *testing.T) {
	f := newFakeServer(t)
	_, rmPort := startNode(t, f, time.Hour)
	own, err := f.ep.Accept(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.expect(own, momproto.IS_HELLO)
	f.expect(own, momproto.IS_STATUS)
	ping, err := f.ep.Open(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(rmPort)))
	if err != nil {
		t.Fatal(err)
	}
	f.send(ping, momproto.IS_HELLO)
	f.expect(ping, momproto.IS_HELLO)
	f.expect(ping, momproto.IS_STATUS)
	if _, err := own.Recv(f.ctx); !errors.Is(err, io.EOF) {
		t.Errorf("the node's own stream: %v, want its GOODBYE", err)
	}
}

// TestNodeReopens: after the server closes a stream it had answered on
// (a server shutting down), the node says hello again at once, not
// after its status interval.
func TestNodeReopens(t *testing.T) {
	f := newFakeServer(t)
	startNode(t, f, time.Hour)
	st, err := f.ep.Accept(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.expect(st, momproto.IS_HELLO)
	f.send(st, momproto.IS_CLUSTER_ADDRS)
	f.expect(st, momproto.IS_STATUS)
	st.Close()
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	again, err := f.ep.Accept(ctx)
	if err != nil {
		t.Fatalf("no new stream after the server's GOODBYE: %v", err)
	}
	f.expect(again, momproto.IS_HELLO)
}
