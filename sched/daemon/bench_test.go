package daemon

import (
	"fmt"
	"testing"

	"gopbs/batchreq"
	"gopbs/sched/internal/fakeserver"
	"gopbs/sched/policy"
)

// wireLoad is the cluster of a wire benchmark: 1,000 nodes of 8 VPs, of
// which the first freeNodes are free and the others job-exclusive, and
// 10,000 queued jobs from 20 users.
type wireLoad struct {
	freeNodes int
	// nodesReq: the jobs ask for 1–4 nodes of 1–8 VPs; otherwise they
	// request no nodes (the server gives each one VP), as pbsbench's jobs.
	nodesReq bool
	// noPrefilter asks the server about every job, as TORQUE.
	noPrefilter bool
}

func (l wireLoad) fill(srv *fakeserver.Server) {
	srv.Nodes, srv.Jobs = nil, nil
	for i := 0; i < 1000; i++ {
		n := &fakeserver.Node{Name: fmt.Sprintf("n%04d", i), NP: 8}
		if i >= l.freeNodes {
			n.State = "job-exclusive"
		}
		srv.Nodes = append(srv.Nodes, n)
	}
	for i := 0; i < 10000; i++ {
		res := map[string]string{"cput": "01:00:00"}
		if l.nodesReq {
			res["nodes"] = fmt.Sprintf("%d:ppn=%d", 1+i%4, 1+i%8)
		}
		// Waiting jobs carry the comment of earlier cycles.
		srv.AddJob(&fakeserver.Job{ID: fmt.Sprintf("%d.srv", i), Queue: "batch", User: fmt.Sprintf("u%d", i%20),
			Resources: res, Comment: policy.CommentNodes})
	}
}

// benchmarkWire measures whole cycles over loopback TCP against the fake
// server. With every node busy the benchmark measures the steady state of
// a full system (a first, untimed cycle has set the comments); with free
// nodes every timed cycle starts from the same cluster, as after many jobs
// ended at once, and fills it.
func benchmarkWire(b *testing.B, l wireLoad) {
	c := newCluster(b, "by_queue: true\nsort_by: shortest_job_first\n", nil)
	c.d.mu.Lock()
	c.d.Sched.NoPrefilter = l.noPrefilter
	c.d.mu.Unlock()
	c.queue("batch")
	l.fill(c.srv)
	if l.freeNodes == 0 {
		if err := c.srv.Trigger(c.addr, batchreq.SCH_SCHEDULE_NEW); err != nil {
			b.Fatal(err)
		}
	}
	c.srv.Requests = nil
	requests, started := 0, 0
	b.ResetTimer()
	for b.Loop() {
		if l.freeNodes > 0 {
			b.StopTimer()
			l.fill(c.srv)
			c.srv.Requests, c.srv.Started = nil, nil
			b.StartTimer()
		}
		if err := c.srv.Trigger(c.addr, batchreq.SCH_SCHEDULE_TIME); err != nil {
			b.Fatal(err)
		}
		requests += len(c.srv.Requests)
		started += len(c.srv.Started)
		c.srv.Requests, c.srv.Started = nil, nil
	}
	b.StopTimer()
	b.ReportMetric(float64(requests)/float64(b.N), "requests/cycle")
	b.ReportMetric(float64(started)/float64(b.N), "started/cycle")
}

// All nodes busy, jobs with nodes requests: a node query per job without
// the prefilter.
func BenchmarkWireCycle10kJobs(b *testing.B) {
	benchmarkWire(b, wireLoad{nodesReq: true, noPrefilter: true})
}
func BenchmarkWireCycle10kJobsPrefilter(b *testing.B) { benchmarkWire(b, wireLoad{nodesReq: true}) }

// All nodes busy, jobs without nodes requests (the end-to-end measurement
// of docs/performance.md): without the prefilter two comment changes and
// a refused RunJob per job.
func BenchmarkWireCycle10kJobsNoNodesBusy(b *testing.B) {
	benchmarkWire(b, wireLoad{noPrefilter: true})
}
func BenchmarkWireCycle10kJobsNoNodesBusyPrefilter(b *testing.B) { benchmarkWire(b, wireLoad{}) }

// Half the nodes free (4,000 VPs): the cycle starts jobs until they are
// taken, then meets the busy case.
func BenchmarkWireCycle10kJobsHalfFree(b *testing.B) {
	benchmarkWire(b, wireLoad{freeNodes: 500, nodesReq: true, noPrefilter: true})
}
func BenchmarkWireCycle10kJobsHalfFreePrefilter(b *testing.B) {
	benchmarkWire(b, wireLoad{freeNodes: 500, nodesReq: true})
}
func BenchmarkWireCycle10kJobsNoNodesHalfFree(b *testing.B) {
	benchmarkWire(b, wireLoad{freeNodes: 500, noPrefilter: true})
}
func BenchmarkWireCycle10kJobsNoNodesHalfFreePrefilter(b *testing.B) {
	benchmarkWire(b, wireLoad{freeNodes: 500})
}
