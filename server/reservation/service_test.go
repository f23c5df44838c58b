package reservation

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/resv"
	"gopbs/sched/config"
	"gopbs/sched/reservable"
	"gopbs/server/handler"
	"gopbs/server/store"
)

// fakeHost is a server of three nodes with a settable clock and a store.
type fakeHost struct {
	mu       sync.RWMutex
	dir      string
	now      time.Time
	st       *store.Bolt
	nodes    []*reservable.Node
	policy   string
	order    []config.NodeSortKey
	queues   map[string][]string // queue → ACL
	parts    map[string]string   // queue → partition
	jobs     []*Job
	acct     []string
	requeued []string
	deleted  []string
	comments map[string]string
	sched    int
	// down lists the partitions whose scheduler ("s-" + partition) is
	// not running; cycles the schedulers asked for a cycle.
	down   map[string]bool
	cycles []string
}

func newFakeHost(t *testing.T, dir string) *fakeHost {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &fakeHost{dir: dir, now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), st: st, queues: map[string][]string{}, parts: map[string]string{},
		comments: map[string]string{}}
	for _, n := range []string{"n1", "n2", "n3"} {
		h.nodes = append(h.nodes, &reservable.Node{Name: n, IsAlive: true, NCPU: 2, PhysMem: 4 << 30, Arch: "x86_64", OS: "linux"})
	}
	return h
}

func (h *fakeHost) Lock()          { h.mu.Lock() }
func (h *fakeHost) Unlock()        { h.mu.Unlock() }
func (h *fakeHost) RLock()         { h.mu.RLock() }
func (h *fakeHost) RUnlock()       { h.mu.RUnlock() }
func (h *fakeHost) Now() time.Time { return h.now }
func (h *fakeHost) Nodes() []*reservable.Node {
	out := make([]*reservable.Node, len(h.nodes))
	for i, n := range h.nodes {
		c := *n
		out[i] = &c
	}
	return out
}
func (h *fakeHost) Rules() (Rules, error) {
	if h.policy == "" {
		return Rules{Policy: &reservable.Policy{}, NodeOrder: h.order}, nil
	}
	p, err := reservable.Parse(h.policy, "reservable.ad")
	return Rules{Policy: p, NodeOrder: h.order}, err
}
func (h *fakeHost) UserExists(name string) bool        { return name != "nosuchuser" }
func (h *fakeHost) Submit(ops []store.Op) func() error { return h.st.Submit(ops...) }
func (h *fakeHost) Account(typ byte, id, msg string) {
	h.acct = append(h.acct, fmt.Sprintf("%c;%s;%s", typ, id, msg))
}
func (h *fakeHost) Log(id, msg string) {}
func (h *fakeHost) EnsureQueue(name string, users []string, partition string) []store.Op {
	h.queues[name] = users
	h.parts[name] = partition
	return nil
}
func (h *fakeHost) RemoveQueue(name string) ([]store.Op, bool) {
	if len(h.QueueJobs(name)) > 0 {
		return nil, false
	}
	delete(h.queues, name)
	return nil, true
}
func (h *fakeHost) QueueJobs(name string) []Job {
	var out []Job
	for _, j := range h.jobs {
		if j.Queue == name {
			out = append(out, *j)
		}
	}
	return out
}
func (h *fakeHost) RunningOn(nodes []string) []Job {
	var out []Job
	for _, j := range h.jobs {
		if j.Running && slices.ContainsFunc(j.Nodes, func(n string) bool { return slices.Contains(nodes, n) }) {
			out = append(out, *j)
		}
	}
	return out
}
func (h *fakeHost) SetComment(id, text string) []store.Op {
	h.comments[id] = text
	for _, j := range h.jobs {
		if j.ID == id {
			j.Comment = text
		}
	}
	return nil
}
func (h *fakeHost) Requeue(ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requeued = append(h.requeued, ids...)
	for _, j := range h.jobs {
		if slices.Contains(ids, j.ID) {
			j.Running, j.Nodes = false, nil
		}
	}
}
func (h *fakeHost) Delete(ids []string, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deleted = append(h.deleted, ids...)
	h.jobs = slices.DeleteFunc(h.jobs, func(j *Job) bool { return slices.Contains(ids, j.ID) })
}
func (h *fakeHost) Schedule() { h.sched++ }

