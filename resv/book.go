package resv

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// DefaultCommitTimeout is how long an operation made with -T waits for
// plus_commit or plus_abort before it is aborted automatically (the
// seed's §2.4 lists conditions without saying them; GoPBS's choice).
const DefaultCommitTimeout = 5 * time.Minute

// PendingExpired reports whether r's pending operation is to be aborted
// automatically at now: it waited longer than timeout, or the
// reservation's start has come (seed §2.4). EvTimeout or EvStart then
// moves it.
func (r *Reservation) PendingExpired(now time.Time, timeout time.Duration) bool {
	if r.Pending == OpNone && r.State != WaitCommit {
		return false
	}
	return !now.Before(r.PendingSince.Add(timeout)) || !now.Before(r.Start)
}

// Holds reports whether r keeps its assigned nodes: a reservation made,
// not yet over, cancelled or destroyed. A creation waiting for commit
// holds its nodes too, so that two transactions cannot take the same.
func (r *Reservation) Holds() bool {
	switch r.State {
	case WaitCommit, Confirmed, Running:
		return true
	}
	return false
}

// Held returns, for the window [start, end), the nodes that reservations
// in list hold, each with the first reservation (by start) that holds it
// then. The reservation named except (a reservation being modified) is
// left out.
func Held(list []*Reservation, start, end time.Time, except string) map[string]*Reservation {
	sorted := slices.Clone(list)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	held := map[string]*Reservation{}
	for _, r := range sorted {
		if r.ID == except || !r.Holds() || !r.Overlaps(start, end) {
			continue
		}
		for _, n := range r.Assigned {
			if _, ok := held[n]; !ok {
				held[n] = r
			}
		}
	}
	return held
}

// Shortage explains why a window cannot have wanted nodes: how many of
// the candidates are free, and which reservations hold the others, when.
// Times are written in loc.
//
//	only 2 of 3 nodes free from 2026-11-27T13:00:00Z to 2026-11-27T14:00:00Z: n3 held by R9 (2026-11-27T12:30:00Z to 2026-11-27T13:30:00Z)
func Shortage(wanted int, candidates []string, held map[string]*Reservation, start, end time.Time, loc *time.Location) string {
	free := 0
	var why []string
	for _, n := range candidates {
		r, ok := held[n]
		if !ok {
			free++
			continue
		}
		why = append(why, fmt.Sprintf("%s held by %s (%s to %s)", n, r.ID,
			r.Start.In(loc).Format(TimeLayout), r.End.In(loc).Format(TimeLayout)))
	}
	msg := fmt.Sprintf("only %d of %d nodes free from %s to %s", free, wanted,
		start.In(loc).Format(TimeLayout), end.In(loc).Format(TimeLayout))
	if len(why) > 0 {
		msg += ": " + strings.Join(why, ", ")
	}
	return msg
}
