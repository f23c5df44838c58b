// Tests of the candidates' order (order.go): sort keys, strict FIFO, fair
// share, the starving job and prime-time switches.

package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/timeplan"
	"gopbs/sched/world"
)

func TestOrdering(t *testing.T) {
	tests := []struct {
		name   string
		config string
		build  func(b *builder)
		want   []string
	}{
		{
			name:   "fifo: server order, global list",
			config: "",
			build: func(b *builder) {
				q := b.queue("batch", 0)
				b.job(q, "1", cput(50))
				b.job(q, "2", cput(10))
				b.job(q, "3", cput(30))
			},
			want: []string{"1", "2"},
		},
		{
			name:   "shortest_job_first",
			config: "sort_by: shortest_job_first",
			build: func(b *builder) {
				q := b.queue("batch", 0)
				b.job(q, "1", cput(50))
				b.job(q, "2", cput(10))
				b.job(q, "3", cput(30))
			},
			want: []string{"2", "3"},
		},
		{
			name:   "high_priority_first across queues (global)",
			config: "sort_by: high_priority_first\nby_queue: false",
			build: func(b *builder) {
				q1, q2 := b.queue("a", 0), b.queue("b", 0)
				b.job(q1, "1", prio(1))
				b.job(q2, "2", prio(9))
				b.job(q1, "3", prio(5))
			},
			want: []string{"2", "3"},
		},
		{
			name:   "by_queue with sort_queues: queue priority first",
			config: "by_queue: true\nsort_queues: true\nsort_by: high_priority_first",
			build: func(b *builder) {
				lo, hi := b.queue("lo", 1), b.queue("hi", 10)
				b.job(lo, "1", prio(100))
				b.job(hi, "2", prio(1))
				b.job(hi, "3", prio(2))
			},
			want: []string{"3", "2"},
		},
		{
			name:   "round_robin alternates queues",
			config: "round_robin: true",
			build: func(b *builder) {
				q1, q2 := b.queue("a", 0), b.queue("b", 0)
				b.job(q1, "a1")
				b.job(q1, "a2")
				b.job(q2, "b1")
				b.job(q2, "b2")
			},
			want: []string{"a1", "b1"},
		},
		{
			name:   "multi_sort: priority then shortest",
			config: "sort_by: multi_sort\nkey: high_priority_first\nkey: shortest_job_first",
			build: func(b *builder) {
				q := b.queue("batch", 0)
				b.job(q, "1", prio(1), cput(1))
				b.job(q, "2", prio(5), cput(100))
				b.job(q, "3", prio(5), cput(10))
			},
			want: []string{"3", "2"},
		},
		{
			name:   "largest_memory_first",
			config: "sort_by: largest_memory_first",
			build: func(b *builder) {
				q := b.queue("batch", 0)
				b.job(q, "1", mem(1<<20))
				b.job(q, "2", mem(1<<30))
				b.job(q, "3", mem(1<<25))
			},
			want: []string{"2", "3"},
		},
		{
			name:   "short_walltime_first and running jobs occupy slots",
			config: "sort_by: short_walltime_first",
			build: func(b *builder) {
				q := b.queue("batch", 0)
				b.w.Nodes[0].UsedSlots = 1
				b.job(q, "1", wall(300))
				b.job(q, "2", wall(60))
				b.job(q, "3", wall(120))
			},
			want: []string{"2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newWorld(2, 1)
			tt.build(b)
			s := New(parseConfig(t, tt.config), nil)
			sim, _ := runCycle(t, s, b)
			if got := started(sim); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("started %v, want %v\ncalls: %q", got, tt.want, sim.Calls)
			}
		})
	}
}

func TestStrictFIFO(t *testing.T) {
	b := newWorld(2, 1)
	q1, q2 := b.queue("a", 0), b.queue("b", 0)
	b.job(q1, "1", nodes("2"))
	b.job(q1, "2")
	b.job(q2, "3")
	b.w.Nodes[1].UsedSlots = 1 // only one node free
	s := New(parseConfig(t, "strict_fifo: true\nby_queue: true"), nil)
	sim, _ := runCycle(t, s, b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"3"}) {
		t.Errorf("started %v, calls %q", got, sim.Calls)
	}
	if c := q1.Jobs[1].Comment; c != CommentStrictFIFO {
		t.Errorf("job 2 comment %q", c)
	}
	if c := q1.Jobs[0].Comment; c != CommentNodes {
		t.Errorf("job 1 comment %q", c)
	}
	// Without strict_fifo job 2 runs.
	b2 := newWorld(2, 1)
	q := b2.queue("a", 0)
	b2.job(q, "1", nodes("2"))
	b2.job(q, "2")
	b2.w.Nodes[1].UsedSlots = 1
	sim, _ = runCycle(t, New(&config.Config{}, nil), b2)
	if got := started(sim); !reflect.DeepEqual(got, []string{"2"}) {
		t.Errorf("non-strict started %v", got)
	}
}