func (h *fakeHost) PartitionScheduler(p string) (string, bool) { return "s-" + p, !h.down[p] }

func (h *fakeHost) ScheduleFor(name string) { h.cycles = append(h.cycles, name) }

// reply records the answer of one request.
type reply struct {
	p    *batchreq.Reply
	code int
	msg  string
}

func (r *reply) Send(p *batchreq.Reply)      { r.p = p }
func (r *reply) Reject(code int, msg string) { r.code, r.msg = code, msg }

var (
	alice = handler.Asker{User: "alice", Host: "h"}
	bob   = handler.Asker{User: "bob", Host: "h"}
	admin = handler.Asker{User: "root", Host: "h", Manager: true}
)

func submitAttrs(start, end time.Time, nodes string, extra ...batchreq.Attr) batchreq.AttrList {
	l := batchreq.AttrList{
		batchreq.NewAttr(batchreq.ATTR_resv_start, fmt.Sprint(start.Unix())),
		batchreq.NewAttr(batchreq.ATTR_resv_end, fmt.Sprint(end.Unix())),
	}
	if strings.ContainsAny(nodes, "n") {
		l = append(l, batchreq.NewAttr(batchreq.ATTR_resv_nodes, nodes))
	} else {
		l = append(l, batchreq.NewAttr(batchreq.ATTR_resv_nodect, nodes))
	}
	return append(l, extra...)
}

func (h *fakeHost) submit(t *testing.T, s *Service, who handler.Asker, tx bool, attrs batchreq.AttrList) *reply {
	t.Helper()
	flags := 0
	if tx {
		flags = batchreq.ResvFlagTransaction
	}
	r := &reply{}
	s.Submit(r, who, &batchreq.ResvSubmit{Flags: flags, Attrs: attrs})
	return r
}

func (s *Service) state(id string) (resv.State, resv.Op, bool) {
	e := s.tab.get(id)
	if e == nil {
		return 0, 0, false
	}
	return e.State, e.Pending, true
}

