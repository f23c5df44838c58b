package profile

import (
	"math/rand"
	"strconv"
	"testing"

	"gopbs/sched/placement"
)

// naiveBlocker is Blocker by looking at every booking.
func naiveBlocker(p *Profile, r Request, start int64) (Booking, bool) {
	e := end(start, r.Duration)
	var best *Booking
	for _, b := range p.bookings {
		if b.Kind != Reserving && b.Kind != Advance || b.Start >= e || b.End <= start || !p.touches(b, r) {
			continue
		}
		if best == nil || byStartJob(b, best) < 0 {
			best = b
		}
	}
	if best == nil {
		return Booking{}, false
	}
	return *best, true
}

// TestBlockerIndex compares Blocker (over the index of reservations by
// start) with a look at every booking, while reservations are made,
// replaced and removed in numbers that make the index merge many times.
func TestBlockerIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	p := New(0)
	for i := 0; i < 20; i++ {
		n := Node{Name: "n" + strconv.Itoa(i), Slots: 4}
		if i%3 == 0 {
			n.Props = []string{"big"}
		}
		p.AddNode(n)
	}
	p.SetGlobal("lic", 4)
	var jobs []string
	for step := 0; step < 3000; step++ {
		if rng.Intn(3) == 0 && len(jobs) > 0 {
			k := rng.Intn(len(jobs))
			p.Unbook(jobs[k])
			jobs = append(jobs[:k], jobs[k+1:]...)
		}
		job := "j" + strconv.Itoa(rng.Intn(400)) // a job booked again replaces its booking
		start := rng.Int63n(1000)
		b := Booking{Job: job, Kind: Kind(rng.Intn(5)), Start: start, End: start + 1 + rng.Int63n(300),
			Nodes: []Slot{{"n" + strconv.Itoa(rng.Intn(20)), 1}}}
		if rng.Intn(4) == 0 {
			b.Global = map[string]float64{"lic": 1}
		}
		p.Book(b)
		jobs = append(jobs, job)
		el := placement.Element{Count: 1, PPN: 1}
		if rng.Intn(2) == 0 {
			el.Props = []string{"big"}
		}
		r := Request{Spec: placement.Spec{Elements: []placement.Element{el}}, Duration: 1 + rng.Int63n(200)}
		if rng.Intn(4) == 0 {
			r = Request{Global: map[string]float64{"lic": 1}, Duration: 1 + rng.Int63n(200)}
		}
		at := rng.Int63n(1000)
		got, ok := p.Blocker(r, at)
		want, wok := naiveBlocker(p, r, at)
		if ok != wok || ok && (got.Job != want.Job || got.Start != want.Start) {
			t.Fatalf("step %d: Blocker(%+v, %d) = %s@%d %v, want %s@%d %v", step, r, at, got.Job, got.Start, ok, want.Job, want.Start, wok)
		}
	}
}
