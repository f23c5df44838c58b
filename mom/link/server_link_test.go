package link

// The MOM's links to the server and other peers: resource monitor queries,
// garbage on its ports, the health check, reconfiguration, IM for unknown
// jobs, IS hellos, goodbyes, pings and reopened streams, and the limit poll.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
	"gopbs/rpp"
)

// tcpExchange connects to addr (from a privileged port when reserved),
// sends msg and returns the answer: what one read returns, or with all
// everything until the MOM closes the connection (at most 5 s).
func tcpExchange(t *testing.T, ctx context.Context, addr netip.AddrPort, reserved bool, msg []byte, all bool) []byte {
	t.Helper()
	var c net.Conn
	var err error
	if reserved {
		c, err = DialReserved(ctx, addr)
	} else {
		c, err = net.Dial("tcp", addr.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(msg)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if all {
		b, _ := io.ReadAll(c)
		return b
	}
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	return buf[:n]
}

// acceptIS accepts the MOM's IS stream at ep, expects its IS_HELLO,
// answers with IS_CLUSTER_ADDRS (127.0.0.1) and returns the stream and
// the first status.
func acceptIS(t *testing.T, ctx context.Context, ep *rpp.Endpoint) (*rpp.Stream, []string) {
	t.Helper()
	is, err := ep.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectHello(t, ctx, is)
	is.Send([]byte("+4+1+2210+2130706433")) // IS_CLUSTER_ADDRS 127.0.0.1
	return is, recvStatus(t, ctx, is)
}

// expectHello checks that the next message on s is IS_HELLO.
func expectHello(t *testing.T, ctx context.Context, s *rpp.Stream) {
	t.Helper()
	if b, err := s.Recv(ctx); err != nil || string(b) != "+4+1+1" {
		t.Fatalf("IS message %q, %v; want IS_HELLO", b, err)
	}
}

func recvStatus(t *testing.T, ctx context.Context, s *rpp.Stream) []string {
	t.Helper()
	for {
		b, err := s.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := momproto.DecodeIS(b)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Command == momproto.IS_STATUS {
			return msg.Status
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func hasPrefix(l []string, p string) bool {
	for _, x := range l {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

// rmQuery sends one RM request over RPP from a privileged port.
func rmQuery(t *testing.T, addr netip.AddrPort, lines ...string) []string {
	t.Helper()
	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40})
	defer ep.Close()
	s, _ := ep.Open(addr)
	s.Send((&momproto.RMRequest{Version: 1, Command: momproto.RM_CMD_REQUEST, Lines: lines}).Append(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := momproto.DecodeRMReply(b)
	if err != nil || rep.Code != momproto.RM_RSP_OK {
		t.Fatalf("RM reply %q: %v", b, err)
	}
	s.Send((&momproto.RMRequest{Version: 1, Command: momproto.RM_CMD_CLOSE}).Append(nil))
	s.Flush(ctx)
	s.Close()
	return rep.Answers
}

func TestRM(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "$status_update_time 45\nmax_load 99\n")
	dumpLogOnFailure(t, tm)
	got := rmQuery(t, tm.rmUDP, "ncpus", "arch", "physmem", "loadave", "max_load", "ideal_load", "bogusname",
		"version", "status_update_time", "jobstartblocktime", "cycle", "configversion")
	want := []string{"ncpus=", "arch=linux", "physmem=", "loadave=", "max_load=99", "ideal_load=? 15201",
		"bogusname=? 15201", "version=2.5.13", "status_update_time=45", "jobstartblocktime=5", "cycle forced",
		"configversion=? 15201"}
	if len(got) != len(want) {
		t.Fatalf("answers %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("answer %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	diag := rmQuery(t, tm.rmUDP, "diag3")[0]
	for _, want := range []string{"\nHost: localhost/localhost   Version: 2.5.13   PID: ", "Communication Model:    RPP\n",
		"NOTE:  no local jobs detected\n", "\ndiagnostics complete\n"} {
		if !strings.Contains(diag, want) {
			t.Errorf("diag3 lacks %q:\n%s", want, diag)
		}
	}
	waitLog(t, tm, ";0002;   pbs_mom;n/a;rm_request;reporting cycle forced\n",
		";0002;   pbs_mom;n/a;rm_request;internal diagnostics complete\n")

	// RM over TCP from a privileged port.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reply := tcpExchange(t, ctx, tm.rmTCP, true, []byte("+1+1+2+7loadave+5ncpus"), false)
	rep, err := momproto.DecodeRMReply(reply)
	if err != nil || len(rep.Answers) != 2 || !strings.HasPrefix(rep.Answers[1], "ncpus=") {
		t.Errorf("TCP RM reply %q: %v", reply, err)
	}

	// RM_CMD_CONFIG is refused (connection closed) without $remote_reconfig.
	if b := tcpExchange(t, ctx, tm.rmTCP, true, []byte("+1+1+3+15CONFIG:$logevent"), true); len(b) != 0 {
		t.Errorf("RM_CMD_CONFIG answered %q without $remote_reconfig", b)
	}

	// TM for a job this MOM does not have: TM_ERROR / TM_ENOTFOUND.
	tmReply := tcpExchange(t, ctx, tm.rmTCP, false, []byte("+2+1+4x.vm+3abc3+100+7+0"), true)
	if string(tmReply) != "+2+13+999+75+17006" {
		t.Errorf("TM_INIT reply %q, want TM_ERROR 17006 for event 7", tmReply)
	}

	// From an unprivileged port: closed without a reply.
	if b := tcpExchange(t, ctx, tm.rmTCP, false, []byte("+1+1+2+7loadave"), true); len(b) != 0 {
		t.Errorf("unprivileged RM request answered: %q", b)
	}
	if !strings.Contains(tm.log.String(), "bad attempt to connect - unauthorized (port: ") {
		t.Error("unauthorised attempt not logged")
	}
}

// TestGarbage sends random bytes to every port; the MOM must keep
// answering.
func TestGarbage(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "")
	rng := rand.New(rand.NewPCG(42, 7))
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	samples := [][]byte{[]byte("+2+1+1"), []byte("+2+1+12+10PBS_Server+99999999999999999999"), []byte("+1+1+2"),
		[]byte("+2+1+1+0+0+0+999999999"), []byte("GET / HTTP/1.0\r\n\r\n"), {0xff, 0, 0xfe}}
	for range 30 {
		samples = append(samples, junk(rng.IntN(3000)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, addr := range []netip.AddrPort{tm.batch, tm.rmTCP} {
		for _, s := range samples {
			c, err := DialReserved(ctx, addr)
			if err != nil {
				t.Fatal(err)
			}
			c.Write(s)
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			c.Read(make([]byte, 100))
			c.Close()
		}
	}
	u, err := net.Dial("udp", tm.rmUDP.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		u.Write(s)
	}
	// Valid RPP framing around garbage messages.
	for _, s := range samples {
		pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
		ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 20 * time.Millisecond, Retry: 5})
		st, _ := ep.Open(tm.rmUDP)
		st.Send(s)
		st.Flush(ctx)
		ep.Close()
	}
	u.Close()
	if got := rmQuery(t, tm.rmUDP, "version"); len(got) != 1 || got[0] != "version=2.5.13" {
		t.Fatalf("after garbage: %q", got)
	}
	b := dialBatch(t, tm.batch)
	if rep := b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{}, ""); rep.Code != 0 || rep.Choice != batchreq.BATCH_REPLY_CHOICE_Status {
		t.Fatalf("after garbage: StatusJob reply %+v", rep)
	}
}

// TestHealthCheck: a node check script reporting ERROR puts its line in
// the status message, reports state=down with $down_on_error, and makes
// QueueJob fail when the check runs at job start.
func TestHealthCheck(t *testing.T) {
	requireRoot(t)
	script := filepath.Join(t.TempDir(), "check.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho all good\necho ERROR disk full\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := newFakeServer(t)
	tm := startMom(t, srv, "$node_check_script "+script+"\n$node_check_interval 1,jobstart\n$down_on_error true\n$status_update_time 1\n")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, status := acceptIS(t, ctx, srv.ep)
	if !contains(status, "message=ERROR disk full") || !contains(status, "state=down") {
		t.Errorf("status %q lacks the health check's message and state=down", status)
	}
	b := dialBatch(t, tm.batch)
	rep := b.do(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: "5.x", Destination: "localhost", Attrs: jobAttrs("5.x", "/tmp")}, "")
	if rep.Code != batchreq.PBSE_MOMREJECT {
		t.Errorf("QueueJob on a failing node: code %d, want PBSE_MOMREJECT", rep.Code)
	}
}

// TestReconfig: with $remote_reconfig, RM_CMD_CONFIG rewrites the config
// file and the new values are in force.
func TestReconfig(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "$remote_reconfig true\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	text := "CONFIG:$remote_reconfig true\n$status_update_time 77\n"
	req := (&momproto.RMRequest{Version: 1, Command: momproto.RM_CMD_CONFIG, Lines: []string{text}}).Append(nil)
	if b := tcpExchange(t, ctx, tm.rmTCP, true, req, false); string(b) != "3+100" {
		t.Fatalf("RM_CMD_CONFIG reply %q, want RM_RSP_OK", b)
	}
	if got := rmQuery(t, tm.rmUDP, "status_update_time"); got[0] != "status_update_time=77" {
		t.Errorf("after reconfig: %q", got)
	}
}

// TestIMUnknownJob: an IM request for a job this MOM has not joined is
// answered with IM_ERROR / PBSE_UNKJOBID.
func TestIMUnknownJob(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "")
	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond})
	defer ep.Close()
	s, _ := ep.Open(tm.rmUDP)
	req := &momproto.IMMessage{IMHeader: momproto.IMHeader{Version: momproto.IM_PROTOCOL_VER, JobID: "7.vm",
		Cookie: "0123456789ABCDEF0123456789ABCDEF", Command: momproto.IM_KILL_JOB, Event: 5, FromTask: 1}, Body: momproto.Empty{}}
	s.Send(req.Append(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := momproto.DecodeIM(b, func(*momproto.IMHeader) int { return momproto.IM_KILL_JOB })
	if err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	ints, _ := rep.Body.(*momproto.Ints)
	if rep.Command != momproto.IM_ERROR || rep.JobID != "7.vm" || rep.Event != 5 || ints == nil || len(ints.Values) != 1 || ints.Values[0] != batchreq.PBSE_UNKJOBID {
		t.Errorf("reply %+v body %+v", rep, rep.Body)
	}
}

// TestShutdownGoodbye: a MOM that stops says GOODBYE on its IS stream
// (capture 103) and waits for the server's.
func TestShutdownGoodbye(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	stopped := make(chan struct{})
	go func() { tm.stop(); close(stopped) }()
	for {
		if _, err := is.Recv(ctx); err != nil {
			if err != io.EOF {
				t.Fatalf("IS stream ended with %v, want the MOM's GOODBYE", err)
			}
			break
		}
	}
	select {
	case <-is.Done(): // our GOODBYE was acknowledged too
	case <-ctx.Done():
		t.Fatal("GOODBYE exchange not completed")
	}
	<-stopped
}

// TestServerGoodbye: when the server closes the IS stream (qterm), the MOM
// logs the end of file as TORQUE does and says hello on a new stream.
func TestServerGoodbye(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	is.Close()
	again, err := srv.ep.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectHello(t, ctx, again)
	waitLog(t, tm, ";0002;   pbs_mom;n/a;mom_server_check_connection;sending hello to server 127.0.0.1\n",
		fmt.Sprintf(";0002;   pbs_mom;Svr;im_eof;End of File from addr 127.0.0.1:%d\n", srv.port),
		";0002;   pbs_mom;n/a;mom_server_check_connection;sending hello to server 127.0.0.1\n")
}

// TestServerRestartPing: a restarted server that pings the MOM with
// IS_HELLO on a stream of its own gets IS_HELLO back and then the status
// on that stream, without a second stream from the MOM.
func TestServerRestartPing(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	acceptIS(t, ctx, srv.ep)

	// The server process dies without GOODBYE and a new one starts on
	// the same port.
	srv.ep.Close()
	pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", srv.port))
	if err != nil {
		t.Skipf("cannot rebind the server port: %v", err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40})
	defer ep.Close()
	ping, _ := ep.Open(tm.rmUDP)
	ping.Send([]byte("+4+1+1")) // IS_HELLO
	expectHello(t, ctx, ping)
	ping.Send([]byte("+4+1+2210+2130706433"))
	status := recvStatus(t, ctx, ping)
	if !contains(status, "opsys=linux") {
		t.Errorf("status on the ping stream: %q", status)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if s, err := ep.Accept(short); err == nil {
		t.Errorf("the MOM opened a second stream from %v", s.RemoteAddr())
	}
}

// TestISReopenWhenDead: when nothing is acknowledged on the IS stream for
// twice status_update_time (the server died without GOODBYE), the MOM
// opens a new stream, long before the RPP retries run out.
func TestISReopenWhenDead(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	base := openDir(t, "gopbs-mom-", nil)
	startMomIn(t, srv, "$status_update_time 1\n", base, "none", func(o *Options) {
		o.RPP = &rpp.Options{Timeout: 100 * time.Millisecond, Retry: 10000} // never stale by retries here
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	acceptIS(t, ctx, srv.ep)
	srv.ep.Close() // the server dies
	pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", srv.port))
	if err != nil {
		t.Skipf("cannot rebind the server port: %v", err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 100 * time.Millisecond})
	defer ep.Close()
	began := time.Now()
	second, err := ep.Accept(ctx)
	if err != nil {
		t.Fatalf("no new IS stream: %v", err)
	}
	expectHello(t, ctx, second)
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("reopened after %v", d)
	}
}

// TestRefusedISBacksOff: a server that closes the IS stream at once,
// without a word (this node is not in its node list), is retried with
// back-off, never in a tight loop.
func TestRefusedISBacksOff(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	startMom(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	opened := 0
	for {
		st, err := srv.ep.Accept(ctx)
		if err != nil {
			break
		}
		opened++
		st.Close()
	}
	if opened == 0 {
		t.Fatal("the MOM never opened its IS stream")
	}
	// Attempts at 0 s and after 2 s of back-off fit in the 3 s window; a
	// retry loop would open hundreds.
	if opened > 3 {
		t.Fatalf("the MOM opened %d IS streams in 3 s to a server that refuses them", opened)
	}
}

// TestLimitPollFollowsStatus: the usage poll comes right after each
// IS_STATUS, as TORQUE's does (capture 96: the IS_STATUS at 02:35:57.2, the
// job killed for "walltime 9 exceeded limit 5" in the same second). The
// engine's own poll interval ($check_poll_time 3600) never comes, so only
// the status cycle can kill the job. The periodic statuses count from the
// one after the hello (captures 102, 103).
func TestLimitPollFollowsStatus(t *testing.T) {
	requireUser(t)
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	tm := startMomIn(t, srv, "$status_update_time 2\n$check_poll_time 3600\n", openDir(t, "gopbs-mom-", nil), "none",
		func(o *Options) { o.HelloStatusDelay = time.Second })
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	first := time.Now()

	id := "31.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	b := dialBatch(t, tm.batch)
	if rep := b.do(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", "00:00:01")}}, ""); rep.Code != 0 {
		t.Fatalf("ModifyJob walltime=00:00:01: code %d", rep.Code)
	}
	b.disconnect()

	recvStatus(t, ctx, is)
	if gap := time.Since(first); gap < 1800*time.Millisecond {
		t.Errorf("periodic IS_STATUS %v after the one that followed the hello, want 2 s", gap)
	}
	// Walltime 1 or 2 at this status's poll (whole clock seconds): the
	// job is killed at this poll or the next status's.
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != jobexec.JOB_EXEC_OVERLIMIT {
		t.Errorf("obit exit status %d, want JOB_EXEC_OVERLIMIT", obit.ExitStatus)
	}
	if d := time.Since(first); d > 7*time.Second {
		t.Errorf("job killed %v after the first status, want at the second or third (2 s apart)", d)
	}
	waitLog(t, tm, ";0008;   pbs_mom;Job;"+id+";walltime ", " exceeded limit 1\n")
}
