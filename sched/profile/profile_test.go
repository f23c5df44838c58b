package profile

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"gopbs/sched/placement"
)

func spec(t *testing.T, s string) placement.Spec {
	t.Helper()
	sp, err := placement.ParseSpec(s, func(n string) bool { return strings.HasPrefix(n, "n") && len(n) <= 3 })
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestTimeline(t *testing.T) {
	var tl timeline
	tl.add(10, 20, 2)
	tl.add(15, Forever, 1)
	tl.add(0, 5, 4)
	for _, c := range []struct {
		at   int64
		want float64
	}{{-1, 0}, {0, 4}, {4, 4}, {5, 0}, {10, 2}, {15, 3}, {19, 3}, {20, 1}, {1 << 40, 1}} {
		if got := tl.value(c.at); got != c.want {
			t.Errorf("value(%d) = %v, want %v", c.at, got, c.want)
		}
	}
	if got := tl.peak(5, 15); got != 2 {
		t.Errorf("peak(5,15) = %v", got)
	}
	if got := tl.peak(6, 10); got != 0 {
		t.Errorf("peak(6,10) = %v", got)
	}
	if got := tl.releases(0, nil); !reflect.DeepEqual(got, []int64{5, 20}) {
		t.Errorf("releases = %v", got)
	}
	// removing everything leaves no points
	tl.add(10, 20, -2)
	tl.add(15, Forever, -1)
	tl.add(0, 5, -4)
	if len(tl.at) != 0 {
		t.Errorf("points left: %v %v", tl.at, tl.use)
	}
}

// TestTimelineRandom compares the diagram with a brute-force sum.
func TestTimelineRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	type iv struct {
		s, e int64
		a    float64
	}
	for round := 0; round < 200; round++ {
		var tl timeline
		var ivs []iv
		for k := 0; k < 12; k++ {
			s := rng.Int63n(50)
			e := s + 1 + rng.Int63n(30)
			if rng.Intn(5) == 0 {
				e = Forever
			}
			a := float64(1 + rng.Intn(4))
			tl.add(s, e, a)
			ivs = append(ivs, iv{s, e, a})
			if rng.Intn(3) == 0 {
				x := ivs[rng.Intn(len(ivs))]
				tl.add(x.s, x.e, -x.a)
				x.a = -x.a
				ivs = append(ivs, x)
			}
		}
		for at := int64(-1); at < 90; at++ {
			want := 0.0
			for _, x := range ivs {
				if x.s <= at && at < x.e {
					want += x.a
				}
			}
			if got := tl.value(at); got != want {
				t.Fatalf("round %d: value(%d) = %v, want %v", round, at, got, want)
			}
		}
		for i := 1; i < len(tl.at); i++ {
			if tl.use[i] == tl.use[i-1] || tl.at[i] <= tl.at[i-1] {
				t.Fatalf("round %d: redundant or unordered points %v %v", round, tl.at, tl.use)
			}
		}
	}
}

// cluster: n1..n4 with 4 slots; n3 and n4 have property big and 8gb.
func cluster() *Profile {
	p := New(1000)
	for _, n := range []Node{
		{Name: "n1", Slots: 4, Consumables: map[string]float64{"mem": 4}},
		{Name: "n2", Slots: 4, Consumables: map[string]float64{"mem": 4}},
		{Name: "n3", Slots: 4, Props: []string{"big"}, Consumables: map[string]float64{"mem": 8}},
		{Name: "n4", Slots: 4, Props: []string{"big"}, Consumables: map[string]float64{"mem": 8}},
	} {
		p.AddNode(n)
	}
	p.SetGlobal("license", 2)
	p.SetQueue("batch", "ncpus", 12)
	// running: r1 on n1 (4 slots) until 2000, r2 on n2 (2 slots) until
	// 1500, r3 on n3 (4 slots, 6gb) until 3000 holding a license.
	p.Book(Booking{Job: "r1", Kind: Running, Start: 500, End: 2000, Nodes: []Slot{{"n1", 4}}, Queue: "batch", QueueUse: map[string]float64{"ncpus": 4}})
	p.Book(Booking{Job: "r2", Kind: Running, Start: 900, End: 1500, Nodes: []Slot{{"n2", 2}}, Queue: "batch", QueueUse: map[string]float64{"ncpus": 2}})
	p.Book(Booking{Job: "r3", Kind: Running, Start: 800, End: 3000, Nodes: []Slot{{"n3", 4}}, PerNode: map[string]float64{"mem": 6},
		Global: map[string]float64{"license": 1}, Queue: "batch", QueueUse: map[string]float64{"ncpus": 4}})
	return p
}

