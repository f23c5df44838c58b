package schedsim

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"gopbs/sched/fairshare"
)

// randomQueued is a random workload of n jobs for a cluster of nodes x
// np, spread over queues queues and four users.
func randomQueued(rng *rand.Rand, n, nodes, np, queues int) Workload {
	var w Workload
	t0 := int64(0)
	for i := 0; i < n; i++ {
		t0 += int64(rng.Intn(900))
		wall := int64(300 * (1 + rng.Intn(24)))
		procs := 1 + rng.Intn(nodes*np)
		if rng.Intn(4) == 0 {
			procs = nodes * np
		}
		w = append(w, Job{ID: i + 1, Submit: t0, Runtime: 1 + rng.Int63n(wall), Walltime: wall, Procs: procs,
			User: rng.Intn(4), Queue: rng.Intn(queues)})
	}
	return w
}

// TestReservationsWithPolicies: reservations and backfilling keep their
// promise — no reservation ever gets later, and every job holding one
// starts no later than planned — inside each of the policies that order
// the jobs or limit when they may run: fair share (the order changes
// from cycle to cycle as usage accrues), by_queue with sort_queues,
// round_robin over three queues, and dedicated time (periods in which
// only the ded queue runs, and which other jobs must not cross). Every
// job starts (but a ded job that fits no dedicated period), and with
// dedicated time no job crosses a period's bounds (issue 16).
func TestReservationsWithPolicies(t *testing.T) {
	tree := func() *fairshare.Tree {
		tr, err := fairshare.Parse(strings.NewReader("grpA 1 root 70\ngrpB 2 root 30\nu0 10 grpA 1\nu1 11 grpA 1\nu2 12 grpB 1\nu3 13 grpB 1\n"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	dedicated := [][2]int64{{20000, 26000}, {60000, 64000}}
	cases := []struct {
		name   string
		opts   func() Options
		verify func(t *testing.T, r *Result)
	}{
		{"fair_share", func() Options {
			return Options{Config: "fair_share: true\nhalf_life: 2:00:00\nsort_by: fair_share\n", FairShare: tree()}
		}, nil},
		{"by_queue", func() Options {
			return Options{Queues: []string{"low", "mid", "high"}, Config: "by_queue: true\nsort_queues: true\n"}
		}, nil},
		{"round_robin", func() Options {
			return Options{Queues: []string{"qa", "qb", "qc"}, Config: "round_robin: true\n"}
		}, nil},
		{"dedicated_time", func() Options {
			return Options{Queues: []string{"batch", "dedq"}, Config: "dedicated_prefix: ded\n", Dedicated: dedicated}
		}, func(t *testing.T, r *Result) {
			for _, j := range r.Jobs {
				end := j.Start + j.Walltime
				for _, d := range dedicated {
					inside := j.Start >= d[0] && end <= d[1]
					overlaps := j.Start < d[1] && end > d[0]
					if j.Queue == 1 && j.Start >= d[0] && j.Start < d[1] && !inside {
						t.Errorf("ded job %d ran %d-%d (by walltime), past dedicated time %v", j.ID, j.Start, end, d)
					}
					if j.Queue == 0 && overlaps {
						t.Errorf("job %d of batch ran %d-%d (by walltime) into dedicated time %v", j.ID, j.Start, end, d)
					}
				}
			}
		}},
	}
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(1); seed <= int64(seeds); seed++ {
				rng := rand.New(rand.NewSource(seed))
				nodes, np := 2+rng.Intn(5), 1+rng.Intn(4)
				for _, maxRes := range []int{-1, 2} {
					opts := tc.opts()
					opts.Nodes, opts.NP, opts.Mode, opts.Check, opts.MaxReservation = nodes, np, Reservation, true, maxRes
					queues := max(len(opts.Queues), 1)
					w := randomQueued(rng, 120, nodes, np, queues)
					where := fmt.Sprintf("seed %d (%d nodes x %d, max_reservation %d)", seed, nodes, np, maxRes)
					r, err := Run(w, opts)
					if err != nil {
						t.Fatal(where, err)
					}
					if len(r.Violations) > 0 {
						t.Fatalf("%s: %d violations, first: %s", where, len(r.Violations), r.Violations[0])
					}
					planned, started, dedStarted := 0, 0, 0
					for _, j := range r.Jobs {
						if j.Planned >= 0 {
							planned++
						}
						switch {
						case j.Start >= 0 && j.Queue == 1 && opts.Dedicated != nil:
							dedStarted++
						case j.Start >= 0 || j.Queue == 1 && opts.Dedicated != nil:
							// a ded job waits for a period it fits in, maybe for ever
							started++
						}
					}
					if started+dedStarted != len(r.Jobs) {
						t.Fatalf("%s: %d of %d jobs started", where, started+dedStarted, len(r.Jobs))
					}
					if opts.Dedicated != nil && dedStarted == 0 {
						t.Fatalf("%s: no job of the ded queue ran", where)
					}
					if planned == 0 {
						t.Fatalf("%s: no reservation was made: the property was not exercised", where)
					}
					if tc.verify != nil {
						tc.verify(t, r)
					}
				}
			}
		})
	}
}
