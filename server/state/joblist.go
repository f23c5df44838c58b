package state

// JobList holds every job the server knows, in submission order (the
// order of status replies), with an index by job id. The zero value is
// an empty list.
type JobList struct {
	byID       map[string]*Job
	head, tail *Job
}

// Get returns the job with the full id, or nil.
func (l *JobList) Get(id string) *Job { return l.byID[id] }

// Len returns the number of jobs in the list.
func (l *JobList) Len() int { return len(l.byID) }

// First returns the first job in submission order, or nil; Job.Next walks
// on.
func (l *JobList) First() *Job { return l.head }

// Next returns the job submitted after j in its list, or nil.
func (j *Job) Next() *Job { return j.next }

// Linked reports whether j is the job of its id in the list.
func (l *JobList) Linked(j *Job) bool { return l.byID[j.ID] == j }

// Link appends a job to the list and the index.
func (l *JobList) Link(j *Job) {
	if l.byID == nil {
		l.byID = make(map[string]*Job)
	}
	l.byID[j.ID] = j
	j.prev, j.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = j
	} else {
		l.head = j
	}
	l.tail = j
}

// Unlink removes a job from the list and the index.
func (l *JobList) Unlink(j *Job) {
	delete(l.byID, j.ID)
	if j.prev != nil {
		j.prev.next = j.next
	} else if l.head == j {
		l.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else if l.tail == j {
		l.tail = j.prev
	}
	j.prev, j.next = nil, nil
}
