package profile

import (
	"math/rand"
	"reflect"
	"strconv"
	"testing"

	"gopbs/sched/placement"
)

// TestEarliestSlotsMatchesScan compares earliestSlots (the sweep over the
// cached free intervals) with trying every release time, and Fit with
// looking at every node, over random
// profiles that change between the questions (bookings made and removed,
// so that a stale cache would show), with server-wide and queue
// consumables, node properties, named nodes and down nodes.
func TestEarliestSlotsMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 200; round++ {
		p := New(100)
		nodes := 1 + rng.Intn(8)
		for i := 0; i < nodes; i++ {
			n := Node{Name: "n" + strconv.Itoa(i), Slots: 1 + rng.Intn(4), Down: rng.Intn(8) == 0}
			if rng.Intn(2) == 0 {
				n.Props = []string{"big"}
			}
			p.AddNode(n)
		}
		p.SetGlobal("lic", float64(1+rng.Intn(3)))
		p.SetQueue("q", "ncpus", float64(2+rng.Intn(6)))
		var booked []string
		for step := 0; step < 150; step++ {
			switch {
			case rng.Intn(4) == 0 && len(booked) > 0:
				k := rng.Intn(len(booked))
				p.Unbook(booked[k])
				booked = append(booked[:k], booked[k+1:]...)
			case rng.Intn(2) == 0:
				n := p.nodes[rng.Intn(nodes)]
				start := 100 + rng.Int63n(300)
				end := start + 1 + rng.Int63n(150)
				if rng.Intn(8) == 0 {
					end = Forever
				}
				job := "j" + strconv.Itoa(step)
				bk := Booking{Job: job, Kind: Kind(rng.Intn(4)), Start: start, End: end,
					Nodes: []Slot{{n.Name, 1 + rng.Intn(2)}}, Queue: "q", QueueUse: map[string]float64{"ncpus": float64(rng.Intn(3))}}
				if rng.Intn(3) == 0 {
					bk.Global = map[string]float64{"lic": 1}
				}
				p.Book(bk)
				booked = append(booked, job)
			default:
				el := placement.Element{Count: 1 + rng.Intn(3), PPN: 1 + rng.Intn(3)}
				switch rng.Intn(4) {
				case 0:
					el.Props = []string{"big"}
				case 1:
					el.Name, el.Count = "n"+strconv.Itoa(rng.Intn(nodes)), 1
				}
				r := Request{Spec: placement.Spec{Elements: []placement.Element{el}}, Duration: 1 + rng.Int63n(120), Queue: "q"}
				if rng.Intn(5) == 0 {
					r.Duration = Forever
				}
				if rng.Intn(3) == 0 {
					r.Global = map[string]float64{"lic": 1}
				}
				if rng.Intn(3) == 0 {
					r.QueueUse = map[string]float64{"ncpus": float64(1 + rng.Intn(3))}
				}
				from := 100 + rng.Int63n(200)
				f1, fok1 := p.Fit(r, from)
				f2, fok2 := p.fitScan(r, from)
				if fok1 != fok2 || !reflect.DeepEqual(f1, f2) {
					t.Fatalf("round %d step %d: Fit %v %v, fitScan %v %v (request %+v at %d)", round, step, f1, fok1, f2, fok2, r, from)
				}
				s1, n1, ok1 := p.earliestSlots(r, from)
				s2, n2, ok2 := p.earliestScan(r, from)
				if ok1 != ok2 || s1 != s2 || !reflect.DeepEqual(n1, n2) {
					for _, n := range p.nodes {
						t.Logf("node %s slots %d down %v props %v: %v %v", n.Name, n.Slots, n.Down, n.Props, n.slots.at, n.slots.use)
					}
					t.Fatalf("round %d step %d: sweep %d %v %v, scan %d %v %v (request %+v from %d)", round, step, s1, n1, ok1, s2, n2, ok2, r, from)
				}
			}
		}
	}
}