func TestSubmitAssignsAndRefusesOverlap(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	s, err := New(h, h.st)
	if err != nil {
		t.Fatal(err)
	}
	start := h.now.Add(time.Hour)
	r := h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Hour), "2", batchreq.NewAttr(batchreq.ATTR_resv_users, "bob")))
	if r.code != 0 || r.p == nil || r.p.JobID != "R1" {
		t.Fatalf("submit: %d %q %+v", r.code, r.msg, r.p)
	}
	if st, _, _ := s.state("R1"); st != resv.Confirmed {
		t.Fatalf("R1 state %v", st)
	}
	if got := h.queues["R1"]; !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("queue R1 ACL %v", got)
	}
	if len(h.acct) != 1 || !strings.HasPrefix(h.acct[0], "Y;R1;owner=alice users=bob ") || !strings.Contains(h.acct[0], "nodes=n1+n2") {
		t.Errorf("accounting %q", h.acct)
	}
	// two more nodes overlapping: only n3 is free
	r = h.submit(t, s, bob, false, submitAttrs(start.Add(30*time.Minute), start.Add(2*time.Hour), "2"))
	if r.code != batchreq.PBSE_RESCUNAV || !strings.Contains(r.msg, "only 1 of 2 nodes free") || !strings.Contains(r.msg, "n1 held by R1") {
		t.Fatalf("overlap: %d %q", r.code, r.msg)
	}
	// after R1's end all three are free; the refused request took no number
	r = h.submit(t, s, bob, false, submitAttrs(start.Add(time.Hour), start.Add(2*time.Hour), "n1+n2+n3"))
	if r.code != 0 || r.p.JobID != "R2" {
		t.Fatalf("after the end: %d %q %+v", r.code, r.msg, r.p)
	}
	for _, tc := range []struct {
		attrs batchreq.AttrList
		code  int
		want  string
	}{
		{submitAttrs(start, start.Add(time.Hour), "n4"), batchreq.PBSE_RESCUNAV, "unknown node n4"},
		{submitAttrs(h.now.Add(-time.Hour), start, "1"), batchreq.PBSE_BADATVAL, "in the past"},
		{submitAttrs(start, start.Add(-time.Minute), "1"), batchreq.PBSE_BADATVAL, "is not after start"},
		{submitAttrs(start, start.Add(time.Hour), "1", batchreq.NewAttr(batchreq.ATTR_resv_users, "nosuchuser")), batchreq.PBSE_BADUSER, "unknown user nosuchuser"},
		{submitAttrs(start, start.Add(time.Hour), "1", batchreq.NewAttr(batchreq.ATTR_resv_mem, "8589934592")), batchreq.PBSE_RESCUNAV, "physical memory"},
		{submitAttrs(start, start.Add(time.Hour), "x"), batchreq.PBSE_BADATVAL, "bad resv_nodect"},
	} {
		r := h.submit(t, s, alice, false, tc.attrs)
		if r.code != tc.code || !strings.Contains(r.msg, tc.want) {
			t.Errorf("%v: %d %q, want %d %q", tc.attrs, r.code, r.msg, tc.code, tc.want)
		}
	}
	// the table and the counter survive a restart
	h.st.Close()
	st, err := store.OpenBolt(filepath.Join(h.dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	s2, err := New(h, st)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s2.tab.list()); got != 2 {
		t.Fatalf("after reopening: %d reservations", got)
	}
	r = h.submit(t, s2, alice, false, submitAttrs(start.Add(3*time.Hour), start.Add(4*time.Hour), "1"))
	if r.code != 0 || r.p.JobID != "R3" {
		t.Fatalf("after reopening: %d %q %+v", r.code, r.msg, r.p)
	}
}

func idReq(id string) *batchreq.ResvID { return &batchreq.ResvID{ID: id} }

