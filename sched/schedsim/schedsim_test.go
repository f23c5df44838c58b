package schedsim

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// starvation is the seed's scenario on two one-slot nodes: a stream of
// one-node jobs B(i) of an hour, staggered by half an hour so that one
// always ends while the other runs; the two-node job A arrives just
// after B(0) and B(1); a short one-node job C arrives before the first
// gap.
func starvation() Workload {
	w := Workload{
		{ID: 1, Submit: 0, Runtime: 3600, Walltime: 3600, Procs: 1},    // B(0)
		{ID: 2, Submit: 1800, Runtime: 3600, Walltime: 3600, Procs: 1}, // B(1)
		{ID: 3, Submit: 1810, Runtime: 3600, Walltime: 3600, Procs: 2}, // A
		{ID: 4, Submit: 3000, Runtime: 1200, Walltime: 1200, Procs: 1}, // C
	}
	for i := 2; i < 40; i++ { // B(2)...
		w = append(w, Job{ID: 3 + i, Submit: int64(3000 + 1800*(i-2)), Runtime: 3600, Walltime: 3600, Procs: 1})
	}
	return w
}

func job(r *Result, id int) JobResult {
	for _, j := range r.Jobs {
		if j.ID == id {
			return j
		}
	}
	panic(fmt.Sprint("no job ", id))
}

