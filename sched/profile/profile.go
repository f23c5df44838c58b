// Package profile is the resource-time profile of the look-ahead
// scheduler (seed 004): for every resource the scheduler plans with — the
// slots (virtual processors) and consumables of each node, the
// server-wide consumables and the queues' limits — a utilisation diagram
// of what is in use over time, built from the running jobs' expected ends
// and the reservations made. It answers when a request fits first
// (Earliest) and whether it fits during a given interval (Fit), and books
// what is decided (Book). Resource reservation, backfilling and, later,
// advance reservations are computed against the same profile.
//
// Times are Unix seconds; Forever is an end that never comes.
package profile

import (
	"math"
	"slices"
	"sort"

	"gopbs/sched/placement"
)

// Forever is the end of a booking that is never planned to end.
const Forever = math.MaxInt64

// Node describes one node's capacity.
type Node struct {
	Name  string
	Slots int // virtual processors (np)
	// Props are the node's properties (its name counts as one too).
	Props []string
	// Consumables are other per-node capacities (e.g. mem), by name.
	Consumables map[string]float64
	// Down nodes have no capacity at all.
	Down bool
}

// Kind says what a booking is, as in the MONITOR file.
type Kind int

// Booking kinds.
const (
	Running Kind = iota
	Suspended
	Starting
	Reserving
	// Advance is an advance reservation (issue 17): its nodes, whole,
	// for its window.
	Advance
)

var kindNames = [...]string{Running: "RUNNING", Suspended: "SUSPENDED", Starting: "STARTING", Reserving: "RESERVING",
	Advance: "ADVANCE"}

func (k Kind) String() string { return kindNames[k] }

// Slot is a number of slots on one node.
type Slot struct {
	Node  string
	Slots int
}

// Request is what a job asks for.
type Request struct {
	// Spec is the node specification; without elements the request uses
	// no node resources.
	Spec placement.Spec
	// PerNode are consumables needed on each node of the allocation.
	PerNode map[string]float64
	// Global are server-wide consumables.
	Global map[string]float64
	// Queue and QueueUse are the job's queue and what it counts against
	// the queue's limits.
	Queue    string
	QueueUse map[string]float64
	// Duration is the planned run time in seconds, or Forever.
	Duration int64
}

// Booking is a request placed in time.
type Booking struct {
	Job   string
	Kind  Kind
	Start int64
	End   int64 // Forever for no planned end
	// Nodes are the slots booked per node (a node may appear once).
	Nodes    []Slot
	PerNode  map[string]float64
	Global   map[string]float64
	Queue    string
	QueueUse map[string]float64

	gone bool // unbooked (the reservation index drops it later)
}

type node struct {
	Node
	slots     timeline
	cons      map[string]*timeline
	version   uint64     // changes with every booking of the node
	freeLists []freeList // per slot count, valid while version stands
}

type capacity struct {
	total float64
	tl    timeline
}

// Profile is the resource-time profile of one scheduling cycle.
type Profile struct {
	now      int64
	nodes    []*node
	byName   map[string]int
	global   map[string]*capacity
	queues   map[string]map[string]*capacity
	bookings []*Booking
	byJob    map[string]int // index in bookings
	mark     []uint32       // per node: == gen when taken by the current Fit
	gen      uint32
	inside   []bool    // earliestSlots: per node, able to start the request now
	heap     eventHeap // earliestSlots' events, kept for the next call
	resv     resvIndex // the Reserving bookings by start, for Blocker
	changes  []int32   // the nodes changed by bookings, in order (for levels)
	levels   []*level  // per slot count, for earliestSlots
}

// New returns an empty profile whose present is now.
func New(now int64) *Profile {
	return &Profile{now: now, byName: map[string]int{}, global: map[string]*capacity{},
		queues: map[string]map[string]*capacity{}, byJob: map[string]int{}}
}

// Now returns the profile's present.
func (p *Profile) Now() int64 { return p.now }

// AddNode adds a node (in allocation order). A node added twice keeps
// its first description.
func (p *Profile) AddNode(n Node) {
	if _, dup := p.byName[n.Name]; dup {
		return
	}
	p.byName[n.Name] = len(p.nodes)
	nd := &node{Node: n, cons: map[string]*timeline{}}
	for name := range n.Consumables {
		nd.cons[name] = &timeline{}
	}
	p.nodes = append(p.nodes, nd)
	p.mark = append(p.mark, 0)
}

// SetGlobal sets the capacity of a server-wide consumable.
func (p *Profile) SetGlobal(name string, total float64) {
	p.global[name] = &capacity{total: total}
}

