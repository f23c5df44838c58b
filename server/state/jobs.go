package state

import "gopbs/attr"

// Jobs is the job table: every job the server knows, in submission order
// (the order of status replies) with an index by id, and what must stay
// in step with the jobs' queues and states: the jobs per state of the
// server and of each queue, the non-complete jobs of each queue owner,
// the jobs that may hold nodes and the jobs with timer work. Every change
// of a job's queue or state goes through Enqueue, Dequeue and SetState so
// that these stay right. The zero value is an empty table.
type Jobs struct {
	byID       map[string]*Job
	head, tail *Job
	count      [7]int
	holding    jobSet
	watch      map[*Job]struct{}
	queuedSeq  int64
}

// Get returns the job with the full id, or nil.
func (t *Jobs) Get(id string) *Job { return t.byID[id] }

// Len returns the number of jobs in the table.
func (t *Jobs) Len() int { return len(t.byID) }

// First returns the first job in submission order, or nil; Job.Next walks
// on.
func (t *Jobs) First() *Job { return t.head }

// Next returns the job submitted after j in the table, or nil.
func (j *Job) Next() *Job { return j.next }

// Linked reports whether j is the job of its id in the table.
func (t *Jobs) Linked(j *Job) bool { return t.byID[j.ID] == j }

// Link appends a job to the table.
func (t *Jobs) Link(j *Job) {
	if t.byID == nil {
		t.byID = make(map[string]*Job)
	}
	t.byID[j.ID] = j
	t.trackHolding(j)
	j.prev, j.next = t.tail, nil
	if t.tail != nil {
		t.tail.next = j
	} else {
		t.head = j
	}
	t.tail = j
}

// Unlink removes a job from the table.
func (t *Jobs) Unlink(j *Job) {
	delete(t.byID, j.ID)
	t.holding.remove(j)
	if j.prev != nil {
		j.prev.next = j.next
	} else if t.head == j {
		t.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else if t.tail == j {
		t.tail = j.prev
	}
	j.prev, j.next = nil, nil
}

// Count returns the number of jobs in each state (array templates are
// not counted).
func (t *Jobs) Count() [7]int { return t.count }

// QueuedSeq counts the changes of a job's state to QUEUED: the scheduler
// link compares it with the value it saw last to know whether a cycle
// may find something new.
func (t *Jobs) QueuedSeq() int64 { return t.queuedSeq }

// Holding returns the linked jobs that may hold nodes (running or
// exiting; HoldsState), in a stable order. The slice belongs to the
// table: it must not be kept past the server's lock or changed.
func (t *Jobs) Holding() []*Job { return t.holding.list }

// trackHolding puts a linked job into the holding set or takes it out
// according to its state.
func (t *Jobs) trackHolding(j *Job) {
	if HoldsState(j.State) && t.byID[j.ID] == j {
		t.holding.add(j)
	} else {
		t.holding.remove(j)
	}
}

// Watch registers a job with the once-a-second timer work when it has
// some (waiting for its execution time, kept after completion, sitting in
// a route queue), so that the timer never walks the whole job list.
func (t *Jobs) Watch(j *Job) {
	if j.State == attr.StateWaiting || j.PurgeAt != 0 || j.Queue != nil && j.Queue.IsRoute() {
		if t.watch == nil {
			t.watch = make(map[*Job]struct{})
		}
		t.watch[j] = struct{}{}
	}
}

// Watched calls f for each job registered with Watch, in no particular
// order; a job for which f returns false is forgotten, as are jobs no
// longer in the table. f may change the table.
func (t *Jobs) Watched(f func(j *Job) (keep bool)) {
	for j := range t.watch {
		if t.byID[j.ID] != j || !f(j) {
			delete(t.watch, j)
		}
	}
}

// Enqueue puts a job into a queue and its counters.
func (t *Jobs) Enqueue(j *Job, q *Queue) {
	j.Queue = q
	t.Watch(j)
	if j.Array != nil {
		return // array templates are not counted
	}
	q.Count[j.State]++
	t.count[j.State]++
	if j.State == attr.StateQueued {
		q.Events++
	}
	if j.State != attr.StateComplete {
		if q.Users == nil {
			q.Users = map[string]int{}
		}
		q.Users[j.OwnerUser()]++
	}
}

// Dequeue takes a job out of its queue and the queue's counters.
func (t *Jobs) Dequeue(j *Job) {
	q := j.Queue
	if q == nil {
		return
	}
	if j.Array != nil {
		j.Queue = nil
		return
	}
	q.Count[j.State]--
	t.count[j.State]--
	if j.State != attr.StateComplete {
		u := j.OwnerUser()
		if q.Users[u]--; q.Users[u] <= 0 {
			delete(q.Users, u)
		}
	}
	j.Queue = nil
}

// SetState changes a job's state and substate, keeping the counters, the
// holding set and the timer registrations right.
func (t *Jobs) SetState(j *Job, st attr.JobStateNum, sub attr.Substate) {
	if st == attr.StateQueued && j.State != attr.StateQueued {
		t.queuedSeq++
	}
	if q := j.Queue; q != nil && st != j.State && (st == attr.StateQueued || st == attr.StateExiting || st == attr.StateComplete) {
		q.Events++
	}
	if q := j.Queue; q != nil && st != j.State && j.Array == nil {
		q.Count[j.State]--
		t.count[j.State]--
		q.Count[st]++
		t.count[st]++
		u := j.OwnerUser()
		if st == attr.StateComplete {
			if q.Users[u]--; q.Users[u] <= 0 {
				delete(q.Users, u)
			}
		} else if j.State == attr.StateComplete {
			q.Users[u]++
		}
	}
	j.State, j.Substate = st, sub
	t.Watch(j)
	t.trackHolding(j)
}

// jobSet is a set of jobs that can be walked in a stable order: the
// order of insertion, except that a removal moves the last job into the
// removed one's place.
type jobSet struct {
	list []*Job
	pos  map[*Job]int
}

func (js *jobSet) add(j *Job) {
	if _, ok := js.pos[j]; ok {
		return
	}
	if js.pos == nil {
		js.pos = make(map[*Job]int)
	}
	js.pos[j] = len(js.list)
	js.list = append(js.list, j)
}

func (js *jobSet) remove(j *Job) {
	i, ok := js.pos[j]
	if !ok {
		return
	}
	last := len(js.list) - 1
	js.list[i] = js.list[last]
	js.pos[js.list[i]] = i
	js.list[last] = nil
	js.list = js.list[:last]
	delete(js.pos, j)
}
