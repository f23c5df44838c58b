package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
)

// submitAs submits a job through QueueJob…Commit; attrs are added to a
// minimal qsub-like list. It returns the reply of the failing step or the
// Commit reply.
func submitAs(t *testing.T, c *client, user, dest string, attrs ...batchreq.Attr) *batchreq.Reply {
	t.Helper()
	list := append(batchreq.AttrList{
		attr("Job_Name", "job"),
		attr("Variable_List", "PBS_O_HOME=/home/"+user+",PBS_O_WORKDIR=/home/"+user),
	}, attrs...)
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, user, &batchreq.QueueJob{Destination: dest, Attrs: list}))
	if p.Code != 0 {
		return p
	}
	id := p.JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, user, &batchreq.JobFile{Data: []byte("#!/bin/sh\nsleep 1\n")}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, user, &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, user, &batchreq.JobID{ID: id}),
	} {
		if p = c.do(r); p.Code != 0 {
			return p
		}
	}
	return p
}

func mustSubmit(t *testing.T, c *client, user string, attrs ...batchreq.Attr) string {
	t.Helper()
	p := submitAs(t, c, user, "", attrs...)
	if p.Code != 0 {
		t.Fatalf("submit: %d %q", p.Code, p.Text)
	}
	return p.JobID
}

func statusAttr(t *testing.T, c *client, id, name string) string {
	t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
	if p.Code != 0 || len(p.Status) != 1 {
		t.Fatalf("status %s: %d %q %d", id, p.Code, p.Text, len(p.Status))
	}
	for _, a := range p.Status[0].Attrs {
		if a.FullName() == name {
			return a.Value
		}
	}
	return ""
}

func jobReq(typ int, user, id string, attrs ...batchreq.Attr) *batchreq.Request {
	cmd := batchreq.MGR_CMD_SET
	if typ == batchreq.PBS_BATCH_DeleteJob {
		cmd = batchreq.MGR_CMD_DELETE
	}
	return batchreq.NewRequest(typ, user, &batchreq.Manage{Command: cmd, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id, Attrs: attrs})
}

type cluster struct {
	s                *Server
	root, alice, bob *client
	home             string
}

func newCluster(t *testing.T) *cluster {
	home := t.TempDir()
	s := testServer(t, home, InitCreate)
	cl := &cluster{s: s, home: home, root: dialPrivileged(t, s.Addr())}
	setupCluster(t, cl.root)
	cl.alice = dialUser(t, s.Addr())
	authenticate(t, s, cl.alice, "alice")
	cl.bob = dialUser(t, s.Addr())
	authenticate(t, s, cl.bob, "bob")
	return cl
}

