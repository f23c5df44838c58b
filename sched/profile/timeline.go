package profile

import "sort"

// timeline is a resource utilisation diagram: a step function of the
// amount in use over time. Point i says that from at[i] until at[i+1]
// (or forever, for the last point) the amount in use is use[i]; before
// the first point nothing is in use.
type timeline struct {
	at  []int64
	use []float64
}

// index returns the index of the last point at or before t, or -1.
func (tl *timeline) index(t int64) int {
	return sort.Search(len(tl.at), func(i int) bool { return tl.at[i] > t }) - 1
}

// split makes sure a point starts at t and returns its index.
func (tl *timeline) split(t int64) int {
	i := tl.index(t)
	if i >= 0 && tl.at[i] == t {
		return i
	}
	prev := 0.0
	if i >= 0 {
		prev = tl.use[i]
	}
	i++
	tl.at = append(tl.at, 0)
	tl.use = append(tl.use, 0)
	copy(tl.at[i+1:], tl.at[i:])
	copy(tl.use[i+1:], tl.use[i:])
	tl.at[i], tl.use[i] = t, prev
	return i
}

// add adds amount to the use during [start, end); end may be Forever.
func (tl *timeline) add(start, end int64, amount float64) {
	if amount == 0 || end <= start {
		return
	}
	i := tl.split(start)
	j := len(tl.at)
	if end != Forever {
		j = tl.split(end)
	}
	for k := i; k < j; k++ {
		tl.use[k] += amount
	}
	tl.merge(i, j)
}

// merge drops the points in [i-1, j+1] that no longer change the use,
// so that bookings added and removed leave no trace.
func (tl *timeline) merge(i, j int) {
	lo, hi := max(i-1, 0), min(j+1, len(tl.at)-1)
	w := lo
	for k := lo; k <= hi; k++ {
		prev := 0.0
		if w > 0 {
			prev = tl.use[w-1]
		}
		if tl.use[k] == prev {
			continue
		}
		tl.at[w], tl.use[w] = tl.at[k], tl.use[k]
		w++
	}
	n := copy(tl.at[w:], tl.at[hi+1:])
	copy(tl.use[w:], tl.use[hi+1:])
	tl.at, tl.use = tl.at[:w+n], tl.use[:w+n]
}

// value returns the use at time t.
func (tl *timeline) value(t int64) float64 {
	if i := tl.index(t); i >= 0 {
		return tl.use[i]
	}
	return 0
}

// peak returns the largest use during [start, end).
func (tl *timeline) peak(start, end int64) float64 {
	i := tl.index(start)
	m := 0.0
	if i >= 0 {
		m = tl.use[i]
	}
	for k := i + 1; k < len(tl.at) && tl.at[k] < end; k++ {
		m = max(m, tl.use[k])
	}
	return m
}

// releases appends the times after from at which the use falls: the
// candidate start times of a request that does not fit earlier.
func (tl *timeline) releases(from int64, out []int64) []int64 {
	for k := tl.index(from) + 1; k < len(tl.at); k++ {
		prev := 0.0
		if k > 0 {
			prev = tl.use[k-1]
		}
		if tl.use[k] < prev {
			out = append(out, tl.at[k])
		}
	}
	return out
}
