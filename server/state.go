package server

import (
	"strconv"
	"strings"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/store"
)

// findJob looks a job up by id as clients give it: the full id, an id
// with "@server" appended, or the bare sequence number.
func (s *Server) findJob(id string) *Job {
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	if j := s.jobs[id]; j != nil {
		return j
	}
	seq := id
	if i := strings.IndexByte(id, '.'); i >= 0 {
		seq = id[:i]
	}
	return s.jobs[seq+"."+s.name]
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

// holdsState reports whether a job in this state may hold nodes: the
// jobs that usedVPs, refreshAssigned and the MOM polling look at, kept in
// s.holding so that they never walk the whole job list.
func holdsState(state pbsattr.JobStateNum) bool {
	return state == pbsattr.StateRunning || state == pbsattr.StateExiting
}

// trackHolding puts a linked job into s.holding or takes it out
// according to its state.
func (s *Server) trackHolding(j *Job) {
	if holdsState(j.state) && s.jobs[j.id] == j {
		s.holding.add(j)
	} else {
		s.holding.remove(j)
	}
}

// groupCacheTTL is how long a user's primary group, looked up for the
// egroup of each submitted job, is reused before the system is asked
// again; maxGroupCache bounds the number of users remembered.
const (
	groupCacheTTL = time.Minute
	maxGroupCache = 10000
)

// groupEntry is a remembered primary group.
type groupEntry struct {
	group string
	at    time.Time
}

// primaryGroup returns the primary group of user (s.run.groupOf: a
// password and group database lookup, which reads files) and remembers
// successful answers for groupCacheTTL, so that a burst of submissions
// does not look the same user up every time. Called with s.mu held.
func (s *Server) primaryGroup(user string) string {
	now := s.now()
	if e, ok := s.groups[user]; ok && now.Sub(e.at) < groupCacheTTL && !now.Before(e.at) {
		return e.group
	}
	g := s.run.groupOf(user)
	if g != "" {
		if s.groups == nil || len(s.groups) >= maxGroupCache {
			s.groups = make(map[string]groupEntry)
		}
		s.groups[user] = groupEntry{group: g, at: now}
	}
	return g
}

// linkJob appends a job to the all-jobs list and the index.
func (s *Server) linkJob(j *Job) {
	s.jobs[j.id] = j
	s.trackHolding(j)
	j.prev, j.next = s.tail, nil
	if s.tail != nil {
		s.tail.next = j
	} else {
		s.head = j
	}
	s.tail = j
}

func (s *Server) unlinkJob(j *Job) {
	delete(s.jobs, j.id)
	s.holding.remove(j)
	if j.prev != nil {
		j.prev.next = j.next
	} else if s.head == j {
		s.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else if s.tail == j {
		s.tail = j.prev
	}
	j.prev, j.next = nil, nil
}

// watchJob registers a job with the once-a-second timer work when it has
// some (waiting for its execution time, kept after completion, sitting in
// a route queue), so that the timer never walks the whole job list.
func (s *Server) watchJob(j *Job) {
	if j.state == pbsattr.StateWaiting || j.purgeAt != 0 || j.queue != nil && j.queue.isRoute() {
		if s.watch == nil {
			s.watch = make(map[*Job]struct{})
		}
		s.watch[j] = struct{}{}
	}
}

// enqueue puts a job into a queue's counters.
func (s *Server) enqueue(j *Job, q *Queue) {
	j.queue = q
	s.watchJob(j)
	if j.array != nil {
		return // array templates are not counted
	}
	q.count[j.state]++
	s.count[j.state]++
	if j.state != pbsattr.StateComplete {
		if q.users == nil {
			q.users = map[string]int{}
		}
		q.users[j.ownerUser()]++
	}
}

// dequeue removes a job from its queue's counters.
func (s *Server) dequeue(j *Job) {
	q := j.queue
	if q == nil {
		return
	}
	if j.array != nil {
		j.queue = nil
		return
	}
	q.count[j.state]--
	s.count[j.state]--
	if j.state != pbsattr.StateComplete {
		u := j.ownerUser()
		if q.users[u]--; q.users[u] <= 0 {
			delete(q.users, u)
		}
	}
	j.queue = nil
}

// setState changes a job's state, keeping the counters right.
func (s *Server) setState(j *Job, state pbsattr.JobStateNum, sub pbsattr.Substate) {
	if state == pbsattr.StateQueued && j.state != pbsattr.StateQueued && s.run != nil {
		s.run.queuedSeq++ // the scheduler hears of it (sched_link.go)
	}
	if q := j.queue; q != nil && state != j.state && j.array == nil {
		q.count[j.state]--
		s.count[j.state]--
		q.count[state]++
		s.count[state]++
		u := j.ownerUser()
		if state == pbsattr.StateComplete {
			if q.users[u]--; q.users[u] <= 0 {
				delete(q.users, u)
			}
		} else if j.state == pbsattr.StateComplete {
			q.users[u]++
		}
	}
	j.state, j.substate = state, sub
	s.watchJob(j)
	s.trackHolding(j)
}

// evaluate recomputes a non-running job's state from its holds, execution
// time and dependencies (spec 12 §2.4). Holds set late (Job.lateHold)
// are left out this once.
func (s *Server) evaluate(j *Job) {
	hold := j.hold &^ j.lateHold
	j.lateHold = 0
	if j.state == pbsattr.StateRunning || j.state == pbsattr.StateTransit || j.state == pbsattr.StateExiting || j.state == pbsattr.StateComplete {
		return
	}
	now := s.now().Unix()
	if j.array != nil {
		s.setState(j, pbsattr.StateQueued, pbsattr.SubArrayTemplate)
		if !j.attrs.has(pbsattr.JobEtime) {
			j.attrs.set(pbsattr.JobEtime, strconv.FormatInt(now, 10))
		}
		return
	}
	switch {
	case hold&^holdArray != 0:
		sub := pbsattr.SubHeld
		if j.substate == pbsattr.SubDepnHold || j.substate == pbsattr.SubSyncHold {
			sub = j.substate
		}
		if sub == pbsattr.SubHeld && j.hold&holdSystem != 0 && dependHolds(s, j) {
			sub = pbsattr.SubDepnHold
		}
		s.setState(j, pbsattr.StateHeld, sub)
	case execTime(j) > now:
		s.setState(j, pbsattr.StateWaiting, pbsattr.SubWaiting)
	default:
		s.setState(j, pbsattr.StateQueued, pbsattr.SubQueued)
		if j.queue != nil && j.queue.isExec() && !j.attrs.has(pbsattr.JobEtime) {
			j.attrs.set(pbsattr.JobEtime, strconv.FormatInt(now, 10))
		}
	}
}

// keepCompleted returns how long (seconds) a job completed in queue q
// (nil: none) is kept: the queue's keep_completed, else the server's.
func (s *Server) keepCompleted(q *Queue) int64 {
	keep := s.serverLong(pbsattr.SrvKeepCompleted, 0)
	if q != nil {
		if v, ok := q.long(pbsattr.QueueKeepCompleted); ok {
			keep = v
		}
	}
	return keep
}

func execTime(j *Job) int64 {
	v := j.attrs.get(pbsattr.JobExecutionTime)
	if v == "" {
		return 0
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// touch sets mtime.
func (s *Server) touch(j *Job) {
	j.attrs.set(pbsattr.JobMtime, strconv.FormatInt(s.now().Unix(), 10))
}

// saveJobOps returns the store operation saving a job.
func (s *Server) saveJobOp(j *Job) store.Op {
	return store.Put(store.Jobs, j.id, encodeJob(j))
}

func (s *Server) saveServerOp() store.Op {
	return store.Put(store.Server, "attributes", encodeServer(s.attrs, s.nextJob))
}

// purgeJob removes a job from memory and returns the store operations
// deleting it.
func (s *Server) purgeJob(j *Job) []store.Op {
	s.dequeue(j)
	s.unlinkJob(j)
	ops := []store.Op{store.Del(store.Jobs, j.id), store.Del(store.Script, scriptKey(j))}
	if p := j.parent; p != nil && p.array != nil {
		subs := p.array.subjobs
		for i, x := range subs {
			if x == j {
				p.array.subjobs = append(subs[:i:i], subs[i+1:]...)
				break
			}
		}
		if len(p.array.subjobs) == 0 {
			s.log.Logf(logline.EventDebug2, logline.ClassJob, p.id, "dequeuing from %s, state %s", p.queue.name, stateName(p.state))
			ops = append(ops, s.purgeJob(p)...)
		}
	}
	return ops
}

func queueName(j *Job) string {
	if j.queue == nil {
		return ""
	}
	return j.queue.name
}

// scriptKey is the key of a job's script: array sub-jobs share the
// template's.
func scriptKey(j *Job) string {
	if j.parent != nil {
		return j.parent.id
	}
	return j.id
}

func stateName(st pbsattr.JobStateNum) string {
	return [...]string{"TRANSIT", "QUEUED", "HELD", "WAITING", "RUNNING", "EXITING", "COMPLETE"}[st]
}

// dropPending discards an uncommitted submission when its connection
// closes (spec 02 §6.1).
func (s *Server) dropPending(c *conn) {
	// c.pending is set and cleared only by the connection's own requests,
	// served on the goroutine that closes it: seeing that there is
	// nothing to drop needs no lock (two write locks per submission).
	if c.pending == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.pending
	if j == nil {
		return
	}
	c.pending = nil
	j.conn = nil
	if j.substate == pbsattr.SubTransICM {
		// After RdytoCommit the job stays listed in state T, substate 0,
		// and never runs (observed behaviour, spec 02 §6.1); it is not
		// durable: an unacknowledged submission does not survive a
		// restart.
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.id, "enqueuing into %s, state 1 hop 1", queueName(j))
		j.substate = pbsattr.SubTransIn
	}
	// A job only queued (never made ready) was not linked: it vanishes.
}

// tick runs once a second: execution times, routing, completed-job
// purging.
func (s *Server) tick() {
	s.mu.Lock()
	now := s.now().Unix()
	var ops []store.Op
	for j := range s.watch {
		if s.jobs[j.id] != j {
			delete(s.watch, j)
			continue
		}
		switch {
		case j.state == pbsattr.StateWaiting && execTime(j) <= now:
			j.attrs.set(pbsattr.JobExecutionTime, "")
			s.evaluate(j)
			s.touch(j)
			ops = append(ops, s.saveJobOp(j))
		case j.state == pbsattr.StateComplete && j.purgeAt != 0:
			if j.purgeAt <= now {
				s.log.Logf(logline.EventDebug2, logline.ClassJob, j.id, "dequeuing from %s, state COMPLETE", queueName(j))
				ops = append(ops, s.purgeJob(j)...)
				delete(s.watch, j)
			}
		case j.queue != nil && j.queue.isRoute():
			if j.routeRetryAt <= now {
				ops = append(ops, s.routeJob(j, now)...)
			}
		case j.state != pbsattr.StateWaiting:
			delete(s.watch, j)
		}
	}
	var wait func() error
	if len(ops) > 0 && !s.shutting {
		wait = s.store.Submit(ops...)
	}
	s.mu.Unlock()
	if wait != nil {
		wait()
	}
}

// rateCounter tracks the request rate for the net_counter attribute.

type rateCounter struct {
	mu      sync.Mutex
	buckets [60]int
	last    int64
}

func (r *rateCounter) add(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(now.Unix())
	r.buckets[now.Unix()%60]++
}

func (r *rateCounter) advance(sec int64) {
	if sec-r.last >= 60 {
		r.buckets = [60]int{}
	} else {
		for t := r.last + 1; t <= sec; t++ {
			r.buckets[t%60] = 0
		}
	}
	if sec > r.last {
		r.last = sec
	}
}

// String returns "<5s> <30s> <60s>" average requests per second.
func (r *rateCounter) String(now time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	sec := now.Unix()
	r.advance(sec)
	avg := func(n int64) int {
		sum := 0
		for t := sec - n + 1; t <= sec; t++ {
			sum += r.buckets[((t%60)+60)%60]
		}
		return sum / int(n)
	}
	return strconv.Itoa(avg(5)) + " " + strconv.Itoa(avg(30)) + " " + strconv.Itoa(avg(60))
}
