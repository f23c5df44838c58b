package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"gopbs/resv"
	"gopbs/sched/config"
	"gopbs/sched/world"
)

// advanceWorld: nodes n1, n2, n3 of one VP each, all free, the FIFO
// scheduler without max_reservation; reservation R1 holds n1 and n2 from
// now+20s for 10 minutes in state st. Queued in batch: 1.vm for an hour,
// 2.vm for an hour, 3.vm for 15 s; in R1: 4.vm.
func advanceWorld(t *testing.T, st resv.State, at time.Time) (*world.World, *Scheduler) {
	t.Helper()
	cfg, errs, err := config.Parse(strings.NewReader(""), "sched_config")
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	w := &world.World{Now: at, Server: world.FromServer("vm", nil)}
	attrs := []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}}
	batch, r1 := world.FromQueue("batch", attrs), world.FromQueue("R1", attrs)
	w.Queues = []*world.Queue{batch, r1}
	for _, n := range []string{"n1", "n2", "n3"} {
		w.Nodes = append(w.Nodes, &world.Node{Name: n, NP: 1, State: world.NodeFree})
	}
	add := func(q *world.Queue, id string, wall time.Duration) {
		j := world.FromJob(id, q, []world.Attr{{Name: "job_state", Value: "Q"}})
		j.User, j.Group, j.Nodes, j.Walltime = "alice", "users", "1", wall
		q.Jobs = append(q.Jobs, j)
	}
	add(batch, "1.vm", time.Hour)
	add(batch, "2.vm", time.Hour)
	add(batch, "3.vm", 15*time.Second)
	add(r1, "4.vm", time.Hour)
	start := now.Add(2 * time.Minute)
	w.Reservations = []*resv.Reservation{{ID: "R1", Owner: "alice", Start: start, End: start.Add(10 * time.Minute),
		NodeCount: 2, Assigned: []string{"n1", "n2"}, Status: resv.Status{State: st}}}
	s := New(cfg, &memLog{})
	s.Location = time.UTC
	return w, s
}

// TestAdvanceBeforeStart: before R1 begins, the first long job gets the
// free node n3, the second waits with the reservation's comment, the
// short one (15 s and the default duration_offset of 60 s) backfills on n1, and R1's job does not run.
func TestAdvanceBeforeStart(t *testing.T) {
	w, s := advanceWorld(t, resv.Confirmed, now)
	sim := NewSimulator(w)
	s.Cycle(w, sim)
	if got := calls(sim, "run"); !slices.Equal(got, []string{"run 1.vm n3", "run 3.vm n1"}) {
		t.Errorf("runs %q (calls %q)", got, sim.Calls)
	}
	want := "comment 2.vm " + CommentAdvancePrefix + "R1 from Sun Nov 22 01:26 to Sun Nov 22 01:36"
	if !slices.Contains(sim.Calls, want) {
		t.Errorf("no reservation comment %q: %q", want, sim.Calls)
	}
}

// TestAdvanceRunning: once R1 runs its job starts on its first node and
// the jobs outside it only on n3.
func TestAdvanceRunning(t *testing.T) {
	w, s := advanceWorld(t, resv.Running, now.Add(150*time.Second))
	sim := NewSimulator(w)
	s.Cycle(w, sim)
	if got := calls(sim, "run"); !slices.Equal(got, []string{"run 4.vm n1", "run 1.vm n3"}) {
		t.Errorf("runs %q", got)
	}
	// with its nodes taken the reservation's next job waits
	w, s = advanceWorld(t, resv.Running, now.Add(150*time.Second))
	for _, n := range w.Nodes[:2] {
		n.State, n.UsedSlots = world.NodeJobExclusive, 1
	}
	busy := world.FromJob("9.vm", w.Queues[1], []world.Attr{{Name: "job_state", Value: "R"}})
	busy.ExecHost = "n1/0+n2/0"
	w.Queues[1].Jobs = append(w.Queues[1].Jobs, busy)
	sim = NewSimulator(w)
	s.Cycle(w, sim)
	if got := calls(sim, "run"); slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "run 4.vm") }) {
		t.Errorf("4.vm started on busy reservation nodes: %q", got)
	}
	if !slices.Contains(sim.Calls, "comment 4.vm "+CommentAdvanceFull) {
		t.Errorf("no busy comment: %q", sim.Calls)
	}
}

// TestAdvanceRunLimits: the server's and the reservation queue's run
// limits hold for a reservation's jobs: with alice at the server's
// max_user_run, or R1 at its max_running, 4.vm waits with the limit's
// comment even though its reservation runs and its nodes are free.
func TestAdvanceRunLimits(t *testing.T) {
	running := func(w *world.World) {
		j := world.FromJob("8.vm", w.Queues[0], []world.Attr{{Name: "job_state", Value: "R"}})
		j.User, j.Group, j.ExecHost = "alice", "users", "n3/0"
		w.Nodes[2].State, w.Nodes[2].UsedSlots = world.NodeJobExclusive, 1
		w.Queues[0].Jobs = append(w.Queues[0].Jobs, j)
	}
	for _, tc := range []struct {
		name    string
		limit   func(w *world.World)
		comment string
	}{
		{"server max_user_run", func(w *world.World) { running(w); w.Server.MaxUserRun = 1 }, CommentServerUserLimit},
		{"server max_running", func(w *world.World) { running(w); w.Server.MaxRunning = 1 }, CommentServerJobLimit},
		{"queue max_running", func(w *world.World) {
			w.Queues[1].MaxRunning = 1
			j := world.FromJob("9.vm", w.Queues[1], []world.Attr{{Name: "job_state", Value: "R"}})
			j.User, j.Group, j.ExecHost = "alice", "users", "n2/0"
			w.Nodes[1].State, w.Nodes[1].UsedSlots = world.NodeJobExclusive, 1
			w.Queues[1].Jobs = append(w.Queues[1].Jobs, j)
		}, CommentQueueJobLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, s := advanceWorld(t, resv.Running, now.Add(150*time.Second))
			tc.limit(w)
			sim := NewSimulator(w)
			s.Cycle(w, sim)
			if got := calls(sim, "run"); slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "run 4.vm") }) {
				t.Errorf("4.vm started past the limit: %q", got)
			}
			if !slices.Contains(sim.Calls, "comment 4.vm "+tc.comment) {
				t.Errorf("no limit comment %q: %q", tc.comment, sim.Calls)
			}
		})
	}
}
