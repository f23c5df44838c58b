package manager

import (
	"path/filepath"
	"testing"
	"time"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/schedulers"
	"gopbs/server/state"
	"gopbs/server/store"
)

// fakeState is a server over a state.DB whose store records the batches;
// it checks that the state is changed under the lock.
type fakeState struct {
	t       *testing.T
	db      state.DB
	batches [][]store.Op
	log     *pbslog.Logger
	attrs   state.Attrs
	next    int64
	jobs    state.Jobs
	queues  []*state.Queue
	nodes   []*state.Node
	order   int64
	locked  int
	managed int
	files   int // nodes file rewrites started
}

func (f *fakeState) Submit(ops ...store.Op) func() error {
	f.batches = append(f.batches, ops)
	return func() error { return nil }
}
func (f *fakeState) SubmitLogged(ops ...store.Op) func() error { return f.Submit(ops...) }

func (f *fakeState) under() {
	f.t.Helper()
	if f.locked != 1 {
		f.t.Fatalf("state used with lock depth %d", f.locked)
	}
}
func (f *fakeState) Lock()                   { f.locked++ }
func (f *fakeState) Unlock()                 { f.locked-- }
func (f *fakeState) Begin() *state.Txn       { f.under(); return f.db.Begin() }
func (f *fakeState) Log() *pbslog.Logger     { return f.log }
func (f *fakeState) LogError(fn, msg string) { f.t.Errorf("LOG_ERROR %s %s", fn, msg) }
func (f *fakeState) Now() time.Time          { return time.Unix(1700000000, 0) }
func (f *fakeState) Attrs() state.Attrs      { f.under(); return f.attrs }
func (f *fakeState) SetAttrs(a state.Attrs)  { f.under(); f.attrs = a }
func (f *fakeState) SetNextJob(n int64)      { f.under(); f.next = n }
func (f *fakeState) Jobs() *state.Jobs       { f.under(); return &f.jobs }
func (f *fakeState) Queues() []*state.Queue  { f.under(); return f.queues }
func (f *fakeState) Queue(name string) *state.Queue {
	f.under()
	for _, q := range f.queues {
		if q.Name == name {
			return q
		}
	}
	return nil
}
func (f *fakeState) AddQueue(q *state.Queue) { f.under(); f.order++; f.queues = append(f.queues, q) }
func (f *fakeState) RemoveQueue(q *state.Queue) {
	f.under()
	for i, x := range f.queues {
		if x == q {
			f.queues = append(f.queues[:i:i], f.queues[i+1:]...)
		}
	}
}
func (f *fakeState) Nodes() []*state.Node { f.under(); return f.nodes }
func (f *fakeState) Node(name string) *state.Node {
	f.under()
	for _, n := range f.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}
func (f *fakeState) AddNode(n *state.Node) { f.under(); f.order++; f.nodes = append(f.nodes, n) }
func (f *fakeState) RemoveNode(n *state.Node) {
	f.under()
	for i, x := range f.nodes {
		if x == n {
			f.nodes = append(f.nodes[:i:i], f.nodes[i+1:]...)
		}
	}
}
func (f *fakeState) NextOrder() int64 { f.under(); return f.order }
func (f *fakeState) NodeCreated(*state.Node) func() error {
	f.files++
	return func() error { return nil }
}
func (f *fakeState) NodesChanged() func() error {
	f.files++
	return func() error { return nil }
}
func (f *fakeState) HTTPAddressChanged()      {}
func (f *fakeState) Managed(*batchreq.Manage) { f.managed++ }
func (f *fakeState) QueuePartitionCheck(q *state.Queue, na state.Attrs) *batchreq.Reply {
	f.under()
	if na.Get(attr.QueuePartition) == "forbidden" {
		return batchreq.ErrorReply(batchreq.PBSE_BADATVAL, "", "")
	}
	return nil
}
func (f *fakeState) NodePartitionCheck(old state.Attrs, n *state.Node) *batchreq.Reply { return nil }
func (f *fakeState) ManageSched(m *batchreq.Manage) (schedulers.Change, func()) {
	return schedulers.Change{Reply: batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "")}, func() {}
}

