package server

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/momproto"
	"gopbs/rpp"
)

// fakeSched accepts the server's scheduler connections; each one is
// handed to the test with the command it carried.
type fakeSched struct {
	ln    net.Listener
	cycle chan schedCycle
}

type schedCycle struct {
	cmd    int
	remote *net.TCPAddr
	c      *client
}

func newFakeSched(t *testing.T) *fakeSched {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSched{ln: ln, cycle: make(chan schedCycle, 10)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			cmd, err := batchreq.ReadSchedCommand(nc)
			if err != nil {
				nc.Close()
				continue
			}
			f.cycle <- schedCycle{cmd: cmd, remote: nc.RemoteAddr().(*net.TCPAddr), c: &client{t: t, nc: nc, r: dis.NewReader(nc)}}
		}
	}()
	return f
}

func (f *fakeSched) next(t *testing.T) schedCycle {
	t.Helper()
	select {
	case c := <-f.cycle:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no scheduler command")
		return schedCycle{}
	}
}

// expectNone checks that no further cycle starts for a while.
func (f *fakeSched) expectNone(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case c := <-f.cycle:
		t.Fatalf("unexpected scheduler command %d", c.cmd)
	case <-time.After(d):
	}
}

func TestSchedulerCycle(t *testing.T) {
	mom := newFakeMom(t)
	sched := newFakeSched(t)
	s := runServer(t, mom, sched.ln.Addr().(*net.TCPAddr).Port)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "viasched")
	sched.expectNone(t, 300*time.Millisecond) // scheduling is off

	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("set scheduling: %d", p.Code)
	}
	cy := sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_CMD {
		t.Fatalf("command %d, want cmd", cy.cmd)
	}
	if cy.remote.Port >= 1024 {
		t.Errorf("server connected from non-reserved port %d", cy.remote.Port)
	}
	// The scheduler acts as "Scheduler" with full privileges and no iff.
	sv := cy.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "Scheduler", &batchreq.StatusReq{}))
	if sv.Code != 0 {
		t.Fatalf("StatusSvr: %d", sv.Code)
	}
	for _, a := range sv.Status[0].Attrs {
		if a.Name == "server_state" && a.Value != "Scheduling" {
			t.Errorf("server_state during a cycle %q", a.Value)
		}
	}
	rq := cy.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Rescq, "Scheduler", &batchreq.Resc{Queries: []string{"nodes=1", "nodes=5"}}))
	if rq.Code != 0 || len(rq.Resc.Avail) != 2 || rq.Resc.Avail[0] != 1 || rq.Resc.Avail[1] != -1 {
		t.Errorf("ResourceQuery: %d %+v", rq.Code, rq.Resc)
	}
	mod := batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "Scheduler", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{attr("comment", "Job started on Sun Nov 22 at 01:24")}})
	if p := cy.c.do(mod); p.Code != 0 {
		t.Fatalf("ModifyJob comment: %d", p.Code)
	}
	if p := cy.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "Scheduler", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d %s", p.Code, p.Text)
	}
	// A second cycle is not started while this one is open.
	id2 := submit(t, c, "second")
	sched.expectNone(t, 300*time.Millisecond)
	cy.c.nc.Close()
	// One job started over the connection: the server asks again.
	cy = sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_RECYC {
		t.Fatalf("command %d, want recyc", cy.cmd)
	}
	cy.c.nc.Close()
	if got := jobAttr(t, c, id, "comment"); got != "Job started on Sun Nov 22 at 01:24" {
		t.Errorf("comment %q", got)
	}
	if st := jobAttr(t, c, id, "job_state"); st != "R" {
		t.Errorf("state %q", st)
	}
	_ = id2
	waitSchedIdle(t, s)
	id3 := submit(t, c, "third")
	cy = sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_NEW {
		t.Fatalf("command %d, want new", cy.cmd)
	}
	// An operator-style external scheduler (ordinary client) can run and
	// hold jobs too.
	if p := cy.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_HoldJob, "Scheduler", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id3,
		Attrs: batchreq.AttrList{attr("Hold_Types", "o")}})); p.Code != 0 {
		t.Errorf("hold: %d", p.Code)
	}
	cy.c.nc.Close()
	waitSchedIdle(t, s)
	// The job's end asks for a "term" cycle.
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	cy = sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_TERM {
		t.Fatalf("command %d, want term", cy.cmd)
	}
	cy.c.nc.Close()
}

// nodeAttr returns one attribute of node vm.
func nodeAttr(t *testing.T, c *client, name string) string {
	t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "vm"}))
	if p.Code != 0 || len(p.Status) != 1 {
		t.Fatalf("status node: %d", p.Code)
	}
	for _, a := range p.Status[0].Attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return ""
}

