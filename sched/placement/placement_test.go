package placement

import (
	"reflect"
	"testing"

	"gopbs/sched/world"
)

func cluster() []*world.Node {
	return []*world.Node{
		{Name: "n01", NP: 4, State: world.NodeFree, Properties: []string{"big"}},
		{Name: "n02", NP: 4, State: world.NodeFree},
		{Name: "n03", NP: 2, State: world.NodeDown, Properties: []string{"big"}},
		{Name: "ts1", NP: 8, State: world.NodeFree, TimeShared: true},
	}
}

func TestParseSpec(t *testing.T) {
	isNode := func(s string) bool { return s == "n01" }
	tests := []struct {
		in   string
		want Spec
	}{
		{"1", Spec{Elements: []Element{{Count: 1, PPN: 1}}}},
		{"2:ppn=4", Spec{Elements: []Element{{Count: 2, PPN: 4}}}},
		{"n01:ppn=2+big", Spec{Elements: []Element{{Count: 1, Name: "n01", PPN: 2}, {Count: 1, PPN: 1, Props: []string{"big"}}}}},
		{"1#shared", Spec{Shared: true, Elements: []Element{{Count: 1, PPN: 1}}}},
		{"3:procs=2:ib#fast", Spec{Elements: []Element{{Count: 3, PPN: 2, Props: []string{"ib", "fast"}}}}},
		{"1:gpus=2", Spec{Elements: []Element{{Count: 1, PPN: 1}}}},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in, isNode)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "0", "2:ppn=x", "1+", "1::big", "1#", "-1"} {
		if _, err := ParseSpec(bad, nil); err == nil {
			t.Errorf("ParseSpec(%q) succeeded", bad)
		}
	}
}

func TestQueryAndAllocate(t *testing.T) {
	p := NewPool(cluster())
	q := func(s string) Availability {
		spec, err := p.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p.Query(spec)
	}
	tests := []struct {
		spec string
		want Availability
	}{
		{"1", Now},
		{"2:ppn=4", Now},
		{"3", Later},        // n03 is down
		{"2:big", Later},    // only n01 is up with big
		{"1:ppn=5", Never},  // no node has 5 VPs
		{"4", Never},        // time-shared nodes do not count
		{"n02:ppn=4", Now},  // named node
		{"n01+n02", Now},    // two named nodes
		{"1:nosuch", Never}, // unknown property
	}
	for _, tt := range tests {
		if got := q(tt.spec); got != tt.want {
			t.Errorf("Query(%q) = %d, want %d", tt.spec, got, tt.want)
		}
	}
	spec, _ := p.Parse("1:ppn=3")
	names, ok := p.Allocate(spec)
	if !ok || !reflect.DeepEqual(names, []string{"n01"}) {
		t.Fatalf("Allocate = %v %v", names, ok)
	}
	if got := q("2:ppn=2"); got != Later {
		t.Errorf("after allocation 2:ppn=2 = %d, want Later", got)
	}
	if got := q("1:ppn=4"); got != Now {
		t.Errorf("n02 still free: got %d", got)
	}
	spec, _ = p.Parse("1:ppn=1")
	if names, _ := p.Allocate(spec); names[0] != "n01" {
		t.Errorf("first fit should take n01's last VP, got %v", names)
	}
	if got := q("1#shared"); got != Now {
		t.Errorf("shared on n02 = %d", got)
	}
	spec, _ = p.Parse("n01#shared")
	if p.Query(spec) != Later {
		t.Error("job-exclusive node accepted a shared job")
	}
}

func TestFreeAndTake(t *testing.T) {
	nodes := cluster()
	p := NewPool(nodes)
	free := func() []int {
		var out []int
		for _, n := range p.Nodes() {
			out = append(out, p.Free(n.Name))
		}
		return out
	}
	before := free()
	if !p.Take(nodes[0].Name, 1) {
		t.Fatalf("Take(%s, 1) failed with %v free", nodes[0].Name, before)
	}
	after := free()
	if after[0] != before[0]-1 || nodes[0].UsedSlots == 0 {
		t.Errorf("free %v -> %v, UsedSlots %d", before, after, nodes[0].UsedSlots)
	}
	if p.Take(nodes[0].Name, after[0]+1) || p.Take("nosuchnode", 1) {
		t.Error("Take beyond the free VPs or of an unknown node succeeded")
	}
	if p.Free("nosuchnode") != 0 {
		t.Error("unknown node has free VPs")
	}
	m := NewModel(cluster())
	name := m.Nodes()[0].Name
	if !m.Take(name, 1) || m.Nodes()[0].UsedSlots != 0 {
		t.Error("a model's Take must not touch the nodes")
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add("2:ppn=4+n01:big#shared")
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s, func(string) bool { return false })
		if err == nil {
			p := NewPool(cluster())
			p.Query(spec)
		}
	})
}
