package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/world"
)

// planWorld: nodes n1, n2 of 2 VPs; 1.vm runs on both VPs of n1 until
// now+1h (walltime 2 h, started an hour ago); queued: 2.vm wants both
// nodes whole (reserve=y), 3.vm one VP for 4 h, 4.vm one VP for 30 min.
func planWorld(t *testing.T, cfgText string) (*world.World, *Scheduler, *memLog) {
	t.Helper()
	cfg, errs, err := config.Parse(strings.NewReader(cfgText), "sched_config")
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	w := &world.World{Now: now, Server: world.FromServer("vm", nil)}
	q := world.FromQueue("batch", []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}})
	w.Queues = []*world.Queue{q}
	w.Nodes = []*world.Node{
		{Name: "n1", NP: 2, UsedSlots: 2, State: world.NodeJobExclusive, JobExclusive: true},
		{Name: "n2", NP: 2, State: world.NodeFree},
	}
	add := func(id string, state byte, nodes string, wall time.Duration, reserve bool) *world.Job {
		j := world.FromJob(id, q, []world.Attr{{Name: "job_state", Value: string(state)}})
		j.User, j.Group, j.Nodes, j.Walltime, j.Reserve = "alice", "users", nodes, wall, reserve
		q.Jobs = append(q.Jobs, j)
		return j
	}
	r := add("1.vm", 'R', "1:ppn=2", 2*time.Hour, false)
	r.ExecHost, r.StartTime = "n1/0+n1/1", now.Add(-time.Hour)
	add("2.vm", 'Q', "2:ppn=2", time.Hour, true)
	add("3.vm", 'Q', "1", 4*time.Hour, false)
	add("4.vm", 'Q', "1", 30*time.Minute, false)
	l := &memLog{}
	s := New(cfg, l)
	s.Location = time.UTC
	return w, s, l
}

