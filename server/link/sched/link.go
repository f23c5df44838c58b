// Package sched is pbs_server's link to its schedulers (spec 12 §10): it
// decides when a scheduling cycle is due (a job submitted, ended or
// released, scheduling switched on, the scheduler_iteration timer),
// connects to the scheduler from a reserved port, sends the command and
// has the server serve the scheduler's requests on that connection until
// the scheduler closes it.
//
// The link knows the server only through the narrow Server interface: it
// reads the scheduling attribute, scheduler_iteration and the queued
// sequence of the job table, and hands each cycle's connection back to
// the server's transport. A Link serves a list of schedulers, each with
// its own cycle state (one today: the scheduler of Config.SchedHost and
// SchedPort, named "default").
package sched

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"gopbs/batchreq"
	"gopbs/iff"
	"gopbs/internal/logline"
	"gopbs/server/monitor"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// DefaultIteration is scheduler_iteration's default in seconds (spec 12
// §10.1).
const DefaultIteration = 600

// dialTimeout bounds the connection set-up to a scheduler (TORQUE's
// tcp_timeout).
const dialTimeout = 10 * time.Second

// Server is what the link needs of pbs_server.
type Server interface {
	// Scheduling reports, read together under the server's lock, the
	// server's scheduling attribute and the job table's QueuedSeq.
	Scheduling() (on bool, queuedSeq int64)
	// Iteration returns scheduler_iteration in seconds
	// (DefaultIteration when unset).
	Iteration() int64
	// ShuttingDown reports whether the server is shutting down.
	ShuttingDown() bool
	// Now returns the server's clock.
	Now() time.Time
	// Triggered is told of every request for a cycle before the link
	// weighs it (the partitions' schedulers look at their queues).
	Triggered()
	// CycleConn takes on nc, the connection of a scheduler that has been
	// sent its command, as a privileged client (spec 03 §5.1: no pbs_iff,
	// full privileges). The jobs run over it are to be counted in cy
	// (Cycle.CountStart). It reports false if the connection could not be
	// taken on.
	CycleConn(nc net.Conn, cy *Cycle) (Conn, bool)
}

// Conn is a scheduler's connection as the server's transport serves it.
type Conn interface {
	// Serve serves the scheduler's requests until it closes the
	// connection.
	Serve()
}

// Scheduler names a scheduler the link serves.
type Scheduler struct {
	Name string // "default" for the server's own scheduler
	Host string // "" means 127.0.0.1
	Port int
}

// Cycle is one scheduling cycle's connection as the server serves it.
type Cycle struct {
	started atomic.Int64
}

// CountStart counts a job run over the cycle's connection. A nil Cycle
// (a connection that is not a scheduler's) counts nothing.
func (c *Cycle) CountStart() {
	if c != nil {
		c.started.Add(1)
	}
}

// Started returns the number of jobs run over the cycle's connection.
func (c *Cycle) Started() int { return int(c.started.Load()) }

// Link is the server's side of its schedulers.
type Link struct {
	srv    Server
	log    *pbslog.Logger
	name   string // the server's name, in log lines
	obs    monitor.Observer
	scheds []*scheduler
}

// scheduler is the cycle state of one scheduler (spec 12 §10). Its
// fields after mu are guarded by mu, which is never held while calling
// the Server.
type scheduler struct {
	Scheduler
	active atomic.Bool   // a cycle is in progress (server_state Scheduling)
	down   atomic.Bool   // the last attempt to contact the scheduler failed
	kick   chan struct{} // wakes the worker
	cycles schedCycleLog // recent cycles' durations, for the debug listener

	mu        sync.Mutex
	pending   int       // command waiting to be sent, SCH_SCHEDULE_NULL if none
	lastCycle time.Time // when the last cycle was started
	seenQueue int64     // QueuedSeq at the last tick
	busy      bool      // a cycle is being started or served
	again     int       // a trigger that came during the cycle, SCH_SCHEDULE_NULL if none
}

