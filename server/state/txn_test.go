package state

import (
	"errors"
	"testing"

	"gopbs/attr"
	"gopbs/server/store"
)

// fakeStore records the batches submitted to it.
type fakeStore struct {
	batches [][]store.Op
	logged  []bool
	err     error
}

func (f *fakeStore) Submit(ops ...store.Op) func() error {
	f.batches, f.logged = append(f.batches, ops), append(f.logged, false)
	return func() error { return f.err }
}

func (f *fakeStore) SubmitLogged(ops ...store.Op) func() error {
	f.batches, f.logged = append(f.batches, ops), append(f.logged, true)
	return func() error { return f.err }
}

func newTestDB() (*DB, *fakeStore) {
	fs := &fakeStore{}
	var attrs Attrs
	next := int64(7)
	return &DB{Store: fs, Jobs: &Jobs{}, Attrs: &attrs, NextJob: &next}, fs
}

func keys(ops []store.Op) []string {
	var out []string
	for _, op := range ops {
		k := op.Bucket + "/" + op.Key
		if op.Delete {
			k = "-" + k
		}
		out = append(out, k)
	}
	return out
}

func TestTxnSavesEachJobOnceAsCommitted(t *testing.T) {
	db, fs := newTestDB()
	q := &Queue{Name: "batch"}
	a := &Job{ID: "1.srv", State: attr.StateQueued, Substate: attr.SubQueued}
	b := &Job{ID: "2.srv", State: attr.StateQueued, Substate: attr.SubQueued}
	tx := db.Begin()
	tx.Add(a, q)
	tx.Add(b, q)
	tx.SetState(a, attr.StateHeld, attr.SubHeld) // a noted again: still one save
	tx.SaveServer()
	if err := tx.Commit()(); err != nil {
		t.Fatal(err)
	}
	if len(fs.batches) != 1 || fs.logged[0] {
		t.Fatalf("batches %d logged %v, want one Submit", len(fs.batches), fs.logged)
	}
	got := keys(fs.batches[0])
	want := []string{store.Jobs + "/1.srv", store.Jobs + "/2.srv", store.Server + "/attributes"}
	if len(got) != len(want) {
		t.Fatalf("batch %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("batch %v, want %v", got, want)
		}
	}
	// the save encodes the job as it is at commit: held
	sj, err := DecodeJob("1.srv", fs.batches[0][0].Value)
	if err != nil {
		t.Fatal(err)
	}
	if sj.Job.State != attr.StateHeld {
		t.Errorf("saved state %v, want held", sj.Job.State)
	}
	if c := db.Jobs.Count(); c[attr.StateHeld] != 1 || c[attr.StateQueued] != 1 || q.Count[attr.StateHeld] != 1 {
		t.Errorf("counts %v / queue %v, want one held and one queued", c, q.Count)
	}
	if !tx.Empty() {
		t.Error("transaction not empty after Commit")
	}
}

func TestTxnRemoveDropsPendingSave(t *testing.T) {
	db, fs := newTestDB()
	q := &Queue{Name: "batch"}
	j := &Job{ID: "3.srv", State: attr.StateQueued, Substate: attr.SubQueued}
	db.Jobs.Link(j)
	db.Jobs.Enqueue(j, q)
	tx := db.Begin()
	tx.SaveJob(j)
	tx.Remove(j)
	fs.err = errors.New("disk full")
	if err := tx.CommitLogged()(); err == nil {
		t.Error("Commit hid the store's error")
	}
	got := keys(fs.batches[0])
	if len(got) != 2 || got[0] != "-"+store.Jobs+"/3.srv" || got[1] != "-"+store.Script+"/3.srv" || !fs.logged[0] {
		t.Errorf("batch %v logged %v, want the job's and script's deletes, logged", got, fs.logged)
	}
	if db.Jobs.Len() != 0 || q.Count[attr.StateQueued] != 0 {
		t.Errorf("job still in the table (%d) or counted (%v)", db.Jobs.Len(), q.Count)
	}
}

func TestTxnEmpty(t *testing.T) {
	db, _ := newTestDB()
	tx := db.Begin()
	if !tx.Empty() {
		t.Error("new transaction not empty")
	}
	j := &Job{ID: "4.srv"}
	tx.SaveJob(j)
	tx.DeleteJob(j)
	if tx.Empty() {
		t.Error("transaction deleting a job is empty")
	}
	if ops := tx.Ops(); len(ops) != 2 {
		t.Errorf("ops %v, want the two deletes", keys(ops))
	}
}

func TestTxnManyJobsSavedOnce(t *testing.T) {
	db, _ := newTestDB()
	q := &Queue{Name: "batch"}
	var jobs []*Job
	for i := 0; i < 3*smallTxn; i++ {
		j := &Job{ID: string(rune('a'+i)) + ".srv", State: attr.StateQueued}
		jobs = append(jobs, j)
		db.Jobs.Link(j)
		db.Jobs.Enqueue(j, q)
	}
	tx := db.Begin()
	for round := 0; round < 2; round++ {
		for _, j := range jobs {
			tx.SaveJob(j)
		}
	}
	tx.DeleteJob(jobs[0])
	tx.DeleteJob(jobs[len(jobs)-1])
	ops := tx.Ops()
	saves, dels := 0, 0
	for _, op := range ops {
		if op.Delete {
			dels++
		} else {
			saves++
		}
	}
	if saves != len(jobs)-2 || dels != 4 {
		t.Errorf("%d saves and %d deletes, want %d and 4", saves, dels, len(jobs)-2)
	}
}
