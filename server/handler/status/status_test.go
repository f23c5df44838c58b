package status

import (
	"bytes"
	"testing"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// fakeState is a server named "srv" with the jobs, queues and nodes put
// into it; it checks that the state is read under the read lock.
type fakeState struct {
	t       *testing.T
	attrs   state.Attrs
	jobs    state.Jobs
	queues  []*state.Queue
	nodes   []*state.Node
	locked  int
	waiting bool // ServerState: a cycle in progress
}

func (f *fakeState) RLock()   { f.locked++ }
func (f *fakeState) RUnlock() { f.locked-- }
func (f *fakeState) under() {
	f.t.Helper()
	if f.locked != 1 {
		f.t.Fatalf("state read with lock depth %d", f.locked)
	}
}
func (f *fakeState) Name() string       { return "srv" }
func (f *fakeState) Attrs() state.Attrs { f.under(); return f.attrs }
func (f *fakeState) NextJob() int64     { f.under(); return 42 }
func (f *fakeState) NetCounter() string { return "0 0 0" }
func (f *fakeState) Jobs() *state.Jobs  { f.under(); return &f.jobs }
func (f *fakeState) FindJob(id string) *state.Job {
	f.under()
	return f.jobs.Get(id)
}
func (f *fakeState) Queues() []*state.Queue { f.under(); return f.queues }
func (f *fakeState) Queue(name string) *state.Queue {
	f.under()
	for _, q := range f.queues {
		if q.Name == name {
			return q
		}
	}
	return nil
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
func (f *fakeState) ServerState() string {
	if f.waiting {
		return "Scheduling"
	}
	return "Active"
}
func (f *fakeState) WithRemaining(view state.Attrs, j *state.Job) state.Attrs {
	f.under()
	if j.State != attr.StateRunning {
		return view
	}
	return append(view, state.AttrValue{Index: state.UnknownJobAttr, Resource: "Walltime\x1fRemaining", Value: "60"})
}

// replies records what a handler answers.
type replies struct {
	got []*batchreq.Reply
	raw [][]byte
}

func (r *replies) Send(p *batchreq.Reply) { r.got = append(r.got, p) }
func (r *replies) SendRaw(b []byte)       { r.raw = append(r.raw, b) }
func (r *replies) Reject(code int, msg string) {
	r.got = append(r.got, batchreq.ErrorReply(code, "", msg))
}
func (r *replies) RejectAttr(code int, a *batchreq.Attr) {
	r.got = append(r.got, batchreq.BadAttrReply(code, a))
}

func newFake(t *testing.T) *fakeState {
	f := &fakeState{t: t}
	f.attrs.Set(attr.SrvScheduling, "True")
	exec := &state.Queue{Name: "batch"}
	exec.Attrs.Set(attr.QueueType, "Execution")
	f.queues = []*state.Queue{exec}
	for i, owner := range []string{"alice@h", "bob@h", "alice@h"} {
		j := &state.Job{ID: string(rune('1'+i)) + ".srv", State: attr.StateQueued, Substate: attr.SubQueued, Rank: int64(i + 1)}
		j.Attrs.Set(attr.JobOwner, owner)
		j.Attrs.Set(attr.JobName, "job"+string(rune('1'+i)))
		if i == 2 {
			j.State, j.Substate = attr.StateRunning, attr.SubRunning
		}
		f.jobs.Link(j)
		f.jobs.Enqueue(j, exec)
	}
	n := &state.Node{Name: "n1", NP: 2}
	n.Attrs.Set(attr.NodeProperties, "fast")
	f.nodes = []*state.Node{n}
	return f
}

func decode(t *testing.T, raw []byte) *batchreq.Reply {
	t.Helper()
	p, err := batchreq.ReadReply(dis.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("decoding the raw reply: %v", err)
	}
	return p
}

func TestStatusJobSeesOnlyOwnJobs(t *testing.T) {
	f := newFake(t)
	alice := &handler.Asker{User: "alice", Host: "h"}
	var w replies
	Job(f, &w, alice, &batchreq.Request{Body: &batchreq.StatusReq{}})
	if f.locked != 0 || len(w.raw) != 1 {
		t.Fatalf("lock depth %d, %d raw replies; want 0 and 1", f.locked, len(w.raw))
	}
	p := decode(t, w.raw[0])
	if len(p.Status) != 2 || p.Status[0].Name != "1.srv" || p.Status[1].Name != "3.srv" {
		t.Fatalf("alice sees %v, want 1.srv and 3.srv", p.Status)
	}
	remaining := false
	for _, a := range p.Status[1].Attrs {
		remaining = remaining || a.Name == "Walltime" && a.Resource == "Remaining" && a.Value == "60"
	}
	if !remaining {
		t.Errorf("running job's full status has no Walltime.Remaining: %v", p.Status[1].Attrs)
	}
	if v, _ := p.Status[0].Attrs.Get("job_state"); v != "Q" {
		t.Errorf("job_state %q, want Q", v)
	}
	// query_other_jobs lets everyone see every job
	f.attrs.Set(attr.SrvQueryOtherJobs, "True")
	w = replies{}
	Job(f, &w, alice, &batchreq.Request{Body: &batchreq.StatusReq{}})
	if p := decode(t, w.raw[0]); len(p.Status) != 3 {
		t.Errorf("with query_other_jobs alice sees %d jobs, want 3", len(p.Status))
	}
}

func TestStatusJobWantedAndUnknown(t *testing.T) {
	f := newFake(t)
	mgr := &handler.Asker{User: "root", Host: "h", Manager: true}
	var w replies
	Job(f, &w, mgr, &batchreq.Request{Body: &batchreq.StatusReq{ID: "2.srv", Attrs: batchreq.AttrList{{Name: "Job_Name"}}}})
	if len(w.got) != 1 || len(w.got[0].Status) != 1 {
		t.Fatalf("replies %v, want one status of one job", w.got)
	}
	if a := w.got[0].Status[0].Attrs; len(a) != 1 || a[0].Name != "Job_Name" || a[0].Value != "job2" {
		t.Errorf("attributes %v, want Job_Name = job2 alone", a)
	}
	w = replies{}
	Job(f, &w, mgr, &batchreq.Request{Body: &batchreq.StatusReq{ID: "9.srv"}})
	if w.got[0].Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("unknown job: code %d, want PBSE_UNKJOBID", w.got[0].Code)
	}
	w = replies{}
	Job(f, &w, mgr, &batchreq.Request{Body: &batchreq.StatusReq{Attrs: batchreq.AttrList{{Name: "no_such"}}}})
	if w.got[0].Code != batchreq.PBSE_NOATTR {
		t.Errorf("unknown attribute: code %d, want PBSE_NOATTR", w.got[0].Code)
	}
}

func TestStatusServerQueueNode(t *testing.T) {
	f := newFake(t)
	who := &handler.Asker{User: "alice", Host: "h"}
	var w replies
	f.waiting = true
	Server(f, &w, who, &batchreq.StatusReq{})
	a := w.got[0].Status[0].Attrs
	if v, _ := a.Get("server_state"); v != "Scheduling" {
		t.Errorf("server_state %q, want Scheduling", v)
	}
	if v, _ := a.Get("total_jobs"); v != "3" {
		t.Errorf("total_jobs %q, want 3", v)
	}
	if v, _ := a.Get("next_job_number"); v != "42" {
		t.Errorf("next_job_number %q, want 42", v)
	}
	w = replies{}
	Queue(f, &w, who, &batchreq.StatusReq{ID: "batch@srv"})
	if v, _ := w.got[0].Status[0].Attrs.Get("state_count"); v != state.StateCount([7]int{attr.StateQueued: 2, attr.StateRunning: 1}) {
		t.Errorf("queue state_count %q", v)
	}
	w = replies{}
	Queue(f, &w, who, &batchreq.StatusReq{ID: "nope"})
	if w.got[0].Code != batchreq.PBSE_UNKQUE {
		t.Errorf("unknown queue: code %d, want PBSE_UNKQUE", w.got[0].Code)
	}
	w = replies{}
	Node(f, &w, who, &batchreq.StatusReq{ID: ":fast"})
	if len(w.got[0].Status) != 1 || w.got[0].Status[0].Name != "n1" {
		t.Errorf("nodes with property fast: %v, want n1", w.got[0].Status)
	}
	w = replies{}
	Node(f, &w, who, &batchreq.StatusReq{ID: "n2"})
	if w.got[0].Code != batchreq.PBSE_UNKNODE {
		t.Errorf("unknown node: code %d, want PBSE_UNKNODE", w.got[0].Code)
	}
	if f.locked != 0 {
		t.Errorf("lock depth %d after the replies", f.locked)
	}
}

func TestSelect(t *testing.T) {
	f := newFake(t)
	mgr := &handler.Asker{User: "root", Host: "h", Manager: true}
	var w replies
	Select(f, &w, mgr, &batchreq.Request{Header: batchreq.Header{Type: batchreq.PBS_BATCH_SelectJobs}, Body: &batchreq.Select{
		Attrs: batchreq.AttrList{{Name: "job_state", Value: "R", Op: batchreq.NE}}}})
	if ids := w.got[0].JobIDs; len(ids) != 2 || ids[0] != "1.srv" || ids[1] != "2.srv" {
		t.Errorf("jobs not running: %v, want 1.srv 2.srv", ids)
	}
	w = replies{}
	Select(f, &w, mgr, &batchreq.Request{Header: batchreq.Header{Type: batchreq.PBS_BATCH_SelStat}, Body: &batchreq.Select{
		Attrs: batchreq.AttrList{{Name: "Job_Owner", Value: "bob@h", Op: batchreq.EQ}}}})
	if p := decode(t, w.raw[0]); len(p.Status) != 1 || p.Status[0].Name != "2.srv" {
		t.Errorf("SelStat of bob's jobs: %v, want 2.srv", p.Status)
	}
	w = replies{}
	Select(f, &w, mgr, &batchreq.Request{Header: batchreq.Header{Type: batchreq.PBS_BATCH_SelectJobs}, Body: &batchreq.Select{
		Attrs: batchreq.AttrList{{Name: "no_such", Value: "x", Op: batchreq.EQ}}}})
	if w.got[0].Code != batchreq.PBSE_NOATTR {
		t.Errorf("unknown attribute: code %d, want PBSE_NOATTR", w.got[0].Code)
	}
}

// slice sees the partition "p1" only.
type slice struct{}

func (slice) Sees(p string) bool { return p == "p1" }

func TestStatusSlice(t *testing.T) {
	f := newFake(t)
	other := &state.Queue{Name: "other"}
	other.Attrs.Set(attr.QueueType, "Execution")
	other.Attrs.Set(attr.QueuePartition, "p1")
	f.queues = append(f.queues, other)
	j := &state.Job{ID: "4.srv", State: attr.StateQueued, Substate: attr.SubQueued}
	j.Attrs.Set(attr.JobOwner, "carol@h")
	f.jobs.Link(j)
	f.jobs.Enqueue(j, other)
	sched := &handler.Asker{User: "root", Host: "h", Manager: true, Privileged: true, Slice: slice{}}
	var w replies
	Queue(f, &w, sched, &batchreq.StatusReq{})
	if objs := w.got[0].Status; len(objs) != 1 || objs[0].Name != "other" {
		t.Errorf("a scheduler of p1 sees queues %v, want other alone", objs)
	}
	w = replies{}
	Job(f, &w, sched, &batchreq.Request{Body: &batchreq.StatusReq{}})
	if p := decode(t, w.raw[0]); len(p.Status) != 1 || p.Status[0].Name != "4.srv" {
		t.Errorf("a scheduler of p1 sees jobs %v, want 4.srv alone", p.Status)
	}
	w = replies{}
	Node(f, &w, sched, &batchreq.StatusReq{})
	if objs := w.got[0].Status; len(objs) != 0 {
		t.Errorf("a scheduler of p1 sees nodes %v, want none", objs)
	}
}
