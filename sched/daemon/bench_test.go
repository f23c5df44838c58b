package daemon

import (
	"fmt"
	"testing"

	"gopbs/batchreq"
	"gopbs/sched/internal/fakeserver"
)

// benchmarkWire measures whole cycles over loopback TCP against the fake
// server: 1,000 nodes of 8 VPs, all busy, and 10,000 queued jobs, so every
// job is considered and none starts (the steady state of a full system:
// comments are already set, each job costs a node query unless the
// prefilter rules it out).
func benchmarkWire(b *testing.B, prefilter bool) {
	c := newCluster(b, "by_queue: true\nsort_by: shortest_job_first\n", nil)
	c.d.mu.Lock()
	c.d.Sched.NoPrefilter = !prefilter
	c.d.mu.Unlock()
	for i := 0; i < 1000; i++ {
		c.srv.Nodes = append(c.srv.Nodes, &fakeserver.Node{Name: fmt.Sprintf("n%04d", i), NP: 8, State: "job-exclusive"})
	}
	c.queue("batch")
	for i := 0; i < 10000; i++ {
		c.srv.AddJob(&fakeserver.Job{ID: fmt.Sprintf("%d.srv", i), Queue: "batch", User: fmt.Sprintf("u%d", i%20),
			Resources: map[string]string{"nodes": fmt.Sprintf("%d:ppn=%d", 1+i%4, 1+i%8), "cput": "01:00:00"}})
	}
	// First cycle sets the comments.
	if err := c.srv.Trigger(c.addr, batchreq.SCH_SCHEDULE_NEW); err != nil {
		b.Fatal(err)
	}
	c.srv.Requests = nil
	b.ResetTimer()
	for b.Loop() {
		if err := c.srv.Trigger(c.addr, batchreq.SCH_SCHEDULE_TIME); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(c.srv.Requests))/float64(b.N), "requests/cycle")
}

func BenchmarkWireCycle10kJobs(b *testing.B)          { benchmarkWire(b, false) }
func BenchmarkWireCycle10kJobsPrefilter(b *testing.B) { benchmarkWire(b, true) }
