package policy

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/timeplan"
	"gopbs/sched/world"
)

var now = time.Date(2026, 11, 22, 1, 24, 0, 0, time.UTC)

// builder makes synthetic worlds.
type builder struct{ w *world.World }

func newWorld(nodes, np int) *builder {
	w := &world.World{Now: now, Server: world.FromServer("srv", nil)}
	for i := 0; i < nodes; i++ {
		w.Nodes = append(w.Nodes, &world.Node{Name: "n" + string(rune('a'+i)), NP: np, State: world.NodeFree})
	}
	return &builder{w}
}

func (b *builder) queue(name string, prio int) *world.Queue {
	q := world.FromQueue(name, []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}})
	q.Priority = prio
	b.w.Queues = append(b.w.Queues, q)
	return q
}

type jobOpt func(*world.Job)

func user(u string) jobOpt  { return func(j *world.Job) { j.User, j.Group = u, u+"grp" } }
func group(g string) jobOpt { return func(j *world.Job) { j.Group = g } }
func nodes(s string) jobOpt { return func(j *world.Job) { j.Nodes = s } }
func cput(s int) jobOpt     { return func(j *world.Job) { j.CPUT = time.Duration(s) * time.Second } }
func wall(s int) jobOpt     { return func(j *world.Job) { j.Walltime = time.Duration(s) * time.Second } }
func prio(p int) jobOpt     { return func(j *world.Job) { j.Priority = p } }
func mem(m int64) jobOpt    { return func(j *world.Job) { j.Mem = m } }
func ncpus(n int64) jobOpt  { return func(j *world.Job) { j.NCPUs = n } }
func state(s byte) jobOpt   { return func(j *world.Job) { j.State = s } }
func queued(ago time.Duration) jobOpt {
	return func(j *world.Job) { j.QTime = now.Add(-ago) }
}

func (b *builder) job(q *world.Queue, id string, opts ...jobOpt) *world.Job {
	j := world.FromJob(id, q, []world.Attr{{Name: "job_state", Value: "Q"}})
	j.User, j.Group, j.Nodes = "alice", "users", "1"
	j.QTime = now.Add(-time.Minute)
	for _, o := range opts {
		o(j)
	}
	q.Jobs = append(q.Jobs, j)
	return j
}

func parseConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	c, errs, err := config.Parse(strings.NewReader(src), "sched_config")
	if err != nil || len(errs) != 0 {
		t.Fatalf("config: %v %v", err, errs)
	}
	return c
}

func runCycle(t *testing.T, s *Scheduler, b *builder) (*Simulator, Stats) {
	t.Helper()
	sim := NewSimulator(b.w)
	st := s.Cycle(b.w, sim)
	return sim, st
}

func started(sim *Simulator) []string {
	var out []string
	for _, c := range sim.Calls {
		if f := strings.Fields(c); f[0] == "run" && !strings.Contains(c, "(") {
			out = append(out, f[1])
		}
	}
	return out
}

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