func TestSubmissionDefaultsAndErrors(t *testing.T) {
	cl := newCluster(t)
	id := mustSubmit(t, cl.alice, "alice")
	if id != "0.vm" {
		t.Fatalf("first id %s", id)
	}
	for name, want := range map[string]string{
		"Job_Owner":              "alice@vm",
		"job_state":              "Q",
		"queue":                  "batch",
		"Output_Path":            "vm:/home/alice/job.o0",
		"Variable_List":          "PBS_O_QUEUE=batch,PBS_O_HOST=vm,PBS_O_HOME=/home/alice,PBS_O_WORKDIR=/home/alice",
		"Resource_List.walltime": "01:00:00",
		"Resource_List.nodect":   "1",
		"submit_host":            "vm",
	} {
		if got := statusAttr(t, cl.root, id, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	tests := []struct {
		dest  string
		attrs []batchreq.Attr
		code  int
		text  string
	}{
		{"nosuchq", nil, batchreq.PBSE_UNKQUE, "Unknown queue MSG=cannot locate queue"},
		{"short", []batchreq.Attr{rattr("Resource_List", "walltime", "01:00:00")}, batchreq.PBSE_EXCQRESC,
			"Job exceeds queue resource limits MSG=cannot satisfy queue max walltime requirement"},
		{"", []batchreq.Attr{rattr("Resource_List", "bogusres", "1")}, batchreq.PBSE_UNKRESC, "Unknown resource type  Resource_List.bogusres"},
		{"", []batchreq.Attr{attr("foo", "bar")}, batchreq.PBSE_NOATTR, "Undefined attribute  MSG=detected presence of an unknown attribute"},
		{"", []batchreq.Attr{rattr("Resource_List", "walltime", "bogus")}, batchreq.PBSE_BADATVAL, "Illegal attribute or resource value for  Resource_List.walltime"},
		{"", []batchreq.Attr{attr("Priority", "2000")}, batchreq.PBSE_BADATVAL, "Illegal attribute or resource value for  MSG=invalid job priority"},
		{"", []batchreq.Attr{attr("Job_Owner", "bob@vm")}, batchreq.PBSE_ATTRRO, "Cannot set attribute, read only or insufficient permission  Job_Owner"},
	}
	for _, tt := range tests {
		p := submitAs(t, cl.alice, "alice", tt.dest, tt.attrs...)
		if p.Code != tt.code || p.Text != tt.text {
			t.Errorf("%v: %d %q, want %d %q", tt.attrs, p.Code, p.Text, tt.code, tt.text)
		}
	}
	// rejected submissions consumed numbers 1..7
	if id := mustSubmit(t, cl.alice, "alice"); id != "8.vm" {
		t.Fatalf("id after rejections %s", id)
	}
	// a route queue accepts an unknown resource and routes into batch
	p := submitAs(t, cl.alice, "alice", "route", rattr("Resource_List", "walltime", "00:01:00"))
	if p.Code != 0 {
		t.Fatalf("route submit: %d %q", p.Code, p.Text)
	}
	if q := statusAttr(t, cl.root, p.JobID, "queue"); q != "batch" {
		t.Fatalf("routed job in %q", q)
	}
	// disabled queue
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", attr("enabled", "false")))
	p = submitAs(t, cl.alice, "alice", "short")
	if p.Text != "Queue is not enabled MSG=queue is disabled: user alice@vm, queue short" {
		t.Fatalf("disabled queue: %q", p.Text)
	}
}

func TestHoldReleaseModifyDelete(t *testing.T) {
	cl := newCluster(t)
	id := mustSubmit(t, cl.alice, "alice")
	hold := func(c *client, user, letters string, typ int) *batchreq.Reply {
		return c.do(jobReq(typ, user, id, attr("Hold_Types", letters)))
	}
	if p := hold(cl.alice, "alice", "u", batchreq.PBS_BATCH_HoldJob); p.Code != 0 {
		t.Fatalf("qhold: %d", p.Code)
	}
	if st := statusAttr(t, cl.root, id, "job_state"); st != "H" {
		t.Fatalf("state after hold %s", st)
	}
	if p := hold(cl.alice, "alice", "o", batchreq.PBS_BATCH_HoldJob); p.Code != batchreq.PBSE_PERM || p.Text != "Unauthorized Request " {
		t.Fatalf("owner -h o: %d %q", p.Code, p.Text)
	}
	if p := hold(cl.bob, "bob", "u", batchreq.PBS_BATCH_HoldJob); p.Text != "Unauthorized Request  MSG=operation not permitted" {
		t.Fatalf("bob qhold: %q", p.Text)
	}
	if p := hold(cl.alice, "alice", "x", batchreq.PBS_BATCH_HoldJob); p.Code != batchreq.PBSE_BADATVAL {
		t.Fatalf("bad letters: %d", p.Code)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_HoldJob, "alice", id)); p.Code != batchreq.PBSE_IVALREQ {
		t.Fatalf("no Hold_Types: %d", p.Code)
	}
	if p := hold(cl.alice, "alice", "u", batchreq.PBS_BATCH_ReleaseJob); p.Code != 0 {
		t.Fatalf("qrls: %d", p.Code)
	}
	if st := statusAttr(t, cl.root, id, "job_state"); st != "Q" {
		t.Fatalf("state after release %s", st)
	}
	// qalter
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "alice", id, rattr("Resource_List", "walltime", "00:03:00"))); p.Code != 0 {
		t.Fatalf("qalter: %d %q", p.Code, p.Text)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "alice", id, attr("Priority", "2000"))); p.Code != 0 {
		t.Fatalf("qalter -p 2000 (no range check on modify): %d %q", p.Code, p.Text)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "alice", id, attr("Job_Owner", "bob@vm"))); p.Text != "Cannot set attribute, read only or insufficient permission " {
		t.Fatalf("qalter Job_Owner: %q", p.Text)
	}
	if v := statusAttr(t, cl.root, id, "Resource_List.walltime"); v != "00:03:00" {
		t.Fatalf("walltime %q", v)
	}
	// qmove / qorder
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "alice", &batchreq.MoveJob{JobID: id, Destination: "nosuch"})); p.Text != "Unknown queue" {
		t.Fatalf("qmove unknown: %q", p.Text)
	}
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "alice", &batchreq.MoveJob{JobID: id, Destination: "short"})); p.Code != 0 {
		t.Fatalf("qmove: %d %q", p.Code, p.Text)
	}
	p := submitAs(t, cl.alice, "alice", "short")
	if p.Code != 0 {
		t.Fatalf("submit to short: %d %q", p.Code, p.Text)
	}
	id2 := p.JobID
	r1, r2 := statusAttr(t, cl.root, id, "queue_rank"), statusAttr(t, cl.root, id2, "queue_rank")
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_OrderJob, "alice", &batchreq.MoveJob{JobID: id, Destination: id2})); p.Code != 0 {
		t.Fatalf("qorder: %d %q", p.Code, p.Text)
	}
	if statusAttr(t, cl.root, id, "queue_rank") != r2 || statusAttr(t, cl.root, id2, "queue_rank") != r1 {
		t.Fatal("qorder did not swap ranks")
	}
	// qdel: bob refused, alice allowed, unknown
	if p := cl.bob.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "bob", id)); p.Text != "Unauthorized Request  MSG=operation not permitted" {
		t.Fatalf("bob qdel: %q", p.Text)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", id)); p.Code != 0 {
		t.Fatalf("qdel: %d", p.Code)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", id)); p.Code != batchreq.PBSE_UNKJOBID || p.Text != "Unknown Job Id" {
		t.Fatalf("qdel again: %d %q", p.Code, p.Text)
	}
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_LocateJob, "alice", &batchreq.JobID{ID: id + "@vm"})); p.Text != "Unknown Job Id" {
		t.Fatalf("locate deleted: %q", p.Text)
	}
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_LocateJob, "alice", &batchreq.JobID{ID: id2})); p.Location != "vm" {
		t.Fatalf("locate: %+v", p)
	}
	req := jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", id2)
	req.SetExtension("bye now")
	if p := cl.alice.do(req); p.Text != "Unauthorized Request  MSG=must have operator or manager privilege to use -m parameter" {
		t.Fatalf("qdel -m: %q", p.Text)
	}
	time.Sleep(10 * time.Millisecond)
	acct, _ := os.ReadFile(filepath.Join(cl.home, "server_priv", "accounting", time.Now().Format("20060102")))
	if !strings.Contains(string(acct), ";D;"+id+";requestor=alice@vm\n") || !strings.Contains(string(acct), ";Q;"+id+";queue=short\n") {
		t.Fatalf("accounting:\n%s", acct)
	}
}

