package jobctl

import (
	"path/filepath"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// fakeState is a server "srv" with one execution queue and the jobs put
// into it, over a state.DB whose store records the batches. It checks
// that the state is used under the lock.
type fakeState struct {
	t        *testing.T
	db       state.DB
	batches  [][]store.Op
	logged   []bool
	log      *pbslog.Logger
	attrs    state.Attrs
	next     int64
	jobs     state.Jobs
	queues   []*state.Queue
	locked   int
	deleted  []string // jobs Delete was asked for
	relayed  []string // what went to the MOM link
	notified int
}

func (f *fakeState) Submit(ops ...store.Op) func() error {
	f.batches, f.logged = append(f.batches, ops), append(f.logged, false)
	return func() error { return nil }
}
func (f *fakeState) SubmitLogged(ops ...store.Op) func() error {
	f.batches, f.logged = append(f.batches, ops), append(f.logged, true)
	return func() error { return nil }
}
func (f *fakeState) under() {
	f.t.Helper()
	if f.locked != 1 {
		f.t.Fatalf("state used with lock depth %d", f.locked)
	}
}
func (f *fakeState) Lock()               { f.locked++ }
func (f *fakeState) Unlock()             { f.locked-- }
func (f *fakeState) Begin() *state.Txn   { f.under(); return f.db.Begin() }
func (f *fakeState) Log() *pbslog.Logger { return f.log }
func (f *fakeState) Now() time.Time      { return time.Unix(1700000000, 0) }
func (f *fakeState) Attrs() state.Attrs  { f.under(); return f.attrs }
func (f *fakeState) FindJob(id string) *state.Job {
	f.under()
	return f.jobs.Get(id)
}
func (f *fakeState) Targets(id, ext string) ([]*state.Job, *state.Job) {
	f.under()
	if j := f.jobs.Get(id); j != nil {
		return []*state.Job{j}, j
	}
	return nil, nil
}
func (f *fakeState) Queue(name string) *state.Queue {
	f.under()
	for _, q := range f.queues {
		if q.Name == name {
			return q
		}
	}
	return nil
}
func (f *fakeState) RemovedAsConsequence(who *handler.Asker, id string) bool { f.under(); return false }
func (f *fakeState) NoteConsequence(j *state.Job)                            {}
func (f *fakeState) Delete(tx *state.Txn, j *state.Job, requester string) {
	f.under()
	f.deleted = append(f.deleted, j.ID)
	tx.Remove(j)
}
func (f *fakeState) Purge(tx *state.Txn, j *state.Job) { f.under(); tx.Remove(j) }
func (f *fakeState) Move(tx *state.Txn, j *state.Job, from, to *state.Queue) {
	f.under()
	tx.Dequeue(j)
	tx.Enqueue(j, to)
}
func (f *fakeState) Evaluate(tx *state.Txn, j *state.Job) {
	if j.Hold != 0 {
		tx.SetState(j, pbsattr.StateHeld, pbsattr.SubHeld)
	} else {
		tx.SetState(j, pbsattr.StateQueued, pbsattr.SubQueued)
	}
}
func (f *fakeState) Touch(j *state.Job) {}
func (f *fakeState) Admit(j *state.Job, q *state.Queue, host string, mgrMove bool) *batchreq.Reply {
	return nil
}
func (f *fakeState) RefreshNodeJobs()         {}
func (f *fakeState) Running() handler.Running { return (*fakeRunning)(f) }
func (f *fakeState) SchedNotify(cmd int)      { f.notified++ }
func (f *fakeState) MoveRemote(w handler.ReplyWriter, who *handler.Asker, j *state.Job, d string) (string, bool) {
	return d, false
}
func (f *fakeState) NormalizeDepend(v string) (string, bool)       { return v, true }
func (f *fakeState) Feasible(spec string) bool                     { return spec != "99" }
func (f *fakeState) InfeasibleText() string                        { return "cannot locate feasible nodes" }
func (f *fakeState) RegisterDeps(tx *state.Txn, j *state.Job) bool { return false }

// fakeRunning is the MOM link: it commits and answers as the real one
// does when no MOM needs to hear.
type fakeRunning fakeState

func (r *fakeRunning) finish(what string, w handler.ReplyWriter, jobs []*state.Job, ops []store.Op) {
	f := (*fakeState)(r)
	f.under()
	for _, j := range jobs {
		f.relayed = append(f.relayed, what+" "+j.ID)
	}
	f.Submit(ops...)
	f.Unlock()
	w.Send(batchreq.NullReply())
}
func (r *fakeRunning) DeleteRunning(w handler.ReplyWriter, who handler.Asker, jobs []*state.Job, ops []store.Op, ext string) {
	r.finish("delete", w, jobs, ops)
}
func (r *fakeRunning) HoldRunning(w handler.ReplyWriter, jobs []*state.Job, attrs batchreq.AttrList, bits int, ops []store.Op) {
	r.finish("hold", w, jobs, ops)
}
func (r *fakeRunning) CommitModify(w handler.ReplyWriter, jobs []*state.Job, attrs batchreq.AttrList, ops []store.Op) {
	r.finish("modify", w, jobs, ops)
}

// newFake returns a server holding 1.srv (alice, queued), 2.srv (bob,
// queued) and 3.srv (alice, running) in queue batch.
func newFake(t *testing.T) *fakeState {
	f := &fakeState{t: t}
	lg, err := pbslog.NewLoggerFile(filepath.Join(t.TempDir(), "log"), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	f.log = lg
	f.db = state.DB{Store: f, Jobs: &f.jobs, Attrs: &f.attrs, NextJob: &f.next}
	q := &state.Queue{Name: "batch"}
	q.Attrs.Set(pbsattr.QueueType, "Execution")
	f.queues = []*state.Queue{q}
	for i, owner := range []string{"alice@h", "bob@h", "alice@h"} {
		j := &state.Job{ID: string(rune('1'+i)) + ".srv", State: pbsattr.StateQueued, Substate: pbsattr.SubQueued, Rank: int64(i + 1)}
		j.Attrs.Set(pbsattr.JobOwner, owner)
		if i == 2 {
			j.State, j.Substate = pbsattr.StateRunning, pbsattr.SubRunning
		}
		f.jobs.Link(j)
		f.jobs.Enqueue(j, q)
	}
	return f
}

// replies records what a handler answers.
type replies struct{ got []*batchreq.Reply }

func (r *replies) Send(p *batchreq.Reply) { r.got = append(r.got, p) }
func (r *replies) Reject(code int, msg string) {
	r.got = append(r.got, batchreq.ErrorReply(code, "", msg))
}

var (
	alice = &handler.Asker{User: "alice", Host: "h"}
	oper  = &handler.Asker{User: "op", Host: "h", Operator: true}
)

func serve(t *testing.T, f *fakeState, h func(State, handler.ReplyWriter, *handler.Asker, *batchreq.Request), who *handler.Asker, typ int, body batchreq.Body) *batchreq.Reply {
	t.Helper()
	var w replies
	h(f, &w, who, &batchreq.Request{Header: batchreq.Header{Type: typ}, Body: body})
	if f.locked != 0 {
		t.Fatalf("lock depth %d after the reply", f.locked)
	}
	if len(w.got) != 1 {
		t.Fatalf("%d replies, want 1", len(w.got))
	}
	return w.got[0]
}

func TestDelete(t *testing.T) {
	f := newFake(t)
	del := func(who *handler.Asker, id string) *batchreq.Reply {
		return serve(t, f, Delete, who, batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjName: id})
	}
	if p := del(alice, "9.srv"); p.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("unknown job: code %d", p.Code)
	}
	if p := del(alice, "2.srv"); p.Code != batchreq.PBSE_PERM || len(f.deleted) != 0 {
		t.Errorf("bob's job by alice: code %d, deleted %v", p.Code, f.deleted)
	}
	if p := del(alice, "1.srv"); p.Code != 0 || len(f.deleted) != 1 || f.jobs.Get("1.srv") != nil {
		t.Fatalf("alice's queued job: code %d, deleted %v", p.Code, f.deleted)
	}
	if last := f.batches[len(f.batches)-1]; len(last) != 2 || !last[0].Delete {
		t.Errorf("batch %v, want the job's and its script's deletes", last)
	}
	if p := del(alice, "3.srv"); p.Code != 0 || len(f.relayed) != 1 || f.relayed[0] != "delete 3.srv" {
		t.Errorf("running job: code %d, relayed %v; want the MOM link to end it", p.Code, f.relayed)
	}
}

