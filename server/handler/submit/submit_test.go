package submit

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

// fakeState is a server "srv" with an execution queue batch (the
// default queue), over a state.DB whose store records the batches.
type fakeState struct {
	t        *testing.T
	db       state.DB
	batches  [][]store.Op
	log      *pbslog.Logger
	acct     *pbslog.Accounting
	attrs    state.Attrs
	next     int64
	rank     int64
	jobs     state.Jobs
	queue    *state.Queue
	locked   int
	notified int
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
func (f *fakeState) Lock()                    { f.locked++ }
func (f *fakeState) Unlock()                  { f.locked-- }
func (f *fakeState) Begin() *state.Txn        { f.under(); return f.db.Begin() }
func (f *fakeState) Log() *pbslog.Logger      { return f.log }
func (f *fakeState) Acct() *pbslog.Accounting { return f.acct }
func (f *fakeState) FlushLogs()               { f.log.Flush(); f.acct.Flush() }
func (f *fakeState) Now() time.Time           { return time.Unix(1700000000, 0) }
func (f *fakeState) Name() string             { return "srv" }
func (f *fakeState) Attrs() state.Attrs       { f.under(); return f.attrs }
func (f *fakeState) TakeJobNumber(incoming bool) int64 {
	f.under()
	n := f.next
	if !incoming {
		f.next++
	}
	return n
}
func (f *fakeState) NextRank() int64   { f.under(); f.rank++; return f.rank }
func (f *fakeState) Jobs() *state.Jobs { f.under(); return &f.jobs }
func (f *fakeState) AdvresQueue(attrs batchreq.AttrList) string {
	if v, ok := attrs.Get("x"); ok && v == "ADVRES:R1" {
		return "batch"
	}
	return ""
}
func (f *fakeState) Queue(name string) *state.Queue {
	f.under()
	if name == f.queue.Name {
		return f.queue
	}
	return nil
}
func (f *fakeState) ValidDepend(v string) bool   { return v == "" }
func (f *fakeState) SetDepend(j *state.Job) bool { return j.Attrs.Get(pbsattr.JobDepend) == "" }
func (f *fakeState) RegisterDeps(tx *state.Txn, j *state.Job) (bool, bool) {
	return false, false
}
func (f *fakeState) CountHop(j *state.Job) *batchreq.Reply      { return nil }
func (f *fakeState) CheckUserList(j *state.Job) *batchreq.Reply { return nil }
func (f *fakeState) ExecUser(j *state.Job) string               { return j.OwnerUser() }
func (f *fakeState) PrimaryGroup(user string) string            { return "users" }
func (f *fakeState) ApplyDefaults(j *state.Job, q *state.Queue) {}
func (f *fakeState) Admit(j *state.Job, q *state.Queue, host string) *batchreq.Reply {
	return nil
}
func (f *fakeState) Evaluate(tx *state.Txn, j *state.Job) {
	tx.SetState(j, pbsattr.StateQueued, pbsattr.SubQueued)
}
func (f *fakeState) Route(tx *state.Txn, j *state.Job) {}
func (f *fakeState) SchedNotify(cmd int)               { f.notified++ }

// session is a connection's pending job.
type session struct{ j *state.Job }

func (s *session) Pending() *state.Job     { return s.j }
func (s *session) SetPending(j *state.Job) { s.j = j }

type replies struct{ got []*batchreq.Reply }

func (r *replies) Send(p *batchreq.Reply) { r.got = append(r.got, p) }
func (r *replies) Reject(code int, msg string) {
	r.got = append(r.got, batchreq.ErrorReply(code, "", msg))
}

func newFake(t *testing.T) *fakeState {
	f := &fakeState{t: t, next: 7}
	dir := t.TempDir()
	lg, err := pbslog.NewLoggerFile(filepath.Join(dir, "log"), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	acct, err := pbslog.NewAccountingFile(filepath.Join(dir, "acct"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close(); acct.Close() })
	f.log, f.acct = lg, acct
	f.db = state.DB{Store: f, Jobs: &f.jobs, Attrs: &f.attrs, NextJob: &f.next}
	f.queue = &state.Queue{Name: "batch"}
	f.queue.Attrs.Set(pbsattr.QueueType, "Execution")
	f.attrs.Set(pbsattr.SrvDefaultQueue, "batch")
	return f
}

func one(t *testing.T, f *fakeState, w *replies) *batchreq.Reply {
	t.Helper()
	if f.locked != 0 {
		t.Fatalf("lock depth %d after the reply", f.locked)
	}
	if len(w.got) != 1 {
		t.Fatalf("%d replies, want 1", len(w.got))
	}
	p := w.got[0]
	w.got = nil
	return p
}

func TestSubmission(t *testing.T) {
	f := newFake(t)
	alice := &handler.Asker{User: "alice", Host: "client"}
	bob := &handler.Asker{User: "bob", Host: "client"}
	var sess session
	var w replies
	QueueJob(f, &sess, &w, alice, &batchreq.QueueJob{Attrs: batchreq.AttrList{{Name: "Job_Name", Value: "hello"}}})
	if p := one(t, f, &w); p.Code != 0 || p.JobID != "7.srv" {
		t.Fatalf("QueueJob: code %d id %q, want 7.srv", p.Code, p.JobID)
	}
	j := sess.j
	if j == nil || j.Owner() != "alice@client" || j.Attrs.Get(pbsattr.JobEgroup) != "users" || f.next != 8 {
		t.Fatalf("pending job %+v (next number %d)", j, f.next)
	}
	if vl := j.Attrs.Get(pbsattr.JobVariableList); vl != "PBS_O_QUEUE=batch,PBS_O_HOST=client" {
		t.Errorf("Variable_List %q", vl)
	}
	JobScript(f, &sess, &w, bob, &batchreq.JobFile{JobID: "7.srv", Data: []byte("x")})
	if p := one(t, f, &w); p.Code != batchreq.PBSE_PERM {
		t.Errorf("bob's script for alice's job: code %d, want PBSE_PERM", p.Code)
	}
	JobScript(f, &sess, &w, alice, &batchreq.JobFile{JobID: "7.srv", Data: []byte("#!/bin/sh\n")})
	if p := one(t, f, &w); p.Code != 0 {
		t.Fatalf("JobScript: code %d", p.Code)
	}
	Commit(f, &sess, &w, alice, &batchreq.JobID{ID: "7.srv"})
	if p := one(t, f, &w); p.Code != batchreq.PBSE_IVALREQ {
		t.Errorf("Commit before RdytoCommit: code %d, want PBSE_IVALREQ", p.Code)
	}
	RdytoCommit(f, &sess, &w, &batchreq.JobID{ID: "7.srv"})
	if p := one(t, f, &w); p.Code != 0 || f.jobs.Get("7.srv") != j {
		t.Fatalf("RdytoCommit: code %d, listed %v", p.Code, f.jobs.Get("7.srv") != nil)
	}
	if len(f.batches) != 0 {
		t.Fatalf("%d batches before Commit, want none", len(f.batches))
	}
	Commit(f, &sess, &w, alice, &batchreq.JobID{ID: "7.srv"})
	if p := one(t, f, &w); p.Code != 0 || p.JobID != "7.srv" || sess.j != nil || f.notified != 1 {
		t.Fatalf("Commit: code %d id %q, pending %v, %d cycles asked", p.Code, p.JobID, sess.j, f.notified)
	}
	if len(f.batches) != 1 || len(f.batches[0]) != 3 {
		t.Fatalf("batches %v, want one of the job, its script and the server", f.batches)
	}
	if b := f.batches[0]; b[0].Key != "7.srv" || b[1].Bucket != store.Script || string(b[1].Value) != "#!/bin/sh\n" || b[2].Bucket != store.Server {
		t.Errorf("batch %v", b)
	}
	if j.State != pbsattr.StateQueued || j.Rank != 1 || f.jobs.Count()[pbsattr.StateQueued] != 1 {
		t.Errorf("state %v rank %d counts %v", j.State, j.Rank, f.jobs.Count())
	}
}

func TestQueueJobRefusals(t *testing.T) {
	f := newFake(t)
	alice := &handler.Asker{User: "alice", Host: "client"}
	var sess session
	var w replies
	QueueJob(f, &sess, &w, alice, &batchreq.QueueJob{JobID: "3.other"})
	if p := one(t, f, &w); p.Code != batchreq.PBSE_IVALREQ {
		t.Errorf("a job id from a client: code %d, want PBSE_IVALREQ", p.Code)
	}
	QueueJob(f, &sess, &w, alice, &batchreq.QueueJob{Destination: "nope"})
	if p := one(t, f, &w); p.Code != batchreq.PBSE_UNKQUE {
		t.Errorf("unknown queue: code %d, want PBSE_UNKQUE", p.Code)
	}
	QueueJob(f, &sess, &w, alice, &batchreq.QueueJob{Attrs: batchreq.AttrList{{Name: "Priority", Value: "5000"}}})
	if p := one(t, f, &w); p.Code != batchreq.PBSE_BADATVAL {
		t.Errorf("priority 5000: code %d, want PBSE_BADATVAL", p.Code)
	}
	if sess.j != nil {
		t.Errorf("a refused submission left a pending job")
	}
}