// New returns a link to the schedulers scheds of server srv (named name
// in log lines), logging to log and reporting cycles to obs. The jobs
// queued so far are taken as seen: the first cycle is theirs, and the
// tick asks for cycles for jobs queued from now on.
func New(srv Server, log *pbslog.Logger, name string, obs monitor.Observer, scheds ...Scheduler) *Link {
	l := &Link{srv: srv, log: log, name: name, obs: obs}
	_, queued := srv.Scheduling()
	for _, sc := range scheds {
		l.scheds = append(l.scheds, &scheduler{Scheduler: sc, kick: make(chan struct{}, 1), seenQueue: queued})
	}
	return l
}

// Start starts a worker per scheduler that connects to it when a cycle
// is due; a server started with scheduling true asks for the "first"
// cycle. The workers end when done is closed.
func (l *Link) Start(done <-chan struct{}) {
	on, _ := l.srv.Scheduling()
	now := l.srv.Now()
	for _, sc := range l.scheds {
		sc.mu.Lock()
		sc.lastCycle = now
		sc.mu.Unlock()
	}
	if on {
		l.Notify(batchreq.SCH_SCHEDULE_FIRST)
	}
	for _, sc := range l.scheds {
		go l.worker(sc, done)
	}
}

// Notify records that a scheduling cycle is needed for cmd: a job was
// submitted, ended or released, or scheduling was switched on. A
// trigger that arrives while a cycle is in progress is remembered, and
// one more cycle starts as soon as the current one ends (never two at
// once): the running cycle may have read the server's state before the
// change. TORQUE drops such a trigger, and the job then waits for the
// next timed cycle (scheduler_iteration, 600 s by default); this is a
// deliberate difference (README). Each cycle is the same on the wire.
//
// It must be called without the server's lock held: a "new" request
// takes note of the jobs queued so far, so that the tick does not ask
// again. Requests made while scheduling is off are dropped. A nil Link
// (a server not started) notifies nothing.
func (l *Link) Notify(cmd int) { l.request(cmd, true) }

// request is Notify; a request made during a cycle is remembered for the
// next cycle if later is true, dropped otherwise (the tick's own
// requests: the state changes it notices during a cycle are the cycle's
// own doing, such as a job requeued after a failed start).
func (l *Link) request(cmd int, later bool) {
	if l == nil {
		return
	}
	l.requestTo(l.scheds, cmd, later)
}

// requestTo is request for the schedulers scheds.
func (l *Link) requestTo(scheds []*scheduler, cmd int, later bool) {
	l.srv.Triggered()
	on, queued := l.srv.Scheduling()
	if !on {
		return // with scheduling off the reason is dropped
	}
	for _, sc := range scheds {
		sc.request(cmd, later, queued)
	}
}

func (sc *scheduler) request(cmd int, later bool, queued int64) {
	sc.mu.Lock()
	if cmd == batchreq.SCH_SCHEDULE_NEW {
		sc.seenQueue = queued
	}
	switch {
	case !sc.busy:
		sc.pending = cmd
	case later:
		sc.again = cmd
	}
	sc.mu.Unlock()
	select {
	case sc.kick <- struct{}{}:
	default:
	}
}

// Managed is called after a Manager request: setting the server's
// scheduling attribute to true asks for a "cmd" cycle at once, right
// after the Manager reply (spec 12 §10.1, capture 71), whatever the
// attribute was before.
func (l *Link) Managed(body *batchreq.Manage) {
	if l == nil || body.Command != batchreq.MGR_CMD_SET || body.ObjType != batchreq.MGR_OBJ_SERVER {
		return
	}
	for _, a := range body.Attrs {
		if on, ok := state.ParseBool(a.Value); a.Name == "scheduling" && ok && on {
			l.Notify(batchreq.SCH_SCHEDULE_CMD)
			return
		}
	}
}

// Active reports whether a scheduling cycle is in progress.
func (l *Link) Active() bool {
	if l == nil {
		return false
	}
	for _, sc := range l.scheds {
		if sc.active.Load() {
			return true
		}
	}
	return false
}

