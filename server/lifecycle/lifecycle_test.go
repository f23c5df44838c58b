package lifecycle

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/depend"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// fakeHost is the server: defaults and routing are counted.
type fakeHost struct{ defaults, routed int }

func (h *fakeHost) ApplyDefaults(j *state.Job, q *state.Queue)   { h.defaults++ }
func (h *fakeHost) Route(tx *state.Txn, j *state.Job, now int64) { h.routed++ }

// dependHost is the server as the dependency rules see it.
type dependHost struct{}

func (dependHost) MailAbort(*state.Job, string)      {}
func (dependHost) SyncSelf() string                  { return "srv" }
func (dependHost) Destination(string) (string, bool) { return "", false }
func (dependHost) Shutting() bool                    { return false }
func (dependHost) SendRegistDep(string, *batchreq.RegistDep) (*batchreq.Reply, error) {
	return batchreq.NullReply(), nil
}

// nopStore takes batches without keeping them.
type nopStore struct{}

func (nopStore) Submit(...store.Op) func() error       { return func() error { return nil } }
func (nopStore) SubmitLogged(...store.Op) func() error { return func() error { return nil } }

type fixture struct {
	l     *Life
	db    *state.DB
	q     *state.Queue
	host  *fakeHost
	now   time.Time
	attrs state.Attrs
	next  int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	log, err := pbslog.NewLoggerFile(filepath.Join(dir, "log"), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	acct, err := pbslog.NewAccountingFile(filepath.Join(dir, "acct"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close(); acct.Close() })
	f := &fixture{q: &state.Queue{Name: "batch"}, host: &fakeHost{}, now: time.Unix(1_800_000_000, 0)}
	f.q.Attrs.Set(pbsattr.QueueType, "Execution")
	f.db = &state.DB{Store: nopStore{}, Jobs: &state.Jobs{}, Attrs: &f.attrs, NextJob: &f.next}
	clock := func() time.Time { return f.now }
	deps := depend.New(depend.Config{Name: "srv", DB: f.db, Log: log, Now: clock, Host: dependHost{}, Lock: &sync.Mutex{}})
	f.l = New(Config{Name: "srv", DB: f.db, Deps: deps, Log: log, Acct: acct, Now: clock, Host: f.host})
	return f
}

// add queues a job of alice with depend value dep.
func (f *fixture) add(t *testing.T, id, dep string) *state.Job {
	t.Helper()
	j := &state.Job{ID: id, State: pbsattr.StateQueued, Substate: pbsattr.SubQueued}
	j.Attrs.Set(pbsattr.JobOwner, "alice@host")
	deps, ok := depend.Parse(dep, "srv")
	if !ok {
		t.Fatalf("depend %q refused", dep)
	}
	depend.Set(j, deps)
	tx := f.db.Begin()
	tx.Add(j, f.q)
	f.l.deps.Register(tx, j)
	if depend.Holds(j) {
		j.Hold |= state.HoldSystem
	}
	f.l.Evaluate(tx, j)
	tx.Ops()
	return j
}

// batch returns the job keys tx saves and deletes ("-" prefix).
func batch(tx *state.Txn) []string {
	var out []string
	for _, op := range tx.Ops() {
		switch {
		case op.Bucket != store.Jobs:
		case op.Delete:
			out = append(out, "-"+op.Key)
		default:
			out = append(out, op.Key)
		}
	}
	slices.Sort(out)
	return out
}

// TestDeleteDoomsDependents: a deleted job is purged at once (no
// keep_completed), its afterok child deleted with it and remembered as a
// consequence, its afterany child released; the batch deletes both and
// saves the released child.
func TestDeleteDoomsDependents(t *testing.T) {
	f := newFixture(t)
	p := f.add(t, "1.srv", "")
	ok := f.add(t, "2.srv", "afterok:1.srv")
	any := f.add(t, "3.srv", "afterany:1.srv")
	tx := f.db.Begin()
	f.l.Delete(tx, p, "alice@host")
	if f.db.Jobs.Get(p.ID) != nil || f.db.Jobs.Get(ok.ID) != nil {
		t.Fatal("deleted job or its afterok child still listed")
	}
	if any.State != pbsattr.StateQueued {
		t.Fatalf("afterany child %d", any.State)
	}
	if got, want := batch(tx), []string{"-1.srv", "-2.srv", "3.srv"}; !slices.Equal(got, want) {
		t.Fatalf("batch %v, want %v", got, want)
	}
	if !f.l.RemovedAsConsequence("2", "alice", false) || f.l.RemovedAsConsequence("2.srv", "bob", false) ||
		!f.l.RemovedAsConsequence("2.srv@srv", "bob", true) || f.l.RemovedAsConsequence("1.srv", "alice", false) {
		t.Fatal("consequences: the afterok child alone, for its owner or a privileged requester")
	}
}

// TestKeepCompletedAndTick: with keep_completed a completed job is kept
// and watched; the tick purges it once its time has come, and evaluates
// a job whose execution time passed.
func TestKeepCompletedAndTick(t *testing.T) {
	f := newFixture(t)
	f.q.Attrs.Set(pbsattr.QueueKeepCompleted, "60")
	j := f.add(t, "1.srv", "")
	w := &state.Job{ID: "2.srv", State: pbsattr.StateQueued}
	w.Attrs.Set(pbsattr.JobExecutionTime, "1800000010")
	tx := f.db.Begin()
	tx.Add(w, f.q)
	f.l.Evaluate(tx, w)
	f.db.Jobs.Watch(w)
	f.l.Complete(tx, j, true)
	if j.State != pbsattr.StateComplete || j.PurgeAt != 1_800_000_060 || w.State != pbsattr.StateWaiting {
		t.Fatalf("completed %d purge at %d, waiting job %d", j.State, j.PurgeAt, w.State)
	}
	tx.Ops()
	f.now = f.now.Add(30 * time.Second)
	tx = f.db.Begin()
	f.l.Tick(tx, f.now.Unix())
	if w.State != pbsattr.StateQueued || f.db.Jobs.Get(j.ID) == nil {
		t.Fatalf("after 30 s: waiting job %d, completed job gone %v", w.State, f.db.Jobs.Get(j.ID) == nil)
	}
	if got := batch(tx); !slices.Equal(got, []string{"2.srv"}) {
		t.Fatalf("batch after 30 s %v", got)
	}
	f.now = f.now.Add(30 * time.Second)
	tx = f.db.Begin()
	f.l.Tick(tx, f.now.Unix())
	if f.db.Jobs.Get(j.ID) != nil {
		t.Fatal("completed job kept past keep_completed")
	}
	if got := batch(tx); !slices.Equal(got, []string{"-1.srv"}) {
		t.Fatalf("batch after 60 s %v", got)
	}
}

// TestCompleteFreesArraySlot: a sub-job's end releases one sibling held
// by the slot limit; the template goes with its last sub-job.
func TestCompleteFreesArraySlot(t *testing.T) {
	f := newFixture(t)
	tmpl := &state.Job{ID: "1[].srv", State: pbsattr.StateQueued, Array: &state.ArrayInfo{Size: 2}}
	a := &state.Job{ID: "1[0].srv", State: pbsattr.StateQueued, Parent: tmpl}
	b := &state.Job{ID: "1[1].srv", State: pbsattr.StateHeld, Substate: pbsattr.SubHeld, Hold: state.HoldSlotLimit, Parent: tmpl}
	tmpl.Array.Subjobs = []*state.Job{a, b}
	tx := f.db.Begin()
	for _, j := range []*state.Job{tmpl, a, b} {
		tx.Add(j, f.q)
	}
	tx.Ops()
	tx = f.db.Begin()
	f.l.Complete(tx, a, true)
	if b.Hold != 0 || b.State != pbsattr.StateQueued || tmpl.Array.OK != 1 {
		t.Fatalf("sibling hold %d state %d, template ok %d", b.Hold, b.State, tmpl.Array.OK)
	}
	if got, want := batch(tx), []string{"-1[0].srv", "1[1].srv", "1[].srv"}; !slices.Equal(got, want) {
		t.Fatalf("batch %v, want %v", got, want)
	}
	tx = f.db.Begin()
	f.l.Complete(tx, b, false)
	if f.db.Jobs.Get(tmpl.ID) != nil {
		t.Fatal("template outlives its last sub-job")
	}
	if got, want := batch(tx), []string{"-1[1].srv", "-1[].srv"}; !slices.Equal(got, want) {
		t.Fatalf("batch %v, want %v", got, want)
	}
}

// TestMove: a move into an execution queue applies the defaults,
// registers the dependencies (the parent saved in the same batch) and
// holds the job for them.
func TestMove(t *testing.T) {
	f := newFixture(t)
	p := f.add(t, "1.srv", "")
	route := &state.Queue{Name: "in"}
	route.Attrs.Set(pbsattr.QueueType, "Route")
	j := &state.Job{ID: "2.srv", State: pbsattr.StateQueued, Substate: pbsattr.SubQueued}
	j.Attrs.Set(pbsattr.JobOwner, "alice@host")
	j.Attrs.Set(pbsattr.JobDepend, "afterok:1.srv@srv")
	tx := f.db.Begin()
	tx.Add(j, route)
	tx.Ops()
	tx = f.db.Begin()
	f.l.Move(tx, j, route, f.q)
	if j.Queue != f.q || j.State != pbsattr.StateHeld || j.Substate != pbsattr.SubDepnHold || f.host.defaults != 1 {
		t.Fatalf("moved job queue %v state %d/%d, defaults %d", j.Queue.Name, j.State, j.Substate, f.host.defaults)
	}
	if p.Attrs.Get(pbsattr.JobDepend) != "beforeok:2.srv@srv" {
		t.Fatalf("parent depend %q", p.Attrs.Get(pbsattr.JobDepend))
	}
	if got, want := batch(tx), []string{"1.srv", "2.srv"}; !slices.Equal(got, want) {
		t.Fatalf("batch %v, want %v", got, want)
	}
}

// TestRequeue: a running job put back forgets where it ran, takes the
// state its dependencies give it and is saved in the caller's
// transaction with its modification time set.
func TestRequeue(t *testing.T) {
	f := newFixture(t)
	parent := f.add(t, "1.srv", "")
	child := f.add(t, "2.srv", "afterok:1.srv")
	tx := f.db.Begin()
	tx.SetState(child, pbsattr.StateRunning, pbsattr.SubRunning) // run by hand, as a manager may
	child.Attrs.Set(pbsattr.JobExecHost, "n1/0")
	child.Attrs.Set(pbsattr.JobSessionID, "42")
	tx.Ops()
	tx = f.db.Begin()
	f.l.Requeue(tx, child)
	if child.State != pbsattr.StateHeld || child.Substate != pbsattr.SubDepnHold {
		t.Errorf("requeued job %d/%d, want held on its dependency", child.State, child.Substate)
	}
	if child.Attrs.Has(pbsattr.JobExecHost) || child.Attrs.Has(pbsattr.JobSessionID) || child.Attrs.Get(pbsattr.JobMtime) != "1800000000" {
		t.Errorf("requeued job's attributes %v", child.Attrs)
	}
	if got := batch(tx); !slices.Equal(got, []string{"2.srv"}) {
		t.Errorf("batch %v", got)
	}
	if parent.State != pbsattr.StateQueued {
		t.Errorf("parent %d", parent.State)
	}
}
