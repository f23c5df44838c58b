// This file selects and orders the candidates of a cycle: the queues that may
// run jobs now (queueReason), their queued jobs sorted by sort_queues,
// sort_by/multi_sort and fair share with the starving job first
// (candidates, compare, findStarving), and the order in which by_queue and
// round_robin hand them out (selector).

package policy

import (
	"sort"
	"strings"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/world"
)

// queueReason returns the comment for the jobs of a queue that cannot run
// jobs now, or "".
func (c *cycle) queueReason(q *world.Queue) string {
	for _, name := range c.s.Config.IgnoreQueues {
		if name == q.Name {
			return CommentQueueIgnored
		}
	}
	if !q.Execution() {
		return CommentQueueNotExec
	}
	if !q.Started {
		return CommentQueueNotStarted
	}
	if c.dedicatedQueue(q) != c.inDedicated {
		return CommentDedicatedConflict
	}
	return ""
}

func (c *cycle) dedicatedQueue(q *world.Queue) bool {
	p := c.s.Config.DedicatedPrefix
	return p != "" && strings.HasPrefix(q.Name, p)
}

// candidates selects the queues that may run jobs and their queued jobs,
// and orders them. It returns one list per queue (by_queue, round_robin)
// or a single global list.
func (c *cycle) candidates() [][]*world.Job {
	cfg := c.s.Config
	var queues []*world.Queue
	for _, q := range c.w.Queues {
		if reason := c.queueReason(q); reason != "" {
			for _, j := range q.Jobs {
				if j.State == 'Q' {
					c.stats.Considered++
					c.comment(j, reason)
				}
			}
			continue
		}
		queues = append(queues, q)
	}
	if cfg.SortQueues.At(c.period) {
		sort.SliceStable(queues, func(a, b int) bool { return queues[a].Priority > queues[b].Priority })
	}
	less := c.jobLess()
	perQueue := cfg.ByQueue.At(c.period) || cfg.RoundRobin.At(c.period)
	var lists [][]*world.Job
	var all []*world.Job
	for _, q := range queues {
		var jobs []*world.Job
		for _, j := range q.Jobs {
			if j.State == 'Q' {
				jobs = append(jobs, j)
				c.states[j] = &jobState{job: j}
			}
		}
		c.stats.Considered += len(jobs)
		if perQueue {
			if less != nil {
				sort.SliceStable(jobs, func(a, b int) bool { return less(jobs[a], jobs[b]) })
			}
			lists = append(lists, jobs)
		} else {
			all = append(all, jobs...)
		}
	}
	if !perQueue {
		if less != nil {
			sort.SliceStable(all, func(a, b int) bool { return less(all[a], all[b]) })
		}
		lists = [][]*world.Job{all}
	}
	return lists
}