func TestEarliest(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		per       map[string]float64
		global    map[string]float64
		queueUse  map[string]float64
		dur       int64
		from      int64
		wantStart int64
		wantNodes []Slot
		never     bool
	}{
		{name: "one slot now", spec: "1", dur: 100, wantStart: 1000, wantNodes: []Slot{{"n2", 1}}},
		{name: "whole node now", spec: "1:ppn=4", dur: 100, wantStart: 1000, wantNodes: []Slot{{"n4", 4}}},
		{name: "two whole nodes when r2 ends", spec: "2:ppn=4", dur: 100, wantStart: 1500, wantNodes: []Slot{{"n2", 4}, {"n4", 4}}},
		{name: "all nodes when r3 ends", spec: "4:ppn=4", dur: 100, wantStart: 3000,
			wantNodes: []Slot{{"n1", 4}, {"n2", 4}, {"n3", 4}, {"n4", 4}}},
		{name: "properties: n3 is full until 3000", spec: "2:big:ppn=1", dur: 100, wantStart: 3000, wantNodes: []Slot{{"n3", 1}, {"n4", 1}}},
		{name: "named nodes", spec: "n1:ppn=2+n3:ppn=1", dur: 100, wantStart: 3000, wantNodes: []Slot{{"n1", 2}, {"n3", 1}}},
		{name: "per-node memory", spec: "1:big", per: map[string]float64{"mem": 6}, dur: 100, wantStart: 1000, wantNodes: []Slot{{"n4", 1}}},
		{name: "per-node memory on two big nodes", spec: "2:big", per: map[string]float64{"mem": 6}, dur: 100, wantStart: 3000,
			wantNodes: []Slot{{"n3", 1}, {"n4", 1}}},
		{name: "global license", spec: "1", global: map[string]float64{"license": 2}, dur: 10, wantStart: 3000, wantNodes: []Slot{{"n1", 1}}},
		{name: "queue limit", spec: "1", queueUse: map[string]float64{"ncpus": 4}, dur: 10, wantStart: 1500, wantNodes: []Slot{{"n2", 1}}},
		{name: "from later", spec: "1", dur: 10, from: 2500, wantStart: 2500, wantNodes: []Slot{{"n1", 1}}},
		{name: "no end", spec: "1:ppn=3", dur: Forever, wantStart: 1000, wantNodes: []Slot{{"n4", 3}}},
		{name: "no end, two nodes", spec: "2:ppn=3", dur: Forever, wantStart: 1500, wantNodes: []Slot{{"n2", 3}, {"n4", 3}}},
		{name: "never: too many nodes", spec: "5", dur: 1, never: true},
		{name: "never: too much memory", spec: "1", per: map[string]float64{"mem": 9}, dur: 1, never: true},
		{name: "never: too many licenses", spec: "1", global: map[string]float64{"license": 3}, dur: 1, never: true},
	}
	for _, tt := range tests {
		p := cluster()
		r := Request{Spec: spec(t, tt.spec), PerNode: tt.per, Global: tt.global, Queue: "batch", QueueUse: tt.queueUse, Duration: tt.dur}
		start, nodes, ok := p.Earliest(r, tt.from)
		if tt.never {
			if ok {
				t.Errorf("%s: fits at %d on %v, want never", tt.name, start, nodes)
			}
			continue
		}
		if !ok || start != tt.wantStart || !reflect.DeepEqual(nodes, tt.wantNodes) {
			t.Errorf("%s: Earliest = %d %v %v, want %d %v", tt.name, start, nodes, ok, tt.wantStart, tt.wantNodes)
		}
	}
}

