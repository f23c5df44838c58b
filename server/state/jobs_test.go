package state

import (
	"strconv"
	"testing"

	"gopbs/attr"
)

// TestHoldingIndex checks that tab.holding always holds exactly the linked
// jobs in state Running or Exiting, whatever the order of state changes,
// links and unlinks.
func TestHoldingIndex(t *testing.T) {
	tab := &Jobs{}
	q := &Queue{Name: "batch"}
	var jobs []*Job
	for i := range 6 {
		j := &Job{ID: strconv.Itoa(i) + ".srv", State: attr.StateQueued}
		if i == 5 {
			j.State = attr.StateRunning // recovered running: linked in that state
		}
		jobs = append(jobs, j)
		tab.Link(j)
		tab.Enqueue(j, q)
	}
	check := func(step string) {
		t.Helper()
		want := map[*Job]bool{}
		for j := tab.First(); j != nil; j = j.Next() {
			if j.State == attr.StateRunning || j.State == attr.StateExiting {
				want[j] = true
			}
		}
		if len(tab.holding.list) != len(want) || len(tab.holding.pos) != len(want) {
			t.Fatalf("%s: holding %d jobs (%d indexed), want %d", step, len(tab.holding.list), len(tab.holding.pos), len(want))
		}
		for i, j := range tab.holding.list {
			if !want[j] || tab.holding.pos[j] != i {
				t.Fatalf("%s: holding[%d] = %s (pos %d), not a running job of the list", step, i, j.ID, tab.holding.pos[j])
			}
		}
	}
	check("linked")
	tab.SetState(jobs[1], attr.StateRunning, attr.SubRunning)
	tab.SetState(jobs[2], attr.StateRunning, attr.SubRunning)
	tab.SetState(jobs[3], attr.StateRunning, attr.SubRunning)
	check("three started")
	tab.SetState(jobs[1], attr.StateExiting, attr.SubExiting)
	tab.SetState(jobs[2], attr.StateQueued, attr.SubQueued)
	check("one exiting, one requeued")
	tab.Dequeue(jobs[3])
	tab.Unlink(jobs[3])
	check("running job unlinked")
	tab.SetState(jobs[3], attr.StateRunning, attr.SubRunning) // not linked: not tracked
	check("unlinked job changed")
	tab.SetState(jobs[1], attr.StateComplete, attr.SubComplete)
	tab.SetState(jobs[5], attr.StateExiting, attr.SubExiting)
	tab.SetState(jobs[0], attr.StateRunning, attr.SubRunning)
	check("end")
}
