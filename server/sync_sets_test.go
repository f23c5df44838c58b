package server

import (
	"strings"
	"testing"

	"gopbs/batchreq"
)

// syncCluster is a server with a fake MOM, a node of four slots and
// resources_cost.mem=1 (per MB), system_cost=5.
func syncCluster(t *testing.T) (*Server, *client) {
	t.Helper()
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "vm", attr("np", "4")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", rattr("resources_cost", "mem", "1")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("system_cost", "5")),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("setup: %d %q", p.Code, p.Text)
		}
	}
	momsReported(s)
	return s, c
}

func states(t *testing.T, c *client, ids ...string) string {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		st := jobAttr(t, c, id, "job_state")
		if st == "" {
			st = "-"
		}
		b.WriteString(st)
	}
	return b.String()
}

func runJob(t *testing.T, c *client, id string) {
	t.Helper()
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob %s: %d %q", id, p.Code, p.Text)
	}
}

// TestSyncSetCheapestFirst: a sync set of three is held until all have
// registered, then released one job at a time, the cheapest by
// resources_cost/system_cost first, the next when the previous starts.
func TestSyncSetCheapestFirst(t *testing.T) {
	s, c := syncCluster(t)
	mem := func(v string) batchreq.Attr { return rattr("Resource_List", "mem", v) }
	master := submit(t, c, "master", attr("synccount", "2"), mem("300mb"))
	if got := jobAttr(t, c, master, "substate"); got != "21" {
		t.Fatalf("master substate %s, want 21 (sync hold)", got)
	}
	small := submit(t, c, "small", attr("syncwith", master), mem("100mb"))
	if got := states(t, c, master, small); got != "HH" {
		t.Fatalf("before the set is complete: %s", got)
	}
	middle := submit(t, c, "middle", attr("syncwith", master), mem("200mb"))
	if got := states(t, c, master, small, middle); got != "HQH" {
		t.Fatalf("complete set: %s, want the cheapest (small) released alone", got)
	}
	s.mu.Lock()
	set, ok := s.deps.Sync().Table().Set(master)
	s.mu.Unlock()
	if !ok || len(set.Members) != 3 || set.Members[0].Cost != 305 || set.Members[1].Cost != 105 || set.Members[2].Cost != 205 {
		t.Fatalf("set %+v", set)
	}
	// the master lists its members
	if d := jobAttr(t, c, master, "depend"); d != "synccount:2,syncwith:"+small+"@vm:"+middle+"@vm" {
		t.Fatalf("master depend %q", d)
	}
	runJob(t, c, small)
	if got := states(t, c, master, small, middle); got != "HRQ" {
		t.Fatalf("after small started: %s", got)
	}
	runJob(t, c, middle)
	if got := states(t, c, master, small, middle); got != "QRR" {
		t.Fatalf("after middle started: %s", got)
	}
	if d := jobAttr(t, c, master, "depend"); d != "" {
		t.Fatalf("released master keeps depend %q", d)
	}
	runJob(t, c, master)
	s.mu.Lock()
	_, ok = s.deps.Sync().Table().Set(master)
	s.mu.Unlock()
	if ok {
		t.Fatal("the set is kept after every job started")
	}
	if log := serverLog(t, s.cfg.Home); !strings.Contains(log, ";Job;"+small+";sync set of "+master+": released") {
		t.Errorf("no release line in the log")
	}
}

// TestSyncSetMemberLeavesAndMasterAborts: a released member deleted
// before it starts lets the next one go; deleting the master deletes the
// members that have not started (seed 001).
func TestSyncSetMemberLeavesAndMasterAborts(t *testing.T) {
	_, c := syncCluster(t)
	mem := func(v string) batchreq.Attr { return rattr("Resource_List", "mem", v) }
	master := submit(t, c, "master", attr("synccount", "3"), mem("400mb"))
	a := submit(t, c, "a", attr("syncwith", master), mem("100mb"))
	b := submit(t, c, "b", attr("syncwith", master), mem("200mb"))
	d := submit(t, c, "d", attr("syncwith", master), mem("300mb"))
	if got := states(t, c, master, a, b, d); got != "HQHH" {
		t.Fatalf("complete set: %s", got)
	}
	if p := c.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "root", a)); p.Code != 0 {
		t.Fatalf("qdel: %d", p.Code)
	}
	if got := states(t, c, master, a, b, d); got != "H-QH" {
		t.Fatalf("after the released job was deleted: %s", got)
	}
	runJob(t, c, b)
	if p := c.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "root", master)); p.Code != 0 {
		t.Fatalf("qdel master: %d", p.Code)
	}
	// b started and stays; d had not started and goes with the master
	if got := states(t, c, master, b, d); got != "-R-" {
		t.Fatalf("after the master was deleted: %s", got)
	}
}