// TestReservationBlocksAndBackfill: a reservation holds its nodes for its
// interval; a short request fits before it, a long one only after it.
func TestReservationBlocksAndBackfill(t *testing.T) {
	p := cluster()
	big := Request{Spec: spec(t, "4:ppn=4"), Duration: 1000}
	start, nodes, ok := p.Earliest(big, 0)
	if !ok || start != 3000 {
		t.Fatalf("big job: %d %v", start, ok)
	}
	p.Book(Booking{Job: "A", Kind: Reserving, Start: start, End: start + 1000, Nodes: nodes})
	short := Request{Spec: spec(t, "1:ppn=2"), Duration: 500}
	if got, ok := p.Fit(short, 1000); !ok || got[0].Node != "n2" {
		t.Errorf("short job does not backfill: %v %v", got, ok)
	}
	long := Request{Spec: spec(t, "1:ppn=2"), Duration: 2500}
	if got, ok := p.Fit(long, 1000); ok {
		t.Errorf("long job fits now on %v and would delay the reservation", got)
	}
	if b, ok := p.Blocker(long, 1000); !ok || b.Job != "A" {
		t.Errorf("blocker = %+v %v", b, ok)
	}
	if s, _, ok := p.Earliest(long, 0); !ok || s != 4000 {
		t.Errorf("long job earliest %d, want 4000 (after A)", s)
	}
	if _, ok := p.Blocker(short, 1000); ok {
		t.Error("short job reported blocked")
	}
	// unbooking restores the profile
	if _, ok := p.Unbook("A"); !ok {
		t.Fatal("unbook")
	}
	if _, ok := p.Fit(long, 1500); !ok {
		t.Error("long job does not fit after the reservation is gone")
	}
}

func TestDownNode(t *testing.T) {
	p := New(0)
	p.AddNode(Node{Name: "n1", Slots: 2})
	p.AddNode(Node{Name: "n2", Slots: 2, Down: true})
	if _, _, ok := p.Earliest(Request{Spec: spec(t, "2"), Duration: 10}, 0); ok {
		t.Error("two nodes with one down")
	}
	if s, n, ok := p.Earliest(Request{Spec: spec(t, "1:ppn=2"), Duration: 10}, 0); !ok || s != 0 || n[0].Node != "n1" {
		t.Errorf("one node: %d %v %v", s, n, ok)
	}
	if p.FreeSlots("n2", 0) != 0 || p.FreeSlots("n1", 0) != 2 {
		t.Error("free slots")
	}
}

func TestSharedAndNoNodes(t *testing.T) {
	p := New(0)
	p.AddNode(Node{Name: "n1", Slots: 1})
	p.Book(Booking{Job: "r", Start: 0, End: 50, Nodes: []Slot{{"n1", 1}}})
	if s, _, ok := p.Earliest(Request{Spec: spec(t, "1#shared"), Duration: 10}, 0); !ok || s != 0 {
		t.Errorf("shared: %d %v", s, ok)
	}
	if s, n, ok := p.Earliest(Request{Duration: 10}, 0); !ok || s != 0 || n != nil {
		t.Errorf("no nodes: %d %v %v", s, n, ok)
	}
}

