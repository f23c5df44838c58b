package server

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/schedulers"
	"gopbs/server/state"
)

// defaultSchedulerIteration is scheduler_iteration's default (spec 12
// §10.1).
const defaultSchedulerIteration = 600

// schedLink is the state of the server's connection to the scheduler
// (spec 12 §10). pending and the counters are guarded by runLink.mu.
type schedLink struct {
	pending   int       // command waiting to be sent, SCH_SCHEDULE_NULL if none
	cur       *conn     // the open scheduler connection
	started   int       // jobs run over cur
	lastCycle time.Time // when the last cycle was started
	seenQueue int64     // Jobs.QueuedSeq at the last tick
	busy      bool      // a cycle is being started or served
	again     int       // a trigger that came during the cycle, SCH_SCHEDULE_NULL if none

	active atomic.Bool   // a cycle is in progress (server_state Scheduling)
	down   atomic.Bool   // the last attempt to contact the scheduler failed
	kick   chan struct{} // wakes the scheduler worker

	cycles schedCycleLog // recent cycles' durations, for the debug listener (debug.go)
}

// schedStart starts the worker that connects to the scheduler; a server
// started with scheduling true asks for the "first" cycle.
func (rl *runLink) schedStart() {
	rl.sched.kick = make(chan struct{}, 1)
	s := rl.s
	s.mu.RLock()
	on := s.serverFlag(pbsattr.SrvScheduling)
	s.mu.RUnlock()
	rl.mu.Lock()
	rl.sched.lastCycle = s.now()
	rl.mu.Unlock()
	if on {
		rl.schedNotify(batchreq.SCH_SCHEDULE_FIRST)
	}
	go rl.schedWorker()
}

// schedNotify records that a scheduling cycle is needed for cmd: a job
// was submitted, ended or released, or scheduling was switched on. A
// trigger that arrives while a cycle is in progress is remembered, and
// one more cycle starts as soon as the current one ends (never two at
// once): the running cycle may have read the server's state before the
// change. TORQUE drops such a trigger, and the job then waits for the
// next timed cycle (scheduler_iteration, 600 s by default); this is a
// deliberate difference (README). Each cycle is the same on the wire.
//
// It must be called without Server.mu held: a "new" request takes note
// of the jobs queued so far, so that the tick does not ask again.
// Requests made while scheduling is off are dropped.
func (rl *runLink) schedNotify(cmd int) { rl.schedRequest(cmd, true) }

// schedRequest is schedNotify; a request made during a cycle is
// remembered for the next cycle if later is true, dropped otherwise (the
// tick's own requests: the state changes it notices during a cycle are
// the cycle's own doing, such as a job requeued after a failed start).
func (rl *runLink) schedRequest(cmd int, later bool) {
	if rl == nil {
		return
	}
	if rl.s.schedSuper != nil {
		rl.s.schedSuper.Poke() // the partitions' schedulers look at their queues
	}
	rl.s.mu.RLock()
	queued := rl.s.jobs.QueuedSeq()
	on := rl.s.serverFlag(pbsattr.SrvScheduling)
	rl.s.mu.RUnlock()
	if !on {
		return // with scheduling off the reason is dropped
	}
	rl.mu.Lock()
	if cmd == batchreq.SCH_SCHEDULE_NEW {
		rl.sched.seenQueue = queued
	}
	switch {
	case !rl.sched.busy:
		rl.sched.pending = cmd
	case later:
		rl.sched.again = cmd
	}
	rl.mu.Unlock()
	select {
	case rl.sched.kick <- struct{}{}:
	default:
	}
}

// schedManaged is called after a Manager request: setting the server's
// scheduling attribute to true asks for a "cmd" cycle at once, right
// after the Manager reply (spec 12 §10.1, capture 71), whatever the
// attribute was before.
func (rl *runLink) schedManaged(body *batchreq.Manage) {
	if rl == nil || body.Command != batchreq.MGR_CMD_SET || body.ObjType != batchreq.MGR_OBJ_SERVER {
		return
	}
	for _, a := range body.Attrs {
		if on, ok := state.ParseBool(a.Value); a.Name == "scheduling" && ok && on {
			rl.schedNotify(batchreq.SCH_SCHEDULE_CMD)
			return
		}
	}
}

// schedActive reports whether a scheduling cycle is in progress.
func (rl *runLink) schedActive() bool { return rl != nil && rl.sched.active.Load() }

