package reservable

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/resv"
	"gopbs/sched/config"
)

var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func load(t *testing.T, name string) *Policy {
	t.Helper()
	p, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Custom() {
		t.Fatalf("%s: no custom policy", name)
	}
	return p
}

func names(nodes []*Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func cluster(n int) []*Node {
	var nodes []*Node
	for i := 1; i <= n; i++ {
		nodes = append(nodes, &Node{Name: fmt.Sprintf("node%d", i), IsAlive: true, NCPU: 4, PhysMem: 8 << 30})
	}
	return nodes
}

// TestCheckNodeStatus is seed §3.4.5.1: a node is reservable if it runs
// no job, is alive, has a load of at most 0.3 and is not one of the
// unusable nodes.
func TestCheckNodeStatus(t *testing.T) {
	p := load(t, "check-node-status.ad")
	req := &Request{Owner: "alice", Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), NodeCount: 1}
	tests := []struct {
		node Node
		want bool
	}{
		{Node{Name: "n1", IsAlive: true, LoadAvg: 0.1}, true},
		{Node{Name: "n1", IsAlive: true, LoadAvg: 0.3}, true},
		{Node{Name: "n1", IsAlive: true, LoadAvg: 0.31}, false},
		{Node{Name: "n1", IsAlive: true, NRunJobs: 1}, false},
		{Node{Name: "n1", IsAlive: false}, false},
		{Node{Name: "unusableA", IsAlive: true}, false},
		{Node{Name: "unusableB", IsAlive: true}, false},
		{Node{Name: "unusableC", IsAlive: true}, true},
	}
	for _, tc := range tests {
		got, err := p.Reservable(&Input{Now: now, Request: req, Candidate: &tc.node})
		if err != nil || got != tc.want {
			t.Errorf("%+v: %v, %v; want %v", tc.node, got, err, tc.want)
		}
	}
}

// TestTimeUntilStart is seed §3.4.5.2 on ten nodes: VIPs may reserve
// every node; userX (in Users) 90% up to 30 minutes before the start,
// 50% from 2 hours before, and linearly between; others 50% and 30%;
// nobody for a start in the past, 7 days or more ahead, or a duration of
// 2 days or more.
func TestTimeUntilStart(t *testing.T) {
	p := load(t, "time-until-start.ad")
	all := cluster(10)
	tests := []struct {
		owner    string
		until    time.Duration
		duration time.Duration
		want     int
	}{
		{"userA", 10 * time.Minute, time.Hour, 10},
		{"userC", 3 * 24 * time.Hour, time.Hour, 10},
		{"userX", 10 * time.Minute, time.Hour, 9},
		{"userX", 30 * time.Minute, time.Hour, 9},
		{"userX", 75 * time.Minute, time.Hour, 7}, // halfway: 90 + (50-90)/2 = 70%
		{"userX", 2 * time.Hour, time.Hour, 5},
		{"userX", 6 * 24 * time.Hour, time.Hour, 5},
		{"other", 10 * time.Minute, time.Hour, 5},
		{"other", 75 * time.Minute, time.Hour, 4}, // 40%
		{"other", 3 * time.Hour, time.Hour, 3},
		{"userA", -time.Minute, time.Hour, 0},
		{"userA", 0, time.Hour, 0},
		{"userA", 7 * 24 * time.Hour, time.Hour, 0},
		{"userX", time.Hour, 48 * time.Hour, 0},
		{"userX", time.Hour, 47 * time.Hour, 7}, // 90 - 40/3 = 76.7%
	}
	for _, tc := range tests {
		req := &Request{Owner: tc.owner, Start: now.Add(tc.until), End: now.Add(tc.until + tc.duration), NodeCount: 10}
		chosen, refused := p.Choose(Input{Now: now, Request: req, All: all}, all)
		if len(chosen) != tc.want {
			t.Errorf("%s, start in %v, %v long: %d nodes, want %d (refused %v)", tc.owner, tc.until, tc.duration, len(chosen), tc.want, refused)
		}
		for _, n := range all[len(chosen):] {
			if refused[n.Name] != Attribute+" is false" {
				t.Errorf("%s: %s refused for %q", tc.owner, n.Name, refused[n.Name])
			}
		}
	}
}

