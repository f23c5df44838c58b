// Tests of the placement on nodes (nodes.go): load balancing, the node
// model's prefilter and SMP clusters.

package policy

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/world"
)

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