func TestHoldRelease(t *testing.T) {
	f := newFake(t)
	hold := func(who *handler.Asker, typ int, id, letters string) *batchreq.Reply {
		return serve(t, f, HoldRelease, who, typ, &batchreq.Manage{ObjName: id, Attrs: batchreq.AttrList{{Name: "Hold_Types", Value: letters}}})
	}
	if p := hold(alice, batchreq.PBS_BATCH_HoldJob, "1.srv", "x"); p.Code != batchreq.PBSE_BADATVAL {
		t.Errorf("hold x: code %d, want PBSE_BADATVAL", p.Code)
	}
	if p := hold(alice, batchreq.PBS_BATCH_HoldJob, "1.srv", "o"); p.Code != batchreq.PBSE_PERM {
		t.Errorf("user's hold o: code %d, want PBSE_PERM", p.Code)
	}
	j := f.jobs.Get("1.srv")
	if p := hold(oper, batchreq.PBS_BATCH_HoldJob, "1.srv", "o"); p.Code != 0 || j.Hold != state.HoldOther || j.State != pbsattr.StateHeld {
		t.Fatalf("operator's hold o: code %d, hold %d, state %v", p.Code, j.Hold, j.State)
	}
	if got := f.relayed; len(got) != 1 || got[0] != "hold 1.srv" {
		t.Errorf("relayed %v, want the hold through the MOM link", got)
	}
	if p := hold(oper, batchreq.PBS_BATCH_ReleaseJob, "1.srv", "o"); p.Code != 0 || j.Hold != 0 || j.State != pbsattr.StateQueued || f.notified != 1 {
		t.Errorf("release: code %d, hold %d, state %v, %d cycles asked", p.Code, j.Hold, j.State, f.notified)
	}
}