func TestTransactions(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	s, _ := New(h, h.st)
	start := h.now.Add(time.Hour)
	if r := h.submit(t, s, alice, true, submitAttrs(start, start.Add(time.Hour), "1")); r.code != 0 || r.p.JobID != "R1" {
		t.Fatalf("submit -T: %d %q", r.code, r.msg)
	}
	if st, op, _ := s.state("R1"); st != resv.WaitCommit || op != resv.OpCreate {
		t.Fatalf("R1 %v %v", st, op)
	}
	if _, ok := h.queues["R1"]; ok || len(h.acct) != 0 {
		t.Fatalf("an uncommitted reservation has a queue or a record: %v %v", h.queues, h.acct)
	}
	// its node is held: two more nodes leave one free
	if r := h.submit(t, s, bob, false, submitAttrs(start, start.Add(time.Hour), "3")); r.code != batchreq.PBSE_RESCUNAV {
		t.Fatalf("n1 is not held by the transaction: %d %q", r.code, r.msg)
	}
	r := &reply{}
	s.Commit(r, bob, idReq("R1"))
	if r.code != batchreq.PBSE_PERM {
		t.Fatalf("bob's commit of alice's reservation: %d %q", r.code, r.msg)
	}
	r = &reply{}
	s.Commit(r, alice, idReq("R1"))
	if st, op, _ := s.state("R1"); r.code != 0 || st != resv.Confirmed || op != resv.OpNone || h.queues["R1"] == nil {
		t.Fatalf("commit: %d %q, state %v %v, queues %v", r.code, r.msg, st, op, h.queues)
	}
	r = &reply{}
	s.Commit(r, alice, idReq("R1"))
	if r.code != batchreq.PBSE_BADSTATE || !strings.Contains(r.msg, "no operation is waiting") {
		t.Fatalf("second commit: %d %q", r.code, r.msg)
	}

	// modify -T, then abort: nothing changes
	r = &reply{}
	s.Modify(r, alice, &batchreq.ResvModify{ID: "R1", Flags: batchreq.ResvFlagTransaction,
		Attrs: batchreq.AttrList{batchreq.NewAttr(batchreq.ATTR_resv_nodect, "2")}})
	if st, op, _ := s.state("R1"); r.code != 0 || op != resv.OpModify || st != resv.Confirmed {
		t.Fatalf("modify -T: %d %q %v", r.code, r.msg, op)
	}
	r = &reply{}
	s.Cancel(r, alice, idReq("R1"))
	if r.code != batchreq.PBSE_BADSTATE {
		t.Fatalf("cancel while a modify waits: %d %q", r.code, r.msg)
	}
	r = &reply{}
	s.Abort(r, admin, idReq("R1"))
	if e := s.tab.get("R1"); r.code != 0 || e.Pending != resv.OpNone || e.Wanted() != 1 {
		t.Fatalf("abort by a manager: %d %q %+v", r.code, r.msg, e.Status)
	}
	// modify -T, commit: two nodes
	s.Modify(&reply{}, alice, &batchreq.ResvModify{ID: "R1", Flags: batchreq.ResvFlagTransaction,
		Attrs: batchreq.AttrList{batchreq.NewAttr(batchreq.ATTR_resv_nodect, "2")}})
	s.Commit(&reply{}, alice, idReq("R1"))
	if e := s.tab.get("R1"); len(e.Assigned) != 2 || e.Assigned[0] != "n1" {
		t.Fatalf("after the committed modify: %v", e.Assigned)
	}
	if last := h.acct[len(h.acct)-1]; !strings.HasPrefix(last, "M;R1;") || !strings.Contains(last, "nodect=2") {
		t.Errorf("modify record %q", last)
	}

	// a -T creation not committed in time is aborted by the clock
	if r := h.submit(t, s, bob, true, submitAttrs(start.Add(2*time.Hour), start.Add(3*time.Hour), "1")); r.p.JobID != "R2" {
		t.Fatalf("R2: %d %q", r.code, r.msg)
	}
	h.now = h.now.Add(resv.DefaultCommitTimeout - time.Second)
	s.Tick()
	if _, _, ok := s.state("R2"); !ok {
		t.Fatal("R2 aborted before its time")
	}
	h.now = h.now.Add(time.Second)
	s.Tick()
	if _, _, ok := s.state("R2"); ok {
		t.Fatal("R2 not aborted after the commit timeout")
	}
	// cancel -T, commit: cancelled, record kept, queue gone
	s.Cancel(&reply{}, alice, &batchreq.ResvID{ID: "R1", Flags: batchreq.ResvFlagTransaction})
	if st, op, _ := s.state("R1"); st != resv.Confirmed || op != resv.OpCancel {
		t.Fatalf("cancel -T: %v %v", st, op)
	}
	s.Commit(&reply{}, alice, idReq("R1"))
	if st, _, _ := s.state("R1"); st != resv.Cancelled || h.queues["R1"] != nil {
		t.Fatalf("committed cancel: %v, queues %v", st, h.queues)
	}
	// -o owner with -T is refused; destroy by owner removes the record
	r = &reply{}
	s.Destroy(r, alice, &batchreq.ResvID{Owner: "alice", Flags: batchreq.ResvFlagTransaction})
	if r.code != batchreq.PBSE_IVALREQ {
		t.Fatalf("destroy -T -o: %d %q", r.code, r.msg)
	}
	r = &reply{}
	s.Destroy(r, bob, &batchreq.ResvID{Owner: "alice"})
	if r.code != batchreq.PBSE_PERM {
		t.Fatalf("bob destroys alice's: %d %q", r.code, r.msg)
	}
	s.Destroy(&reply{}, alice, &batchreq.ResvID{Owner: "alice"})
	if _, _, ok := s.state("R1"); ok {
		t.Fatal("R1 not destroyed")
	}
	if last := h.acct[len(h.acct)-1]; !strings.HasPrefix(last, "X;R1;") {
		t.Errorf("destroy record %q", last)
	}
}

