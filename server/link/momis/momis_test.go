package momis

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"gopbs/server/state"
)

// fakeNodes is a node table of nodes whose names resolve through
// resolve.
type fakeNodes struct {
	nodes   []*state.Node
	resolve func(string) []netip.Addr
}

func (f *fakeNodes) Same(nodes []*state.Node) bool { return slices.Equal(nodes, f.nodes) }
func (f *fakeNodes) List() ([]*state.Node, []string) {
	names := make([]string, len(f.nodes))
	for i, n := range f.nodes {
		names[i] = n.Name
	}
	return slices.Clone(f.nodes), names
}
func (f *fakeNodes) Count() int                               { return len(f.nodes) }
func (f *fakeNodes) Down() []string                           { return nil }
func (f *fakeNodes) SetState(string, func(int) int)           {}
func (f *fakeNodes) Status(string, string, []string) []string { return nil }
func (f *fakeNodes) DeleteStray(string, string)               {}
func (f *fakeNodes) CheckRate() int64                         { return DefaultNodeCheckRate }
func (f *fakeNodes) Silent(string, int64)                     {}
func (f *fakeNodes) Resolve(name string) []netip.Addr         { return f.resolve(name) }
func (f *fakeNodes) Now() time.Time                           { return time.Now() }

// nodeByAddr resolves the node names once per change of the node list,
// prefers an exact address to loopback equivalence, and sees nodes
// created later.
func TestNodeByAddrIndex(t *testing.T) {
	s := &fakeNodes{}
	lookups := 0
	addrs := map[string][]netip.Addr{}
	s.resolve = func(h string) []netip.Addr { lookups++; return addrs[h] }
	rl := New(s, nil, 0, nil)
	const n = 1000
	for i := range n {
		name := fmt.Sprintf("sim%04d", i)
		addrs[name] = []netip.Addr{netip.AddrFrom4([4]byte{127, 1, byte(i >> 8), byte(i)})}
		s.nodes = append(s.nodes, &state.Node{Name: name})
	}
	addrs["remote"] = []netip.Addr{netip.MustParseAddr("10.0.0.7")}
	s.nodes = append(s.nodes, &state.Node{Name: "remote"})
	tests := []struct{ addr, want string }{
		{"127.1.0.5", "sim0005"},
		{"127.1.3.231", "sim0999"},
		{"::ffff:127.1.0.9", "sim0009"},
		{"127.0.0.1", "sim0000"}, // loopback: the first loopback node
		{"10.0.0.7", "remote"},
		{"10.0.0.8", ""},
	}
	for range 3 {
		for _, tc := range tests {
			if got := rl.nodeByAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
				t.Errorf("nodeByAddr(%s) = %q, want %q", tc.addr, got, tc.want)
			}
		}
	}
	if lookups != n+1 {
		t.Errorf("%d host lookups for %d nodes and %d streams, want one per node", lookups, n+1, 3*len(tests))
	}
	addrs["late"] = []netip.Addr{netip.MustParseAddr("10.0.0.8")}
	s.nodes = append(s.nodes, &state.Node{Name: "late"})
	if got := rl.nodeByAddr(netip.MustParseAddr("10.0.0.8")); got != "late" {
		t.Errorf("node created later: got %q", got)
	}
	// The IS_CLUSTER_ADDRS list comes from the same index.
	before := lookups
	for range 3 {
		addrs := rl.clusterAddrs()
		if len(addrs) != n+2 || addrs[0] != 127<<24|1<<16 || addrs[n+1] != 10<<24|8 {
			t.Fatalf("clusterAddrs: %d addresses, first %x, last %x", len(addrs), addrs[0], addrs[len(addrs)-1])
		}
	}
	if lookups != before {
		t.Errorf("clusterAddrs resolved %d names again", lookups-before)
	}
}