// TestSyncSetRemoteProtocol drives a master's server as another server
// would: a member registers with its cost, is released (a Release to its
// unreachable server is logged), reports Ready, and the next cheapest is
// released; refusals for a job that is no master.
func TestSyncSetRemoteProtocol(t *testing.T) {
	s, c := syncCluster(t)
	master := submit(t, c, "master", attr("synccount", "1"), rattr("Resource_List", "mem", "10mb"))
	dep := func(op int, parent, child string, cost int64) *batchreq.Reply {
		return privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_RegistDep, "PBS_Server", &batchreq.RegistDep{
			Owner: "root", ParentID: parent, ChildID: child, DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: op, Cost: cost}))
	}
	const remote = "4.other@127.0.0.1:1"
	if p := dep(batchreq.JOB_DEPEND_OP_REGISTER, "99.vm", remote, 0); p.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("register with no job: %d", p.Code)
	}
	plain := submit(t, c, "plain")
	if p := dep(batchreq.JOB_DEPEND_OP_REGISTER, plain, remote, 0); p.Code != batchreq.PBSE_NOSYNCMSTR {
		t.Fatalf("register with no master: %d", p.Code)
	}
	if p := dep(batchreq.JOB_DEPEND_OP_REGISTER, master, remote, 3); p.Code != 0 {
		t.Fatalf("register: %d %q", p.Code, p.Text)
	}
	s.mu.Lock()
	set, _ := s.deps.Sync().Table().Set(master)
	s.mu.Unlock()
	if len(set.Members) != 2 || !set.Members[1].Released || set.Members[1].Cost != 3 || set.Members[0].Released {
		t.Fatalf("the remote member (cost 3, cheaper than 15) is not released first: %+v", set)
	}
	if st := jobAttr(t, c, master, "job_state"); st != "H" {
		t.Fatalf("master %s before the member is ready", st)
	}
	if p := dep(batchreq.JOB_DEPEND_OP_READY, master, remote, 0); p.Code != 0 {
		t.Fatalf("ready: %d", p.Code)
	}
	if st := jobAttr(t, c, master, "job_state"); st != "Q" {
		t.Fatalf("master %s after the member is ready", st)
	}
	waitFor(t, "the failed Release logged", func() bool {
		return strings.Contains(serverLog(t, s.cfg.Home), "sync set: RegisterDependency (op 2) to 127.0.0.1:1 failed")
	})
}

// TestSyncSetSurvivesRestart: the set, its costs and releases and the
// requests still owed to another server are stored: after a warm start
// the master's server still waits for the released member's Ready, and
// still owes its server the Release.
func TestSyncSetSurvivesRestart(t *testing.T) {
	home := t.TempDir()
	mom := newFakeMom(t)
	s := runServerAt(t, home, InitCreate, mom, 0, nil)
	c := privConn(t, s)
	setupCluster(t, c)
	c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("system_cost", "5")))
	master := submit(t, c, "master", attr("synccount", "1"))
	const remote = "4.other@127.0.0.1:1"
	p := privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_RegistDep, "PBS_Server", &batchreq.RegistDep{
		Owner: "root", ParentID: master, ChildID: remote, DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_REGISTER, Cost: 1}))
	if p.Code != 0 {
		t.Fatalf("register: %d", p.Code)
	}
	s.Shutdown("Quick")
	s = runServerAt(t, home, InitWarm, mom, 0, nil)
	c = privConn(t, s)
	s.mu.Lock()
	set, ok := s.deps.Sync().Table().Set(master)
	out := s.deps.Sync().Table().Outbox()
	s.mu.Unlock()
	if !ok || len(set.Members) != 2 || !set.Members[1].Released || set.Members[0].Released || set.Members[0].Cost != 5 {
		t.Fatalf("set after restart %+v", set)
	}
	if len(out) != 1 || out[0].Op != batchreq.JOB_DEPEND_OP_RELEASE || out[0].To != "127.0.0.1:1" || out[0].Parent != "4.other" {
		t.Fatalf("outbox after restart %+v", out)
	}
	if st := jobAttr(t, c, master, "job_state"); st != "H" {
		t.Fatalf("master %s after restart", st)
	}
	p = privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_RegistDep, "PBS_Server", &batchreq.RegistDep{
		ParentID: master, ChildID: remote, DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_READY}))
	if p.Code != 0 {
		t.Fatalf("ready: %d", p.Code)
	}
	if st := jobAttr(t, c, master, "job_state"); st != "Q" {
		t.Fatalf("master %s after the member is ready", st)
	}
}