func TestStartAndEnd(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	s, _ := New(h, h.st)
	start := h.now.Add(20 * time.Second)
	if r := h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Minute), "2")); r.code != 0 {
		t.Fatalf("submit: %d %q", r.code, r.msg)
	}
	h.jobs = []*Job{
		{ID: "1.s", Queue: "batch", Running: true, Nodes: []string{"n1"}}, // foreign, on a reserved node
		{ID: "2.s", Queue: "batch", Running: true, Nodes: []string{"n3"}}, // foreign, elsewhere
		{ID: "3.s", Queue: "R1"}, // waits for the start
		{ID: "4.s", Queue: "R1"}, // runs in it
		{ID: "5.s", Queue: "batch", Running: true, Nodes: []string{"n2", "n3"}}, // foreign, partly reserved
	}
	// before the start: a long job may not start on n1, a short one may;
	// the reservation's jobs may not start at all
	if msg := s.CheckRun("batch", []string{"n1"}, time.Hour); !strings.Contains(msg, "node n1 is reserved by R1") {
		t.Errorf("long job on n1: %q", msg)
	}
	if msg := s.CheckRun("batch", []string{"n1"}, 10*time.Second); msg != "" {
		t.Errorf("short job on n1: %q", msg)
	}
	if msg := s.CheckRun("batch", []string{"n3"}, 0); msg != "" {
		t.Errorf("job without walltime on n3: %q", msg)
	}
	if msg := s.CheckRun("R1", []string{"n1"}, 0); !strings.Contains(msg, "reservation R1 begins at") {
		t.Errorf("R1's job before the start: %q", msg)
	}
	s.Tick()
	if c := h.comments["3.s"]; !strings.HasPrefix(c, WaitingPrefix+"R1 begins at ") {
		t.Errorf("comment of a waiting job %q", c)
	}
	h.now = start
	s.Tick()
	if st, _, _ := s.state("R1"); st != resv.Running {
		t.Fatalf("at the start: %v", st)
	}
	if !slices.Equal(h.requeued, []string{"1.s", "5.s"}) || h.sched == 0 {
		t.Errorf("requeued %v, schedule requests %d", h.requeued, h.sched)
	}
	if msg := s.CheckRun("R1", []string{"n2"}, 0); msg != "" {
		t.Errorf("R1's job on n2: %q", msg)
	}
	if msg := s.CheckRun("R1", []string{"n3"}, 0); !strings.Contains(msg, "not one of reservation R1's") {
		t.Errorf("R1's job on n3: %q", msg)
	}
	h.jobs[3].Running, h.jobs[3].Nodes = true, []string{"n1", "n2"}
	h.now = h.now.Add(10 * time.Second)
	s.Tick()
	h.now = h.now.Add(50 * time.Second)
	s.Tick()
	e := s.tab.get("R1")
	if e.State != resv.Done || !slices.Equal(h.deleted, []string{"3.s", "4.s"}) {
		t.Fatalf("at the end: %v, deleted %v", e.State, h.deleted)
	}
	if msg := s.CheckRun("R1", []string{"n1"}, 0); msg != "reservation R1 is over" {
		t.Errorf("R1's job after the end: %q", msg)
	}
	if e.Usage.Jobs != 1 || e.Usage.JobSeconds != 2*60 {
		t.Errorf("usage %+v, want 1 job, 120 node-seconds", e.Usage)
	}
	if h.queues["R1"] == nil {
		t.Fatal("queue removed before its jobs were gone")
	}
	s.Tick()
	if h.queues["R1"] != nil || !e.QueueGone {
		t.Errorf("queue not removed once empty: %v", h.queues)
	}
	var kinds []string
	for _, a := range h.acct {
		kinds = append(kinds, a[:1])
	}
	if !slices.Equal(kinds, []string{"Y", "B", "F"}) || !strings.Contains(h.acct[2], "jobs=1 job_node_seconds=120") {
		t.Errorf("records %q", h.acct)
	}
	rec, err := resv.ParseRecord("11/27/2026 12:01:20;"+h.acct[2], time.UTC)
	if err != nil || rec.Usage.JobSeconds != 120 || rec.Usage.ActualStart.Unix() != start.Unix() {
		t.Errorf("plus_account's reading of the F record: %+v %v", rec, err)
	}
	// an ended reservation leaves the table after KeepEnded
	h.now = h.now.Add(DefaultKeepEnded)
	s.Tick()
	if _, _, ok := s.state("R1"); !ok {
		t.Fatal("R1 dropped before KeepEnded passed")
	}
	h.now = h.now.Add(2 * time.Second)
	s.Tick()
	if _, _, ok := s.state("R1"); ok {
		t.Fatal("R1 kept after KeepEnded")
	}
}