func calls(sim *Simulator, prefix string) []string {
	var out []string
	for _, c := range sim.Calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// TestReservationAndBackfill: 2.vm gets a reservation at the end of 1.vm
// (plus duration_offset) on n1 and n2; 3.vm, which would still run then,
// is held back with the reservation comment; 4.vm backfills on n2, named
// in RunJob. The MONITOR file shows the interval.
func TestReservationAndBackfill(t *testing.T) {
	w, s, l := planWorld(t, "max_reservation: 5\nduration_offset: 120\nparams: MONITOR\n")
	s.MonitorPath = filepath.Join(t.TempDir(), "schedule")
	sim := NewSimulator(w)
	st := s.Cycle(w, sim)
	start := now.Add(time.Hour + 2*time.Minute)
	if st.Reservations != 1 || st.Started != 1 {
		t.Errorf("stats %+v", st)
	}
	want := []string{"plan 2.vm " + itoa(start.Unix()) + " n1:ppn=2+n2:ppn=2"}
	if got := calls(sim, "plan"); !slices.Equal(got, want) {
		t.Errorf("plans %q, want %q", got, want)
	}
	if got := calls(sim, "run"); !slices.Equal(got, []string{"run 4.vm n2"}) {
		t.Errorf("runs %q", got)
	}
	if !slices.Contains(sim.Calls, "comment 3.vm "+CommentReservedPrefix+"2.vm until Sun Nov 22 02:26") {
		t.Errorf("no reservation comment for 3.vm: %q", sim.Calls)
	}
	if !slices.Contains(l.lines, "Job;3.vm;Resources reserved for 2.vm") {
		t.Errorf("log %q", l.lines)
	}
	b, err := os.ReadFile(s.MonitorPath)
	if err != nil {
		t.Fatal(err)
	}
	n := itoa(now.Unix())
	wantFile := "::::::::\n" +
		"1.vm:1:RUNNING:" + itoa(now.Add(-time.Hour).Unix()) + ":7320:H:n1:slots:2.000000\n" +
		"4.vm:1:STARTING:" + n + ":1920:H:n2:slots:1.000000\n" +
		"2.vm:1:RESERVING:" + itoa(start.Unix()) + ":3720:H:n1:slots:2.000000\n" +
		"2.vm:1:RESERVING:" + itoa(start.Unix()) + ":3720:H:n2:slots:2.000000\n"
	if string(b) != wantFile {
		t.Errorf("schedule:\n%s\nwant\n%s", b, wantFile)
	}

	// Next cycle, two hours later: 1.vm still runs (it overran), 4.vm has
	// ended. 2.vm's plan moves later, and the log says why.
	w.Now = now.Add(2 * time.Hour)
	q := w.Queues[0]
	q.Jobs = slices.DeleteFunc(q.Jobs, func(j *world.Job) bool { return j.ID == "4.vm" })
	w.Nodes[1].UsedSlots, w.Nodes[1].State = 0, world.NodeFree
	sim = NewSimulator(w)
	l.lines = nil
	s.Cycle(w, sim)
	later := w.Now.Add(2 * time.Minute)
	if got := calls(sim, "plan"); !slices.Equal(got, []string{"plan 2.vm " + itoa(later.Unix()) + " n1:ppn=2+n2:ppn=2"}) {
		t.Errorf("second cycle plans %q", got)
	}
	if !slices.Contains(l.lines, "Job;2.vm;Reservation delayed from Sun Nov 22 02:26 to Sun Nov 22 03:26: job 1.vm overran its walltime on n1") {
		t.Errorf("log %q", l.lines)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestReservationWithPolicyKeys: the look-ahead works inside the
// existing policy: strict_fifo still stops the queue behind a job that
// cannot run (no backfill past it), and a starving job gets a
// reservation instead of draining the cluster.
func TestReservationWithPolicyKeys(t *testing.T) {
	w, s, _ := planWorld(t, "max_reservation: 5\nstrict_fifo: true\n")
	sim := NewSimulator(w)
	s.Cycle(w, sim)
	if got := calls(sim, "run"); len(got) != 0 {
		t.Errorf("strict_fifo: runs %q", got)
	}
	if got := calls(sim, "plan"); len(got) != 1 {
		t.Errorf("strict_fifo: plans %q", got)
	}

	w, s, _ = planWorld(t, "max_reservation: 5\nhelp_starving_jobs: true\nmax_starve: 1:00:00\n")
	for _, j := range w.Queues[0].Jobs {
		j.QTime = now.Add(-2 * time.Hour)
		j.Reserve = false
	}
	sim = NewSimulator(w)
	st := s.Cycle(w, sim)
	if st.Starving != "2.vm" || st.Reservations != 1 || st.Blocked["starving job"] != 0 {
		t.Errorf("starving: %+v", st)
	}
	if got := calls(sim, "run"); !slices.Equal(got, []string{"run 4.vm n2"}) {
		t.Errorf("starving: runs %q (backfill instead of a drain)", got)
	}
}

// TestReservationFollowsJobOrder: reservations go to jobs in the policy's
// order — here sort_by high_priority_first with max_reservation 1 — and
// prime-time forms of the key apply.
func TestReservationFollowsJobOrder(t *testing.T) {
	for _, tc := range []struct {
		cfg, want string
	}{
		{"max_reservation: 1\n", "2.vm"},
		{"max_reservation: 1\nsort_by: high_priority_first\n", "5.vm"},
		{"max_reservation: 1 non_prime\nsort_by: high_priority_first\n", ""}, // always prime time: no reservations
	} {
		w, s, _ := planWorld(t, tc.cfg)
		q := w.Queues[0]
		j := world.FromJob("5.vm", q, []world.Attr{{Name: "job_state", Value: "Q"}})
		j.User, j.Nodes, j.Walltime, j.Reserve, j.Priority = "bob", "2:ppn=2", time.Hour, true, 100
		q.Jobs = append(q.Jobs, j)
		sim := NewSimulator(w)
		s.Cycle(w, sim)
		var got []string
		for _, c := range calls(sim, "plan") {
			got = append(got, strings.Fields(c)[1])
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: reservations for %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// FuzzPlanValues: the plan attributes and exec_host read from the server
// never crash the scheduler, and a plan it wrote reads back the same.
func FuzzPlanValues(f *testing.F) {
	f.Add("n1:ppn=2+n2:ppn=2", "n1/0+n1/1+n2/0")
	f.Add("n1+n1:ppn=-3+:ppn=x", "/+//+n1/")
	f.Fuzz(func(t *testing.T, hosts, exec string) {
		slots := parseHosts(hosts)
		if again := parseHosts(formatHosts(slots)); !slices.Equal(again, slots) && len(slots) > 0 && !strings.ContainsAny(hosts, ":+") {
			t.Fatalf("%q: %v, then %v", hosts, slots, again)
		}
		for _, s := range execSlots(exec) {
			if s.Slots <= 0 || s.Node == "" {
				t.Fatalf("%q: %+v", exec, s)
			}
		}
	})
}