func TestArraysSelectAndVisibility(t *testing.T) {
	cl := newCluster(t)
	a := mustSubmit(t, cl.alice, "alice", attr("job_array_request", "0-3"))
	if a != "0[].vm" {
		t.Fatalf("array id %s", a)
	}
	b := mustSubmit(t, cl.bob, "bob", attr("Hold_Types", "u"))
	sel := func(c *client, user string, ext string, attrs ...batchreq.Attr) []string {
		r := batchreq.NewRequest(batchreq.PBS_BATCH_SelectJobs, user, &batchreq.Select{Attrs: attrs})
		r.SetExtension(ext)
		p := c.do(r)
		if p.Code != 0 || p.AuxCode != len(p.JobIDs) {
			t.Fatalf("select: %+v", p)
		}
		return p.JobIDs
	}
	eq := func(name, v string) batchreq.Attr { x := attr(name, v); x.Op = batchreq.EQ; return x }
	if got := strings.Join(sel(cl.root, "root", "", eq("job_state", "Q")), " "); got != "0[0].vm 0[1].vm 0[2].vm 0[3].vm" {
		t.Fatalf("state Q: %s", got)
	}
	if got := strings.Join(sel(cl.root, "root", "summarize_arrays", eq("User_List", "alice")), " "); got != "0[].vm" {
		t.Fatalf("alice summarized: %s", got)
	}
	if got := strings.Join(sel(cl.root, "root", "", eq("job_state", "H")), " "); got != b {
		t.Fatalf("held: %s", got)
	}
	// query_other_jobs false: alice does not see bob's job
	p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "alice", &batchreq.StatusReq{ID: b}))
	if p.Code != 0 || len(p.Status) != 0 {
		t.Fatalf("alice sees bob's job: %+v", p)
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("query_other_jobs", "true")))
	p = cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "alice", &batchreq.StatusReq{ID: b}))
	if len(p.Status) != 1 {
		t.Fatalf("query_other_jobs: %+v", p)
	}
	for _, x := range p.Status[0].Attrs {
		if x.Name == "Variable_List" {
			t.Fatal("Variable_List shown to another user")
		}
	}
	// qdel of the array removes every sub-job and the template
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", a)); p.Code != 0 {
		t.Fatalf("qdel array: %d", p.Code)
	}
	if got := sel(cl.root, "root", "", eq("User_List", "alice")); len(got) != 0 {
		t.Fatalf("array left: %v", got)
	}
}