// TestRules: reservable.ad refuses nodes (the refusal names why) and
// NodeSortKey orders the candidates.
func TestRules(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	s, _ := New(h, h.st)
	h.nodes[2].PhysMem = 8 << 30
	h.order = []config.NodeSortKey{config.LargestPhysicalMemory, config.NodeName}
	h.policy = `[ Busy = { "n1" }; PLUS_NODE_RESERVABLE = !member(PLUS_CANDIDATE_NODE.name, Busy); ]`
	start := h.now.Add(time.Hour)
	r := h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Hour), "2"))
	if r.code != 0 {
		t.Fatalf("submit: %d %q", r.code, r.msg)
	}
	if got := s.tab.get(r.p.JobID).Assigned; !slices.Equal(got, []string{"n3", "n2"}) {
		t.Errorf("assigned %v, want n3 (most memory) then n2 (n1 refused)", got)
	}
	r = h.submit(t, s, alice, false, submitAttrs(start.Add(2*time.Hour), start.Add(3*time.Hour), "3"))
	if r.code != batchreq.PBSE_RESCUNAV || !strings.Contains(r.msg, "only 2 of 3 nodes free") ||
		!strings.Contains(r.msg, "n1 PLUS_NODE_RESERVABLE is false") {
		t.Errorf("three nodes: %d %q", r.code, r.msg)
	}
	h.policy = "[ PLUS_NODE_RESERVABLE = ; ]"
	if r := h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Hour), "1")); r.code != batchreq.PBSE_SYSTEM || !strings.Contains(r.msg, "reservable.ad") {
		t.Errorf("a malformed reservable.ad: %d %q", r.code, r.msg)
	}
}

// TestUsable: the node filter of a RunJob without destination.
func TestUsable(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	s, _ := New(h, h.st)
	if !s.Usable("batch", 0)("n1") {
		t.Fatal("no reservations: n1 not usable")
	}
	start := h.now.Add(time.Minute)
	h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Hour), "n1"))
	use := s.Usable("batch", time.Hour)
	if use("n1") || !use("n2") {
		t.Errorf("an hour's job: n1 %v, n2 %v", use("n1"), use("n2"))
	}
	if !s.Usable("batch", 30*time.Second)("n1") {
		t.Error("a 30 s job may not use n1 before R1")
	}
	if !s.Usable("R1", 0)("n3") {
		t.Error("before the start R1's jobs are left to CheckRun")
	}
	h.now = start
	s.Tick()
	if use := s.Usable("R1", 0); !use("n1") || use("n2") {
		t.Errorf("R1 running: n1 %v, n2 %v", use("n1"), use("n2"))
	}
}

