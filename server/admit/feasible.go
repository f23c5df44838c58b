package admit

import (
	"sort"

	"gopbs/server/nodespec"
	"gopbs/server/state"
)

// MsgInfeasible is TORQUE's text for a node request that the configured
// nodes can never satisfy (spec 12 §4.3, verified live).
const MsgInfeasible = "cannot locate feasible nodes (nodes file is empty or all systems are busy)"

// Feasible reports whether the nodes specification spec could be
// satisfied by the configured nodes if all of them were up and idle:
// enough distinct cluster nodes with the properties (or names) and np
// each element asks for. State and running jobs play no part — a busy or
// down node may serve the job later — and a server without nodes runs
// jobs on its own host (spec 12 §9.2), so every request is feasible there.
// A spec that does not parse is left to allocation to refuse.
func (c *Checker) Feasible(spec string) bool {
	nodes := c.st.Nodes()
	if len(nodes) == 0 || spec == "" {
		return true
	}
	elems, ok := nodespec.Parse(spec, c.known)
	return !ok || canServe(nodes, elems)
}

// known reports whether a node of that name is configured.
func (c *Checker) known(name string) bool { return c.st.Node(name) != nil }

// Satisfiable reports whether a node spec could ever be met by the
// configured nodes (ignoring their state and current jobs), for the
// resource query's "never" answer: a spec that does not parse never can.
func (c *Checker) Satisfiable(spec string) bool {
	elems, ok := nodespec.Parse(spec, c.known)
	return ok && canServe(c.st.Nodes(), elems)
}

// canServe reports whether nodes, whatever their state and use, could
// serve every element of a node specification at once.
func canServe(nodes []*state.Node, elems []nodespec.Element) bool {
	if fits(nodes, elems) {
		return true
	}
	// The walk takes the first fitting node for each element in turn; a
	// small element may take the only node a later, larger one fits.
	// Try the most demanding elements first before refusing.
	sorted := append([]nodespec.Element(nil), elems...)
	sort.SliceStable(sorted, func(a, b int) bool {
		if (sorted[a].Name != "") != (sorted[b].Name != "") {
			return sorted[a].Name != ""
		}
		return sorted[a].PPN > sorted[b].PPN
	})
	return fits(nodes, sorted)
}

// fits walks the node list in order as allocation does, ignoring state
// and use, and reports whether every element finds its nodes.
func fits(nodes []*state.Node, elems []nodespec.Element) bool {
	taken := make(map[*state.Node]bool)
	for _, e := range elems {
		for k := 0; k < e.Count; k++ {
			var pick *state.Node
			for _, n := range nodes {
				if !taken[n] && n.NP >= e.PPN && nodespec.Offers(n, e) {
					pick = n
					break
				}
			}
			if pick == nil {
				return false
			}
			taken[pick] = true
		}
	}
	return true
}
