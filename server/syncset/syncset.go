// Package syncset keeps the synchronised job sets of seed 001 ("Synchronize
// Job Starts"): a master job (-W synccount=N) and the N other jobs that
// name it (-W syncwith=<master>). The server managing the master keeps
// the set here: the members register with their costs, and once all N
// have registered the jobs are released one at a time, the cheapest
// first, the next when the previous one is reported ready (it started).
// The server managing a released member remembers here which master to
// tell when the member starts.
//
// A Table is plain bookkeeping: it sends nothing and touches no job. Its
// methods return what the caller must do (which jobs to release or
// abort); the caller owns locking and persistence (Encode/Decode).
package syncset

import (
	"errors"
	"slices"
)

// ErrNoMaster is returned by Register for a job that is no sync master
// here (PBSE_NOSYNCMSTR).
var ErrNoMaster = errors.New("no sync set master")

// ErrBadJob is returned by Register for an empty job name or one with
// white space or control characters.
var ErrBadJob = errors.New("bad job name")

// validJob reports whether job can be kept (and encoded).
func validJob(job string) bool {
	if job == "" {
		return false
	}
	for i := 0; i < len(job); i++ {
		if job[i] <= ' ' || job[i] == 0x7f {
			return false
		}
	}
	return true
}

// Member is one job of a set as the master's server records it.
type Member struct {
	Job      string // job id with "@server"
	Cost     int64  // resource cost (Prices.Cost) computed by the job's server
	Released bool   // its system hold was removed
	Ready    bool   // it started ("Ready")
}

// Set is a sync set: Members[0] is the master, the others follow in
// registration order.
type Set struct {
	Count   int // the master's synccount: how many other jobs make the set
	Members []Member
}

// Complete reports whether every member has registered.
func (s *Set) Complete() bool { return len(s.Members)-1 >= s.Count }

// pending reports whether a released member has not started yet.
func (s *Set) pending() bool {
	for _, m := range s.Members {
		if m.Released && !m.Ready {
			return true
		}
	}
	return false
}

// next marks the cheapest member not yet released as released and
// returns it: lowest cost, then earliest registration (the master first).
// It returns nothing while the set is incomplete or a released member has
// not started.
func (s *Set) next() []string {
	if !s.Complete() || s.pending() {
		return nil
	}
	best := -1
	for i, m := range s.Members {
		if !m.Released && (best < 0 || m.Cost < s.Members[best].Cost) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	s.Members[best].Released = true
	return []string{s.Members[best].Job}
}

// done reports whether every member started.
func (s *Set) done() bool {
	for _, m := range s.Members {
		if !m.Ready {
			return false
		}
	}
	return s.Complete()
}

func (s *Set) find(job string) int {
	return slices.IndexFunc(s.Members, func(m Member) bool { return m.Job == job })
}

// Table holds the sets mastered by one server, keyed by the master's job
// id, and the released jobs of this server that must report their start
// to a master. The zero value is empty and ready to use; a Table is not
// safe for concurrent use.
type Table struct {
	sets    map[string]*Set
	waiting map[string]string // local job id → master "id@server"
	outbox  []Message         // requests owed to other servers (outbox.go)
	lastSeq uint64
}

// Open records the set of master (job id; ref is its "id@server" form)
// with count other jobs and the master's cost. Opening a set again
// updates its count and the master's cost and keeps its members. It
// returns the jobs to release (the master itself for a set of one).
func (t *Table) Open(master, ref string, count int, cost int64) []string {
	if !validJob(master) || !validJob(ref) {
		return nil
	}
	if t.sets == nil {
		t.sets = map[string]*Set{}
	}
	s, ok := t.sets[master]
	if !ok {
		s = &Set{Members: []Member{{Job: ref}}}
		t.sets[master] = s
	}
	s.Count = count
	s.Members[0].Cost = cost
	return s.next()
}

// Set returns a copy of the set of master, or false.
func (t *Table) Set(master string) (Set, bool) {
	s, ok := t.sets[master]
	if !ok {
		return Set{}, false
	}
	return Set{Count: s.Count, Members: slices.Clone(s.Members)}, true
}

// Masters returns the job ids of the masters with a set, sorted.
func (t *Table) Masters() []string {
	out := make([]string, 0, len(t.sets))
	for m := range t.sets {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Register adds job ("id@server") with its cost to the set of master
// (again: updates the cost) and returns the jobs to release: the
// cheapest member when this registration completes the set.
func (t *Table) Register(master, job string, cost int64) ([]string, error) {
	s, ok := t.sets[master]
	if !ok {
		return nil, ErrNoMaster
	}
	if !validJob(job) {
		return nil, ErrBadJob
	}
	if i := s.find(job); i >= 0 {
		s.Members[i].Cost = cost
	} else {
		s.Members = append(s.Members, Member{Job: job, Cost: cost})
	}
	return s.next(), nil
}

// Ready records that job of master's set started and returns the next
// job to release. A job started before its release (a manager's qrun)
// counts as released and started. When every member started the set is
// forgotten.
func (t *Table) Ready(master, job string) []string {
	s, ok := t.sets[master]
	if !ok {
		return nil
	}
	i := s.find(job)
	if i < 0 {
		return nil
	}
	s.Members[i].Released, s.Members[i].Ready = true, true
	next := s.next()
	if s.done() {
		delete(t.sets, master)
	}
	return next
}

// Leave removes job (a member other than the master, deleted or ended)
// from master's set and returns the next job to release when it was the
// released one not started yet.
func (t *Table) Leave(master, job string) []string {
	s, ok := t.sets[master]
	if !ok {
		return nil
	}
	i := s.find(job)
	if i <= 0 {
		return nil
	}
	s.Members = slices.Delete(s.Members, i, i+1)
	if s.Count > 0 {
		s.Count--
	}
	next := s.next()
	if s.done() {
		delete(t.sets, master)
	}
	return next
}

// Abort forgets the set of master (the master was deleted or ended) and
// returns its members other than the master that have not started: the
// seed aborts them, for a set is meant to run together.
func (t *Table) Abort(master string) []string {
	s, ok := t.sets[master]
	if !ok {
		return nil
	}
	delete(t.sets, master)
	var out []string
	for _, m := range s.Members[1:] {
		if !m.Ready {
			out = append(out, m.Job)
		}
	}
	return out
}

// Await records that the local job (id) was released from the set of
// master ("id@server") and must report its start.
func (t *Table) Await(job, master string) {
	if !validJob(job) || !validJob(master) {
		return
	}
	if t.waiting == nil {
		t.waiting = map[string]string{}
	}
	t.waiting[job] = master
}

// Started forgets and returns the master that job (a local job id) must
// tell of its start, if any.
func (t *Table) Started(job string) (master string, ok bool) {
	master, ok = t.waiting[job]
	delete(t.waiting, job)
	return master, ok
}