// TestPartitionReservation: a reservation of a partition (plus_reserve
// -partition, seed 003 interface 8) holds only nodes of that partition
// and its queue is in the partition; one without holds only nodes of no
// partition; an unknown partition is refused.
func TestPartitionReservation(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	h.nodes[1].Partition, h.nodes[2].Partition = "p1", "p1" // n2, n3
	s, err := New(h, h.st)
	if err != nil {
		t.Fatal(err)
	}
	start := h.now.Add(time.Hour)
	part := func(p string) batchreq.Attr { return batchreq.NewAttr(batchreq.ATTR_resv_partition, p) }
	r := h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Hour), "2", part("p1")))
	if r.code != 0 || r.p == nil {
		t.Fatalf("submit in p1: %d %q", r.code, r.msg)
	}
	e := s.tab.get(r.p.JobID)
	if !slices.Equal(e.Assigned, []string{"n2", "n3"}) || h.parts[e.ID] != "p1" || e.Partition != "p1" {
		t.Errorf("%s: nodes %v, queue partition %q, partition %q; want n2+n3 in p1", e.ID, e.Assigned, h.parts[e.ID], e.Partition)
	}
	if v, _ := e.StatusAttrs().Get(batchreq.ATTR_resv_partition); v != "p1" {
		t.Errorf("status partition %q", v)
	}
	for _, tc := range []struct {
		attrs batchreq.AttrList
		code  int
		want  string
	}{
		// n2 and n3 are R1's; n1 is of no partition
		{submitAttrs(start, start.Add(time.Hour), "1", part("p1")), batchreq.PBSE_RESCUNAV, "only 0 of 1 nodes free"},
		{submitAttrs(start, start.Add(time.Hour), "2"), batchreq.PBSE_RESCUNAV, "only 1 of 2 nodes free"},
		{submitAttrs(start, start.Add(time.Hour), "n2", part("")), batchreq.PBSE_RESCUNAV, "unknown node n2"},
		{submitAttrs(start, start.Add(time.Hour), "1", part("p9")), batchreq.PBSE_BADATVAL, "unknown partition p9: no node is in it"},
	} {
		r := h.submit(t, s, alice, false, tc.attrs)
		if r.code != tc.code || !strings.Contains(r.msg, tc.want) {
			t.Errorf("%v: %d %q, want %d %q", tc.attrs, r.code, r.msg, tc.code, tc.want)
		}
	}
	r = h.submit(t, s, bob, false, submitAttrs(start, start.Add(time.Hour), "1"))
	if r.code != 0 {
		t.Fatalf("submit of no partition: %d %q", r.code, r.msg)
	}
	if e := s.tab.get(r.p.JobID); !slices.Equal(e.Assigned, []string{"n1"}) || h.parts[e.ID] != "" {
		t.Errorf("%s: nodes %v, queue partition %q; want n1 of none", e.ID, e.Assigned, h.parts[e.ID])
	}
}