func TestDependencies(t *testing.T) {
	cl := newCluster(t)
	p1 := mustSubmit(t, cl.alice, "alice")
	c1 := mustSubmit(t, cl.alice, "alice", attr("depend", "afterok:"+p1))
	if d := statusAttr(t, cl.root, c1, "depend"); d != "afterok:"+p1+"@vm" {
		t.Fatalf("child depend %q", d)
	}
	if d := statusAttr(t, cl.root, p1, "depend"); d != "beforeok:"+c1+"@vm" {
		t.Fatalf("parent depend %q", d)
	}
	if st, h := statusAttr(t, cl.root, c1, "job_state"), statusAttr(t, cl.root, c1, "Hold_Types"); st != "H" || h != "s" {
		t.Fatalf("child %s %s", st, h)
	}
	if sub := statusAttr(t, cl.root, c1, "substate"); sub != "22" {
		t.Fatalf("child substate %s", sub)
	}
	// afterany child released when the parent is deleted; afterok child deleted
	c2 := mustSubmit(t, cl.alice, "alice", attr("depend", "afterany:"+p1))
	cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", p1))
	if st := statusAttr(t, cl.root, c2, "job_state"); st != "Q" {
		t.Fatalf("afterany child %s", st)
	}
	if p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: c1})); p.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("afterok child survives: %+v", p)
	}
	// on:1 + beforeok
	on := mustSubmit(t, cl.alice, "alice", attr("depend", "on:1"))
	if st := statusAttr(t, cl.root, on, "job_state"); st != "H" {
		t.Fatalf("on:1 job %s", st)
	}
	bef := mustSubmit(t, cl.alice, "alice", attr("depend", "beforeok:"+on))
	if d := statusAttr(t, cl.root, on, "depend"); d != "afterok:"+bef+"@vm" {
		t.Fatalf("on job depend %q", d)
	}
	// beforeok without on: registration rejected, dependency dropped
	plain := mustSubmit(t, cl.alice, "alice")
	x := mustSubmit(t, cl.alice, "alice", attr("depend", "beforeok:"+plain))
	if d := statusAttr(t, cl.root, x, "depend"); d != "" {
		t.Fatalf("rejected before dependency kept: %q", d)
	}
	// bad syntax
	if p := submitAs(t, cl.alice, "alice", "", attr("depend", "afterok:12")); p.Code != batchreq.PBSE_BADATVAL {
		t.Fatalf("id without server: %d %q", p.Code, p.Text)
	}
	// sync set (seed 001): synccount master and syncwith member
	m := mustSubmit(t, cl.alice, "alice", attr("synccount", "1"))
	if st := statusAttr(t, cl.root, m, "substate"); st != "21" {
		t.Fatalf("sync master substate %s", st)
	}
	w := mustSubmit(t, cl.alice, "alice", attr("syncwith", m))
	// one at a time, the cheapest first: equal costs, the master first;
	// the member when the master starts (sync_sets_test.go)
	for id, want := range map[string]string{m: "Q", w: "H"} {
		if st := statusAttr(t, cl.root, id, "job_state"); st != want {
			t.Fatalf("sync job %s: %s, want %s", id, st, want)
		}
	}
	if p := submitAs(t, cl.alice, "alice", "", attr("syncwith", plain)); p.Code != 0 {
		t.Fatalf("syncwith non-master: %d", p.Code)
	}
}

