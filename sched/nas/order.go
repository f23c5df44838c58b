package nas

import (
	"sort"
	"time"

	"gopbs/sched/placement"
	"gopbs/sched/world"
)

// candidate is a queued job of a source queue (submit, special or
// dedicated) in one cycle.
type candidate struct {
	job       *world.Job
	size      int           // nodes (processors) requested
	wall      time.Duration // requested walltime, 0 if none
	eligible  time.Time     // etime, else ctime, else qtime
	special   bool
	dedicated bool
	waiting   bool
	usage     float64 // the user's past usage
}

// jobSize is the number of nodes a job requests, counted as the
// processors of its nodes specification (count × ppn), else its ncpus,
// else its nodect, else 1.
func jobSize(j *world.Job) int {
	if j.Nodes != "" {
		if sp, err := placement.ParseSpec(j.Nodes, func(string) bool { return false }); err == nil && sp.Procs() > 0 {
			return sp.Procs()
		}
	}
	switch {
	case j.NCPUs > 0:
		return int(min(j.NCPUs, 1<<30))
	case j.NodeCt > 0:
		return int(min(j.NodeCt, 1<<30))
	}
	return 1
}

// eligibleTime is when the job became eligible: its etime, or if not
// defined its ctime (the seed), or its qtime.
func eligibleTime(j *world.Job) time.Time {
	switch {
	case !j.ETime.IsZero():
		return j.ETime
	case !j.CTime.IsZero():
		return j.CTime
	}
	return j.QTime
}

// isWaiting applies the seed's rule: a batch job waits once it has been
// eligible longer than MAX_QUEUED_TIME, an interactive job once longer
// than INTERACTIVE_LONG_WAIT plus its requested walltime; a zero option
// disables its kind.
func (c *cycle) isWaiting(cd *candidate) bool {
	cfg := c.s.Config
	if cd.eligible.IsZero() {
		return false
	}
	limit := cfg.MaxQueuedTime
	if cd.job.Interactive {
		if cfg.InteractiveLongWait == 0 {
			return false
		}
		limit = cfg.InteractiveLongWait + cd.wall
	} else if limit == 0 {
		return false
	}
	return c.now.Sub(cd.eligible) > limit
}

// order sorts the candidates into the preferred order: special jobs
// first (oldest first), then waiting jobs (waitingLess), then the others:
// in prime time the largest first, then (SORT_BY_PAST_USAGE) the users
// with the least past usage, then the oldest.
func (c *cycle) order(cands []*candidate) {
	rank := func(cd *candidate) int {
		switch {
		case cd.special:
			return 0
		case cd.waiting:
			return 1
		}
		return 2
	}
	sort.SliceStable(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if rx, ry := rank(x), rank(y); rx != ry {
			return rx < ry
		}
		switch rank(x) {
		case 0:
			return x.eligible.Before(y.eligible)
		case 1:
			return c.waitingLess(x, y)
		}
		if c.prime && x.size != y.size {
			return x.size > y.size
		}
		if c.s.Config.SortByPastUsage && x.usage != y.usage {
			return x.usage < y.usage
		}
		return x.eligible.Before(y.eligible)
	})
}

// waitingLess orders two waiting jobs as the seed says. Jobs on the same
// side of SMALL_QUEUED_TIME (their requested walltime over it, or not)
// go largest first, then oldest first; otherwise the longest walltime
// first, then the youngest first.
func (c *cycle) waitingLess(x, y *candidate) bool {
	sqt := c.s.Config.SmallQueuedTime
	if (x.wall > sqt) == (y.wall > sqt) {
		if x.size != y.size {
			return x.size > y.size
		}
		return x.eligible.Before(y.eligible)
	}
	if x.wall != y.wall {
		return x.wall > y.wall
	}
	return x.eligible.After(y.eligible)
}