func newFake(t *testing.T) *fakeState {
	f := &fakeState{t: t}
	lg, err := pbslog.NewLoggerFile(filepath.Join(t.TempDir(), "log"), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	f.log = lg
	f.db = state.DB{Store: f, Jobs: &f.jobs, Attrs: &f.attrs, NextJob: &f.next}
	return f
}

// replies records what a handler answers.
type replies struct{ got []*batchreq.Reply }

func (r *replies) Send(p *batchreq.Reply) { r.got = append(r.got, p) }
func (r *replies) Reject(code int, msg string) {
	r.got = append(r.got, batchreq.ErrorReply(code, "", msg))
}

func manage(t *testing.T, f *fakeState, who handler.Asker, m *batchreq.Manage) *batchreq.Reply {
	t.Helper()
	var w replies
	Manage(f, &w, &who, m)
	if len(w.got) != 1 {
		t.Fatalf("%d replies, want 1", len(w.got))
	}
	if f.locked != 0 {
		t.Fatalf("lock depth %d after the reply", f.locked)
	}
	return w.got[0]
}

var (
	mgr  = handler.Asker{User: "root", Host: "h", Manager: true}
	oper = handler.Asker{User: "op", Host: "h", Operator: true}
	user = handler.Asker{User: "alice", Host: "h"}
)

func TestManageQueue(t *testing.T) {
	f := newFake(t)
	create := &batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "batch",
		Attrs: batchreq.AttrList{{Name: "queue_type", Value: "e"}}}
	if p := manage(t, f, oper, create); p.Code != batchreq.PBSE_PERM {
		t.Errorf("operator creating a queue: code %d, want PBSE_PERM", p.Code)
	}
	if p := manage(t, f, mgr, create); p.Code != 0 {
		t.Fatalf("create queue: code %d", p.Code)
	}
	q := f.queues[0]
	if q.Attrs.Get(attr.QueueType) != "Execution" || q.Order != 0 || f.order != 1 {
		t.Errorf("queue_type %q order %d (next %d), want Execution 0 1", q.Attrs.Get(attr.QueueType), q.Order, f.order)
	}
	if len(f.batches) != 1 || len(f.batches[0]) != 1 || f.batches[0][0].Bucket != store.Queues || f.batches[0][0].Key != "batch" {
		t.Errorf("batches %v, want the queue's save", f.batches)
	}
	if p := manage(t, f, mgr, create); p.Code != batchreq.PBSE_QUEEXIST {
		t.Errorf("second create: code %d, want PBSE_QUEEXIST", p.Code)
	}
	set := &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "batch",
		Attrs: batchreq.AttrList{{Name: "max_running", Value: "x"}}}
	if p := manage(t, f, oper, set); p.Code != batchreq.PBSE_BADATVAL || q.Attrs.Has(attr.QueueMaxRunning) {
		t.Errorf("bad max_running: code %d, set %v; want PBSE_BADATVAL, unset", p.Code, q.Attrs.Has(attr.QueueMaxRunning))
	}
	set.Attrs[0].Value = "4"
	if p := manage(t, f, user, set); p.Code != batchreq.PBSE_PERM {
		t.Errorf("user setting: code %d, want PBSE_PERM", p.Code)
	}
	if p := manage(t, f, oper, set); p.Code != 0 || q.Attrs.Get(attr.QueueMaxRunning) != "4" || len(f.batches) != 2 {
		t.Errorf("set max_running: code %d, value %q, %d batches", p.Code, q.Attrs.Get(attr.QueueMaxRunning), len(f.batches))
	}
	part := &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "batch",
		Attrs: batchreq.AttrList{{Name: "partition", Value: "forbidden"}}}
	if p := manage(t, f, mgr, part); p.Code != batchreq.PBSE_BADATVAL || q.Attrs.Get(attr.QueuePartition) != "" {
		t.Errorf("partition refused by the partitions: code %d, partition %q", p.Code, q.Attrs.Get(attr.QueuePartition))
	}
	del := &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "batch"}
	if p := manage(t, f, mgr, del); p.Code != 0 || len(f.queues) != 0 {
		t.Fatalf("delete queue: code %d, %d queues left", p.Code, len(f.queues))
	}
	if last := f.batches[len(f.batches)-1]; len(last) != 1 || !last[0].Delete || last[0].Key != "batch" {
		t.Errorf("delete batch %v, want the queue's delete", last)
	}
	if f.managed != 3 {
		t.Errorf("scheduler link told of %d requests, want 3 (the successful ones)", f.managed)
	}
}