func TestFairShare(t *testing.T) {
	tree, err := fairshare.Parse(strings.NewReader("grpA 1 root 50\ngrpB 2 root 50\nann 10 grpA 1\nbob 11 grpB 1\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	tree.AddUsage("ann", 1000) // ann has used a lot
	b := newWorld(4, 1)
	q := b.queue("batch", 0)
	b.job(q, "1", user("ann"), cput(100))
	b.job(q, "2", user("ann"), cput(100))
	b.job(q, "3", user("bob"), cput(600))
	b.job(q, "4", user("bob"), cput(600))
	b.job(q, "5", user("ann"), cput(100))
	s := New(parseConfig(t, "fair_share: true"), nil)
	s.FairShare = tree
	sim, _ := runCycle(t, s, b)
	// bob (no usage) first; after two bob jobs (1200 s charged) ann (1000)
	// is more deserving.
	want := []string{"3", "4", "1", "2"}
	if got := started(sim); !reflect.DeepEqual(got, want) {
		t.Errorf("started %v, want %v", got, want)
	}
	// The requested cput of started jobs is now usage (and persists).
	if got := tree.Node("bob").Usage; got != 1200 {
		t.Errorf("bob usage %v, want 1200", got)
	}
	if got := tree.Node("ann").Usage; got != 1200 {
		t.Errorf("ann usage %v, want 1000+200", got)
	}
}

func TestStarvingJob(t *testing.T) {
	b := newWorld(2, 1)
	q := b.queue("batch", 0)
	b.job(q, "1")
	b.job(q, "2", nodes("2"), queued(48*time.Hour)) // starving, needs both nodes
	b.job(q, "3")
	b.w.Nodes[0].UsedSlots = 1
	s := New(parseConfig(t, "help_starving_jobs: true\nmax_starve: 24:00:00"), nil)
	sim, st := runCycle(t, s, b)
	if st.Starving != "2" || len(started(sim)) != 0 {
		t.Fatalf("starving %q started %v", st.Starving, started(sim))
	}
	if c := q.Jobs[0].Comment; c != CommentDraining {
		t.Errorf("job 1 comment %q", c)
	}
	if c := q.Jobs[1].Comment; c != CommentNodes {
		t.Errorf("starving job comment %q", c)
	}
	// Once the nodes are free the starving job runs first, then others.
	b.w.Nodes[0].UsedSlots = 0
	b.w.Nodes = append(b.w.Nodes, &world.Node{Name: "nz", NP: 1, State: world.NodeFree})
	sim, _ = runCycle(t, s, b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"2", "1"}) {
		t.Errorf("started %v", got)
	}
	// Not starving yet with help off.
	b3 := newWorld(1, 1)
	q3 := b3.queue("batch", 0)
	b3.job(q3, "1", queued(72*time.Hour))
	_, st = runCycle(t, New(&config.Config{MaxStarve: time.Hour}, nil), b3)
	if st.Starving != "" {
		t.Error("help_starving_jobs off but a job starved")
	}
}

func TestPrimeTimeSwitch(t *testing.T) {
	h, err := timeplan.ParseHolidays(strings.NewReader("YEAR 2026\nweekday 0800 1700\nsaturday none all\nsunday none all\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := parseConfig(t, "sort_by: high_priority_first prime\nsort_by: low_priority_first non_prime")
	mk := func(at time.Time) []string {
		b := newWorld(1, 1)
		b.w.Now = at
		q := b.queue("batch", 0)
		b.job(q, "lo", prio(1))
		b.job(q, "hi", prio(9))
		s := New(cfg, nil)
		s.Holidays = h
		sim, _ := runCycle(t, s, b)
		return started(sim)
	}
	// 2026-11-23 is a Monday.
	if got := mk(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)); !reflect.DeepEqual(got, []string{"hi"}) {
		t.Errorf("prime: %v", got)
	}
	if got := mk(time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)); !reflect.DeepEqual(got, []string{"lo"}) {
		t.Errorf("non-prime: %v", got)
	}
}
