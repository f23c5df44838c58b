// Tests of the feasibility checks (checks.go): run limits, queue
// comments, dedicated time, resources, tokens and the sched_config
// resources line.

package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/timeplan"
	"gopbs/sched/world"
)

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
