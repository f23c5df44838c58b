package server

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// findJob looks a job up by id as clients give it: the full id, an id
// with "@server" appended, or the bare sequence number.
func (s *Server) findJob(id string) *state.Job {
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	if j := s.jobs.Get(id); j != nil {
		return j
	}
	seq := id
	if i := strings.IndexByte(id, '.'); i >= 0 {
		seq = id[:i]
	}
	return s.jobs.Get(seq + "." + s.name)
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

// evaluate recomputes a non-running job's state from its holds, execution
// time and dependencies (spec 12 §2.4). Holds set late (Job.lateHold)
// are left out this once.
func (s *Server) evaluate(j *state.Job) {
	hold := j.Hold &^ j.LateHold
	j.LateHold = 0
	if j.State == pbsattr.StateRunning || j.State == pbsattr.StateTransit || j.State == pbsattr.StateExiting || j.State == pbsattr.StateComplete {
		return
	}
	now := s.now().Unix()
	if j.Array != nil {
		s.jobs.SetState(j, pbsattr.StateQueued, pbsattr.SubArrayTemplate)
		if !j.Attrs.Has(pbsattr.JobEtime) {
			j.Attrs.Set(pbsattr.JobEtime, strconv.FormatInt(now, 10))
		}
		return
	}
	switch {
	case hold&^state.HoldArray != 0:
		sub := pbsattr.SubHeld
		if j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold {
			sub = j.Substate
		}
		if sub == pbsattr.SubHeld && j.Hold&state.HoldSystem != 0 && dependHolds(s, j) {
			sub = pbsattr.SubDepnHold
		}
		s.jobs.SetState(j, pbsattr.StateHeld, sub)
	case state.ExecTime(j) > now:
		s.jobs.SetState(j, pbsattr.StateWaiting, pbsattr.SubWaiting)
	default:
		s.jobs.SetState(j, pbsattr.StateQueued, pbsattr.SubQueued)
		if j.Queue != nil && j.Queue.IsExec() && !j.Attrs.Has(pbsattr.JobEtime) {
			j.Attrs.Set(pbsattr.JobEtime, strconv.FormatInt(now, 10))
		}
	}
}

// keepCompleted returns how long (seconds) a job completed in queue q
// (nil: none) is kept: the queue's keep_completed, else the server's.
func (s *Server) keepCompleted(q *state.Queue) int64 {
	keep := s.serverLong(pbsattr.SrvKeepCompleted, 0)
	if q != nil {
		if v, ok := q.Long(pbsattr.QueueKeepCompleted); ok {
			keep = v
		}
	}
	return keep
}

// touch sets mtime.
func (s *Server) touch(j *state.Job) {
	j.Attrs.Set(pbsattr.JobMtime, strconv.FormatInt(s.now().Unix(), 10))
}

// purgeJob removes a job from memory and from the store, in tx.
func (s *Server) purgeJob(tx *state.Txn, j *state.Job) {
	tx.Remove(j)
	if p := j.Parent; p != nil && p.Array != nil {
		subs := p.Array.Subjobs
		for i, x := range subs {
			if x == j {
				p.Array.Subjobs = append(subs[:i:i], subs[i+1:]...)
				break
			}
		}
		if len(p.Array.Subjobs) == 0 {
			s.log.Logf(logline.EventDebug2, logline.ClassJob, p.ID, "dequeuing from %s, state %s", p.Queue.Name, state.StateName(p.State))
			s.purgeJob(tx, p)
		}
	}
}

// dropPending discards an uncommitted submission when its connection
// closes (spec 02 §6.1).
func (s *Server) dropPending(c *handler.Conn) {
	// The pending job is set and cleared only by the connection's own
	// requests, served on the goroutine that closes it: seeing that there
	// is nothing to drop needs no lock (two write locks per submission).
	if c.Pending() == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := c.Pending()
	if j == nil {
		return
	}
	c.SetPending(nil)
	if j.Substate == pbsattr.SubTransICM {
		// After RdytoCommit the job stays listed in state T, substate 0,
		// and never runs (observed behaviour, spec 02 §6.1); it is not
		// durable: an unacknowledged submission does not survive a
		// restart.
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state 1 hop 1", state.QueueName(j))
		j.Substate = pbsattr.SubTransIn
	}
	// A job only queued (never made ready) was not linked: it vanishes.
}

// tick runs once a second: execution times, routing, completed-job
// purging.
func (s *Server) tick() {
	s.mu.Lock()
	now := s.now().Unix()
	tx := s.db.Begin()
	s.jobs.Watched(func(j *state.Job) bool {
		switch {
		case j.State == pbsattr.StateWaiting && state.ExecTime(j) <= now:
			j.Attrs.Set(pbsattr.JobExecutionTime, "")
			s.evaluate(j)
			s.touch(j)
			tx.SaveJob(j)
		case j.State == pbsattr.StateComplete && j.PurgeAt != 0:
			if j.PurgeAt <= now {
				s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state COMPLETE", state.QueueName(j))
				s.purgeJob(tx, j)
				return false
			}
		case j.Queue != nil && j.Queue.IsRoute():
			if j.RouteRetryAt <= now {
				s.router.Route(tx, j, now)
			}
		case j.State != pbsattr.StateWaiting:
			return false
		}
		return true
	})
	var wait func() error
	if !tx.Empty() && !s.shutting {
		wait = tx.Commit()
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

// contains reports whether list holds s.
func contains(list []string, s string) bool { return slices.Contains(list, s) }