// schedTick runs every second: a timed cycle every scheduler_iteration
// seconds, and a "new" cycle for jobs that became queued without asking
// for one.
func (rl *runLink) schedTick() {
	s := rl.s
	s.mu.RLock()
	on := s.serverFlag(pbsattr.SrvScheduling)
	iter := s.serverLong(pbsattr.SrvSchedulerIteration, defaultSchedulerIteration)
	queued := rl.s.jobs.QueuedSeq()
	s.mu.RUnlock()
	now := s.now()
	rl.mu.Lock()
	due := iter > 0 && now.Sub(rl.sched.lastCycle) >= time.Duration(iter)*time.Second
	// jobs that became QUEUED since the last tick (released holds,
	// routing, execution times, requeues) ask for a "new" cycle
	newJobs := queued != rl.sched.seenQueue
	rl.sched.seenQueue = queued
	rl.mu.Unlock()
	switch {
	case newJobs && on:
		rl.schedRequest(batchreq.SCH_SCHEDULE_NEW, false)
	case due && on:
		rl.schedRequest(batchreq.SCH_SCHEDULE_TIME, false)
	}
}

// countStart counts a job run over the scheduler connection.
func (rl *runLink) countStart(c *conn) {
	if c.counter != nil {
		*c.counter++
	}
	rl.mu.Lock()
	if rl.sched.cur == c {
		rl.sched.started++
	}
	rl.mu.Unlock()
}

// schedWorker sends pending commands to the scheduler, one cycle at a
// time, and serves the scheduler's requests on the same connection.
func (rl *runLink) schedWorker() {
	s := rl.s
	for {
		select {
		case <-s.done:
			return
		case <-rl.sched.kick:
		}
		for {
			s.mu.RLock()
			ok := s.serverFlag(pbsattr.SrvScheduling) && !s.shutting
			s.mu.RUnlock()
			rl.mu.Lock()
			cmd := rl.sched.pending
			rl.sched.pending = batchreq.SCH_SCHEDULE_NULL
			if cmd != batchreq.SCH_SCHEDULE_NULL && ok {
				rl.sched.lastCycle = s.now()
				rl.sched.busy = true
			}
			rl.mu.Unlock()
			if cmd == batchreq.SCH_SCHEDULE_NULL || !ok {
				break
			}
			started, ran := rl.schedCycle(cmd)
			rl.mu.Lock()
			rl.sched.busy = false
			switch {
			case ran && started == 1:
				rl.sched.pending = batchreq.SCH_SCHEDULE_RECYC // as TORQUE
			case rl.sched.again != batchreq.SCH_SCHEDULE_NULL:
				// a trigger came during the cycle: one more cycle now
				rl.sched.pending = rl.sched.again
			}
			rl.sched.again = batchreq.SCH_SCHEDULE_NULL
			rl.mu.Unlock()
		}
	}
}

// schedCycle connects to the scheduler, sends cmd and serves the
// connection until the scheduler closes it. It returns the number of
// jobs run over it and whether the scheduler could be contacted.
func (rl *runLink) schedCycle(cmd int) (int, bool) {
	s := rl.s
	begin := time.Now()
	host := s.cfg.SchedHost
	if host == "" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), momTimeout)
	nc, err := dialReserved(ctx, net.JoinHostPort(host, strconv.Itoa(s.cfg.SchedPort)))
	cancel()
	rl.sched.down.Store(err != nil)
	if err != nil {
		s.log.Logf(logline.EventSched, logline.ClassServer, s.name, "Could not contact Scheduler - port %d", s.cfg.SchedPort)
		return 0, false
	}
	if err := batchreq.WriteSchedCommand(nc, cmd); err != nil {
		nc.Close()
		return 0, false
	}
	s.log.Logf(logline.EventSched, logline.ClassServer, s.name, "Scheduler was sent the command %s", batchreq.SchedCommandName(cmd))
	c := s.newConn(nc)
	if c == nil {
		return 0, false
	}
	// The scheduler connection is a privileged client (spec 03 §5.1):
	// its requests need no pbs_iff and carry full privileges.
	s.auth.Remove(c.auth)
	c.auth = s.auth.AddPrivileged(c.remote)
	c.slice = s.scheds.Slice(schedulers.DefaultName) // the default scheduler's slice
	rl.mu.Lock()
	rl.sched.cur, rl.sched.started = c, 0
	rl.mu.Unlock()
	rl.sched.active.Store(true)
	c.serve()
	rl.sched.active.Store(false)
	rl.mu.Lock()
	n := rl.sched.started
	rl.sched.cur = nil
	rl.mu.Unlock()
	rl.sched.cycles.add(cmd, begin, time.Since(begin), n)
	s.obs.SchedCycle("default", time.Since(begin))
	return n, true
}
