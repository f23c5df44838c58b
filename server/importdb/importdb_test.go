package importdb

import (
	"slices"
	"strconv"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
	"gopbs/server/store"
)

// contents is a database's store batch decoded back, by bucket and key.
type contents struct {
	server  state.Attrs
	next    int64
	queues  []*state.Queue
	nodes   []*state.Node
	jobs    map[string]state.StoredJob
	scripts map[string]string
}

func decode(t *testing.T, d *Database) contents {
	t.Helper()
	c := contents{jobs: map[string]state.StoredJob{}, scripts: map[string]string{}}
	for _, op := range d.Ops() {
		if op.Delete {
			t.Fatalf("a new database deletes %s/%s", op.Bucket, op.Key)
		}
		var err error
		switch op.Bucket {
		case store.Server:
			c.server, c.next, err = state.DecodeServer(op.Value)
		case store.Queues:
			var q *state.Queue
			q, err = state.DecodeQueue(op.Key, op.Value)
			c.queues = append(c.queues, q)
		case store.Nodes:
			var n *state.Node
			n, err = state.DecodeNode(op.Key, op.Value)
			c.nodes = append(c.nodes, n)
		case store.Jobs:
			var r state.StoredJob
			r, err = state.DecodeJob(op.Key, op.Value)
			c.jobs[op.Key] = r
		case store.Script:
			c.scripts[op.Key] = string(op.Value)
		default:
			t.Fatalf("unexpected record %s/%s", op.Bucket, op.Key)
		}
		if err != nil {
			t.Fatalf("%s/%s: %v", op.Bucket, op.Key, err)
		}
	}
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestNewIsCreate: a new database holds the server record of
// pbs_server -t create and nothing else.
func TestNewIsCreate(t *testing.T) {
	c := decode(t, New())
	if !slices.Equal(c.server, state.DefaultServerAttrs()) || c.next != 0 {
		t.Errorf("server %v, next %d; want %v, 0", c.server, c.next, state.DefaultServerAttrs())
	}
	if c.server.Get(pbsattr.SrvScheduling) != "False" || c.server.Get(pbsattr.SrvLogEvents) != "511" {
		t.Errorf("defaults %v", c.server)
	}
	if len(c.queues)+len(c.nodes)+len(c.jobs)+len(c.scripts) != 0 {
		t.Errorf("a new database holds objects: %+v", c)
	}
}

// TestCreationOrder: queues and nodes share one creation order, in the
// order they are added; a node named twice is added once, and refused
// objects take no number.
func TestCreationOrder(t *testing.T) {
	d := New()
	exec := []state.RecordAttr{{Name: "queue_type", Value: "Execution"}}
	must(t, d.AddQueue("batch", exec))
	must(t, d.AddNodes("n1 np=4", false, false, nil))
	if err := d.AddQueue("batch", exec); err == nil {
		t.Error("a queue was added twice")
	}
	if err := d.AddQueue("a_name_too_long_", exec); err == nil {
		t.Error("a queue with a bad name was added")
	}
	must(t, d.AddQueue("r", []state.RecordAttr{{Name: "queue_type", Value: "Route"}}))
	must(t, d.AddNodes("n[0-2] big", false, true, nil)) // n1 is known: n0 and n2 are new
	if err := d.AddNodes("n1", false, false, nil); err == nil {
		t.Error("a line of known nodes added nothing and was accepted")
	}
	if err := d.AddNodes("# a comment", false, false, nil); err == nil {
		t.Error("a line without a node was accepted")
	}
	c := decode(t, d)
	var got []string
	for _, q := range c.queues {
		got = append(got, q.Name+":"+strconv.FormatInt(q.Order, 10))
	}
	for _, n := range c.nodes {
		got = append(got, n.Name+":"+strconv.FormatInt(n.Order, 10))
	}
	if want := []string{"batch:0", "r:2", "n1:1", "n0:3", "n2:4"}; !slices.Equal(got, want) {
		t.Errorf("creation order %v, want %v", got, want)
	}
	if lines := d.NodeLines(); !slices.Equal(lines, []string{"n1 np=4", "n0 big", "n2 big"}) {
		t.Errorf("node lines %q", lines)
	}
	for _, n := range c.nodes[1:] {
		if n.State&state.NodeStateReserve == 0 || n.State&state.NodeStateOffline != 0 {
			t.Errorf("node %s state %#x: want RESERVE only", n.Name, n.State)
		}
	}
}

// TestRequeue: a requeued running job forgets where it ran and takes the
// state its holds give it; one with a checkpoint keeps its session for
// the restart.
func TestRequeue(t *testing.T) {
	d := New()
	must(t, d.AddQueue("batch", []state.RecordAttr{{Name: "queue_type", Value: "Execution"}}))
	running := func(id string, hold int64, extra ...state.RecordAttr) {
		t.Helper()
		attrs := append([]state.RecordAttr{{Name: "Job_Owner", Value: "alice@vm"}, {Name: "exec_host", Value: "n1/0"},
			{Name: "exec_gpus", Value: "n1-gpu/0"}, {Name: "session_id", Value: "99"}}, extra...)
		must(t, d.AddJob(&state.JobRecord{ID: id, Seq: int64(d.JobCount()), State: int64(pbsattr.StateRunning), Substate: int64(pbsattr.SubRunning),
			Queue: "batch", ArrayIndex: -1, Hold: hold, Attrs: attrs}, []byte("#!/bin/sh\n")))
	}
	running("1.vm", 0)
	running("2.vm", state.HoldUser)
	running("3.vm", 0, state.RecordAttr{Name: "checkpoint_name", Value: "ckpt.1"})
	must(t, d.AddJob(&state.JobRecord{ID: "4.vm", Seq: 4, State: int64(pbsattr.StateQueued), Substate: int64(pbsattr.SubQueued), Queue: "batch", ArrayIndex: -1}, nil))
	for _, id := range []string{"1.vm", "2.vm", "3.vm"} {
		must(t, d.Requeue(id))
	}
	if err := d.Requeue("4.vm"); err == nil {
		t.Error("a queued job was requeued")
	}
	if err := d.Requeue("5.vm"); err == nil {
		t.Error("a job not in the database was requeued")
	}
	if d.JobCount() != 4 {
		t.Errorf("%d jobs", d.JobCount())
	}
	c := decode(t, d)
	want := map[string]struct {
		st      pbsattr.JobStateNum
		sub     pbsattr.Substate
		session bool
	}{"1.vm": {pbsattr.StateQueued, pbsattr.SubQueued, false}, "2.vm": {pbsattr.StateHeld, pbsattr.SubHeld, false}, "3.vm": {pbsattr.StateQueued, pbsattr.SubQueued, true}}
	for id, w := range want {
		j := c.jobs[id].Job
		if j == nil {
			t.Fatalf("job %s not written", id)
		}
		if j.State != w.st || j.Substate != w.sub || j.Attrs.Has(pbsattr.JobExecHost) || j.Attrs.Has(pbsattr.JobExecGpus) || j.Attrs.Has(pbsattr.JobSessionID) != w.session {
			t.Errorf("job %s: state %d/%d, attributes %v", id, j.State, j.Substate, j.Attrs)
		}
		if c.scripts[id] != "#!/bin/sh\n" {
			t.Errorf("job %s: script %q", id, c.scripts[id])
		}
	}
	if len(c.scripts) != 3 {
		t.Errorf("scripts %v", c.scripts)
	}
}

// TestServerAttributes: the server's attributes go over the defaults,
// computed ones are left out and unknown ones dropped; values are stored
// canonical, and a bad one is refused.
func TestServerAttributes(t *testing.T) {
	d := New()
	if err := d.SetServer(-1, nil); err == nil {
		t.Error("a negative next job number was accepted")
	}
	if err := d.SetServer(1, []state.RecordAttr{{Name: "scheduler_iteration", Value: "often"}}); err == nil {
		t.Error("a bad value was accepted")
	}
	must(t, d.SetServer(7, []state.RecordAttr{{Name: "scheduling", Value: "true"}, {Name: "server_state", Value: "Active"},
		{Name: "acl_hosts", Value: "a\nb\n"}, {Name: "no_such", Value: "x"}}))
	c := decode(t, d)
	if c.next != 7 {
		t.Errorf("next job number %d", c.next)
	}
	if c.server.Get(pbsattr.SrvScheduling) != "True" || c.server.Has(pbsattr.SrvState) || c.server.Get(pbsattr.SrvACLHosts) != "a,b" ||
		c.server.Get(pbsattr.SrvMailFrom) != "adm" {
		t.Errorf("server attributes %v", c.server)
	}
	if !slices.Equal(d.Dropped, []string{"server: no_such"}) {
		t.Errorf("dropped %v", d.Dropped)
	}
}
