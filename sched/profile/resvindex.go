package profile

import (
	"cmp"
	"slices"
	"strings"
)

// resvIndex keeps the Reserving and Advance bookings in order of start, then job, for
// Blocker: a sorted run and a buffer of the recent ones, merged into the
// run when the buffer grows; removed bookings (gone) leave at the merge.
// Blocker then reads the run only up to the end of the interval it asks
// about instead of every booking.
type resvIndex struct {
	sorted []*Booking
	recent []*Booking
}

// mergeAt is the size of the recent buffer that makes the next Blocker
// merge it into the sorted run.
const mergeAt = 128

func byStartJob(a, b *Booking) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return strings.Compare(a.Job, b.Job)
}

func (ix *resvIndex) add(b *Booking) { ix.recent = append(ix.recent, b) }

// merge sorts the recent bookings into the run and drops the gone ones.
func (ix *resvIndex) merge() {
	slices.SortFunc(ix.recent, byStartJob)
	out := make([]*Booking, 0, len(ix.sorted)+len(ix.recent))
	i, j := 0, 0
	for i < len(ix.sorted) || j < len(ix.recent) {
		var b *Booking
		if j == len(ix.recent) || i < len(ix.sorted) && byStartJob(ix.sorted[i], ix.recent[j]) <= 0 {
			b, i = ix.sorted[i], i+1
		} else {
			b, j = ix.recent[j], j+1
		}
		if !b.gone {
			out = append(out, b)
		}
	}
	ix.sorted, ix.recent = out, ix.recent[:0]
}

// blocker is Blocker over the index: the first Reserving or Advance booking, by
// start and job, that overlaps [start, e) and touches the request.
func (p *Profile) blocker(r Request, start, e int64) *Booking {
	ix := &p.resv
	if len(ix.recent) >= mergeAt {
		ix.merge()
	}
	var best *Booking
	consider := func(b *Booking) bool {
		if b.gone || b.Start >= e || b.End <= start || !p.touches(b, r) {
			return false
		}
		if best == nil || byStartJob(b, best) < 0 {
			best = b
		}
		return true
	}
	for _, b := range ix.recent {
		consider(b)
	}
	for _, b := range ix.sorted {
		if b.Start >= e || best != nil && byStartJob(b, best) >= 0 {
			break
		}
		if consider(b) {
			break
		}
	}
	return best
}