func TestCommentsAndWireOrder(t *testing.T) {
	b := newWorld(1, 1)
	q := b.queue("batch", 0)
	b.job(q, "12.vm")
	b.job(q, "13.vm")
	s := New(&config.Config{}, nil)
	s.Location = time.UTC
	sim, st := runCycle(t, s, b)
	want := []string{
		"query 12.vm nodes=1",
		"comment 12.vm Job started on Sun Nov 22 at 01:24",
		"run 12.vm",
		"query 13.vm nodes=1",
		"comment 13.vm " + CommentNodes,
	}
	if !reflect.DeepEqual(sim.Calls, want) {
		t.Errorf("calls\n%q\nwant\n%q", sim.Calls, want)
	}
	if st.Started != 1 || st.Comments != 2 {
		t.Errorf("stats %+v", st)
	}
	// Next cycle: unchanged comment is not sent again.
	b.w.Queues[0].Jobs = b.w.Queues[0].Jobs[1:]
	sim2 := NewSimulator(b.w)
	s.Cycle(b.w, sim2)
	if want := []string{"query 13.vm nodes=1"}; !reflect.DeepEqual(sim2.Calls, want) {
		t.Errorf("second cycle calls %q", sim2.Calls)
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

func TestRunLimits(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(b *builder, q *world.Queue)
		want    []string
		comment string
	}{
		{"server max_running", func(b *builder, q *world.Queue) { b.w.Server.MaxRunning = 2 }, []string{"1", "2"}, CommentServerJobLimit},
		{"server max_user_run", func(b *builder, q *world.Queue) { b.w.Server.MaxUserRun = 1 }, []string{"1", "3", "4"}, CommentServerUserLimit},
		{"server max_group_run", func(b *builder, q *world.Queue) { b.w.Server.MaxGroupRun = 1 }, []string{"1", "4"}, CommentServerGroupLimit},
		{"queue max_running", func(b *builder, q *world.Queue) { q.MaxRunning = 1 }, []string{"1"}, CommentQueueJobLimit},
		{"queue max_user_run", func(b *builder, q *world.Queue) { q.MaxUserRun = 1 }, []string{"1", "3", "4"}, CommentQueueUserLimit},
		{"queue max_group_run", func(b *builder, q *world.Queue) { q.MaxGroupRun = 3 }, []string{"1", "2", "3", "4"}, ""},
		{"running jobs count", func(b *builder, q *world.Queue) {
			q.MaxRunning = 2
			b.job(q, "0", state('R'))
		}, []string{"1"}, CommentQueueJobLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newWorld(8, 1)
			q := b.queue("batch", 0)
			tt.setup(b, q)
			b.job(q, "1", user("ann"), group("g1"))
			b.job(q, "2", user("ann"), group("g1"))
			b.job(q, "3", user("bob"), group("g1"))
			b.job(q, "4", user("cy"), group("g2"))
			sim, _ := runCycle(t, New(&config.Config{}, nil), b)
			if got := started(sim); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("started %v, want %v", got, tt.want)
			}
			if tt.comment != "" && !strings.Contains(strings.Join(sim.Calls, "\n"), tt.comment) {
				t.Errorf("no comment %q in %q", tt.comment, sim.Calls)
			}
		})
	}
}

func TestQueueComments(t *testing.T) {
	b := newWorld(4, 1)
	route := b.queue("route", 0)
	route.Type = "Route"
	stopped := b.queue("stopped", 0)
	stopped.Started = false
	ign := b.queue("ign", 0)
	ded := b.queue("dedq", 0)
	ok := b.queue("batch", 0)
	for _, q := range []*world.Queue{route, stopped, ign, ded, ok} {
		b.job(q, q.Name+".1")
	}
	b.job(ok, "held", state('H'))
	s := New(parseConfig(t, "ignore_queue: ign\ndedicated_prefix: ded"), nil)
	sim, _ := runCycle(t, s, b)
	want := map[string]string{
		"route.1": CommentQueueNotExec, "stopped.1": CommentQueueNotStarted,
		"ign.1": CommentQueueIgnored, "dedq.1": CommentDedicatedConflict,
	}
	for _, q := range b.w.Queues {
		if w, ok := want[q.Jobs[0].ID]; ok && q.Jobs[0].Comment != w {
			t.Errorf("%s comment %q, want %q", q.Jobs[0].ID, q.Jobs[0].Comment, w)
		}
	}
	if got := started(sim); !reflect.DeepEqual(got, []string{"batch.1"}) {
		t.Errorf("started %v", got)
	}
}

func TestDedicatedTime(t *testing.T) {
	period := timeplan.Dedicated{{Start: now.Add(time.Hour), End: now.Add(3 * time.Hour)}}
	b := newWorld(4, 1)
	q := b.queue("batch", 0)
	d := b.queue("ded1", 0)
	b.job(q, "short", wall(1800))
	b.job(q, "long", wall(7200))
	b.job(q, "nowall")
	b.job(d, "dedjob", wall(60))
	s := New(parseConfig(t, "dedicated_prefix: ded"), nil)
	s.Dedicated = period
	sim, _ := runCycle(t, s, b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"short"}) {
		t.Errorf("started %v", got)
	}
	if q.Jobs[1].Comment != CommentDedicatedCross || q.Jobs[2].Comment != CommentDedicatedCross {
		t.Errorf("comments %q %q", q.Jobs[1].Comment, q.Jobs[2].Comment)
	}
	// Inside dedicated time only the ded queue runs.
	b.w.Now = now.Add(90 * time.Minute)
	sim, _ = runCycle(t, s, b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"dedjob"}) {
		t.Errorf("in dedicated time started %v", got)
	}
}

