package server

import (
	"testing"

	"gopbs/server/state"
)

func TestParseNodeSpec(t *testing.T) {
	known := func(n string) bool { return n == "vm" || n == "vm2" }
	for _, tc := range []struct {
		spec string
		want []nodeElement
		ok   bool
	}{
		{"1", []nodeElement{{count: 1, ppn: 1}}, true},
		{"2:ppn=4", []nodeElement{{count: 2, ppn: 4}}, true},
		{"vm:ppn=2+vm2", []nodeElement{{count: 1, name: "vm", ppn: 2}, {count: 1, name: "vm2", ppn: 1}}, true},
		{"bigmem:ib", []nodeElement{{count: 1, ppn: 1, props: []string{"bigmem", "ib"}}}, true},
		{"1#shared", []nodeElement{{count: 1, ppn: 1}}, true},
		{"2#fast", []nodeElement{{count: 2, ppn: 1, props: []string{"fast"}}}, true},
		{"1:procs=3", []nodeElement{{count: 1, ppn: 3}}, true},
		{"0", nil, false},
		{"1:ppn=0", nil, false},
		{"1:ppn=x", nil, false},
		{"1+", nil, false},
		{"1:foo=2", nil, false},
	} {
		got, ok := parseNodeSpec(tc.spec, known)
		if ok != tc.ok {
			t.Errorf("%q: ok %v", tc.spec, ok)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %+v", tc.spec, got)
			continue
		}
		for i := range got {
			g, w := got[i], tc.want[i]
			if g.count != w.count || g.name != w.name || g.ppn != w.ppn || len(g.props) != len(w.props) {
				t.Errorf("%q element %d: %+v want %+v", tc.spec, i, g, w)
			}
		}
	}
}

func TestAllocateExecHostOrder(t *testing.T) {
	s := &Server{name: "srv", nodeByName: map[string]*state.Node{}}
	s.run = s.newRunLink()
	for _, n := range []*state.Node{{Name: "A", NP: 2}, {Name: "B", NP: 2}, {Name: "C", NP: 1, State: state.NodeStateDown}} {
		s.nodes = append(s.nodes, n)
		s.nodeByName[n.Name] = n
	}
	j := &state.Job{}
	for _, tc := range []struct{ spec, want string }{
		{"2:ppn=2", "B/1+B/0+A/1+A/0"},
		{"A:ppn=2+B", "A/1+A/0+B/0"},
		{"1", "A/0"},
		{"C", ""},
		{"3", ""},
	} {
		slots, bad := s.allocate(j, tc.spec)
		got := state.FormatExecHost(slots)
		if tc.want == "" {
			if bad == nil {
				t.Errorf("%q: allocated %q", tc.spec, got)
			}
			continue
		}
		if bad != nil || got != tc.want {
			t.Errorf("%q: %q (%v), want %q", tc.spec, got, bad, tc.want)
		}
	}
	// no nodes at all: the job runs on the server host
	empty := &Server{name: "srv", nodeByName: map[string]*state.Node{}}
	if slots, _ := empty.allocate(j, ""); state.FormatExecHost(slots) != "srv/0" {
		t.Errorf("no nodes: %v", slots)
	}
}

func TestAssignedAmounts(t *testing.T) {
	for _, tc := range []struct {
		res, v string
		n      int64
		out    string
	}{
		{"nodect", "2", 2, "2"},
		{"mem", "1gb", 1 << 30, "1048576kb"},
		{"vmem", "100b", 100, "100b"},
		{"mem", "0", 0, "0b"},
	} {
		n, ok := resourceAmount(tc.res, tc.v)
		if !ok || n != tc.n {
			t.Errorf("resourceAmount(%s, %s) = %d %v", tc.res, tc.v, n, ok)
		}
		if got := formatAmount(tc.res, n); got != tc.out {
			t.Errorf("formatAmount(%s, %d) = %q", tc.res, n, got)
		}
	}
	if _, ok := resourceAmount("ncpus", "x"); ok {
		t.Error("bad count accepted")
	}
}
