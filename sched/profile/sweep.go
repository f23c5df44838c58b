package profile

import (
	"cmp"
	"slices"
)

// A level indexes the nodes for one slot count p, as their free lists
// stood when it was built: the nodes free for p slots for ever from some
// time on (their tail), by that time, and the nodes with a finite free
// interval after now, by the longest one (their gap), longest first. A
// request of duration d can use a node that has not changed since only
// at its tail unless its gap is at least d, so earliestSlots reads the
// tails in order and looks at the other nodes one by one: those with a
// gap of d or more and those changed since the build (Profile.changes).
type level struct {
	built  int     // len(Profile.changes) at the build
	byTail []int32 // nodes by tail, then node order
	tail   []int64
	byGap  []int32 // nodes by gap, longest first
	gap    []int64
	sort   []levelEntry // scratch of the builds
}

type levelEntry struct {
	at   int64
	node int32
}

// rebuildAfter is how many node changes make a level stale: a rebuild
// sorts every node, a stale level makes each question look at the
// changed nodes one by one.
func (p *Profile) rebuildAfter() int { return max(32, len(p.nodes)/8) }

// level returns the index for p slots, rebuilt when stale.
func (p *Profile) level(slots int) *level {
	for len(p.levels) <= slots {
		p.levels = append(p.levels, nil)
	}
	lv := p.levels[slots]
	if lv != nil && len(p.changes)-lv.built <= p.rebuildAfter() {
		return lv
	}
	if lv == nil {
		lv = &level{}
		p.levels[slots] = lv
	}
	lv.built = len(p.changes)
	lv.byTail, lv.tail, lv.byGap, lv.gap = lv.byTail[:0], lv.tail[:0], lv.byGap[:0], lv.gap[:0]
	tails := lv.sort[:0]
	for i, n := range p.nodes {
		fl := n.freeFor(slots, p.now)
		if fl == nil || len(fl.ivs) == 0 {
			continue
		}
		if last := fl.ivs[len(fl.ivs)-1]; last[1] == Forever {
			tails = append(tails, levelEntry{last[0], int32(i)})
		}
	}
	slices.SortFunc(tails, func(a, b levelEntry) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.node, b.node)
	})
	for _, e := range tails {
		lv.byTail, lv.tail = append(lv.byTail, e.node), append(lv.tail, e.at)
	}
	gaps := tails[:0]
	for i, n := range p.nodes {
		if fl := &n.freeLists; len(*fl) > slots && (*fl)[slots].maxGap > 0 {
			gaps = append(gaps, levelEntry{(*fl)[slots].maxGap, int32(i)})
		}
	}
	slices.SortFunc(gaps, func(a, b levelEntry) int { return cmp.Compare(b.at, a.at) })
	lv.sort = gaps
	for _, e := range gaps {
		lv.byGap, lv.gap = append(lv.byGap, e.node), append(lv.gap, e.at)
	}
	return lv
}

// earliestSlots is earliestOne for requests of slots alone, from the
// nodes' free lists: a sweep, in time order, of the moments at which
// nodes become able or unable to hold the request for its whole
// duration, with the server-wide and queue consumables' release times,
// that stops at the first moment enough nodes are able and the
// consumables allow it. The nodes that can take the request only at
// their tail come in order from the level index; the others (a gap long
// enough, or changed since the index was built) go through a heap of
// their next events. The nodes are then the first able ones in node
// order, as Fit chooses.
func (p *Profile) earliestSlots(r Request, from int64) (int64, []Slot, bool) {
	return p.sweepSlots(r, from, false)
}

// sweepSlots is earliestSlots; with only, it answers for from alone (Fit).
func (p *Profile) sweepSlots(r Request, from int64, only bool) (int64, []Slot, bool) {
	el := r.Spec.Elements[0]
	d := r.Duration
	if cap(p.inside) < len(p.nodes) {
		p.inside = make([]bool, len(p.nodes))
	}
	inside := p.inside[:len(p.nodes)]
	clear(inside)
	p.gen++
	if p.gen == 0 {
		clear(p.mark)
		p.gen = 1
	}
	lv := p.level(el.PPN)
	h := p.heap[:0]
	able := 0
	// one looks at node i on its own: its first event goes to the heap,
	// or it is able at from.
	one := func(i int) {
		if p.mark[i] == p.gen {
			return
		}
		p.mark[i] = p.gen
		n := p.nodes[i]
		if !matches(n, el) {
			return
		}
		fl := n.freeFor(el.PPN, p.now)
		if fl == nil || len(fl.ivs) == 0 {
			return
		}
		for k := fl.firstLong(d); k < len(fl.ivs); k++ {
			x, y, ok := starts(fl.ivs[k], d, from)
			if !ok {
				continue
			}
			if x > from {
				h = append(h, sweepEvent{at: x, node: int32(i), k: int32(k), delta: +1})
				return
			}
			inside[i] = true
			able++
			if y != Forever {
				h = append(h, sweepEvent{at: y + 1, node: int32(i), k: int32(k), delta: -1})
			}
			return
		}
	}
	for _, i := range p.changes[lv.built:] {
		one(int(i))
	}
	if d != Forever {
		for k, i := range lv.byGap {
			if lv.gap[k] < d {
				break
			}
			one(int(i))
		}
	}
	eh := eventHeap(h)
	eh.init()
	defer func() { p.heap = eh[:0] }()
	// tails: the next node able from its tail on
	ti := 0
	nextTail := func() int64 {
		for ; ti < len(lv.byTail); ti++ {
			i := lv.byTail[ti]
			if p.mark[i] != p.gen && matches(p.nodes[i], el) {
				return max(lv.tail[ti], from)
			}
		}
		return Forever
	}
	var rel []int64
	for name := range r.Global {
		if c := p.global[name]; c != nil {
			rel = c.tl.releases(from, rel)
		}
	}
	for name := range r.QueueUse {
		if c := p.queues[r.Queue][name]; c != nil {
			rel = c.tl.releases(from, rel)
		}
	}
	slices.Sort(rel)
	rel = slices.Compact(rel)
	for t := from; ; {
		for len(rel) > 0 && rel[0] <= t {
			rel = rel[1:]
		}
		for nextTail() <= t {
			inside[lv.byTail[ti]] = true
			able++
			ti++
		}
		for len(eh) > 0 && eh[0].at <= t {
			e := eh.pop()
			i := int(e.node)
			ivs := p.nodes[i].freeLists[el.PPN].ivs
			if e.delta > 0 {
				inside[i] = true
				able++
				if _, y, _ := starts(ivs[e.k], d, from); y != Forever {
					eh.push(sweepEvent{at: y + 1, node: e.node, k: e.k, delta: -1})
				}
				continue
			}
			inside[i] = false
			able--
			for k := int(e.k) + 1; k < len(ivs); k++ {
				if x, _, ok := starts(ivs[k], d, from); ok {
					eh.push(sweepEvent{at: x, node: e.node, k: int32(k), delta: +1})
					break
				}
			}
		}
		if able >= el.Count && p.consumablesFree(r, t, end(t, d)) {
			out := make([]Slot, 0, el.Count)
			for i, in := range inside {
				if in {
					out = append(out, Slot{Node: p.nodes[i].Name, Slots: el.PPN})
					if len(out) == el.Count {
						break
					}
				}
			}
			return t, out, true
		}
		if only {
			return 0, nil, false
		}
		t = nextTail()
		if len(eh) > 0 {
			t = min(t, eh[0].at)
		}
		if len(rel) > 0 {
			t = min(t, rel[0])
		}
		if t == Forever {
			return 0, nil, false
		}
	}
}
