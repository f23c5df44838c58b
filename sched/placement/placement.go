// Package placement models the nodes' virtual processors (VPs) during a
// scheduling cycle: it parses node specifications (nodes=2:ppn=4+big#shared)
// and answers whether a specification fits now, later, or never, the way
// the server's node allocator would, so the scheduler can place jobs and
// account for what it already started in the cycle.
package placement

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/sched/world"
)

// Element is one "+"-separated part of a node specification.
type Element struct {
	Count int      // number of nodes (when Name is empty)
	Name  string   // a specific node, or "" for Count nodes
	Props []string // required properties
	PPN   int      // VPs needed on each node
}

// Spec is a parsed node specification.
type Spec struct {
	Elements []Element
	Shared   bool // #shared: VPs may be shared with other shared jobs
}

// Nodes returns the total number of nodes the specification asks for.
func (s Spec) Nodes() int {
	n := 0
	for _, e := range s.Elements {
		n += e.Count
	}
	return n
}

// Procs returns the total number of VPs the specification asks for.
func (s Spec) Procs() int {
	n := 0
	for _, e := range s.Elements {
		n += e.Count * e.PPN
	}
	return n
}

// ParseSpec parses a node specification. isNode tells whether a bare word
// names a node (otherwise it is a property); it may be nil.
func ParseSpec(s string, isNode func(string) bool) (Spec, error) {
	var spec Spec
	s = strings.TrimSpace(s)
	if s == "" {
		return spec, fmt.Errorf("empty node specification")
	}
	parts := strings.Split(s, "#")
	var global []string
	for _, g := range parts[1:] {
		switch g {
		case "shared":
			spec.Shared = true
		case "":
			return spec, fmt.Errorf("node specification %q: empty global", s)
		default:
			global = append(global, g)
		}
	}
	for _, es := range strings.Split(parts[0], "+") {
		words := strings.Split(es, ":")
		e := Element{Count: 1, PPN: 1}
		first := words[0]
		switch {
		case first == "":
			return spec, fmt.Errorf("node specification %q: empty element", s)
		case first[0] >= '0' && first[0] <= '9':
			n, err := strconv.Atoi(first)
			if err != nil || n <= 0 {
				return spec, fmt.Errorf("node specification %q: bad count %q", s, first)
			}
			e.Count = n
		case !isLetter(first[0]):
			return spec, fmt.Errorf("node specification %q: bad element %q", s, first)
		case isNode != nil && isNode(first):
			e.Name = first
		default:
			e.Props = append(e.Props, first)
		}
		for _, w := range words[1:] {
			if v, ok := cutAny(w, "ppn=", "procs="); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					return spec, fmt.Errorf("node specification %q: bad %q", s, w)
				}
				e.PPN = n
				continue
			}
			if _, ok := strings.CutPrefix(w, "gpus="); ok {
				continue // GPUs are not modelled
			}
			if w == "" {
				return spec, fmt.Errorf("node specification %q: empty property", s)
			}
			e.Props = append(e.Props, w)
		}
		e.Props = append(e.Props, global...)
		spec.Elements = append(spec.Elements, e)
	}
	return spec, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if v, ok := strings.CutPrefix(s, p); ok {
			return v, true
		}
	}
	return "", false
}

// Availability is the answer to a query.
type Availability int

// Query answers, with the meaning of the server's ResourceQuery counts.
const (
	Never Availability = -1 // cannot be satisfied even by an idle cluster
	Later Availability = 0  // not now, but by an idle cluster
	Now   Availability = 1  // fits now
)

// Pool is the set of cluster nodes with their free VPs. Time-shared nodes
// are not part of it: node specifications never select them.
type Pool struct {
	nodes  []*world.Node
	free   []int
	byName map[string]int
	excl   []bool // node taken by exclusive jobs (no #shared job fits)
	used   []bool // scratch for one query
	// model: allocations stay in the pool (see NewModel).
	model bool
	// upFree is the number of free VPs on nodes that are up: a
	// non-shared specification asking for more cannot fit now.
	upFree int
}

