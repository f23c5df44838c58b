package server

import (
	"net"
	"slices"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/server/link/sched"
	"gopbs/server/schedulers"
	"gopbs/server/transport"
)

// schedState is the server as the scheduler link (server/link/sched)
// sees it: the default scheduler's settings are the server's attributes,
// another scheduler's are its sched object's (package schedulers).
type schedState struct{ s *Server }

var _ sched.Server = schedState{}

// Scheduling implements sched.Server.
func (st schedState) Scheduling(name string) (bool, int64) {
	s := st.s
	if name == schedulers.DefaultName {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.serverFlag(pbsattr.SrvScheduling), s.jobs.QueuedSeq()
	}
	sc := s.scheds.Get(name)
	if sc == nil {
		return false, 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var n int64
	for _, q := range s.queues {
		if p := q.Attrs.Get(pbsattr.QueuePartition); p != "" && sc.HasPartition(p) {
			n += q.Events
		}
	}
	// a scheduler without partition is given its cycles too: its first
	// one tells it so, and it shuts down (seed 003, interface 2)
	return sc.Scheduling, n
}

// Iteration implements sched.Server.
func (st schedState) Iteration(name string) int64 {
	s := st.s
	if name == schedulers.DefaultName {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.serverLong(pbsattr.SrvSchedulerIteration, sched.DefaultIteration)
	}
	if sc := s.scheds.Get(name); sc != nil {
		return sc.Iteration
	}
	return sched.DefaultIteration
}

// Accumulation implements sched.Server: the sched object's
// job_accumulation_time (the default scheduler's too).
func (st schedState) Accumulation(name string) time.Duration {
	if sc := st.s.scheds.Get(name); sc != nil {
		return time.Duration(sc.Accumulation) * time.Second
	}
	return 0
}

// ShuttingDown implements sched.Server.
func (st schedState) ShuttingDown() bool {
	s := st.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.shutting
}

// Now implements sched.Server.
func (st schedState) Now() time.Time { return st.s.now() }

// CycleConn implements sched.Server: the scheduler's connection is a
// privileged client (spec 03 §5.1): its requests need no pbs_iff and
// carry full privileges; it sees the scheduler's slice.
func (st schedState) CycleConn(name string, nc net.Conn, cy *sched.Cycle) (sched.Conn, bool) {
	s := st.s
	p, ok := s.peerConn(nc, s.scheds.Slice(name), cy)
	if !ok {
		return nil, false
	}
	return cycleConn{p}, true
}

// CycleState implements sched.Server: the state attribute of a
// scheduler of partitions.
func (st schedState) CycleState(name string, active, reached bool) {
	switch {
	case !reached:
		st.s.scheds.SetState(name, schedulers.StateDown)
	case active:
		st.s.scheds.SetState(name, schedulers.StateScheduling)
	default:
		st.s.scheds.SetState(name, schedulers.StateIdle)
	}
}

// Unreachable implements sched.Server: a scheduler's partitions and the
// jobs queued in their queues.
func (st schedState) Unreachable(name string) (string, []string) {
	s := st.s
	sc := s.scheds.Get(name)
	if sc == nil {
		return "", nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []string
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if j.State == pbsattr.StateQueued && j.Array == nil && j.Queue != nil &&
			slices.Contains(sc.Partitions, j.Queue.Attrs.Get(pbsattr.QueuePartition)) {
			ids = append(ids, j.ID)
		}
	}
	return strings.Join(sc.Partitions, ","), ids
}

// cycleConn serves a scheduler's connection.
type cycleConn struct{ p transport.Peer }

// Serve implements sched.Conn.
func (cc cycleConn) Serve() { cc.p.Serve() }
