package server

import (
	"net"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/server/link/sched"
	"gopbs/server/schedulers"
	"gopbs/server/transport"
)

// schedState is the server as the scheduler link (server/link/sched)
// sees it.
type schedState struct{ s *Server }

var _ sched.Server = schedState{}

// Scheduling implements sched.Server.
func (st schedState) Scheduling() (bool, int64) {
	s := st.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.serverFlag(pbsattr.SrvScheduling), s.jobs.QueuedSeq()
}

// Iteration implements sched.Server.
func (st schedState) Iteration() int64 {
	s := st.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.serverLong(pbsattr.SrvSchedulerIteration, sched.DefaultIteration)
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

// Triggered implements sched.Server: the partitions' schedulers look at
// their queues.
func (st schedState) Triggered() {
	if st.s.schedSuper != nil {
		st.s.schedSuper.Poke()
	}
}

// CycleConn implements sched.Server: the scheduler's connection is a
// privileged client (spec 03 §5.1): its requests need no pbs_iff and
// carry full privileges.
func (st schedState) CycleConn(nc net.Conn, cy *sched.Cycle) (sched.Conn, bool) {
	s := st.s
	p, ok := s.peerConn(nc, s.scheds.Slice(schedulers.DefaultName), cy) // the default scheduler's slice
	if !ok {
		return nil, false
	}
	return cycleConn{p}, true
}

// cycleConn serves a scheduler's connection.
type cycleConn struct{ p transport.Peer }

// Serve implements sched.Conn.
func (cc cycleConn) Serve() { cc.p.Serve() }