func TestKeepCompletedAndWarmRestart(t *testing.T) {
	cl := newCluster(t)
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("keep_completed", "120")))
	id := mustSubmit(t, cl.alice, "alice")
	cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", id))
	if st := statusAttr(t, cl.root, id, "job_state"); st != "C" {
		t.Fatalf("kept job state %s", st)
	}
	held := mustSubmit(t, cl.alice, "alice", attr("Hold_Types", "u"))
	cl.s.Shutdown("Quick")
	s2 := testServer(t, cl.home, InitWarm)
	root := dialPrivileged(t, s2.Addr())
	if st := statusAttr(t, root, held, "job_state"); st != "H" {
		t.Fatalf("held job after restart %s", st)
	}
	if st := statusAttr(t, root, id, "job_state"); st != "C" {
		t.Fatalf("completed job after restart %s", st)
	}
	next := mustSubmit(t, root, "root")
	if next != "2.vm" {
		t.Fatalf("next id after restart %s", next)
	}
	if _, err := New(Config{Home: cl.home, ServerName: "vm"}); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("second server on the same home: %v", err)
	}
}

// TestServerLogLines checks the log lines of a submission, a rejection and
// qmgr against the reference formats (spec 12 §13.2).
func TestServerLogLines(t *testing.T) {
	cl := newCluster(t)
	id := mustSubmit(t, cl.alice, "alice")
	submitAs(t, cl.alice, "alice", "nosuchq")
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", attr("enabled", "true"), attr("started", "true")))
	time.Sleep(10 * time.Millisecond)
	b, err := os.ReadFile(filepath.Join(cl.home, "server_logs", time.Now().Format("20060102")))
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(l, ";", 2); len(f) == 2 {
			body = append(body, f[1])
		}
	}
	log := strings.Join(body, "\n")
	for _, want := range []string{
		"0002;PBS_Server;Svr;Log;Log opened",
		"0006;PBS_Server;Svr;PBS_Server;Server vm started, initialization type = 4",
		"0100;PBS_Server;Job;" + id + ";enqueuing into batch, state 1 hop 1",
		"0008;PBS_Server;Job;" + id + ";Job Queued at request of alice@vm, owner = alice@vm, job name = job, queue = batch",
		"0001;PBS_Server;Svr;PBS_Server;LOG_ERROR::req_quejob, requested queue not found",
		"0080;PBS_Server;Req;req_reject;Reject reply code=15020(Unknown queue MSG=cannot locate queue), aux=0, type=QueueJob, from alice@vm",
		"0004;PBS_Server;Que;short;attributes set:  at request of root@vm",
		"0004;PBS_Server;Que;short;attributes set: enabled = TRUE",
		"0004;PBS_Server;node;vm;attributes set: np = 2",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestArraySlotLimitAndIDOptions(t *testing.T) {
	cl := newCluster(t)
	a := mustSubmit(t, cl.alice, "alice", attr("job_array_request", "0-2%1"))
	if st := statusAttr(t, cl.root, "0[1].vm", "job_state"); st != "H" {
		t.Fatalf("slot-limited sub-job %s", st)
	}
	if h := statusAttr(t, cl.root, "0[1].vm", "Hold_Types"); h != "" {
		t.Fatalf("internal hold shown: %q", h)
	}
	cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", "0[0].vm"))
	if st := statusAttr(t, cl.root, "0[1].vm", "job_state"); st != "Q" {
		t.Fatalf("sub-job not released when a slot freed: %s", st)
	}
	_ = a
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("max_slot_limit", "5")))
	if p := submitAs(t, cl.alice, "alice", "", attr("job_array_request", "0-9%6")); p.Text != "Bad Job Array Request MSG=Requested slot limit too large, limit is 5" {
		t.Fatalf("slot limit: %d %q", p.Code, p.Text)
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("job_suffix_alias", "gpu")))
	if id := mustSubmit(t, cl.alice, "alice"); id != "2.vm.gpu" {
		t.Fatalf("alias id %s", id)
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("display_job_server_suffix", "false")))
	if id := mustSubmit(t, cl.alice, "alice"); id != "3.gpu" {
		t.Fatalf("no-suffix id %s", id)
	}
	if id := mustSubmit(t, cl.alice, "alice", attr("job_id", "777")); id != "777.gpu" {
		t.Fatalf("job_id id %s", id)
	}
}

