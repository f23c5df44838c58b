package profile

import (
	"cmp"
	"slices"

	"gopbs/sched/placement"
)

// infeasible appends to out the intervals [s, e) of start times at which
// a request for need units during d seconds does not fit a resource of
// capacity total whose use is tl, from time from on: a start t fails when
// [t, t+d) meets a stretch where more than total-need is in use.
func (tl *timeline) infeasible(total, need float64, d, from int64, out [][2]int64) [][2]int64 {
	limit := total - need
	k := len(out)
	for i := range tl.at {
		if tl.use[i] <= limit {
			continue
		}
		a := tl.at[i]
		b := int64(Forever)
		if i+1 < len(tl.at) {
			b = tl.at[i+1]
		}
		if b <= from {
			continue
		}
		s := int64(-1 << 62)
		if d != Forever {
			s = a - d + 1
		}
		s = max(s, from)
		if n := len(out); n > k && out[n-1][1] >= s {
			out[n-1][1] = max(out[n-1][1], b)
			continue
		}
		out = append(out, [2]int64{s, b})
	}
	return out
}

// event is a change in the number of nodes a request fits at a time.
type event struct {
	at    int64
	delta int
}

// earliestOne is Earliest for a request of one element (Count nodes of
// PPN slots, with properties or a name), exactly: it sweeps, from from
// on, the times at which nodes become able to hold the request for its
// whole duration and returns the first time enough of them are, and the
// server-wide and queue consumables allow it too.
func (p *Profile) earliestOne(r Request, from int64) (int64, []Slot, bool) {
	el := r.Spec.Elements[0]
	d := r.Duration
	var events []event
	var bad [][2]int64
	feasible := 0
	for _, n := range p.nodes {
		if !matches(n, el) {
			continue
		}
		bad = n.slots.infeasible(float64(n.Slots), float64(el.PPN), d, from, bad[:0])
		for name, want := range r.PerNode {
			if total, ok := n.Consumables[name]; ok && want > 0 {
				bad = n.cons[name].infeasible(total, want, d, from, bad)
			}
		}
		if len(bad) == 0 {
			feasible++
			continue
		}
		slices.SortFunc(bad, func(x, y [2]int64) int { return cmp.Compare(x[0], y[0]) })
		// merge overlapping intervals of this node
		merged := bad[:1]
		for _, iv := range bad[1:] {
			if last := &merged[len(merged)-1]; iv[0] <= last[1] {
				last[1] = max(last[1], iv[1])
			} else {
				merged = append(merged, iv)
			}
		}
		if merged[0][0] > from {
			feasible++
		}
		for _, iv := range merged {
			if iv[0] > from {
				events = append(events, event{iv[0], -1})
			}
			if iv[1] != Forever {
				events = append(events, event{iv[1], +1})
			}
		}
	}
	for name := range r.Global {
		if c := p.global[name]; c != nil {
			for _, t := range c.tl.releases(from, nil) {
				events = append(events, event{t, 0})
			}
		}
	}
	for name := range r.QueueUse {
		if c := p.queues[r.Queue][name]; c != nil {
			for _, t := range c.tl.releases(from, nil) {
				events = append(events, event{t, 0})
			}
		}
	}
	slices.SortFunc(events, func(x, y event) int { return cmp.Compare(x.at, y.at) })
	try := func(t int64) ([]Slot, bool) {
		if feasible < el.Count {
			return nil, false
		}
		return p.fitScan(r, t)
	}
	if slots, ok := try(from); ok {
		return from, slots, true
	}
	for i := 0; i < len(events); {
		t := events[i].at
		for ; i < len(events) && events[i].at == t; i++ {
			feasible += events[i].delta
		}
		if slots, ok := try(t); ok {
			return t, slots, true
		}
	}
	return 0, nil, false
}

// single reports whether earliestOne serves the request.
func single(s placement.Spec) bool { return len(s.Elements) == 1 && !s.Shared }
