package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestAdmissionChecks covers queue admission checks of spec 12 §4.3 that
// the capture scenarios do not reach: resources_min, the group ACL (with
// acl_logic_or), and JobCred's place in a submission.
func TestAdmissionChecks(t *testing.T) {
	cl := newCluster(t)
	setQ := func(attrs ...batchreq.Attr) {
		t.Helper()
		if p := cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attrs...)); p.Code != 0 {
			t.Fatalf("set queue: %d %q", p.Code, p.Text)
		}
	}
	// resources_min
	setQ(rattr("resources_min", "walltime", "00:30:00"))
	p := submitAs(t, cl.alice, "alice", "batch", rattr("Resource_List", "walltime", "00:05:00"))
	if p.Code != batchreq.PBSE_EXCQRESC || !strings.Contains(p.Text, "min walltime") {
		t.Fatalf("below resources_min: %d %q", p.Code, p.Text)
	}
	if p := submitAs(t, cl.alice, "alice", "batch", rattr("Resource_List", "walltime", "00:30:00")); p.Code != 0 {
		t.Fatalf("at resources_min: %d %q", p.Code, p.Text)
	}
	setQ(rattr("resources_min", "walltime", "0"))
	// group ACL, by the job's group_list
	setQ(attr("acl_group_enable", "true"), attr("acl_groups", "wheel"))
	p = submitAs(t, cl.alice, "alice", "batch", attr("group_list", "staff"))
	if p.Code != batchreq.PBSE_PERM || !strings.Contains(p.Text, "group ACL is not satisfied: user alice@vm, queue batch") {
		t.Fatalf("group not in acl_groups: %d %q", p.Code, p.Text)
	}
	if p := submitAs(t, cl.alice, "alice", "batch", attr("group_list", "wheel")); p.Code != 0 {
		t.Fatalf("group in acl_groups: %d %q", p.Code, p.Text)
	}
	// acl_logic_or: the user ACL passing is enough
	setQ(attr("acl_user_enable", "true"), attr("acl_users", "alice"), attr("acl_logic_or", "true"))
	if p := submitAs(t, cl.alice, "alice", "batch", attr("group_list", "staff")); p.Code != 0 {
		t.Fatalf("user ACL passes with acl_logic_or: %d %q", p.Code, p.Text)
	}
	p = submitAs(t, cl.bob, "bob", "batch", attr("group_list", "staff"))
	if p.Code != batchreq.PBSE_PERM || !strings.Contains(p.Text, "both user and group ACL rejected the submitting user") {
		t.Fatalf("both ACLs fail: %d %q", p.Code, p.Text)
	}
	setQ(attr("acl_group_enable", "false"), attr("acl_user_enable", "false"))
	// JobCred: only inside a submission
	cred := batchreq.NewRequest(batchreq.PBS_BATCH_JobCred, "alice", &batchreq.JobCred{CredType: 1, Data: []byte("x")})
	if p := cl.alice.do(cred); p.Code != batchreq.PBSE_IVALREQ {
		t.Fatalf("JobCred without a submission: %d", p.Code)
	}
	q := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "alice", &batchreq.QueueJob{Attrs: batchreq.AttrList{attr("Job_Name", "c")}}))
	if q.Code != 0 {
		t.Fatalf("QueueJob: %d", q.Code)
	}
	if p := cl.alice.do(cred); p.Code != 0 {
		t.Fatalf("JobCred in a submission: %d %q", p.Code, p.Text)
	}
}

// TestRouteHeldWaitingAndLifetime covers route_held_jobs,
// route_waiting_jobs and route_lifetime (spec 12 §5).
func TestRouteHeldWaitingAndLifetime(t *testing.T) {
	cl := newCluster(t)
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route", attr("route_retry_time", "1")))
	held := submitAs(t, cl.alice, "alice", "route", attr("Hold_Types", "u")).JobID
	later := strconv.FormatInt(time.Now().Unix()+3600, 10)
	waiting := submitAs(t, cl.alice, "alice", "route", attr("Execution_Time", later)).JobID
	if held == "" || waiting == "" {
		t.Fatal("submissions failed")
	}
	time.Sleep(1200 * time.Millisecond)
	for id, st := range map[string]string{held: "H", waiting: "W"} {
		if q, s := statusAttr(t, cl.root, id, "queue"), statusAttr(t, cl.root, id, "job_state"); q != "route" || s != st {
			t.Fatalf("%s in %s state %s, want route %s", id, q, s, st)
		}
	}
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route", attr("route_held_jobs", "true"), attr("route_waiting_jobs", "true")))
	deadline := time.Now().Add(20 * time.Second)
	for statusAttr(t, cl.root, held, "queue") != "batch" || statusAttr(t, cl.root, waiting, "queue") != "batch" {
		if time.Now().After(deadline) {
			t.Fatal("held and waiting jobs not routed once allowed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// route_lifetime: a job no destination takes is aborted when its time
	// in the queue is over
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "false")))
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route", attr("route_lifetime", "1")))
	id := submitAs(t, cl.alice, "alice", "route").JobID
	deadline = time.Now().Add(20 * time.Second)
	for {
		p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
		if p.Code == batchreq.PBSE_UNKJOBID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job past route_lifetime still here: %+v", p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSelectRelations checks every relation of SelectJobs on a numeric
// attribute and a resource (spec 02 §3.9).
func TestSelectRelations(t *testing.T) {
	cl := newCluster(t)
	ids := map[int]string{}
	for _, prio := range []int{-5, 0, 7} {
		ids[prio] = mustSubmit(t, cl.alice, "alice", attr("Priority", strconv.Itoa(prio)),
			rattr("Resource_List", "walltime", strconv.Itoa(10+prio)+":00"))
	}
	sel := func(a batchreq.Attr) string {
		p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_SelectJobs, "root", &batchreq.Select{Attrs: batchreq.AttrList{a}}))
		if p.Code != 0 {
			t.Fatalf("select %+v: %d %q", a, p.Code, p.Text)
		}
		return strings.Join(p.JobIDs, " ")
	}
	rel := func(a batchreq.Attr, op int) batchreq.Attr { a.Op = op; return a }
	for _, tc := range []struct {
		name string
		a    batchreq.Attr
		want []int
	}{
		{"EQ", rel(attr("Priority", "0"), batchreq.EQ), []int{0}},
		{"NE", rel(attr("Priority", "0"), batchreq.NE), []int{-5, 7}},
		{"GT", rel(attr("Priority", "0"), batchreq.GT), []int{7}},
		{"GE", rel(attr("Priority", "0"), batchreq.GE), []int{0, 7}},
		{"LT", rel(attr("Priority", "0"), batchreq.LT), []int{-5}},
		{"LE", rel(attr("Priority", "0"), batchreq.LE), []int{-5, 0}},
		{"resource GT", rel(rattr("Resource_List", "walltime", "00:10:00"), batchreq.GT), []int{7}},
		{"resource LE", rel(rattr("Resource_List", "walltime", "00:10:00"), batchreq.LE), []int{-5, 0}},
	} {
		var want []string
		for _, p := range tc.want {
			want = append(want, ids[p])
		}
		if got := sel(tc.a); got != strings.Join(want, " ") {
			t.Errorf("%s: %q, want %q", tc.name, got, strings.Join(want, " "))
		}
	}
}