func TestStatusExtensions(t *testing.T) {
	cl := newCluster(t)
	for i := 0; i < 3; i++ {
		mustSubmit(t, cl.alice, "alice")
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("max_report", "2")))
	r := batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{})
	r.SetExtension("truncated")
	if p := cl.root.do(r); len(p.Status) != 2 {
		t.Fatalf("truncated: %d jobs", len(p.Status))
	}
	r.SetExtension("DELTA:99999999999")
	p := cl.root.do(r)
	if len(p.Status) != 3 || len(p.Status[0].Attrs) != 1 || p.Status[0].Attrs[0].Name != "Job_Name" {
		t.Fatalf("DELTA: %+v", p.Status)
	}
	// wanted-attribute lists come back in the requested order
	p = cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusQue, "root", &batchreq.StatusReq{ID: "batch", Attrs: batchreq.StatusNames("started", "enabled")}))
	if len(p.Status) != 1 || len(p.Status[0].Attrs) != 2 || p.Status[0].Attrs[0].Name != "started" {
		t.Fatalf("wanted order: %+v", p.Status)
	}
	p = cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("bogus")}))
	if p.Code != batchreq.PBSE_NOATTR {
		t.Fatalf("unknown wanted attribute: %d", p.Code)
	}
}

func TestColdStartAndRegisterDependent(t *testing.T) {
	cl := newCluster(t)
	p := mustSubmit(t, cl.alice, "alice")
	// RegisterDependent is for servers only
	reg := batchreq.NewRequest(batchreq.PBS_BATCH_RegistDep, "alice", &batchreq.RegistDep{Owner: "alice", ParentID: p,
		ChildID: "9.other", DepType: batchreq.JOB_DEPEND_TYPE_AFTEROK, Op: batchreq.JOB_DEPEND_OP_REGISTER})
	if r := cl.alice.do(reg); r.Code != batchreq.PBSE_IVALREQ {
		t.Fatalf("RegistDep from a client: %d", r.Code)
	}
	reg.User = "PBS_Server"
	if r := cl.root.do(reg); r.Code != 0 {
		t.Fatalf("RegistDep: %d %q", r.Code, r.Text)
	}
	if d := statusAttr(t, cl.root, p, "depend"); d != "beforeok:9.other@vm" {
		t.Fatalf("parent depend %q", d)
	}
	cl.s.Shutdown("Quick")
	s2 := testServer(t, cl.home, InitCold)
	root := dialPrivileged(t, s2.Addr())
	if r := root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{})); r.Code != 0 || len(r.Status) != 0 {
		t.Fatalf("jobs after cold start: %+v", r)
	}
	if r := root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusQue, "root", &batchreq.StatusReq{ID: "batch"})); r.Code != 0 {
		t.Fatalf("queue lost on cold start: %d", r.Code)
	}
}