func TestManageServerACL(t *testing.T) {
	f := newFake(t)
	set := func(name, value string) *batchreq.Reply {
		return manage(t, f, mgr, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SERVER,
			Attrs: batchreq.AttrList{{Name: name, Value: value}}})
	}
	if p := set("managers", "root@bad host"); p.Code != batchreq.PBSE_BADACLHOST {
		t.Errorf("managers with a bad host: code %d, want PBSE_BADACLHOST", p.Code)
	}
	if p := set("managers", "root@h,root@h"); p.Code != batchreq.PBSE_DUPLIST {
		t.Errorf("managers twice: code %d, want PBSE_DUPLIST", p.Code)
	}
	if p := set("default_queue", "nope"); p.Code != batchreq.PBSE_UNKQUE {
		t.Errorf("default_queue of no queue: code %d, want PBSE_UNKQUE", p.Code)
	}
	if p := set("next_job_number", "77"); p.Code != 0 || f.next != 77 || f.attrs.Get(attr.SrvNextJobNumber) != "" {
		t.Errorf("next_job_number: code %d, next %d, attribute %q; want 0, 77 and not kept", p.Code, f.next, f.attrs.Get(attr.SrvNextJobNumber))
	}
	if last := f.batches[len(f.batches)-1]; len(last) != 1 || last[0].Bucket != store.Server {
		t.Errorf("batch %v, want the server's save", last)
	}
}

func TestManageNode(t *testing.T) {
	f := newFake(t)
	create := &batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n1",
		Attrs: batchreq.AttrList{{Name: "np", Value: "4"}}}
	if p := manage(t, f, mgr, create); p.Code != 0 || len(f.nodes) != 1 || f.nodes[0].NP != 4 || f.files != 1 {
		t.Fatalf("create node: code %d, %d nodes, %d nodes-file writes", p.Code, len(f.nodes), f.files)
	}
	set := &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n1",
		Attrs: batchreq.AttrList{{Name: "state", Value: "offline"}}}
	if p := manage(t, f, oper, set); p.Code != 0 || f.nodes[0].State&state.NodeStateOffline == 0 || f.files != 1 {
		t.Errorf("offline: code %d, state %v, %d nodes-file writes (the file does not show states)", p.Code, f.nodes[0].State, f.files)
	}
	set.Attrs[0].Value = "free,offline"
	if p := manage(t, f, oper, set); p.Code != batchreq.PBSE_MUTUALEX {
		t.Errorf("free,offline: code %d, want PBSE_MUTUALEX", p.Code)
	}
	if p := manage(t, f, mgr, &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n2"}); p.Code != batchreq.PBSE_UNKNODE {
		t.Errorf("delete unknown node: code %d, want PBSE_UNKNODE", p.Code)
	}
}

// TestDeleteLinkedQueue: a queue that a node names in its queue attribute
// cannot be deleted (PBSE_QUEBUSY, with the nodes in the text) until the
// node lets go of it.
func TestDeleteLinkedQueue(t *testing.T) {
	f := newFake(t)
	for _, m := range []*batchreq.Manage{
		{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "q1",
			Attrs: batchreq.AttrList{{Name: "queue_type", Value: "e"}}},
		{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n1"},
		{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n2"},
		{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n1",
			Attrs: batchreq.AttrList{{Name: "queue", Value: "q1"}}},
		{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n2",
			Attrs: batchreq.AttrList{{Name: "queue", Value: "q1"}}},
	} {
		if p := manage(t, f, mgr, m); p.Code != 0 {
			t.Fatalf("%+v: code %d", m, p.Code)
		}
	}
	del := &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "q1"}
	want := "Cannot delete busy queue: queue q1 is linked to node(s) n1,n2 (unset their queue attribute first)"
	if p := manage(t, f, mgr, del); p.Code != batchreq.PBSE_QUEBUSY || p.Text != want || len(f.queues) != 1 {
		t.Errorf("delete of a linked queue: code %d text %q, %d queues; want PBSE_QUEBUSY %q and the queue kept", p.Code, p.Text, len(f.queues), want)
	}
	for _, n := range []string{"n1", "n2"} {
		// nodes know no unset (TORQUE): an empty queue links none
		if p := manage(t, f, mgr, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_NODE, ObjName: n,
			Attrs: batchreq.AttrList{{Name: "queue", Value: ""}}}); p.Code != 0 {
			t.Fatalf("clear %s queue: code %d", n, p.Code)
		}
		p := manage(t, f, mgr, del)
		if n == "n1" && (p.Code != batchreq.PBSE_QUEBUSY || p.Text != QueueLinkedText("q1", []string{"n2"})) {
			t.Errorf("delete while n2 is linked: code %d text %q", p.Code, p.Text)
		}
		if n == "n2" && (p.Code != 0 || len(f.queues) != 0) {
			t.Errorf("delete of an unlinked queue: code %d, %d queues", p.Code, len(f.queues))
		}
	}
}
