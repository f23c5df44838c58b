package state

import (
	"strconv"

	"gopbs/attr"
)

// Queue is one queue.
type Queue struct {
	Name  string
	Attrs Attrs
	Count [7]int         // jobs per state
	Users map[string]int // non-complete jobs per owner user
	Order int64          // creation order
	// Events counts the jobs that became queued or ended in the queue:
	// the scheduler of the queue's partition compares it with the
	// value it saw at its last cycle (package schedulers).
	Events int64
}

// IsRoute reports whether the queue is a route queue.
func (q *Queue) IsRoute() bool {
	t := q.Attrs.Get(attr.QueueType)
	return len(t) > 0 && (t[0] == 'R' || t[0] == 'r')
}

// IsExec reports whether the queue is an execution queue.
func (q *Queue) IsExec() bool {
	t := q.Attrs.Get(attr.QueueType)
	return len(t) > 0 && (t[0] == 'E' || t[0] == 'e')
}

// Total returns the number of jobs counted in the queue.
func (q *Queue) Total() int {
	n := 0
	for _, c := range q.Count {
		n += c
	}
	return n
}

// Active returns the number of jobs in the queue that are not complete.
func (q *Queue) Active() int { return q.Total() - q.Count[attr.StateComplete] }

// Long returns a queue attribute as a number; ok is false when it is
// unset or not a number.
func (q *Queue) Long(idx int) (int64, bool) {
	v := q.Attrs.Get(idx)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// StateCount returns the state_count text of per-state job counts.
func StateCount(c [7]int) string { return attr.StateCount(c).String() }