func TestWriteSchedule(t *testing.T) {
	p := cluster()
	p.Book(Booking{Job: "7[2].vm", Kind: Reserving, Start: 3000, End: 3600, Nodes: []Slot{{"n1", 2}, {"n2", 2}},
		PerNode: map[string]float64{"mem": 1.5}, Global: map[string]float64{"license": 1}, Queue: "batch", QueueUse: map[string]float64{"ncpus": 4}})
	p.Book(Booking{Job: "9.vm", Kind: Starting, Start: 1000, End: Forever, Nodes: []Slot{{"n4", 1}}})
	var b strings.Builder
	if err := WriteSchedule(&b, "vm", p.Bookings()); err != nil {
		t.Fatal(err)
	}
	want := `::::::::
r1:1:RUNNING:500:1500:Q:batch:ncpus:4.000000
r1:1:RUNNING:500:1500:H:n1:slots:4.000000
r3:1:RUNNING:800:2200:G:vm:license:1.000000
r3:1:RUNNING:800:2200:Q:batch:ncpus:4.000000
r3:1:RUNNING:800:2200:H:n3:slots:4.000000
r3:1:RUNNING:800:2200:H:n3:mem:6.000000
r2:1:RUNNING:900:600:Q:batch:ncpus:2.000000
r2:1:RUNNING:900:600:H:n2:slots:2.000000
9.vm:1:STARTING:1000:INFINITY:H:n4:slots:1.000000
7[].vm:2:RESERVING:3000:600:G:vm:license:1.000000
7[].vm:2:RESERVING:3000:600:Q:batch:ncpus:4.000000
7[].vm:2:RESERVING:3000:600:H:n1:slots:2.000000
7[].vm:2:RESERVING:3000:600:H:n1:mem:1.500000
7[].vm:2:RESERVING:3000:600:H:n2:slots:2.000000
7[].vm:2:RESERVING:3000:600:H:n2:mem:1.500000
`
	if b.String() != want {
		t.Errorf("schedule:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestEarliestOneMatchesScan compares the sweep of one-element requests
// with trying every release time, over random profiles.
func TestEarliestOneMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := 0; round < 300; round++ {
		p := New(100)
		nodes := 1 + rng.Intn(6)
		for i := 0; i < nodes; i++ {
			n := Node{Name: "n" + string(rune('a'+i)), Slots: 1 + rng.Intn(4), Down: rng.Intn(8) == 0,
				Consumables: map[string]float64{"mem": float64(4 + rng.Intn(4))}}
			if rng.Intn(2) == 0 {
				n.Props = []string{"big"}
			}
			p.AddNode(n)
		}
		p.SetGlobal("lic", float64(1+rng.Intn(3)))
		for b := 0; b < 12; b++ {
			n := p.nodes[rng.Intn(nodes)]
			start := 100 + rng.Int63n(200)
			end := start + 1 + rng.Int63n(150)
			if rng.Intn(6) == 0 {
				end = Forever
			}
			bk := Booking{Job: "j" + string(rune('A'+b)), Kind: Kind(rng.Intn(4)), Start: start, End: end,
				Nodes: []Slot{{n.Name, 1 + rng.Intn(2)}}, PerNode: map[string]float64{"mem": float64(rng.Intn(3))}}
			if rng.Intn(3) == 0 {
				bk.Global = map[string]float64{"lic": 1}
			}
			p.Book(bk)
		}
		el := placement.Element{Count: 1 + rng.Intn(3), PPN: 1 + rng.Intn(3)}
		if rng.Intn(3) == 0 {
			el.Props = []string{"big"}
		}
		r := Request{Spec: placement.Spec{Elements: []placement.Element{el}}, Duration: 1 + rng.Int63n(120)}
		if rng.Intn(5) == 0 {
			r.Duration = Forever
		}
		if rng.Intn(3) == 0 {
			r.PerNode = map[string]float64{"mem": float64(1 + rng.Intn(5))}
		}
		if rng.Intn(3) == 0 {
			r.Global = map[string]float64{"lic": 1}
		}
		from := 100 + rng.Int63n(100)
		s1, n1, ok1 := p.earliestOne(r, from)
		s2, n2, ok2 := p.earliestScan(r, from)
		if ok1 != ok2 || s1 != s2 || !reflect.DeepEqual(n1, n2) {
			for _, n := range p.nodes {
				t.Logf("node %s slots %d down %v props %v: %v %v", n.Name, n.Slots, n.Down, n.Props, n.slots.at, n.slots.use)
			}
			t.Fatalf("round %d: sweep %d %v %v, scan %d %v %v (request %+v from %d)", round, s1, n1, ok1, s2, n2, ok2, r, from)
		}
	}
}