// compare returns <0 when a sorts before b under key k.
func (c *cycle) compare(k config.SortKey, a, b *world.Job) int {
	cmp := func(x, y int64) int {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	pos := func(d time.Duration) int64 {
		if d < 0 {
			return 0
		}
		return int64(d)
	}
	size := func(v int64) int64 {
		if v < 0 {
			return 0
		}
		return v
	}
	switch k {
	case config.ShortestJobFirst:
		return cmp(pos(a.CPUT), pos(b.CPUT))
	case config.LongestJobFirst:
		return cmp(pos(b.CPUT), pos(a.CPUT))
	case config.SmallestMemoryFirst:
		return cmp(size(a.Mem), size(b.Mem))
	case config.LargestMemoryFirst:
		return cmp(size(b.Mem), size(a.Mem))
	case config.HighPriorityFirst:
		return cmp(int64(b.Priority), int64(a.Priority))
	case config.LowPriorityFirst:
		return cmp(int64(a.Priority), int64(b.Priority))
	case config.LargeWalltimeFirst:
		return cmp(pos(b.Walltime), pos(a.Walltime))
	case config.ShortWalltimeFirst:
		return cmp(pos(a.Walltime), pos(b.Walltime))
	case config.FairShareSort:
		if t := c.s.FairShare; t != nil {
			pa, pb := t.User(a.User).Priority(), t.User(b.User).Priority()
			switch {
			case pa < pb:
				return -1
			case pa > pb:
				return 1
			}
		}
	}
	return 0
}

// jobLess returns the job ordering of sort_by, or nil for no sorting.
func (c *cycle) jobLess() func(a, b *world.Job) bool {
	cfg := c.s.Config
	if keys := cfg.PluS.JobOrder(); len(keys) > 0 {
		return plusLess(cfg.PluS, keys)
	}
	key := cfg.SortBy.At(c.period)
	switch key {
	case config.NoSort:
		return nil
	case config.MultiSort:
		keys := cfg.Keys.At(c.period)
		if len(keys) == 0 {
			return nil
		}
		return func(a, b *world.Job) bool {
			for _, k := range keys {
				if r := c.compare(k, a, b); r != 0 {
					return r < 0
				}
			}
			return false
		}
	}
	return func(a, b *world.Job) bool { return c.compare(key, a, b) < 0 }
}

// findStarving picks the starving job of the cycle: the queued job that
// has waited longest beyond max_starve, outside dedicated queues.
func (c *cycle) findStarving(lists [][]*world.Job) {
	if !c.s.Config.HelpStarvingJobs.At(c.period) {
		return
	}
	limit := c.s.Config.MaxStarve
	for _, l := range lists {
		for _, j := range l {
			if j.QTime.IsZero() || c.dedicatedQueue(j.Queue) || !j.QTime.Add(limit).Before(c.now) {
				continue
			}
			if c.starving == nil || j.QTime.Before(c.starving.QTime) {
				c.starving = j
			}
		}
	}
	if c.starving != nil {
		c.stats.Starving = c.starving.ID
	}
}

// selector yields the jobs of the cycle in policy order.
type selector struct {
	c        *cycle
	lists    [][]*world.Job
	next     []int // next index per list (sequential selection)
	cur      int   // current list (by_queue / global)
	rr       bool
	fair     bool
	starving *world.Job
	users    [][]*userJobs // fair share: per list, per user in order of appearance
}

// userJobs are the positions, in list order, of one user's jobs in a
// list.
type userJobs struct {
	node *fairshare.Node
	pos  []int
	next int
}

func (c *cycle) newSelector(lists [][]*world.Job) *selector {
	cfg := c.s.Config
	sel := &selector{c: c, lists: lists, next: make([]int, len(lists)),
		rr: cfg.RoundRobin.At(c.period), fair: cfg.FairShare.At(c.period) && c.s.FairShare != nil,
		starving: c.starving}
	if sel.fair {
		sel.users = make([][]*userJobs, len(lists))
		for i, l := range lists {
			byUser := map[string]*userJobs{}
			for k, j := range l {
				u := byUser[j.User]
				if u == nil {
					u = &userJobs{node: c.s.FairShare.User(j.User)}
					byUser[j.User] = u
					sel.users[i] = append(sel.users[i], u)
				}
				u.pos = append(u.pos, k)
			}
		}
	}
	return sel
}

func (sel *selector) usable(j *world.Job) bool {
	st := sel.c.states[j]
	return !st.tried && !st.cantRun
}

// fromList returns the next job of list i, or nil.
func (sel *selector) fromList(i int) *world.Job {
	l := sel.lists[i]
	if !sel.fair {
		for sel.next[i] < len(l) {
			j := l[sel.next[i]]
			sel.next[i]++
			if sel.usable(j) {
				return j
			}
		}
		return nil
	}
	// Fair share: the next job of the most deserving user (lowest usage
	// relative to shares); ties go to the job earlier in the list.
	var best *userJobs
	bestPrio := 0.0
	for _, u := range sel.users[i] {
		for u.next < len(u.pos) && !sel.usable(l[u.pos[u.next]]) {
			u.next++
		}
		if u.next == len(u.pos) {
			continue
		}
		p := u.node.Priority()
		if best == nil || p < bestPrio || (p == bestPrio && u.pos[u.next] < best.pos[best.next]) {
			best, bestPrio = u, p
		}
	}
	if best == nil {
		return nil
	}
	return l[best.pos[best.next]]
}

// Next returns the next job to consider, or nil at the end.
func (sel *selector) Next() *world.Job {
	if j := sel.starving; j != nil {
		sel.starving = nil
		if sel.usable(j) {
			return j
		}
	}
	if sel.rr {
		for tries := 0; tries < len(sel.lists); tries++ {
			i := sel.cur % len(sel.lists)
			sel.cur = (sel.cur + 1) % len(sel.lists)
			if j := sel.fromList(i); j != nil {
				return j
			}
		}
		return nil
	}
	for sel.cur < len(sel.lists) {
		if j := sel.fromList(sel.cur); j != nil {
			return j
		}
		sel.cur++
	}
	return nil
}