func TestResources(t *testing.T) {
	b := newWorld(8, 1)
	q := b.queue("batch", 0)
	q.Resources.Available.Mem = 3 << 30
	q.Resources.Assigned.Mem = 1 << 30
	b.w.Server.Resources.Max.NCPUs = 4
	b.w.Server.Resources.Max.NodeCt = 3
	b.job(q, "bigmem", mem(3<<30))
	b.job(q, "okmem", mem(2<<30))
	b.job(q, "nomem", mem(1))
	b.job(q, "cpus5", ncpus(5))
	b.job(q, "cpus4", ncpus(4))
	b.job(q, "cpus1", ncpus(1))
	sim, _ := runCycle(t, New(&config.Config{}, nil), b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"okmem", "cpus4"}) {
		t.Errorf("started %v", got)
	}
	want := map[string]string{"bigmem": CommentMemory, "nomem": CommentMemory, "cpus5": CommentCPUs, "cpus1": CommentCPUs}
	for _, j := range q.Jobs {
		if w, ok := want[j.ID]; ok && j.Comment != w {
			t.Errorf("%s: %q, want %q", j.ID, j.Comment, w)
		}
	}
	b2 := newWorld(8, 1)
	q2 := b2.queue("batch", 0)
	q2.Resources.Max.NodeCt = 1
	j := b2.job(q2, "n2")
	j.NodeCt = 2
	runCycle(t, New(&config.Config{}, nil), b2)
	if j.Comment != CommentNodect {
		t.Errorf("nodect comment %q", j.Comment)
	}
}

func TestNeverRunDeleted(t *testing.T) {
	b := newWorld(1, 2)
	q := b.queue("batch", 0)
	b.job(q, "huge", nodes("1:ppn=16"))
	sim, st := runCycle(t, New(&config.Config{}, nil), b)
	if st.Deleted != 1 || sim.Calls[len(sim.Calls)-1] != "delete huge "+MessageNeverRun {
		t.Errorf("calls %q", sim.Calls)
	}
}

func TestRunFailure(t *testing.T) {
	b := newWorld(1, 1)
	q := b.queue("batch", 0)
	j := b.job(q, "1")
	sim := NewSimulator(b.w)
	sim.RunError = map[string]error{"1": errors.New("Execution server rejected request")}
	New(&config.Config{}, nil).Cycle(b.w, sim)
	if j.Comment != "Not Running - PBS Error: Execution server rejected request" {
		t.Errorf("comment %q", j.Comment)
	}
}