// TestStarvationScenario: with reservations A starts no later than the
// time first planned for it (when B(1) is planned to end), the B(i)
// cannot delay it, and C backfills into the gap before it; under FIFO A
// starves until the stream of B(i) ends; FIFO+starving drains the
// cluster only after max_starve.
func TestStarvationScenario(t *testing.T) {
	opts := Options{Nodes: 2, NP: 1, Check: true, Mode: Reservation}
	r, err := Run(starvation(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) > 0 {
		t.Fatalf("violations: %v", r.Violations)
	}
	a, c := job(r, 3), job(r, 4)
	// B(1) started at 1800 with walltime 3600: planned end 5400 + 60.
	if a.Planned != 5460 || a.Start > a.Planned || a.Start != 5400 {
		t.Errorf("A planned %d, started %d; want planned 5460, started at B(1)'s end 5400", a.Planned, a.Start)
	}
	if c.Start != 3600 || c.End > a.Start {
		t.Errorf("C ran %d-%d, want a backfill from 3600 ending before A (%d)", c.Start, c.End, a.Start)
	}
	if b2 := job(r, 5); b2.Start < a.End {
		t.Errorf("B(2) started at %d, before A ended (%d)", b2.Start, a.End)
	}

	fifo, err := Run(starvation(), Options{Nodes: 2, NP: 1, Mode: FIFO})
	if err != nil {
		t.Fatal(err)
	}
	lastB := starvation()[len(starvation())-1]
	if a := job(fifo, 3); a.Start < lastB.Submit {
		t.Errorf("FIFO: A started at %d, before the stream ended (%d): it should starve", a.Start, lastB.Submit)
	}
	starve, err := Run(starvation(), Options{Nodes: 2, NP: 1, Mode: FIFOStarving, MaxStarve: 7200e9})
	if err != nil {
		t.Fatal(err)
	}
	if a := job(starve, 3); a.Start < 1810+7200 || a.Start > 1810+7200+3600 {
		t.Errorf("FIFO+starving: A started at %d, want after max_starve (9010) within an hour", a.Start)
	}
}

// TestBackfillNeverDelaysReservation is the property: over random
// workloads (run times within walltimes, some jobs without walltime,
// sizes up to the whole cluster), no reservation ever gets later than
// planned before, and every job holding a reservation starts no later
// than planned.
func TestBackfillNeverDelaysReservation(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	for seed := int64(1); seed <= int64(rounds); seed++ {
		rng := rand.New(rand.NewSource(seed))
		nodes, np := 2+rng.Intn(7), 1+rng.Intn(4)
		var w Workload
		t0 := int64(0)
		for i := 0; i < 150; i++ {
			t0 += int64(rng.Intn(900))
			wall := int64(300 * (1 + rng.Intn(24)))
			rt := 1 + rng.Int63n(wall)
			if rng.Intn(10) == 0 {
				wall = 0 // no walltime: planned forever, never backfills
			}
			procs := 1 + rng.Intn(nodes*np)
			if rng.Intn(4) == 0 {
				procs = nodes * np
			}
			w = append(w, Job{ID: i + 1, Submit: t0, Runtime: rt, Walltime: wall, Procs: procs, User: rng.Intn(4)})
		}
		for _, maxRes := range []int{-1, 3} {
			opts := Options{Nodes: nodes, NP: np, Mode: Reservation, Check: true, MaxReservation: maxRes,
				ReserveLarger: rng.Intn(3)}
			r, err := Run(w, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Violations) > 0 {
				t.Fatalf("seed %d (%d nodes x %d, max_reservation %d): %d violations, first: %s",
					seed, nodes, np, maxRes, len(r.Violations), r.Violations[0])
			}
			m := r.Metrics()
			if m.Unstarted > 0 {
				t.Fatalf("seed %d: %d jobs never started", seed, m.Unstarted)
			}
			planned := 0
			for _, j := range r.Jobs {
				if j.Planned >= 0 {
					planned++
				}
			}
			if planned == 0 {
				t.Errorf("seed %d: no reservation was ever made: the property was not exercised", seed)
			}
		}
	}
}

// TestReservationBeatsFIFOOnLargeJobs: on a synthetic workload the
// longest wait is shorter with reservations than under FIFO (where large
// jobs starve), and every policy starts every job.
func TestReservationBeatsFIFOOnLargeJobs(t *testing.T) {
	w := Synthetic{Jobs: 400, Slots: 64, Load: 0.85, Seed: 7}.Generate()
	var res []*Result
	for _, mode := range []Mode{FIFO, FIFOStarving, Reservation} {
		r, err := Run(w, Options{Nodes: 16, NP: 4, Mode: mode, MaxStarve: 4 * 3600e9})
		if err != nil {
			t.Fatal(err)
		}
		if m := r.Metrics(); m.Unstarted > 0 || m.Utilisation <= 0 || m.Utilisation > 1 {
			t.Fatalf("%s: %+v", mode, m)
		}
		res = append(res, r)
	}
	fifo, resv := res[0].Metrics(), res[2].Metrics()
	if resv.MaxWait >= fifo.MaxWait {
		t.Errorf("longest wait %v with reservations, %v under FIFO", resv.MaxWait, fifo.MaxWait)
	}
	var b strings.Builder
	WriteTable(&b, res)
	if !strings.Contains(b.String(), "reservation+backfill") {
		t.Errorf("table:\n%s", b.String())
	}
	var svg strings.Builder
	if err := WriteSVG(&svg, res[2], 0, 0); err != nil || !strings.HasPrefix(svg.String(), "<svg") || strings.Count(svg.String(), "<rect") < 400 {
		t.Errorf("svg: %v, %d bytes", err, svg.Len())
	}
}

func TestReadSWF(t *testing.T) {
	src := "; Version: 2.2\n;Computer: test\n\n" +
		"1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n" +
		"2 5 -1 300 8 -1 -1 -1 120 -1 1 4 1 -1 1 -1 -1 -1\n" + // run time capped at the request
		"3 6 -1 -1 8 -1 -1 8 120 -1 0 4 1 -1 1 -1 -1 -1\n" + // unknown run time: skipped
		"4 7 -1 50 -1 -1 -1 -1 -1 -1 1 4 1 -1 1 -1 -1 -1\n" // no processors: skipped
	w, skipped, err := ReadSWF(strings.NewReader(src))
	if err != nil || skipped != 2 || len(w) != 2 {
		t.Fatalf("ReadSWF: %v skipped %d jobs %+v", err, skipped, w)
	}
	want := []Job{{ID: 1, Submit: 0, Runtime: 100, Walltime: 200, Procs: 4, User: 3}, {ID: 2, Submit: 5, Runtime: 120, Walltime: 120, Procs: 8, User: 4}}
	for i := range want {
		if w[i] != want[i] {
			t.Errorf("job %d = %+v, want %+v", i, w[i], want[i])
		}
	}
	var out strings.Builder
	if err := WriteSWF(&out, w, "round trip"); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadSWF(strings.NewReader(out.String()))
	if err != nil || len(back) != 2 || back[0] != w[0] || back[1] != w[1] {
		t.Errorf("round trip: %v %+v", err, back)
	}
}

// TestReadSWFBrokenLine: a broken line stops the reading with its number.
func TestReadSWFBrokenLine(t *testing.T) {
	for _, tc := range []struct {
		src  string
		line int
	}{
		{"; header\n1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n2 0 10 100 4 -1 -1 4 200\n", 3},
		{"1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 x\n", 1},
		{"\n\n1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -7\n", 3},
		{"1 0 10 100 4 -1 -1 4 NaN -1 1 3 1 -1 1 -1 -1 -1\n", 1},
	} {
		_, _, err := ReadSWF(strings.NewReader(tc.src))
		var se *SWFError
		if !errors.As(err, &se) || se.Line != tc.line || !strings.Contains(err.Error(), fmt.Sprintf("line %d", tc.line)) {
			t.Errorf("%q: %v, want an error naming line %d", tc.src, err, tc.line)
		}
	}
}

func FuzzReadSWF(f *testing.F) {
	f.Add("; Version: 2.2\n1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n")
	f.Add("1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1\n")
	f.Add("2 5 -1 300 8 -1 -1 -1 120 -1 1 4 1 -1 1 -1 -1 -1\n1 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		w, _, err := ReadSWF(strings.NewReader(s))
		if err != nil {
			return
		}
		for i, j := range w {
			if j.Procs <= 0 || j.Runtime <= 0 || j.Walltime > 0 && j.Runtime > j.Walltime || i > 0 && j.Submit < w[i-1].Submit {
				t.Fatalf("bad job %+v", j)
			}
		}
	})
}