// SetQueue sets the capacity of a consumable limited by a queue.
func (p *Profile) SetQueue(queue, name string, total float64) {
	m := p.queues[queue]
	if m == nil {
		m = map[string]*capacity{}
		p.queues[queue] = m
	}
	m[name] = &capacity{total: total}
}

// Nodes returns the number of nodes.
func (p *Profile) Nodes() int { return len(p.nodes) }

// matches reports whether node n may serve element e.
func matches(n *node, e placement.Element) bool {
	if n.Down || e.Name != "" && n.Name != e.Name {
		return false
	}
	for _, pr := range e.Props {
		if pr != n.Name && !slices.Contains(n.Props, pr) {
			return false
		}
	}
	return true
}

// nodeFree reports whether node n has slots and per-node consumables
// free during [start, end).
func (n *node) free(slots int, per map[string]float64, start, end, now int64) bool {
	if slots > 0 && !n.ableAt(slots, start, end, now) {
		return false
	}
	for name, want := range per {
		total, ok := n.Consumables[name]
		if !ok || want <= 0 {
			continue
		}
		if total-n.cons[name].peak(start, end) < want {
			return false
		}
	}
	return true
}

func end(start, d int64) int64 {
	if d == Forever || start > Forever-d {
		return Forever
	}
	return start + d
}

// Fit returns the nodes a request would get if it started at start, or
// false when it does not fit then for its whole duration. Nodes are
// chosen first-fit in node order, as the server allocates.
func (p *Profile) Fit(r Request, start int64) ([]Slot, bool) {
	if slotsOnly(r) && start >= p.now {
		_, slots, ok := p.sweepSlots(r, start, true)
		return slots, ok
	}
	return p.fitScan(r, start)
}

// fitScan is Fit by looking at every node in turn.
func (p *Profile) fitScan(r Request, start int64) ([]Slot, bool) {
	e := end(start, r.Duration)
	if !p.consumablesFree(r, start, e) {
		return nil, false
	}
	if len(r.Spec.Elements) == 0 {
		return nil, true
	}
	var out []Slot
	p.gen++
	if p.gen == 0 {
		clear(p.mark)
		p.gen = 1
	}
	for _, el := range r.Spec.Elements {
		need := el.Count
		ppn := el.PPN
		if r.Spec.Shared {
			ppn = 0
		}
		for i, n := range p.nodes {
			if need == 0 {
				break
			}
			if p.mark[i] == p.gen || !matches(n, el) || !n.free(ppn, r.PerNode, start, e, p.now) {
				continue
			}
			p.mark[i] = p.gen
			out = append(out, Slot{Node: n.Name, Slots: ppn})
			need--
		}
		if need > 0 {
			return nil, false
		}
	}
	return out, true
}

func (p *Profile) consumablesFree(r Request, start, e int64) bool {
	for name, want := range r.Global {
		if c := p.global[name]; c != nil && want > 0 && c.total-c.tl.peak(start, e) < want {
			return false
		}
	}
	q := p.queues[r.Queue]
	for name, want := range r.QueueUse {
		if c := q[name]; c != nil && want > 0 && c.total-c.tl.peak(start, e) < want {
			return false
		}
	}
	return true
}

// Possible reports whether the request could ever fit: on an idle
// cluster, within every capacity.
func (p *Profile) Possible(r Request) bool {
	for name, want := range r.Global {
		if c := p.global[name]; c != nil && want > c.total {
			return false
		}
	}
	for name, want := range r.QueueUse {
		if c := p.queues[r.Queue][name]; c != nil && want > c.total {
			return false
		}
	}
	used := map[int]bool{}
	for _, el := range r.Spec.Elements {
		need := el.Count
		for i, n := range p.nodes {
			if need == 0 {
				break
			}
			if used[i] || !matches(n, el) || (!r.Spec.Shared && n.Slots < el.PPN) {
				continue
			}
			ok := true
			for name, want := range r.PerNode {
				if total, has := n.Consumables[name]; has && want > total {
					ok = false
				}
			}
			if ok {
				used[i] = true
				need--
			}
		}
		if need > 0 {
			return false
		}
	}
	return true
}

// Earliest returns the earliest start at or after from (and not before
// the profile's present) at which the request fits for its whole
// duration, with its nodes; false when it never does.
func (p *Profile) Earliest(r Request, from int64) (int64, []Slot, bool) {
	from = max(from, p.now)
	if !p.Possible(r) {
		return 0, nil, false
	}
	if slotsOnly(r) {
		return p.earliestSlots(r, from)
	}
	if single(r.Spec) {
		return p.earliestOne(r, from)
	}
	return p.earliestScan(r, from)
}

