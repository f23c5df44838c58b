package state

import (
	"testing"

	"gopbs/attr"
)

// TestTxnEvaluate checks the state a job's holds, execution time and
// dependencies give it, set through the transaction (the job saved with
// its batch and counted in its new state).
func TestTxnEvaluate(t *testing.T) {
	const now = 1_800_000_000
	exec := &Queue{Name: "batch"}
	exec.Attrs.Set(attr.QueueType, "Execution")
	tests := []struct {
		name       string
		hold       int
		sub        attr.Substate
		execTime   string
		dependHeld bool
		wantState  attr.JobStateNum
		wantSub    attr.Substate
		wantEtime  bool
	}{
		{"no hold", 0, attr.SubQueued, "", false, attr.StateQueued, attr.SubQueued, true},
		{"user hold", HoldUser, attr.SubQueued, "", false, attr.StateHeld, attr.SubHeld, false},
		{"system hold of a dependency", HoldSystem, attr.SubQueued, "", true, attr.StateHeld, attr.SubDepnHold, false},
		{"system hold of qhold", HoldSystem, attr.SubQueued, "", false, attr.StateHeld, attr.SubHeld, false},
		{"sync hold kept", HoldSystem, attr.SubSyncHold, "", true, attr.StateHeld, attr.SubSyncHold, false},
		{"array hold only", HoldArray, attr.SubQueued, "", false, attr.StateQueued, attr.SubQueued, true},
		{"execution time ahead", 0, attr.SubQueued, "1800000060", false, attr.StateWaiting, attr.SubWaiting, false},
		{"execution time past", 0, attr.SubQueued, "1799999940", false, attr.StateQueued, attr.SubQueued, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, fs := newTestDB()
			j := &Job{ID: "1.srv", State: attr.StateQueued, Substate: tt.sub, Hold: tt.hold}
			if tt.execTime != "" {
				j.Attrs.Set(attr.JobExecutionTime, tt.execTime)
			}
			setup := db.Begin()
			setup.Add(j, exec)
			setup.Ops()
			tx := db.Begin()
			asked := false
			tx.Evaluate(j, now, func(*Job) bool { asked = true; return tt.dependHeld })
			if j.State != tt.wantState || j.Substate != tt.wantSub {
				t.Fatalf("state %d/%d, want %d/%d", j.State, j.Substate, tt.wantState, tt.wantSub)
			}
			if asked != (tt.hold&HoldSystem != 0 && tt.sub == attr.SubQueued) {
				t.Errorf("dependHeld asked: %v", asked)
			}
			if got := j.Attrs.Has(attr.JobEtime); got != tt.wantEtime {
				t.Errorf("etime set: %v, want %v", got, tt.wantEtime)
			}
			if c := db.Jobs.Count(); c[tt.wantState] != 1 {
				t.Errorf("counts %v", c)
			}
			if err := tx.Commit()(); err != nil {
				t.Fatal(err)
			}
			if got := keys(fs.batches[0]); len(got) != 1 || got[0] != "jobs/1.srv" {
				t.Errorf("batch %v, want the job's save", got)
			}
		})
	}
}

// TestTxnEvaluateLeavesRunningAndLateHolds checks that a running job is
// not evaluated (nothing to save) and that a hold set late is left out
// once.
func TestTxnEvaluateLeavesRunningAndLateHolds(t *testing.T) {
	db, _ := newTestDB()
	q := &Queue{Name: "batch"}
	r := &Job{ID: "1.srv", State: attr.StateRunning, Substate: attr.SubRunning}
	l := &Job{ID: "2.srv", State: attr.StateQueued, Substate: attr.SubQueued, Hold: HoldUser, LateHold: HoldUser}
	setup := db.Begin()
	setup.Add(r, q)
	setup.Add(l, q)
	setup.Ops()
	tx := db.Begin()
	tx.Evaluate(r, 0, func(*Job) bool { return false })
	if r.State != attr.StateRunning || !tx.Empty() {
		t.Fatalf("running job evaluated: %d, empty %v", r.State, tx.Empty())
	}
	tx.Evaluate(l, 0, func(*Job) bool { return false })
	if l.State != attr.StateQueued || l.LateHold != 0 {
		t.Fatalf("late hold: state %d, LateHold %d", l.State, l.LateHold)
	}
	tx.Evaluate(l, 0, func(*Job) bool { return false })
	if l.State != attr.StateHeld {
		t.Fatalf("hold once late not kept later: state %d", l.State)
	}
}