func TestISHelloStatus(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
	defer ep.Close()
	st, err := ep.Open(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(s.port())))
	if err != nil {
		t.Fatal(err)
	}
	send := func(m *momproto.ISMessage) {
		t.Helper()
		m.Version = momproto.IS_PROTOCOL_VER
		if err := st.Send(m.Append(nil)); err != nil {
			t.Fatal(err)
		}
	}
	send(&momproto.ISMessage{Command: momproto.IS_HELLO})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := st.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := momproto.DecodeIS(b)
	if err != nil || m.Command != momproto.IS_CLUSTER_ADDRS || len(m.Addrs) != 1 || m.Addrs[0] != 2130706433 {
		t.Fatalf("reply to HELLO: %+v %v", m, err)
	}
	status := []string{"opsys=linux", "uname=Linux vm 6.1 #1 SMP x86_64", "sessions=? 15201", "ncpus=2", "state=busy", "jobs= ", "varattr= "}
	send(&momproto.ISMessage{Command: momproto.IS_STATUS, Status: status})
	waitFor(t, "busy", func() bool { return nodeAttr(t, c, "state") == "busy" })
	got := nodeAttr(t, c, "status")
	if !strings.HasPrefix(got, "rectime=") || !strings.HasSuffix(got, ",varattr=,jobs=,state=busy,ncpus=2,sessions=? 15201,uname=Linux vm 6.1 #1 SMP x86_64,opsys=linux") {
		t.Errorf("status %q", got)
	}
	status[4] = "state=free"
	send(&momproto.ISMessage{Command: momproto.IS_STATUS, Status: status})
	waitFor(t, "free", func() bool { return nodeAttr(t, c, "state") == "free" })
	send(&momproto.ISMessage{Command: momproto.IS_UPDATE, State: momproto.INUSE_DOWN})
	waitFor(t, "down", func() bool { return nodeAttr(t, c, "state") == "down" })
	send(&momproto.ISMessage{Command: momproto.IS_UPDATE, State: momproto.INUSE_FREE})
	waitFor(t, "free again", func() bool { return nodeAttr(t, c, "state") == "free" })
	// a health-check error marks the node down with down_on_error;
	// mom_job_sync deletes jobs the server does not know
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("down_on_error", "true"), attr("mom_job_sync", "true"))); p.Code != 0 {
		t.Fatalf("set: %d", p.Code)
	}
	send(&momproto.ISMessage{Command: momproto.IS_STATUS, Status: []string{"opsys=linux", "message=ERROR: disk full", "state=free", "jobs=99.vm"}})
	waitFor(t, "down on error", func() bool { return nodeAttr(t, c, "state") == "down" })
	if d := mom.next(batchreq.PBS_BATCH_DeleteJob).Body.(*batchreq.Manage); d.ObjName != "99.vm" {
		t.Errorf("stray job delete %+v", d)
	}
	send(&momproto.ISMessage{Command: momproto.IS_STATUS, Status: []string{"opsys=linux", "state=free", "jobs= "}})
	waitFor(t, "up again", func() bool { return nodeAttr(t, c, "state") == "free" })
	st.Close()
	waitFor(t, "down on close", func() bool { return nodeAttr(t, c, "state") == "down" })
}

// TestExternalSchedulerClient: a PluS-style scheduler connects as an
// ordinary authenticated manager and statuses, runs, alters, holds and
// requeues jobs.
func TestExternalSchedulerClient(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("managers", "root@vm,plus@vm"))); p.Code != 0 {
		t.Fatalf("managers: %d", p.Code)
	}
	a, b := submit(t, c, "a"), submit(t, c, "b")
	plus := dialUser(t, s.Addr())
	authenticate(t, s, plus, "plus")
	if p := plus.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "plus", &batchreq.StatusReq{})); p.Code != 0 || len(p.Status) != 2 {
		t.Fatalf("status: %d %d objects", p.Code, len(p.Status))
	}
	mod := batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "plus", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: a,
		Attrs: batchreq.AttrList{attr("comment", "started by plus")}})
	if p := plus.do(mod); p.Code != 0 {
		t.Fatalf("alter: %d", p.Code)
	}
	if p := plus.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "plus", &batchreq.RunJob{JobID: a})); p.Code != 0 {
		t.Fatalf("run: %d %s", p.Code, p.Text)
	}
	hold := batchreq.NewRequest(batchreq.PBS_BATCH_HoldJob, "plus", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: b,
		Attrs: batchreq.AttrList{attr("Hold_Types", "o")}})
	if p := plus.do(hold); p.Code != 0 {
		t.Fatalf("hold: %d", p.Code)
	}
	if st := jobAttr(t, c, b, "job_state"); st != "H" {
		t.Errorf("held job %q", st)
	}
	if p := plus.do(batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "plus", &batchreq.JobID{ID: a})); p.Code != 0 {
		t.Fatalf("requeue: %d", p.Code)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob); sj.Extension != "rerun" {
		t.Errorf("rerun extension %q", sj.Extension)
	}
	// an ordinary user may do none of the operator actions
	bob := dialUser(t, s.Addr())
	authenticate(t, s, bob, "bob")
	if p := bob.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "bob", &batchreq.RunJob{JobID: b})); p.Code != batchreq.PBSE_PERM {
		t.Errorf("run by bob: %d", p.Code)
	}
	if p := bob.do(batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "bob", &batchreq.JobID{ID: a})); p.Code != batchreq.PBSE_PERM {
		t.Errorf("rerun by bob: %d", p.Code)
	}
	if p := bob.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "bob", &batchreq.SignalJob{JobID: a, Signal: "suspend"})); p.Code != batchreq.PBSE_PERM {
		t.Errorf("suspend by bob: %d", p.Code)
	}
}