// TestMaxUsage is seed §3.4.5.3: a reservation may be made while its
// owner's reservations within a week either side of now number at most
// 100, last at most 2 days together and use at most 1000 node-hours.
func TestMaxUsage(t *testing.T) {
	p := load(t, "max-usage.ad")
	req := &Request{Owner: "alice", Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), NodeCount: 1}
	week := int64(7 * 24 * 3600)
	tests := []struct {
		count int
		secs  int64
		nh    float64
		want  bool
	}{
		{0, 0, 0, true},
		{100, 2 * 24 * 3600, 1000, true},
		{101, 0, 0, false},
		{1, 2*24*3600 + 1, 0, false},
		{1, 3600, 1000.5, false},
	}
	for _, tc := range tests {
		var asked []any
		util := func(owner string, start, end int64) (int, int64, float64) {
			asked = []any{owner, start, end}
			return tc.count, tc.secs, tc.nh
		}
		got, err := p.Reservable(&Input{Now: now, Request: req, Candidate: &Node{Name: "n1", IsAlive: true}, RsvUtil: util})
		if err != nil || got != tc.want {
			t.Errorf("%+v: %v, %v", tc, got, err)
		}
		if want := []any{"alice", now.Unix() - week, now.Unix() + week}; !reflect.DeepEqual(asked, want) {
			t.Errorf("plus_rsvutil%v, want %v", asked, want)
		}
	}
	_, err := p.Reservable(&Input{Now: now, Request: req, Candidate: &Node{Name: "n1"}})
	if err == nil || !strings.Contains(err.Error(), "plus_rsvutil: no reservation usage is known here") {
		t.Errorf("without usage: %v", err)
	}
}

// TestGroupNodes is seed §3.4.5.4: Proj1's users may reserve node1 and
// node2, Proj2's node3 and node4; userA, in both, all four.
func TestGroupNodes(t *testing.T) {
	p := load(t, "group-nodes.ad")
	all := cluster(5)
	for owner, want := range map[string][]string{
		"userA": {"node1", "node2", "node3", "node4"},
		"userB": {"node1", "node2"},
		"userC": {"node3", "node4"},
		"userD": nil,
	} {
		req := &Request{Owner: owner, Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), NodeCount: 5}
		chosen, _ := p.Choose(Input{Now: now, Request: req, All: all}, all)
		if got := names(chosen); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", owner, got, want)
		}
	}
}

func TestNormal(t *testing.T) {
	base := Node{Name: "n1", IsAlive: true, NCPU: 4, PhysMem: 4 << 30, Arch: "x86_64", OS: "linux",
		Properties: []string{"fast", "gpu"}, Resources: map[string]string{"scratch": "big"}}
	tests := []struct {
		edit func(*Node)
		req  resv.Requirements
		want string
	}{
		{func(*Node) {}, resv.Requirements{MemBytes: 4 << 30, NCPU: 4, Arch: "x86_64", OS: "linux", Props: []string{"gpu"},
			Attrs: []resv.Attr{{Name: "scratch", Value: "big"}, {Name: "fast", Value: "true"}}}, ""},
		{func(n *Node) { n.IsAlive = false }, resv.Requirements{}, "not alive"},
		{func(n *Node) { n.Reserved = true }, resv.Requirements{}, "reserved by another reservation in that window"},
		{func(*Node) {}, resv.Requirements{MemBytes: 5 << 30}, "physical memory 4294967296 bytes, 5368709120 wanted"},
		{func(*Node) {}, resv.Requirements{NCPU: 8}, "4 processors, 8 wanted"},
		{func(*Node) {}, resv.Requirements{Slots: 5}, "4 slots, 5 wanted"},
		{func(*Node) {}, resv.Requirements{Arch: "arm64"}, `arch "x86_64", "arm64" wanted`},
		{func(*Node) {}, resv.Requirements{OS: "aix"}, `os "linux", "aix" wanted`},
		{func(*Node) {}, resv.Requirements{Props: []string{"bigmem"}}, "no property bigmem"},
		{func(*Node) {}, resv.Requirements{Attrs: []resv.Attr{{Name: "scratch", Value: "small"}}}, "no scratch=small"},
	}
	for i, tc := range tests {
		n := base
		tc.edit(&n)
		if got := Normal(&n, &tc.req); got != tc.want {
			t.Errorf("%d: %q, want %q", i, got, tc.want)
		}
	}
}

