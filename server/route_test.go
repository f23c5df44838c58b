package server

import (
	"testing"
	"time"

	"gopbs/batchreq"
)

func TestRoutingRetryAndLimits(t *testing.T) {
	cl := newCluster(t)
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "dest", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "dest", attr("started", "true"), rattr("resources_max", "walltime", "00:10:00")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "r2", attr("queue_type", "route")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "r2", attr("route_destinations", "dest"), attr("route_retry_time", "1"),
			attr("enabled", "true"), attr("started", "true")),
	} {
		if p := cl.root.do(r); p.Code != 0 {
			t.Fatalf("setup: %d %q", p.Code, p.Text)
		}
	}
	// dest is disabled: the job waits in r2 and is routed once dest is enabled
	p := submitAs(t, cl.alice, "alice", "r2", rattr("Resource_List", "walltime", "00:05:00"))
	if p.Code != 0 {
		t.Fatalf("submit: %d %q", p.Code, p.Text)
	}
	id := p.JobID
	if q := statusAttr(t, cl.root, id, "queue"); q != "r2" {
		t.Fatalf("job in %s before enable", q)
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "dest", attr("enabled", "true")))
	deadline := time.Now().Add(5 * time.Second)
	for statusAttr(t, cl.root, id, "queue") != "dest" {
		if time.Now().After(deadline) {
			t.Fatal("job not routed after the destination was enabled")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// a job every destination rejects permanently is aborted
	p = submitAs(t, cl.alice, "alice", "r2", rattr("Resource_List", "walltime", "01:00:00"))
	if p.Code != 0 {
		t.Fatalf("submit: %d %q", p.Code, p.Text)
	}
	if r := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: p.JobID})); r.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("rejected job kept: %+v", r)
	}
}

func TestQueueLimitsAndACL(t *testing.T) {
	cl := newCluster(t)
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", attr("max_queuable", "2"), attr("max_user_queuable", "1")))
	if p := submitAs(t, cl.alice, "alice", "short"); p.Code != 0 {
		t.Fatalf("first: %d %q", p.Code, p.Text)
	}
	if p := submitAs(t, cl.alice, "alice", "short"); p.Text != "Maximum number of jobs already in queue for user MSG=total number of current user's jobs exceeds the queue limit: user alice@vm, queue short" {
		t.Fatalf("user limit: %d %q", p.Code, p.Text)
	}
	if p := submitAs(t, cl.bob, "bob", "short"); p.Code != 0 {
		t.Fatalf("bob: %d %q", p.Code, p.Text)
	}
	if p := submitAs(t, cl.root, "root", "short"); p.Text != "Maximum number of jobs already in queue MSG=total number of jobs in queue exceeds the queue limit: user root@vm, queue short" {
		t.Fatalf("queue limit: %d %q", p.Code, p.Text)
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("acl_user_enable", "true"), attr("acl_users", "bob")))
	if p := submitAs(t, cl.alice, "alice", "batch"); p.Code != batchreq.PBSE_PERM {
		t.Fatalf("user ACL: %d %q", p.Code, p.Text)
	}
	if p := submitAs(t, cl.bob, "bob", "batch"); p.Code != 0 {
		t.Fatalf("bob in ACL: %d %q", p.Code, p.Text)
	}
	// queue deletion refused while jobs exist
	if p := cl.root.do(mgr(batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_QUEUE, "short")); p.Code != batchreq.PBSE_QUEBUSY {
		t.Fatalf("delete busy queue: %d", p.Code)
	}
	// manager errors
	if p := cl.root.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch")); p.Code != batchreq.PBSE_QUEEXIST {
		t.Fatalf("queue exists: %d", p.Code)
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "averyveryverylongname")); p.Code != batchreq.PBSE_QUENBIG {
		t.Fatalf("long name: %d", p.Code)
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("bogus", "1"))); p.Code != batchreq.PBSE_NOATTR || p.Text != "Undefined attribute  bogus" {
		t.Fatalf("bogus attribute: %d %q", p.Code, p.Text)
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "vm", attr("state", "free,offline"))); p.Code != batchreq.PBSE_MUTUALEX {
		t.Fatalf("free,offline: %d", p.Code)
	}
	momsReported(cl.s)
	off := attr("state", "offline")
	off.Op = batchreq.INCR
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "vm", off))
	p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "vm"}))
	if v, _ := p.Status[0].Attrs.Get("state"); v != "offline" {
		t.Fatalf("node state %q", v)
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "nosuch", off)); p.Code != batchreq.PBSE_UNKNODE {
		t.Fatalf("unknown node: %d", p.Code)
	}
	// increments of server lists and numbers
	inc := attr("managers", "alice@vm")
	inc.Op = batchreq.INCR_OLD
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", inc))
	p = cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("managers")}))
	if v, _ := p.Status[0].Attrs.Get("managers"); v != "root@vm,alice@vm" {
		t.Fatalf("managers %q", v)
	}
	// alice is now a manager
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "alice", &batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "aq"})); p.Code != 0 {
		t.Fatalf("alice as manager: %d %q", p.Code, p.Text)
	}
}

func TestFromRouteOnly(t *testing.T) {
	cl := newCluster(t)
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("from_route_only", "true")))
	if p := submitAs(t, cl.alice, "alice", "batch"); p.Code != batchreq.PBSE_QACESS {
		t.Fatalf("direct submission: %d %q", p.Code, p.Text)
	}
	p := submitAs(t, cl.alice, "alice", "route")
	if p.Code != 0 {
		t.Fatalf("through the route queue: %d %q", p.Code, p.Text)
	}
	if q := statusAttr(t, cl.root, p.JobID, "queue"); q != "batch" {
		t.Fatalf("routed into %q", q)
	}
}
