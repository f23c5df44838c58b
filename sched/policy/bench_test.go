package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/placement"
	"gopbs/sched/world"
)

// bigWorld builds 1,000 nodes of 8 VPs and 10,000 queued jobs in four
// queues, from 20 users, asking for 1–4 nodes of 1–8 VPs.
func bigWorld() *world.World {
	w := &world.World{Now: now, Server: world.FromServer("srv", nil)}
	for i := 0; i < 1000; i++ {
		w.Nodes = append(w.Nodes, &world.Node{Name: fmt.Sprintf("n%04d", i), NP: 8, State: world.NodeFree})
	}
	for qi := 0; qi < 4; qi++ {
		q := world.FromQueue(fmt.Sprintf("q%d", qi), []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}})
		q.Priority = qi
		w.Queues = append(w.Queues, q)
	}
	for i := 0; i < 10000; i++ {
		q := w.Queues[i%4]
		j := world.FromJob(fmt.Sprintf("%d.srv", i), q, []world.Attr{{Name: "job_state", Value: "Q"}})
		u := fmt.Sprintf("user%02d", i%20)
		j.User, j.Group = u, "g"+u[len(u)-1:]
		j.Nodes = fmt.Sprintf("%d:ppn=%d", 1+i%4, 1+(i*7)%8)
		j.CPUT = time.Duration(i%97) * time.Minute
		j.Priority = i % 13
		j.QTime = now.Add(-time.Duration(i%3000) * time.Minute)
		q.Jobs = append(q.Jobs, j)
	}
	return w
}

// busyWorld is bigWorld with only the first free nodes free; the others
// are job-exclusive (their 8 VPs taken by running jobs not in the world).
// The jobs wait with the comment of earlier cycles.
func busyWorld(free int) *world.World {
	w := bigWorld()
	for i, n := range w.Nodes {
		if i >= free {
			n.State, n.UsedSlots, n.JobExclusive = world.NodeJobExclusive, n.NP, true
		}
	}
	for _, q := range w.Queues {
		for _, j := range q.Jobs {
			j.Comment = CommentNodes
		}
	}
	return w
}

// benchmarkBusy measures a cycle over busyWorld(free), without starving
// jobs (the jobs of a busy system are not all that old), with or without
// the node prefilter; it reports the requests the cycle would send.
func benchmarkBusy(b *testing.B, free int, noPrefilter bool) {
	cfg, _, _ := config.Parse(strings.NewReader(config.Shipped+"help_starving_jobs: false ALL\n"), "bench")
	b.ReportAllocs()
	var st Stats
	requests := 0
	for b.Loop() {
		b.StopTimer()
		w := busyWorld(free)
		s := New(cfg, nil)
		s.NoPrefilter = noPrefilter
		sim := NewSimulator(w)
		counter := &countingActions{Actions: sim}
		b.StartTimer()
		st = s.Cycle(w, counter)
		requests += counter.n
	}
	b.ReportMetric(float64(st.Started), "started/op")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
}

// countingActions counts the requests a cycle sends.
type countingActions struct {
	Actions
	n int
}

func (c *countingActions) QueryNodes(j *world.Job, spec string) (placement.Availability, error) {
	c.n++
	return c.Actions.QueryNodes(j, spec)
}
func (c *countingActions) SetComment(j *world.Job, comment string) error {
	c.n++
	return c.Actions.SetComment(j, comment)
}
func (c *countingActions) RunJob(j *world.Job, dest string) error {
	c.n++
	return c.Actions.RunJob(j, dest)
}
func (c *countingActions) MoveJob(j *world.Job, queue string) error {
	c.n++
	return c.Actions.MoveJob(j, queue)
}
func (c *countingActions) DeleteJob(j *world.Job, message string) error {
	c.n++
	return c.Actions.DeleteJob(j, message)
}

// BenchmarkCycle10kJobsBusy: 10,000 queued jobs, 1,000 nodes all busy.
func BenchmarkCycle10kJobsBusy(b *testing.B)            { benchmarkBusy(b, 0, false) }
func BenchmarkCycle10kJobsBusyNoPrefilter(b *testing.B) { benchmarkBusy(b, 0, true) }

// BenchmarkCycle10kJobsHalfFree: 10,000 queued jobs, 500 of 1,000 nodes
// free.
func BenchmarkCycle10kJobsHalfFree(b *testing.B)            { benchmarkBusy(b, 500, false) }
func BenchmarkCycle10kJobsHalfFreeNoPrefilter(b *testing.B) { benchmarkBusy(b, 500, true) }

func benchmarkCycle(b *testing.B, cfgText string) {
	cfg, errs, err := config.Parse(strings.NewReader(cfgText), "bench")
	if err != nil || len(errs) != 0 {
		b.Fatal(err, errs)
	}
	b.ReportAllocs()
	started := 0
	for b.Loop() {
		b.StopTimer()
		w := bigWorld()
		s := New(cfg, nil)
		sim := NewSimulator(w)
		sim.Record = false
		b.StartTimer()
		started = s.Cycle(w, sim).Started
	}
	b.ReportMetric(float64(started), "started/op")
}

// BenchmarkCycle10kJobs1kNodes is the performance goal: one cycle over
// 10,000 queued jobs and 1,000 nodes in well under a second.
func BenchmarkCycle10kJobs1kNodes(b *testing.B) { benchmarkCycle(b, config.Shipped) }

// BenchmarkCycleFairShare is the same with fair_share on.
func BenchmarkCycleFairShare(b *testing.B) {
	benchmarkCycle(b, config.Shipped+"fair_share: true ALL\nhelp_starving_jobs: false\n")
}

// TestCycleBudget keeps the performance goal from regressing badly: one
// cycle over the big world must stay well under the 1 s budget.
func TestCycleBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	cfg, _, _ := config.Parse(strings.NewReader(config.Shipped+"help_starving_jobs: false\n"), "x")
	w := bigWorld()
	sim := NewSimulator(w)
	sim.Record = false
	start := time.Now()
	st := New(cfg, nil).Cycle(w, sim)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cycle took %v (goal 1 s)", d)
	}
	if st.Considered != 10000 || st.Started == 0 {
		t.Errorf("stats %+v", st)
	}
}