func TestModifyCommentIsLogged(t *testing.T) {
	f := newFake(t)
	mod := func(who *handler.Asker, list batchreq.AttrList) *batchreq.Reply {
		return serve(t, f, Modify, who, batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjName: "1.srv", Attrs: list})
	}
	if p := mod(alice, batchreq.AttrList{{Name: "no_such", Value: "1"}}); p.Code != batchreq.PBSE_NOATTR {
		t.Errorf("unknown attribute: code %d", p.Code)
	}
	if p := mod(oper, batchreq.AttrList{{Name: "comment", Value: "not now"}}); p.Code != 0 || !f.logged[len(f.logged)-1] {
		t.Errorf("comment: code %d, logged batch %v; want a batch acknowledged once logged", p.Code, f.logged)
	}
	if p := mod(alice, batchreq.AttrList{{Name: "Job_Name", Value: "renamed"}}); p.Code != 0 || f.logged[len(f.logged)-1] || f.relayed[0] != "modify 1.srv" {
		t.Errorf("Job_Name: code %d, logged %v, relayed %v", p.Code, f.logged, f.relayed)
	}
	if got := f.jobs.Get("1.srv").Name(); got != "renamed" {
		t.Errorf("Job_Name %q, want renamed", got)
	}
}

func TestOrder(t *testing.T) {
	f := newFake(t)
	if p := serve(t, f, Order, oper, batchreq.PBS_BATCH_OrderJob, &batchreq.MoveJob{JobID: "1.srv", Destination: "3.srv"}); p.Code != batchreq.PBSE_BADSTATE {
		t.Errorf("ordering a running job: code %d, want PBSE_BADSTATE", p.Code)
	}
	if p := serve(t, f, Order, oper, batchreq.PBS_BATCH_OrderJob, &batchreq.MoveJob{JobID: "1.srv", Destination: "2.srv"}); p.Code != 0 {
		t.Fatalf("order: code %d", p.Code)
	}
	if a, b := f.jobs.Get("1.srv"), f.jobs.Get("2.srv"); a.Rank != 2 || b.Rank != 1 {
		t.Errorf("ranks %d %d, want 2 1", a.Rank, b.Rank)
	}
	if last := f.batches[len(f.batches)-1]; len(last) != 2 {
		t.Errorf("batch %v, want both jobs saved", last)
	}
}