func TestArrayDependencies(t *testing.T) {
	cl := newCluster(t)
	arr := mustSubmit(t, cl.alice, "alice", attr("job_array_request", "0-1"))
	okc := mustSubmit(t, cl.alice, "alice", attr("depend", "afterokarray:"+arr))
	anyc := mustSubmit(t, cl.alice, "alice", attr("depend", "afteranyarray:"+arr))
	one := mustSubmit(t, cl.alice, "alice", attr("depend", "afteranyarray:0[][1].vm"))
	for _, id := range []string{okc, anyc, one} {
		if st := statusAttr(t, cl.root, id, "job_state"); st != "H" {
			t.Fatalf("%s not held: %s", id, st)
		}
	}
	// deleting queued sub-jobs ends them "not ok"
	cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", "0[0].vm"))
	if st := statusAttr(t, cl.root, one, "job_state"); st != "Q" {
		t.Fatalf("afteranyarray[1] child after one sub-job: %s", st)
	}
	if st := statusAttr(t, cl.root, anyc, "job_state"); st != "H" {
		t.Fatalf("afteranyarray child released too early: %s", st)
	}
	cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", "0[1].vm"))
	if st := statusAttr(t, cl.root, anyc, "job_state"); st != "Q" {
		t.Fatalf("afteranyarray child after the array: %s", st)
	}
	if p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: okc})); p.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("afterokarray child of a failed array survives: %+v", p)
	}
}

func TestStartDependencies(t *testing.T) {
	cl := newCluster(t)
	parent := mustSubmit(t, cl.alice, "alice")
	child := mustSubmit(t, cl.alice, "alice", attr("depend", "after:"+parent))
	if st := statusAttr(t, cl.root, child, "job_state"); st != "H" {
		t.Fatalf("after child %s", st)
	}
	cl.s.mu.Lock()
	changed := cl.s.deps.Started(cl.s.db.Begin(), cl.s.jobs.Get(parent))
	cl.s.mu.Unlock()
	if len(changed) != 1 || changed[0].ID != child {
		t.Fatalf("changed %v", changed)
	}
	if st := statusAttr(t, cl.root, child, "job_state"); st != "Q" {
		t.Fatalf("after child not released: %s", st)
	}
}

// TestAbandonedSubmissions: a connection closed after QueueJob leaves
// nothing; closed after RdytoCommit leaves the job listed as T.
func TestAbandonedSubmissions(t *testing.T) {
	cl := newCluster(t)
	c := dialUser(t, cl.s.Addr())
	authenticate(t, cl.s, c, "alice")
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "alice", &batchreq.QueueJob{Attrs: batchreq.AttrList{attr("Job_Name", "x")}}))
	c.nc.Close()
	c2 := dialUser(t, cl.s.Addr())
	authenticate(t, cl.s, c2, "alice")
	p2 := c2.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "alice", &batchreq.QueueJob{Attrs: batchreq.AttrList{attr("Job_Name", "y")}}))
	c2.do(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "alice", &batchreq.JobID{ID: p2.JobID}))
	c2.nc.Close()
	time.Sleep(100 * time.Millisecond)
	if r := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: p.JobID})); r.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("queued-only job left behind: %+v", r)
	}
	if st, sub := statusAttr(t, cl.root, p2.JobID, "job_state"), statusAttr(t, cl.root, p2.JobID, "substate"); st != "T" || sub != "0" {
		t.Fatalf("ready job after close: %s/%s", st, sub)
	}
	r := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("state_count")}))
	if v, _ := r.Status[0].Attrs.Get("state_count"); !strings.HasPrefix(v, "Transit:1 Queued:0") {
		t.Fatalf("state_count %q", v)
	}
	if r := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", p2.JobID)); r.Code != 0 {
		t.Fatalf("qdel of the T job: %d", r.Code)
	}
}

func TestInteractiveReportedAsTrue(t *testing.T) {
	cl := newCluster(t)
	id := mustSubmit(t, cl.alice, "alice", attr("interactive", "40123"))
	if v := statusAttr(t, cl.root, id, "interactive"); v != "True" {
		t.Fatalf("interactive = %q", v)
	}
	if v := cl.s.jobs.Get(id).Attrs.Get(pbsattr.JobInteractive); v != "40123" {
		t.Fatalf("stored port %q", v)
	}
	if v := statusAttr(t, cl.root, id, "Rerunable"); v != "False" {
		t.Fatalf("interactive job rerunable %q", v)
	}
}