// TestUnconfirmedReservation: a reservation for a partition whose
// scheduler is not running is kept UNCONFIRMED, holding no nodes and no
// queue, until the scheduler runs; then it is confirmed and the
// scheduler asked for a cycle (seed 003, interface 8). One whose window
// passes unconfirmed is cancelled.
func TestUnconfirmedReservation(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	h.nodes[1].Partition, h.nodes[2].Partition = "p1", "p1" // n2, n3
	h.down = map[string]bool{"p1": true}
	s, err := New(h, h.st)
	if err != nil {
		t.Fatal(err)
	}
	start := h.now.Add(time.Hour)
	part := batchreq.NewAttr(batchreq.ATTR_resv_partition, "p1")
	r := h.submit(t, s, alice, false, submitAttrs(start, start.Add(time.Hour), "2", part))
	if r.code != 0 || r.p == nil {
		t.Fatalf("submit in p1: %d %q", r.code, r.msg)
	}
	id := r.p.JobID
	e := s.tab.get(id)
	if e.State != resv.Unconfirmed || len(e.Assigned) != 0 || h.queues[id] != nil || len(h.cycles) != 0 {
		t.Fatalf("%s: state %v, nodes %v, queue %v, cycles %v; want UNCONFIRMED without nodes or queue", id, e.State, e.Assigned, h.queues[id], h.cycles)
	}
	// It holds nothing: another reservation may take n2 and n3 meanwhile
	// only if it can be confirmed; a second one waits too.
	if r := h.submit(t, s, bob, false, submitAttrs(start, start.Add(time.Hour), "1", part)); r.code != 0 || s.tab.get(r.p.JobID).State != resv.Unconfirmed {
		t.Fatalf("second submit: %d %q", r.code, r.msg)
	}
	// It has no nodes to modify.
	mod := &reply{}
	s.Modify(mod, alice, &batchreq.ResvModify{ID: id, Attrs: batchreq.AttrList{batchreq.NewAttr(batchreq.ATTR_resv_nodect, "1")}})
	if mod.code != batchreq.PBSE_BADSTATE || !strings.Contains(mod.msg, "UNCONFIRMED") {
		t.Errorf("modify of an unconfirmed reservation: %d %q", mod.code, mod.msg)
	}
	s.Tick()
	if e := s.tab.get(id); e.State != resv.Unconfirmed {
		t.Fatalf("confirmed while the scheduler is down: %v", e.State)
	}
	// The scheduler runs: the first is confirmed with both nodes, the
	// second cannot be and is cancelled.
	h.down["p1"] = false
	s.Tick()
	e = s.tab.get(id)
	if e.State != resv.Confirmed || !slices.Equal(e.Assigned, []string{"n2", "n3"}) || h.queues[id] == nil || h.parts[id] != "p1" {
		t.Errorf("%s after the scheduler runs: state %v, nodes %v, queue %v in %q", id, e.State, e.Assigned, h.queues[id], h.parts[id])
	}
	if e := s.tab.get("R2"); e == nil || e.State != resv.Cancelled {
		t.Errorf("R2: %+v, want cancelled", e)
	}
	if !slices.Equal(h.cycles, []string{"s-p1"}) {
		t.Errorf("cycles asked for: %v, want s-p1's", h.cycles)
	}
	if !slices.ContainsFunc(h.acct, func(l string) bool { return strings.HasPrefix(l, "Y;"+id) }) {
		t.Errorf("no Y record for %s: %v", id, h.acct)
	}
	// Made with the scheduler running, a reservation asks it for a cycle.
	h.cycles = nil
	later := start.Add(2 * time.Hour)
	if r := h.submit(t, s, alice, false, submitAttrs(later, later.Add(time.Hour), "1", part)); r.code != 0 || s.tab.get(r.p.JobID).State != resv.Confirmed {
		t.Fatalf("submit with the scheduler running: %d %q", r.code, r.msg)
	}
	if !slices.Equal(h.cycles, []string{"s-p1"}) {
		t.Errorf("cycles asked for: %v", h.cycles)
	}
	// Unconfirmed to the end: cancelled.
	h.down["p1"] = true
	r = h.submit(t, s, alice, false, submitAttrs(later, later.Add(time.Hour), "1", part))
	if r.code != 0 {
		t.Fatalf("submit: %d %q", r.code, r.msg)
	}
	h.now = later.Add(2 * time.Hour)
	s.Tick()
	if e := s.tab.get(r.p.JobID); e == nil || e.State != resv.Cancelled {
		t.Errorf("%s unconfirmed past its end: %+v, want cancelled", r.p.JobID, e)
	}
}