// TestPingNodesAtStart: a node known at start is down until its MOM
// answers the server's IS_HELLO.
func TestPingNodesAtStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for reserved source ports")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
	defer ep.Close()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "server_priv"), 0o755)
	os.WriteFile(filepath.Join(home, "server_priv", "nodes"), []byte("vm np=2\n"), 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Home: home, ServerName: "vm", InitType: InitCold, Listener: ln, SchedPort: 1,
		RMPort: pc.LocalAddr().(*net.UDPAddr).Port, AuthWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.run.Resolve = func(string) []netip.Addr { return []netip.Addr{netip.MustParseAddr("127.0.0.1")} }
	s.is.PingDelay = 50 * time.Millisecond
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	c := privConn(t, s)
	if st := nodeAttr(t, c, "state"); st != "down,offline" {
		t.Errorf("node before hello: %q, want down,offline", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := ep.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recv := func() *momproto.ISMessage {
		t.Helper()
		b, err := st.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m, err := momproto.DecodeIS(b)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := recv(); m.Command != momproto.IS_HELLO {
		t.Fatalf("server sent %s", momproto.ISCommandName(m.Command))
	}
	st.Send((&momproto.ISMessage{Version: 1, Command: momproto.IS_HELLO}).Append(nil))
	if m := recv(); m.Command != momproto.IS_CLUSTER_ADDRS {
		t.Fatalf("server sent %s", momproto.ISCommandName(m.Command))
	}
	// After the hello the node is up but has not reported: offline
	// (TORQUE), until its first status.
	if st := nodeAttr(t, c, "state"); st != "offline" {
		t.Errorf("node after hello: %q, want offline", st)
	}
	st.Send((&momproto.ISMessage{Version: 1, Command: momproto.IS_STATUS, Status: []string{"opsys=linux", "state=free"}}).Append(nil))
	waitFor(t, "node up", func() bool { return nodeAttr(t, c, "state") == "free" })
}

// waitSchedIdle waits until the server has finished serving a scheduler
// connection (requests during a cycle are dropped, as in TORQUE).
func waitSchedIdle(t *testing.T, s *Server) {
	t.Helper()
	waitFor(t, "end of the scheduler cycle", func() bool {
		return !s.sched.Busy()
	})
}

// TestSchedulerNewOnRelease: a job released from a hold asks for a
// "new" cycle; a submission asks only once.
func TestSchedulerNewOnRelease(t *testing.T) {
	sched := newFakeSched(t)
	s := runServer(t, newFakeMom(t), sched.ln.Addr().(*net.TCPAddr).Port)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	held := submit(t, c, "held", attr("Hold_Types", "u"))
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("scheduling: %d", p.Code)
	}
	cy := sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_CMD {
		t.Fatalf("command %d", cy.cmd)
	}
	cy.c.nc.Close()
	waitSchedIdle(t, s)
	rls := batchreq.NewRequest(batchreq.PBS_BATCH_ReleaseJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: held,
		Attrs: batchreq.AttrList{attr("Hold_Types", "u")}})
	if p := c.do(rls); p.Code != 0 {
		t.Fatalf("qrls: %d", p.Code)
	}
	cy = sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_NEW {
		t.Fatalf("after qrls: command %d", cy.cmd)
	}
	cy.c.nc.Close()
	waitSchedIdle(t, s)
	submit(t, c, "plain")
	cy = sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_NEW {
		t.Fatalf("after qsub: command %d", cy.cmd)
	}
	cy.c.nc.Close()
	waitSchedIdle(t, s)
	sched.expectNone(t, 1500*time.Millisecond) // no second "new" for the same job
}

// TestSchedulingSetTrue: every qmgr "set server scheduling = true" asks
// for a "cmd" cycle right away (capture 71: right after the Manager
// reply), also when scheduling already was true; other server
// attributes, and scheduling false, ask for none.
func TestSchedulingSetTrue(t *testing.T) {
	sched := newFakeSched(t)
	s := runServer(t, newFakeMom(t), sched.ln.Addr().(*net.TCPAddr).Port)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	set := func(name, value string) {
		t.Helper()
		if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr(name, value))); p.Code != 0 {
			t.Fatalf("set %s: %d", name, p.Code)
		}
	}
	for round := 0; round < 2; round++ {
		set("scheduling", "true")
		cy := sched.next(t)
		if cy.cmd != batchreq.SCH_SCHEDULE_CMD {
			t.Fatalf("round %d: command %d, want cmd", round, cy.cmd)
		}
		cy.c.nc.Close()
		waitSchedIdle(t, s)
	}
	set("comment", "no cycle")
	set("scheduling", "false")
	sched.expectNone(t, 300*time.Millisecond)
}