func TestLoadBalancing(t *testing.T) {
	mk := func() (*builder, *world.Queue) {
		b := newWorld(0, 1)
		for i, load := range []float64{1.5, 0.2, 0.7} {
			b.w.Nodes = append(b.w.Nodes, &world.Node{Name: "ts" + string(rune('1'+i)), NP: 1, State: world.NodeFree,
				TimeShared: true, MomOK: true, NCPUs: 2, MaxLoad: 2, LoadAve: load, Arch: "linux", PhysMem: 1 << 30})
		}
		q := b.queue("batch", 0)
		return b, q
	}
	b, q := mk()
	for _, id := range []string{"1", "2", "3", "4"} {
		b.job(q, id, nodes(""))
	}
	b.job(q, "bigmem", nodes(""), mem(2<<30))
	s := New(parseConfig(t, "load_balancing: true"), nil)
	s.Location = time.UTC
	sim, _ := runCycle(t, s, b)
	// ts1 is too loaded (1.5+1 > 2); job 1 takes the least loaded ts2
	// (0.2 → 1.2), job 2 ts3 (0.7 → 1.7); then nothing fits.
	want := []string{"run 1 ts2", "run 2 ts3"}
	var runs []string
	for _, c := range sim.Calls {
		if strings.HasPrefix(c, "run ") {
			runs = append(runs, c)
		}
	}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %q, want %q", runs, want)
	}
	if c := q.Jobs[0].Comment; c != "Job run on node ts2 - started on Sun Nov 22 at 01:24" {
		t.Errorf("comment %q", c)
	}
	for _, j := range q.Jobs[2:] {
		if j.Comment != CommentTimesharing {
			t.Errorf("%s comment %q", j.ID, j.Comment)
		}
	}

	b, q = mk()
	for _, n := range b.w.Nodes {
		n.MaxLoad = 4
	}
	for _, id := range []string{"1", "2", "3"} {
		b.job(q, id, nodes(""))
	}
	sim, _ = runCycle(t, New(parseConfig(t, "load_balancing_rr: true"), nil), b)
	runs = nil
	for _, c := range sim.Calls {
		if strings.HasPrefix(c, "run ") {
			runs = append(runs, c)
		}
	}
	if want := []string{"run 1 ts1", "run 2 ts2", "run 3 ts3"}; !reflect.DeepEqual(runs, want) {
		t.Errorf("rr runs %q", runs)
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

type memLog struct{ lines []string }

func (m *memLog) Log(event int, class, object, text string) {
	m.lines = append(m.lines, class+";"+object+";"+text)
}

func TestLogMessages(t *testing.T) {
	b := newWorld(1, 1)
	q := b.queue("batch", 0)
	b.job(q, "1.vm")
	b.job(q, "2.vm")
	l := &memLog{}
	runCycle(t, New(&config.Config{}, l), b)
	want := []string{"Job;1.vm;Job Run", "Job;2.vm;" + LogNodes}
	if !reflect.DeepEqual(l.lines, want) {
		t.Errorf("log %q", l.lines)
	}
}

// askedAbout lists the jobs of the queries and RunJobs of sim, in order,
// as "query <id>" and the "run" calls.
func askedAbout(sim *Simulator) []string {
	var out []string
	for _, c := range sim.Calls {
		switch f := strings.Fields(c); f[0] {
		case "query":
			out = append(out, f[0]+" "+f[1])
		case "run":
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}

func TestPrefilterNodes(t *testing.T) {
	none := func(j *world.Job) { j.Nodes = "" }
	tests := []struct {
		name     string
		nodes    int // free nodes of 1 VP
		build    func(b *builder, q *world.Queue)
		noPre    bool
		stale    int      // node whose status still shows an ended job (0: none)
		want     []string // queries and runs
		comments map[string]string
	}{
		{
			name:  "nodes: one probe per specification, then no queries",
			nodes: 2,
			build: func(b *builder, q *world.Queue) {
				for _, id := range []string{"1", "2", "3", "4"} {
					b.job(q, id)
				}
				b.job(q, "5", nodes("2"))
				b.job(q, "6", nodes("2"))
				b.job(q, "7", nodes("1:ppn=2")) // never fits: the server decides
			},
			want: []string{"query 1", "run 1", "query 2", "run 2", "query 3", "query 5", "query 7"},
			comments: map[string]string{"3": CommentNodes, "4": CommentNodes, "5": CommentNodes,
				"6": CommentNodes},
		},
		{
			name:  "NoPrefilter asks about every job",
			nodes: 2,
			noPre: true,
			build: func(b *builder, q *world.Queue) {
				for _, id := range []string{"1", "2", "3", "4"} {
					b.job(q, id)
				}
			},
			want: []string{"query 1", "run 1", "query 2", "run 2", "query 3", "query 4"},
		},
		{
			name:  "no nodes request: one refused RunJob, then none",
			nodes: 1,
			build: func(b *builder, q *world.Queue) {
				b.job(q, "1", none)
				b.job(q, "2", none)
				b.job(q, "3", none)
			},
			want: []string{"run 1", "run 2 (no nodes)"},
			comments: map[string]string{"2": CommentRunFailedPrefix + "no nodes can be allocated to job",
				"3": CommentNodes},
		},
		{
			name:  "no nodes request: default_node is the specification",
			nodes: 2,
			build: func(b *builder, q *world.Queue) {
				b.w.Server.DefaultNode = "2"
				b.job(q, "1", none)
				b.job(q, "2", none)
				b.job(q, "3", none)
			},
			want: []string{"run 1", "run 2 (no nodes)"},
			comments: map[string]string{"1": "Job started on Sun Nov 22 at 01:24",
				"3": CommentNodes},
		},
		{
			name:  "out-of-date node status: the model is dropped",
			nodes: 2,
			build: func(b *builder, q *world.Queue) {
				b.job(q, "1")
				b.job(q, "2")
				b.job(q, "3")
			},
			stale: 1, // its job ended after StatusNode
			want:  []string{"query 1", "run 1", "query 2", "run 2", "query 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newWorld(tt.nodes, 1)
			q := b.queue("batch", 0)
			tt.build(b, q)
			sim := NewSimulator(b.w)
			if tt.stale > 0 {
				b.w.Nodes[tt.stale].UsedSlots = 1 // not in the simulated server
			}
			s := New(&config.Config{}, nil)
			s.Location = time.UTC
			s.NoPrefilter = tt.noPre
			s.Cycle(b.w, sim)
			if got := askedAbout(sim); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("asked about %q, want %q", got, tt.want)
			}
			for _, j := range q.Jobs {
				if want, ok := tt.comments[j.ID]; ok && j.Comment != want {
					t.Errorf("job %s comment %q, want %q", j.ID, j.Comment, want)
				}
			}
		})
	}
}

func TestTokens(t *testing.T) {
	b := newWorld(4, 1)
	b.w.Server.Tokens = map[string]float64{"lic": 2}
	q := b.queue("batch", 0)
	b.job(q, "0", state('R'), func(j *world.Job) { j.Tokens = "lic:1" })
	b.job(q, "1", func(j *world.Job) { j.Tokens = "lic:1" })
	b.job(q, "2", func(j *world.Job) { j.Tokens = "lic:1" })
	b.job(q, "3", func(j *world.Job) { j.Tokens = "other:5" })
	sim, st := runCycle(t, New(&config.Config{}, nil), b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"1", "3"}) {
		t.Errorf("started %v", got)
	}
	if q.Jobs[2].Comment != CommentTokens || st.Blocked["tokens"] != 1 {
		t.Errorf("comment %q, blocked %v", q.Jobs[2].Comment, st.Blocked)
	}
}

func req(name, value string) jobOpt {
	return func(j *world.Job) {
		if j.Request == nil {
			j.Request = map[string]string{}
		}
		j.Request[name] = value
	}
}

// TestResourcesLine: with a sched_config resources line exactly the
// listed resources are checked, numbers against what is left, strings
// for equality.
func TestResourcesLine(t *testing.T) {
	build := func() (*builder, *world.Queue) {
		b := newWorld(8, 1)
		q := world.FromQueue("batch", []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"},
			{Name: "resources_available", Resource: "walltime", Value: "02:00:00"},
			{Name: "resources_available", Resource: "mem", Value: "1gb"}})
		b.w.Queues = append(b.w.Queues, q)
		b.w.Server = world.FromServer("srv", []world.Attr{{Name: "resources_available", Resource: "arch", Value: "linux"},
			{Name: "resources_max", Resource: "ncpus", Value: "3"}, {Name: "resources_assigned", Resource: "ncpus", Value: "1"}})
		b.job(q, "w1", req("walltime", "01:30:00"))
		b.job(q, "w2", req("walltime", "01:00:00"))
		b.job(q, "big", req("mem", "10gb"), mem(10<<30))
		b.job(q, "sol", req("arch", "solaris"))
		b.job(q, "lin", req("arch", "linux"))
		b.job(q, "c2", req("ncpus", "2"))
		b.job(q, "c1", req("ncpus", "1"))
		return b, q
	}
	comments := func(q *world.Queue) map[string]string {
		out := map[string]string{}
		for _, j := range q.Jobs {
			if !strings.HasPrefix(j.Comment, "Job started") {
				out[j.ID] = j.Comment
			}
		}
		return out
	}
	tests := []struct {
		config   string
		started  []string
		comments map[string]string
	}{
		{
			config:  `resources: "walltime, arch, ncpus"`,
			started: []string{"w1", "big", "lin", "c2"},
			comments: map[string]string{
				"w2":  "Not Running: Not enough walltime available",
				"sol": CommentResourceValuePrefix + "arch=solaris",
				"c1":  CommentCPUs,
			},
		},
		{
			// mem only: the 10gb job is refused, walltime and arch are
			// not looked at
			config:   "resources: mem",
			started:  []string{"w1", "w2", "sol", "lin", "c2", "c1"},
			comments: map[string]string{"big": CommentMemory},
		},
		{
			// no resources line: TORQUE's mem, ncpus and nodect
			config:   "",
			started:  []string{"w1", "w2", "sol", "lin", "c2", "c1"},
			comments: map[string]string{"big": CommentMemory},
		},
	}
	for _, tt := range tests {
		b, q := build()
		sim, _ := runCycle(t, New(parseConfig(t, tt.config), nil), b)
		if got := started(sim); !reflect.DeepEqual(got, tt.started) {
			t.Errorf("%q: started %v, want %v", tt.config, got, tt.started)
		}
		if got := comments(q); !reflect.DeepEqual(got, tt.comments) {
			t.Errorf("%q: comments %v, want %v", tt.config, got, tt.comments)
		}
	}
}

