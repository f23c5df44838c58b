package server

import (
	"testing"

	"gopbs/server/state"
)

func TestAllocateExecHostOrder(t *testing.T) {
	s := &Server{name: "srv", nodeByName: map[string]*state.Node{}}
	s.run = runHost{s}.newLink()
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
		slots, bad := s.cluster().Allocate(j, tc.spec, nil)
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
	if slots, _ := empty.cluster().Allocate(j, "", nil); state.FormatExecHost(slots) != "srv/0" {
		t.Errorf("no nodes: %v", slots)
	}
}