// earliestScan is Earliest by trying every time at which something the
// request needs is released, in order.
func (p *Profile) earliestScan(r Request, from int64) (int64, []Slot, bool) {
	cand := []int64{from}
	for _, el := range r.Spec.Elements {
		for _, n := range p.nodes {
			if matches(n, el) {
				cand = n.slots.releases(from, cand)
				for name := range r.PerNode {
					if tl := n.cons[name]; tl != nil {
						cand = tl.releases(from, cand)
					}
				}
			}
		}
	}
	for name := range r.Global {
		if c := p.global[name]; c != nil {
			cand = c.tl.releases(from, cand)
		}
	}
	for name := range r.QueueUse {
		if c := p.queues[r.Queue][name]; c != nil {
			cand = c.tl.releases(from, cand)
		}
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	for _, t := range cand {
		if slots, ok := p.fitScan(r, t); ok {
			return t, slots, true
		}
	}
	return 0, nil, false
}

// Book adds a booking to the profile. A job booked again replaces its
// earlier booking.
func (p *Profile) Book(b Booking) {
	p.Unbook(b.Job)
	bp := &b
	p.apply(bp, 1)
	p.byJob[b.Job] = len(p.bookings)
	p.bookings = append(p.bookings, bp)
	if bp.Kind == Reserving || bp.Kind == Advance {
		p.resv.add(bp)
	}
}

// Unbook removes the booking of job, if any, and returns it.
func (p *Profile) Unbook(job string) (Booking, bool) {
	i, ok := p.byJob[job]
	if !ok {
		return Booking{}, false
	}
	b := p.bookings[i]
	p.apply(b, -1)
	last := len(p.bookings) - 1
	p.bookings[i] = p.bookings[last]
	p.byJob[p.bookings[i].Job] = i
	p.bookings = p.bookings[:last]
	delete(p.byJob, job)
	out := *b
	b.gone = true
	return out, true
}

// Booked returns the booking of job, if any.
func (p *Profile) Booked(job string) (Booking, bool) {
	if i, ok := p.byJob[job]; ok {
		return *p.bookings[i], true
	}
	return Booking{}, false
}

func (p *Profile) apply(b *Booking, sign float64) {
	start := max(b.Start, p.now)
	if b.End <= start {
		return
	}
	for _, s := range b.Nodes {
		i, ok := p.byName[s.Node]
		if !ok {
			continue
		}
		n := p.nodes[i]
		n.version++
		p.changes = append(p.changes, int32(i))
		n.slots.add(start, b.End, sign*float64(s.Slots))
		for name, amount := range b.PerNode {
			if tl := n.cons[name]; tl != nil {
				tl.add(start, b.End, sign*amount)
			}
		}
	}
	for name, amount := range b.Global {
		if c := p.global[name]; c != nil {
			c.tl.add(start, b.End, sign*amount)
		}
	}
	for name, amount := range b.QueueUse {
		if c := p.queues[b.Queue][name]; c != nil {
			c.tl.add(start, b.End, sign*amount)
		}
	}
}

// Blocker returns the reservation that stands in the way of the request
// starting at start: the earliest Reserving or Advance booking overlapping the
// request's interval on a node the request could use, or on a consumable
// it asks for; false when there is none.
func (p *Profile) Blocker(r Request, start int64) (Booking, bool) {
	best := p.blocker(r, start, end(start, r.Duration))
	if best == nil {
		return Booking{}, false
	}
	return *best, true
}

func (p *Profile) touches(b *Booking, r Request) bool {
	for _, s := range b.Nodes {
		i, ok := p.byName[s.Node]
		if !ok {
			continue
		}
		for _, el := range r.Spec.Elements {
			if matches(p.nodes[i], el) {
				return true
			}
		}
	}
	for name := range r.Global {
		if b.Global[name] > 0 {
			return true
		}
	}
	if b.Queue == r.Queue {
		for name := range r.QueueUse {
			if b.QueueUse[name] > 0 {
				return true
			}
		}
	}
	return false
}

// Bookings returns the bookings ordered by kind, start and job.
func (p *Profile) Bookings() []Booking {
	out := make([]Booking, 0, len(p.bookings))
	for _, b := range p.bookings {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.Job < b.Job
	})
	return out
}

// FreeSlots returns the free slots of node name at time t (0 for a node
// that is down or unknown).
func (p *Profile) FreeSlots(name string, t int64) int {
	i, ok := p.byName[name]
	if !ok || p.nodes[i].Down {
		return 0
	}
	n := p.nodes[i]
	return n.Slots - int(n.slots.value(t))
}
