package profile

import "sort"

// A freeList is what a node's slot diagram says about one slot count p:
// the maximal intervals [a, b) during which at least p slots are free (b
// may be Forever; the first interval may begin at beginning). It is
// cached per node and slot count and rebuilt when a booking changes the
// node (node.version), so that the look for an earliest start reads a
// node's few intervals instead of its whole diagram.
type freeList struct {
	version uint64
	ivs     [][2]int64
	maxGap  int64   // the longest finite interval
	longest []int64 // longest[k]: the longest of ivs[:k+1] (Forever from the unending one)
}

// beginning is the start of time for free intervals.
const beginning = int64(-1 << 62)

// freeFor returns the free intervals of node n for p slots, or nil when
// the node has fewer than p slots. maxGap counts from now on: the
// profile's bookings begin no earlier, so every node is free before.
func (n *node) freeFor(p int, now int64) *freeList {
	if p < 0 || p > n.Slots {
		return nil
	}
	if n.freeLists == nil {
		n.freeLists = make([]freeList, n.Slots+1)
	}
	fl := &n.freeLists[p]
	if fl.version == n.version+1 {
		return fl
	}
	fl.version = n.version + 1
	fl.ivs = fl.ivs[:0]
	fl.maxGap = 0
	limit := float64(n.Slots - p)
	open, start := true, beginning
	for i, t := range n.slots.at {
		free := n.slots.use[i] <= limit
		switch {
		case free && !open:
			open, start = true, t
		case !free && open:
			open = false
			fl.ivs = append(fl.ivs, [2]int64{start, t})
			if t > now {
				fl.maxGap = max(fl.maxGap, t-max(start, now))
			}
		}
	}
	if open {
		fl.ivs = append(fl.ivs, [2]int64{start, Forever})
	}
	fl.longest = fl.longest[:0]
	m := int64(0)
	for _, iv := range fl.ivs {
		switch {
		case iv[1] == Forever:
			m = Forever
		case iv[1] > now:
			m = max(m, iv[1]-max(iv[0], now))
		}
		fl.longest = append(fl.longest, m)
	}
	return fl
}

// starts returns the start times in [from, Forever) at which a request of
// duration d fits interval iv: [x, y] (y is Forever for an interval
// without end), false when none does.
func starts(iv [2]int64, d, from int64) (x, y int64, ok bool) {
	x = max(iv[0], from)
	if iv[1] == Forever {
		return x, Forever, true
	}
	if d == Forever || iv[1]-d < x {
		return 0, 0, false
	}
	return x, iv[1] - d, true
}

// sweepEvent is the next change of one node in the sweep of
// earliestSlots: at at the node becomes able (delta +1) or unable (-1)
// to start the request; k is the index of its interval.
type sweepEvent struct {
	at    int64
	node  int32
	k     int32
	delta int8
}

func lessEvent(a, b sweepEvent) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.node < b.node
}

// eventHeap is a binary min-heap of sweep events, one per node at most.
type eventHeap []sweepEvent

func (h eventHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && lessEvent(h[r], h[l]) {
			m = r
		}
		if !lessEvent(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h *eventHeap) push(e sweepEvent) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !lessEvent(s[i], s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() sweepEvent {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	if last > 0 {
		(*h).down(0)
	}
	return top
}

func (h eventHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// slotsOnly reports whether earliestSlots serves the request: one
// element of at least one slot per node, no per-node consumables and a
// duration of at least a second.
func slotsOnly(r Request) bool {
	if !single(r.Spec) || r.Spec.Elements[0].PPN < 1 || r.Duration < 1 {
		return false
	}
	for _, want := range r.PerNode {
		if want > 0 {
			return false
		}
	}
	return true
}

// firstLong returns the index of the first interval that can hold a
// request of duration d starting at or after the profile's present: the
// ones before it are all shorter.
func (fl *freeList) firstLong(d int64) int {
	return sort.Search(len(fl.longest), func(k int) bool { return fl.longest[k] >= d })
}

// ableAt reports whether node n has p slots free during [start, end), from
// its free intervals: one of them holds the whole of it.
func (n *node) ableAt(p int, start, end, now int64) bool {
	fl := n.freeFor(p, now)
	if fl == nil {
		return false
	}
	ivs := fl.ivs
	// the last interval beginning at or before start
	k := sort.Search(len(ivs), func(i int) bool { return ivs[i][0] > start }) - 1
	return k >= 0 && start < ivs[k][1] && end <= ivs[k][1]
}