// Down reports whether the last attempt to contact the default
// scheduler failed.
func (l *Link) Down() bool { return l != nil && len(l.scheds) > 0 && l.scheds[0].down.Load() }

// Busy reports whether a cycle is being started or served.
func (l *Link) Busy() bool {
	for _, sc := range l.scheds {
		sc.mu.Lock()
		busy := sc.busy
		sc.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

// Tick runs every second: a timed cycle every scheduler_iteration
// seconds, and a "new" cycle for jobs that became queued without asking
// for one.
func (l *Link) Tick() {
	on, queued := l.srv.Scheduling()
	iter := l.srv.Iteration()
	now := l.srv.Now()
	for i, sc := range l.scheds {
		sc.mu.Lock()
		due := iter > 0 && now.Sub(sc.lastCycle) >= time.Duration(iter)*time.Second
		// jobs that became QUEUED since the last tick (released holds,
		// routing, execution times, requeues) ask for a "new" cycle
		newJobs := queued != sc.seenQueue
		sc.seenQueue = queued
		sc.mu.Unlock()
		switch {
		case newJobs && on:
			l.requestTo(l.scheds[i:i+1], batchreq.SCH_SCHEDULE_NEW, false)
		case due && on:
			l.requestTo(l.scheds[i:i+1], batchreq.SCH_SCHEDULE_TIME, false)
		}
	}
}

// worker sends sc's pending commands, one cycle at a time, and has the
// server serve the scheduler's requests on the same connection.
func (l *Link) worker(sc *scheduler, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-sc.kick:
		}
		for {
			on, _ := l.srv.Scheduling()
			ok := on && !l.srv.ShuttingDown()
			sc.mu.Lock()
			cmd := sc.pending
			sc.pending = batchreq.SCH_SCHEDULE_NULL
			if cmd != batchreq.SCH_SCHEDULE_NULL && ok {
				sc.lastCycle = l.srv.Now()
				sc.busy = true
			}
			sc.mu.Unlock()
			if cmd == batchreq.SCH_SCHEDULE_NULL || !ok {
				break
			}
			started, ran := l.cycle(sc, cmd)
			sc.mu.Lock()
			sc.busy = false
			switch {
			case ran && started == 1:
				sc.pending = batchreq.SCH_SCHEDULE_RECYC // as TORQUE
			case sc.again != batchreq.SCH_SCHEDULE_NULL:
				// a trigger came during the cycle: one more cycle now
				sc.pending = sc.again
			}
			sc.again = batchreq.SCH_SCHEDULE_NULL
			sc.mu.Unlock()
		}
	}
}

// cycle connects to the scheduler, sends cmd and has the server serve
// the connection until the scheduler closes it. It returns the number of
// jobs run over it and whether the scheduler could be contacted.
func (l *Link) cycle(sc *scheduler, cmd int) (int, bool) {
	begin := time.Now()
	host := sc.Host
	if host == "" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	d := iff.ReservedDialer{Unprivileged: true}
	nc, err := d.Dial(ctx, net.JoinHostPort(host, strconv.Itoa(sc.Port)))
	cancel()
	sc.down.Store(err != nil)
	if err != nil {
		l.log.Logf(logline.EventSched, logline.ClassServer, l.name, "Could not contact Scheduler - port %d", sc.Port)
		return 0, false
	}
	if err := batchreq.WriteSchedCommand(nc, cmd); err != nil {
		nc.Close()
		return 0, false
	}
	l.log.Logf(logline.EventSched, logline.ClassServer, l.name, "Scheduler was sent the command %s", batchreq.SchedCommandName(cmd))
	cy := &Cycle{}
	c, ok := l.srv.CycleConn(nc, cy)
	if !ok {
		return 0, false
	}
	sc.active.Store(true)
	c.Serve()
	sc.active.Store(false)
	n := cy.Started()
	sc.cycles.add(cmd, begin, time.Since(begin), n)
	l.obs.SchedCycle(sc.Name, time.Since(begin))
	return n, true
}