// TestSMPClusterDist: jobs without a node request go to the node the
// smp_cluster_dist policy picks, named in RunJob.
func TestSMPClusterDist(t *testing.T) {
	noNodes := nodes("")
	tests := []struct {
		config string
		setup  func(b *builder)
		jobs   int
		want   []string // "job node"
	}{
		{
			config: "smp_cluster_dist: pack",
			jobs:   5,
			want:   []string{"1 na", "2 na", "3 nb", "4 nb", "5 nc"},
		},
		{
			// the partly used node is filled first
			config: "smp_cluster_dist: pack",
			setup:  func(b *builder) { b.w.Nodes[1].UsedSlots = 1 },
			jobs:   3,
			want:   []string{"1 nb", "2 na", "3 na"},
		},
		{
			config: "smp_cluster_dist: round_robin",
			setup:  func(b *builder) { b.w.Nodes[0].State = world.NodeDown },
			jobs:   4,
			want:   []string{"1 nb", "2 nc", "3 nb", "4 nc"},
		},
		{
			config: "smp_cluster_dist: lowest_load",
			setup: func(b *builder) {
				for i, l := range []float64{1.5, 0.2, 0.7} {
					b.w.Nodes[i].MomOK, b.w.Nodes[i].LoadAve = true, l
				}
			},
			jobs: 5,
			want: []string{"1 nb", "2 nc", "3 nb", "4 na", "5 nc"},
		},
	}
	for _, tt := range tests {
		b := newWorld(3, 2)
		if tt.setup != nil {
			tt.setup(b)
		}
		q := b.queue("batch", 0)
		for i := 1; i <= tt.jobs; i++ {
			b.job(q, strconv.Itoa(i), noNodes)
		}
		sim, _ := runCycle(t, New(parseConfig(t, tt.config), nil), b)
		var got []string
		for _, c := range sim.Calls {
			if f := strings.Fields(c); f[0] == "run" {
				got = append(got, strings.Join(f[1:], " "))
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: runs %v, want %v", tt.config, got, tt.want)
		}
	}

	// round_robin goes on where the last cycle stopped; a full cluster
	// gives the nodes comment; jobs with a node request are left to the
	// server.
	s := New(parseConfig(t, "smp_cluster_dist: round_robin"), nil)
	b := newWorld(3, 1)
	q := b.queue("batch", 0)
	b.job(q, "1", noNodes)
	runCycle(t, s, b)
	b = newWorld(3, 1)
	q = b.queue("batch", 0)
	b.job(q, "2", noNodes)
	b.job(q, "3", nodes("1"))
	b.job(q, "4", noNodes)
	b.job(q, "5", noNodes)
	sim, _ := runCycle(t, s, b)
	if got := started(sim); !reflect.DeepEqual(got, []string{"2", "3", "4"}) {
		t.Errorf("second cycle started %v", got)
	}
	if !slicesContain(sim.Calls, "run 2 nb") || !slicesContain(sim.Calls, "run 3") {
		t.Errorf("calls %v", sim.Calls)
	}
	if j := q.Jobs[3]; j.Comment != CommentNodes {
		t.Errorf("job 5 on a full cluster: comment %q", j.Comment)
	}
}

func slicesContain(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