func TestPolicyErrors(t *testing.T) {
	p, err := Load(filepath.Join(t.TempDir(), "none.ad"))
	if err != nil || p.Custom() {
		t.Fatalf("missing file: %v, %v", p, err)
	}
	if ok, err := p.Reservable(&Input{Candidate: &Node{}, Request: &Request{}}); !ok || err != nil {
		t.Errorf("no policy: %v, %v", ok, err)
	}
	for src, want := range map[string]string{
		"[ a = 1; ]":                    "x.ad: PLUS_NODE_RESERVABLE is not defined",
		"[ PLUS_NODE_RESERVABLE = b; ]": "x.ad: line 1: attribute PLUS_NODE_RESERVABLE refers to b, which is not defined",
		"[ PLUS_NODE_RESERVABLE = true; PLUS_RSV_OWNER = 1 ]": "x.ad: line 1: attribute PLUS_RSV_OWNER is set by the evaluator and cannot be defined",
		"[\n PLUS_NODE_RESERVABLE = a;\n a = b;\n b = a ]":    "x.ad: line 3: attributes refer to each other in a cycle: a -> b -> a",
		"[ PLUS_NODE_RESERVABLE = nosuch(1) ]":                "x.ad: line 1: unknown function nosuch",
		"[ PLUS_NODE_RESERVABLE = member(1) ]":                "x.ad: line 1: member takes 2 arguments, not 1",
		"[ PLUS_NODE_RESERVABLE = (1 + ]":                     `x.ad: line 1: want an expression, found "]"`,
		"[\n\n PLUS_NODE_RESERVABLE = \"open\n\" ]":           "x.ad: line 3: newline in string",
	} {
		if _, err := Parse(src, "x.ad"); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", src, err, want)
		}
	}
	p, err = Parse(`[ PLUS_NODE_RESERVABLE = PLUS_CANDIDATE_NODE.loadavg * 2 ]`, "x.ad")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Reservable(&Input{Candidate: &Node{LoadAvg: 0.5}, Request: &Request{}})
	if err == nil || err.Error() != "x.ad: PLUS_NODE_RESERVABLE is 1 (float64), not a boolean" {
		t.Errorf("non-boolean: %v", err)
	}
	p, err = Parse(`[ PLUS_NODE_RESERVABLE = member("a", PLUS_RSV_OWNER) ]`, "x.ad")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Reservable(&Input{Candidate: &Node{}, Request: &Request{Owner: "a"}})
	if err == nil || !strings.Contains(err.Error(), "member: second argument is string, not a list") {
		t.Errorf("bad argument: %v", err)
	}
}

func TestSortNodes(t *testing.T) {
	mk := func() []*Node {
		return []*Node{
			{Name: "c", LoadAvg: 0.5, IdleSeconds: 10, PhysMem: 4},
			{Name: "a", LoadAvg: 0.1, IdleSeconds: 10, PhysMem: 8},
			{Name: "d", LoadAvg: 0.1, IdleSeconds: 300, PhysMem: 2},
			{Name: "b", LoadAvg: 0.5, IdleSeconds: 0, PhysMem: 8},
		}
	}
	for _, tc := range []struct {
		keys []config.NodeSortKey
		want []string
	}{
		{nil, []string{"c", "a", "d", "b"}},
		{[]config.NodeSortKey{config.NodeName}, []string{"a", "b", "c", "d"}},
		{[]config.NodeSortKey{config.LowestLoadAverage}, []string{"a", "d", "c", "b"}},
		{[]config.NodeSortKey{config.LowestLoadAverage, config.LongestIdleTime}, []string{"d", "a", "c", "b"}},
		{[]config.NodeSortKey{config.LargestPhysicalMemory, config.NodeName}, []string{"a", "b", "c", "d"}},
		{[]config.NodeSortKey{config.LongestIdleTime, config.LargestPhysicalMemory}, []string{"d", "a", "c", "b"}},
	} {
		nodes := mk()
		SortNodes(nodes, tc.keys)
		if got := names(nodes); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.keys, got, tc.want)
		}
	}
	// The seed's sample: NodeSortKey: LowestLoadAverage, LongestIdleTime
	// puts the least loaded, longest idle node first for Choose.
	p := load(t, "check-node-status.ad")
	nodes := []*Node{{Name: "n1", IsAlive: true, LoadAvg: 0.2}, {Name: "n2", IsAlive: true, LoadAvg: 0.05, IdleSeconds: 5},
		{Name: "n3", IsAlive: true, LoadAvg: 0.05, IdleSeconds: 50}}
	SortNodes(nodes, []config.NodeSortKey{config.LowestLoadAverage, config.LongestIdleTime})
	chosen, _ := p.Choose(Input{Now: now, Request: &Request{Owner: "a", NodeCount: 2}}, nodes)
	if got := names(chosen); !reflect.DeepEqual(got, []string{"n3", "n2"}) {
		t.Errorf("chosen %v", got)
	}
}
