package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/world"
)

// reserveWorld is a cluster of nodes x 8 VPs, each VP of all but every
// twentieth node held by a running job with a walltime of 1-24 h started
// up to a day ago, and queued jobs asking for 1-4 nodes of 1-8 VPs with
// walltimes of 1-12 h, every one with reserve=y: the free nodes make
// every queued job a backfill candidate.
func reserveWorld(nodes, queued int) *world.World {
	w := &world.World{Now: now, Server: world.FromServer("srv", nil)}
	q := world.FromQueue("batch", []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}})
	w.Queues = []*world.Queue{q}
	id := 0
	for i := 0; i < nodes; i++ {
		n := &world.Node{Name: fmt.Sprintf("n%05d", i), NP: 8, State: world.NodeJobExclusive, UsedSlots: 8, JobExclusive: true}
		w.Nodes = append(w.Nodes, n)
		if i%20 == 19 {
			n.State, n.UsedSlots, n.JobExclusive = world.NodeFree, 0, false
			continue
		}
		for vp := 0; vp < 8; vp++ {
			j := world.FromJob(fmt.Sprintf("%d.srv", id), q, []world.Attr{{Name: "job_state", Value: "R"}})
			j.ExecHost = fmt.Sprintf("%s/%d", n.Name, vp)
			j.Walltime = time.Duration(1+id%24) * time.Hour
			j.StartTime = now.Add(-time.Duration(id*7919%1440) * time.Minute)
			if now.Sub(j.StartTime) >= j.Walltime {
				j.StartTime = now.Add(-j.Walltime / 2)
			}
			q.Jobs = append(q.Jobs, j)
			id++
		}
	}
	for i := 0; i < queued; i++ {
		j := world.FromJob(fmt.Sprintf("%d.srv", id), q, []world.Attr{{Name: "job_state", Value: "Q"}, {Name: "reserve", Value: "y"}})
		j.User, j.Group = fmt.Sprintf("user%02d", i%20), "g"
		j.Nodes = fmt.Sprintf("%d:ppn=%d", 1+i%4, 1+(i*7)%8)
		j.Walltime = time.Duration(1+i%12) * time.Hour
		j.QTime = now.Add(-time.Duration(i%3000) * time.Minute)
		j.Comment = CommentNodes
		q.Jobs = append(q.Jobs, j)
		id++
	}
	return w
}

func benchmarkReserve(b *testing.B, nodes, queued, maxRes int) {
	cfg, errs, err := config.Parse(strings.NewReader(fmt.Sprintf("max_reservation: %d\n", maxRes)), "bench")
	if err != nil || len(errs) > 0 {
		b.Fatal(err, errs)
	}
	b.ReportAllocs()
	var st Stats
	for b.Loop() {
		b.StopTimer()
		w := reserveWorld(nodes, queued)
		s := New(cfg, nil)
		sim := NewSimulator(w)
		sim.Record = false
		b.StartTimer()
		st = s.Cycle(w, sim)
	}
	b.ReportMetric(float64(st.Reservations), "reservations/op")
	b.ReportMetric(float64(st.Started), "started/op")
}

// BenchmarkReserve10kOn1k: 10,000 queued jobs on 1,000 full nodes,
// max_reservation 20 (the target: a cycle within 1 s).
func BenchmarkReserve10kOn1k(b *testing.B) { benchmarkReserve(b, 1000, 10000, 20) }

// BenchmarkReserve50kOn5k: 50,000 queued jobs on 5,000 nodes,
// max_reservation 20, every job considered for backfill.
func BenchmarkReserve50kOn5k(b *testing.B) { benchmarkReserve(b, 5000, 50000, 20) }

// BenchmarkReserve2kOn1kNoCap: every one of 2,000 queued jobs on 1,000
// nodes gets a reservation (no max_reservation cap).
func BenchmarkReserve2kOn1kNoCap(b *testing.B) { benchmarkReserve(b, 1000, 2000, 1<<30) }

func BenchmarkReserve500On1kNoCap(b *testing.B) { benchmarkReserve(b, 1000, 500, 1<<30) }

// BenchmarkReserve10kOn1kNoCap: every one of 10,000 queued jobs on 1,000
// nodes gets a reservation.
func BenchmarkReserve10kOn1kNoCap(b *testing.B) { benchmarkReserve(b, 1000, 10000, 1<<30) }

// BenchmarkReserve50kOn5kNoCap: every one of 50,000 queued jobs on 5,000
// nodes gets a reservation.
func BenchmarkReserve50kOn5kNoCap(b *testing.B) { benchmarkReserve(b, 5000, 50000, 1<<30) }
