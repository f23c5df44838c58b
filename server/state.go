package server

import (
	"strconv"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// findJob looks a job up by id as clients give it (lifecycle.Life.Find).
func (s *Server) findJob(id string) *state.Job { return s.life.Find(id) }

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

// primaryGroup returns the primary group of user (s.groupOf: a
// password and group database lookup, which reads files) and remembers
// successful answers for groupCacheTTL, so that a burst of submissions
// does not look the same user up every time. Called with s.mu held.
func (s *Server) primaryGroup(user string) string {
	now := s.now()
	if e, ok := s.groups[user]; ok && now.Sub(e.at) < groupCacheTTL && !now.Before(e.at) {
		return e.group
	}
	g := s.groupOf(user)
	if g != "" {
		if s.groups == nil || len(s.groups) >= maxGroupCache {
			s.groups = make(map[string]groupEntry)
		}
		s.groups[user] = groupEntry{group: g, at: now}
	}
	return g
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
// purging (lifecycle.Life.Tick).
func (s *Server) tick() {
	s.mu.Lock()
	tx := s.db.Begin()
	s.life.Tick(tx, s.now().Unix())
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