// NewPool builds a pool from the nodes of a world. Its allocations are
// recorded on the nodes too (UsedSlots, JobExclusive), as the server
// would record them, so that a pool built later sees them.
func NewPool(nodes []*world.Node) *Pool {
	p := &Pool{byName: map[string]int{}}
	for _, n := range nodes {
		if n.TimeShared {
			continue
		}
		free := n.NP - n.UsedSlots
		if free < 0 || n.State&world.NodeJobExclusive != 0 {
			free = 0 // the server marks a node job-exclusive when all its VPs are taken
		}
		p.byName[n.Name] = len(p.nodes)
		p.nodes = append(p.nodes, n)
		p.free = append(p.free, free)
		p.excl = append(p.excl, n.JobExclusive)
		if n.Up() {
			p.upFree += free
		}
	}
	p.used = make([]bool, len(p.nodes))
	return p
}

// Len returns the number of cluster nodes in the pool.
func (p *Pool) Len() int { return len(p.nodes) }

// NewModel builds a pool from the nodes of a world that, unlike NewPool,
// never writes its allocations back to the nodes: a what-if model.
func NewModel(nodes []*world.Node) *Pool {
	p := NewPool(nodes)
	p.model = true
	return p
}

// IsNode reports whether name is a node of the pool.
func (p *Pool) IsNode(name string) bool { _, ok := p.byName[name]; return ok }

// Parse parses a specification against the pool's node names.
func (p *Pool) Parse(s string) (Spec, error) { return ParseSpec(s, p.IsNode) }

func (p *Pool) fits(i int, e Element, shared, ignoreUse bool) bool {
	n := p.nodes[i]
	if e.Name != "" && n.Name != e.Name {
		return false
	}
	for _, pr := range e.Props {
		if !n.HasProperty(pr) {
			return false
		}
	}
	if ignoreUse {
		return n.NP >= e.PPN
	}
	if !n.Up() {
		return false
	}
	if shared {
		return !p.excl[i] && n.NP >= e.PPN
	}
	return p.free[i] >= e.PPN
}

// choose selects nodes for spec; it returns the node indexes per element
// node, or nil when the spec does not fit.
func (p *Pool) choose(spec Spec, ignoreUse bool) []int {
	for i := range p.used {
		p.used[i] = false
	}
	var chosen []int
	for _, e := range spec.Elements {
		need := e.Count
		for i := 0; i < len(p.nodes) && need > 0; i++ {
			if p.used[i] || !p.fits(i, e, spec.Shared, ignoreUse) {
				continue
			}
			p.used[i] = true
			chosen = append(chosen, i)
			need--
		}
		if need > 0 {
			return nil
		}
	}
	return chosen
}

// Query reports whether spec fits now, later or never.
func (p *Pool) Query(spec Spec) Availability {
	if (spec.Shared || spec.Procs() <= p.upFree) && p.choose(spec, false) != nil {
		return Now
	}
	if p.choose(spec, true) != nil {
		return Later
	}
	return Never
}

// Allocate takes the VPs for spec and returns the chosen node names, or
// false when it does not fit now.
func (p *Pool) Allocate(spec Spec) ([]string, bool) {
	if !spec.Shared && spec.Procs() > p.upFree {
		return nil, false
	}
	idx := p.choose(spec, false)
	if idx == nil {
		return nil, false
	}
	var names []string
	k := 0
	for _, e := range spec.Elements {
		for c := 0; c < e.Count; c++ {
			i := idx[k]
			k++
			if !spec.Shared {
				p.free[i] -= e.PPN
				p.upFree -= e.PPN
				if p.free[i] == 0 {
					p.excl[i] = true
				}
				if !p.model {
					p.nodes[i].UsedSlots += e.PPN
					p.nodes[i].JobExclusive = p.excl[i]
				}
			}
			names = append(names, p.nodes[i].Name)
		}
	}
	return names, true
}

// Nodes returns the pool's nodes in server order.
func (p *Pool) Nodes() []*world.Node { return p.nodes }

// Free returns the number of free VPs of the node called name: 0 for a
// node that is not in the pool or not up.
func (p *Pool) Free(name string) int {
	i, ok := p.byName[name]
	if !ok || !p.nodes[i].Up() {
		return 0
	}
	return p.free[i]
}

// Take allocates vps VPs of the node called name, as Allocate does for a
// specification naming that node; it reports false, taking nothing, when
// fewer are free.
func (p *Pool) Take(name string, vps int) bool {
	i, ok := p.byName[name]
	if !ok || !p.nodes[i].Up() || p.free[i] < vps {
		return false
	}
	p.free[i] -= vps
	p.upFree -= vps
	if p.free[i] == 0 {
		p.excl[i] = true
	}
	if !p.model {
		p.nodes[i].UsedSlots += vps
		p.nodes[i].JobExclusive = p.excl[i]
	}
	return true
}
