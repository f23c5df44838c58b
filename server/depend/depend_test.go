package depend

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// fakeHost is the server: it records the abort mails.
type fakeHost struct{ mails []string }

func (h *fakeHost) MailAbort(j *state.Job, text string) { h.mails = append(h.mails, j.ID+": "+text) }
func (h *fakeHost) SyncSelf() string                    { return "srv" }
func (h *fakeHost) Destination(string) (string, bool)   { return "", false }
func (h *fakeHost) SendRegistDep(string, *batchreq.RegistDep) (*batchreq.Reply, error) {
	return batchreq.NullReply(), nil
}
func (h *fakeHost) Shutting() bool { return false }

// nopStore takes batches without keeping them.
type nopStore struct{}

func (nopStore) Submit(...store.Op) func() error       { return func() error { return nil } }
func (nopStore) SubmitLogged(...store.Op) func() error { return func() error { return nil } }

// fixture is a Graph over a job table with the execution queue batch.
type fixture struct {
	g     *Graph
	db    *state.DB
	q     *state.Queue
	host  *fakeHost
	attrs state.Attrs
	next  int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	log, err := pbslog.NewLoggerFile(filepath.Join(t.TempDir(), "log"), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f := &fixture{q: &state.Queue{Name: "batch"}, host: &fakeHost{}}
	f.q.Attrs.Set(pbsattr.QueueType, "Execution")
	f.db = &state.DB{Store: nopStore{}, Jobs: &state.Jobs{}, Attrs: &f.attrs, NextJob: &f.next}
	now := time.Unix(1_800_000_000, 0)
	f.g = New(Config{Name: "srv", DB: f.db, Log: log, Now: func() time.Time { return now }, Host: f.host, Lock: &sync.Mutex{}})
	return f
}

// add queues job id of owner with depend value dep (registered, as a
// submission does) and returns it.
func (f *fixture) add(t *testing.T, id, owner, dep string) *state.Job {
	t.Helper()
	j := &state.Job{ID: id, State: pbsattr.StateQueued, Substate: pbsattr.SubQueued}
	j.Attrs.Set(pbsattr.JobOwner, owner+"@host")
	deps, ok := Parse(dep, "srv")
	if !ok {
		t.Fatalf("depend %q refused", dep)
	}
	Set(j, deps)
	tx := f.db.Begin()
	tx.Add(j, f.q)
	f.g.Register(tx, j)
	if Holds(j) {
		j.Hold |= state.HoldSystem
		j.Substate = pbsattr.SubDepnHold
	}
	f.g.Evaluate(tx, j)
	tx.Ops()
	return j
}

// saved returns the ids of the jobs tx saves.
func saved(tx *state.Txn) []string {
	var ids []string
	for _, op := range tx.Ops() {
		if op.Bucket == store.Jobs && !op.Delete {
			ids = append(ids, op.Key)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestRegisterAndParentGone(t *testing.T) {
	f := newFixture(t)
	p := f.add(t, "1.srv", "alice", "")
	ok := f.add(t, "2.srv", "alice", "afterok:1.srv")
	any := f.add(t, "3.srv", "alice", "afterany:1.srv")
	if got := p.Attrs.Get(pbsattr.JobDepend); got != "beforeok:2.srv@srv,beforeany:3.srv@srv" {
		t.Fatalf("parent depend %q", got)
	}
	if ok.State != pbsattr.StateHeld || ok.Substate != pbsattr.SubDepnHold {
		t.Fatalf("afterok child %d/%d", ok.State, ok.Substate)
	}
	tx := f.db.Begin()
	changed, doomed := f.g.ParentGone(tx, p, false)
	if len(changed) != 1 || changed[0] != any || len(doomed) != 1 || doomed[0] != ok {
		t.Fatalf("changed %v doomed %v", changed, doomed)
	}
	if any.State != pbsattr.StateQueued || any.Hold != 0 || any.Attrs.Get(pbsattr.JobDepend) != "" {
		t.Fatalf("afterany child %d hold %d depend %q", any.State, any.Hold, any.Attrs.Get(pbsattr.JobDepend))
	}
	if got := saved(tx); !slices.Equal(got, []string{"3.srv"}) {
		t.Fatalf("saved %v", got)
	}
}

func TestRegisterRefusals(t *testing.T) {
	f := newFixture(t)
	plain := f.add(t, "1.srv", "alice", "")
	// before* against a job without on:N: refused (PBSE_BADDEPEND), the
	// child keeps its state, gets a user hold and its owner a mail
	x := f.add(t, "2.srv", "alice", "beforeok:1.srv")
	if x.Attrs.Get(pbsattr.JobDepend) != "" || x.Hold != state.HoldUser || x.State != pbsattr.StateQueued {
		t.Fatalf("refused before: depend %q hold %d state %d", x.Attrs.Get(pbsattr.JobDepend), x.Hold, x.State)
	}
	if len(f.host.mails) != 1 || f.host.mails[0] != "2.srv: Dependency request for job rejected by 1.srv" {
		t.Fatalf("mails %q", f.host.mails)
	}
	// an unknown parent: a user hold
	u := f.add(t, "3.srv", "alice", "afterok:9.srv")
	if u.Hold&state.HoldUser == 0 || u.Attrs.Get(pbsattr.JobDepend) != "" {
		t.Fatalf("unknown parent: hold %d depend %q", u.Hold, u.Attrs.Get(pbsattr.JobDepend))
	}
	// another owner's on:N job: before* refused with PBSE_PERM
	on := f.add(t, "4.srv", "bob", "on:1")
	b := f.add(t, "5.srv", "alice", "beforeok:4.srv")
	if on.Attrs.Get(pbsattr.JobDepend) != "on:1" || b.Hold&state.HoldUser == 0 {
		t.Fatalf("other owner's on job %q, child hold %d", on.Attrs.Get(pbsattr.JobDepend), b.Hold)
	}
	_ = plain
}

func TestOnCountAndStarted(t *testing.T) {
	f := newFixture(t)
	on := f.add(t, "1.srv", "alice", "on:1")
	if on.State != pbsattr.StateHeld {
		t.Fatalf("on:1 job %d", on.State)
	}
	bef := f.add(t, "2.srv", "alice", "before:1.srv")
	if on.Attrs.Get(pbsattr.JobDepend) != "after:2.srv@srv" {
		t.Fatalf("on job depend %q", on.Attrs.Get(pbsattr.JobDepend))
	}
	tx := f.db.Begin()
	changed := f.g.Started(tx, bef)
	if len(changed) != 1 || changed[0] != on || on.State != pbsattr.StateQueued {
		t.Fatalf("changed %v, on job state %d", changed, on.State)
	}
	if got := saved(tx); !slices.Equal(got, []string{"1.srv", "2.srv"}) {
		t.Fatalf("saved %v", got)
	}
}

func TestArrayEnded(t *testing.T) {
	f := newFixture(t)
	arr := &state.Job{ID: "1[].srv", State: pbsattr.StateQueued, Substate: pbsattr.SubArrayTemplate, Array: &state.ArrayInfo{Size: 3}}
	arr.Attrs.Set(pbsattr.JobOwner, "alice@host")
	tx := f.db.Begin()
	tx.Add(arr, f.q)
	tx.Ops()
	two := f.add(t, "2.srv", "alice", "afterokarray:1[][2].srv")
	all := f.add(t, "3.srv", "alice", "afterokarray:1[].srv")
	if got := arr.Attrs.Get(pbsattr.JobDepend); got != "beforeokarray:2.srv@srv:3.srv@srv" {
		t.Fatalf("array depend %q", got)
	}
	tx = f.db.Begin()
	if doomed := f.g.ArrayEnded(tx, arr, true); len(doomed) != 0 || two.State != pbsattr.StateHeld {
		t.Fatalf("one ended: doomed %v, threshold-2 child %d", doomed, two.State)
	}
	if doomed := f.g.ArrayEnded(tx, arr, true); len(doomed) != 0 || two.State != pbsattr.StateQueued || all.State != pbsattr.StateHeld {
		t.Fatalf("two ended: doomed %v, children %d %d", doomed, two.State, all.State)
	}
	doomed := f.g.ArrayEnded(tx, arr, false)
	if len(doomed) != 1 || doomed[0] != all {
		t.Fatalf("all ended, one not ok: doomed %v", doomed)
	}
	if got := saved(tx); !slices.Equal(got, []string{"1[].srv", "2.srv"}) {
		t.Fatalf("saved %v", got)
	}
}

func TestRegistered(t *testing.T) {
	f := newFixture(t)
	p := f.add(t, "1.srv", "alice", "")
	tx := f.db.Begin()
	reg := &batchreq.RegistDep{Owner: "bob", ParentID: "1.srv", ChildID: "7.other@other", Op: batchreq.JOB_DEPEND_OP_REGISTER}
	reg.DepType = batchreq.JOB_DEPEND_TYPE_BEFOREOK
	if code := f.g.Registered(tx, p, reg); code != batchreq.PBSE_PERM {
		t.Fatalf("before* from another owner: %d", code)
	}
	reg.DepType = batchreq.JOB_DEPEND_TYPE_AFTEROK
	if code := f.g.Registered(tx, p, reg); code != 0 || p.Attrs.Get(pbsattr.JobDepend) != "beforeok:7.other@other" {
		t.Fatalf("register: %d, depend %q", code, p.Attrs.Get(pbsattr.JobDepend))
	}
	reg.Op = batchreq.JOB_DEPEND_OP_UNREG
	if code := f.g.Registered(tx, p, reg); code != 0 || p.Attrs.Get(pbsattr.JobDepend) != "" {
		t.Fatalf("unregister: %d, depend %q", code, p.Attrs.Get(pbsattr.JobDepend))
	}
	if got := saved(tx); !slices.Equal(got, []string{"1.srv"}) {
		t.Fatalf("saved %v", got)
	}
}
