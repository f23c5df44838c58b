package server

import (
	"gopbs/server/state"
	"sort"

	pbsattr "gopbs/attr"
)

// msgInfeasible is TORQUE's text for a node request that the configured
// nodes can never satisfy (spec 12 §4.3, verified live).
const msgInfeasible = "cannot locate feasible nodes (nodes file is empty or all systems are busy)"

// feasible reports whether the nodes specification spec could be
// satisfied by the configured nodes if all of them were up and idle:
// enough distinct cluster nodes with the properties (or names) and np
// each element asks for. State and running jobs play no part — a busy or
// down node may serve the job later — and a server without nodes runs
// jobs on its own host (spec 12 §9.2), so every request is feasible there.
// A spec that does not parse is left to allocation to refuse. Called
// with s.mu held.
func (s *Server) feasible(spec string) bool {
	if len(s.nodes) == 0 || spec == "" {
		return true
	}
	elems, ok := parseNodeSpec(spec, func(n string) bool { return s.nodeByName[n] != nil })
	return !ok || s.canServe(elems)
}

// satisfiable reports whether a node spec could ever be met by the
// configured nodes (ignoring their state and current jobs), for the
// resource query's "never" answer: a spec that does not parse never can.
// Called with s.mu held.
func (s *Server) satisfiable(spec string) bool {
	elems, ok := parseNodeSpec(spec, func(n string) bool { return s.nodeByName[n] != nil })
	return ok && s.canServe(elems)
}

// canServe reports whether the configured nodes, whatever their state and
// use, could serve every element of a node specification at once.
func (s *Server) canServe(elems []nodeElement) bool {
	if s.fits(elems) {
		return true
	}
	// The walk takes the first fitting node for each element in turn; a
	// small element may take the only node a later, larger one fits.
	// Try the most demanding elements first before refusing.
	sorted := append([]nodeElement(nil), elems...)
	sort.SliceStable(sorted, func(a, b int) bool {
		if (sorted[a].name != "") != (sorted[b].name != "") {
			return sorted[a].name != ""
		}
		return sorted[a].ppn > sorted[b].ppn
	})
	return s.fits(sorted)
}

// fits walks the node list in order as allocation does, ignoring state
// and use, and reports whether every element finds its nodes.
func (s *Server) fits(elems []nodeElement) bool {
	taken := make(map[*state.Node]bool)
	for _, e := range elems {
		for k := 0; k < e.count; k++ {
			var pick *state.Node
			for _, n := range s.nodes {
				if !taken[n] && n.NP >= e.ppn && s.offers(n, e) {
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

// offers reports whether node n, whatever its state, has what element e
// asks for: a cluster node with e's name and properties.
func (s *Server) offers(n *state.Node, e nodeElement) bool {
	if n.TimeShared || e.name != "" && n.Name != e.name {
		return false
	}
	if len(e.props) == 0 {
		return true
	}
	props := state.ParseArst(n.Attrs.Get(pbsattr.NodeProperties))
	for _, p := range e.props {
		if p != n.Name && !contains(props, p) {
			return false
		}
	}
	return true
}
