// Package sched is pbs_server's link to its schedulers (spec 12 §10): it
// decides when a scheduling cycle is due (a job submitted, ended or
// released, scheduling switched on, the scheduler_iteration timer, the
// end of a job_accumulation_time), connects to the scheduler from a
// reserved port, sends the command and has the server serve the
// scheduler's requests on that connection until the scheduler closes it.
//
// The link is the one cycle runner of every scheduler the server drives
// (issue 18): the "default" scheduler, which the site runs (TORQUE's
// pbs_sched, Maui or GoPBS's), and the schedulers of partitions, which
// the server's Supervisor (package server/schedulers) starts and hands
// to the link with Run once they listen. Each scheduler has a worker of
// its own, so that one scheduler never has two cycles at once while
// different schedulers cycle in parallel.
//
// The link knows the server only through the narrow Server interface: a
// scheduler's scheduling flag and job event counter, its
// scheduler_iteration and job_accumulation_time, and the server's
// transport, which takes on each cycle's connection.
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

// DefaultName is the name of the server's own scheduler.
const DefaultName = "default"

// dialTimeout bounds the connection set-up to a scheduler (TORQUE's
// tcp_timeout).
const dialTimeout = 10 * time.Second

// Server is what the link needs of pbs_server. Every method taking a
// name answers for that scheduler; for DefaultName they are the server's
// own attributes, as TORQUE has them.
type Server interface {
	// Scheduling reports, read together under the server's lock,
	// whether scheduler name schedules and its job event counter: for
	// the default scheduler the server's scheduling attribute and the
	// job table's QueuedSeq; for another its object's scheduling and
	// the job events of its partitions' queues. A change of the counter asks for a "new" cycle.
	Scheduling(name string) (on bool, events int64)
	// Iteration returns scheduler_iteration in seconds (DefaultIteration
	// when unset).
	Iteration(name string) int64
	// Accumulation returns job_accumulation_time: how long a cycle asked
	// for by job events waits for more of them (0: none).
	Accumulation(name string) time.Duration
	// ShuttingDown reports whether the server is shutting down.
	ShuttingDown() bool
	// Now returns the server's clock.
	Now() time.Time
	// CycleConn takes on nc, the connection of scheduler name that has
	// been sent its command, as a privileged client (spec 03 §5.1: no
	// pbs_iff, full privileges) that sees the scheduler's slice of the
	// cluster. The jobs run over it are to be counted in cy
	// (Cycle.CountStart). It reports false if the connection could not
	// be taken on.
	CycleConn(name string, nc net.Conn, cy *Cycle) (Conn, bool)
	// CycleState is told when a cycle of a non-default scheduler starts
	// (active) and ends, and whether the scheduler could be reached.
	CycleState(name string, active, reached bool)
	// Unreachable is asked, when a non-default scheduler cannot be
	// reached, for its partitions (as a list for the log) and the ids of
	// the jobs waiting in them.
	Unreachable(name string) (partitions string, jobs []string)
}

// Conn is a scheduler's connection as the server's transport serves it.
type Conn interface {
	// Serve serves the scheduler's requests until it closes the
	// connection.
	Serve()
}

// Scheduler names a scheduler the link serves.
type Scheduler struct {
	Name string // DefaultName for the server's own scheduler
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
	srv  Server
	log  *pbslog.Logger
	name string // the server's name, in the default scheduler's log lines
	obs  monitor.Observer

	mu     sync.Mutex
	scheds []*scheduler // the default scheduler first
	done   <-chan struct{}
}

// scheduler is the cycle state of one scheduler (spec 12 §10). Its
// fields after mu are guarded by mu, which is never held while calling
// the Server.
type scheduler struct {
	name   string
	active atomic.Bool   // a cycle is in progress (server_state Scheduling)
	down   atomic.Bool   // the last attempt to contact the scheduler failed
	kick   chan struct{} // wakes the worker
	quit   chan struct{} // closed when the scheduler is removed
	cycles schedCycleLog // recent cycles' durations, for the debug listener

	mu        sync.Mutex
	addr      Scheduler
	pending   int       // command waiting to be sent, SCH_SCHEDULE_NULL if none
	lastCycle time.Time // when the last cycle was started
	seen      int64     // job event counter at the last look
	busy      bool      // a cycle is being started or served
	again     int       // a trigger that came during the cycle, SCH_SCHEDULE_NULL if none
	// accum is when a cycle asked for by job events is due while the
	// scheduler's job_accumulation_time gathers more of them (zero: no
	// such wait); accumCmd is its command.
	accum    time.Time
	accumCmd int
	named    map[string]bool // jobs named in "Unable to reach" lines since it was last reached
}

func (sc *scheduler) isDefault() bool { return sc.name == DefaultName }

// New returns a link to the schedulers scheds of server srv (named name
// in log lines), logging to log and reporting cycles to obs. The jobs
// queued so far are taken as seen: the first cycle is theirs, and the
// tick asks for cycles for jobs queued from now on.
func New(srv Server, log *pbslog.Logger, name string, obs monitor.Observer, scheds ...Scheduler) *Link {
	l := &Link{srv: srv, log: log, name: name, obs: obs}
	for _, a := range scheds {
		l.scheds = append(l.scheds, l.newScheduler(a))
	}
	return l
}

func (l *Link) newScheduler(a Scheduler) *scheduler {
	_, seen := l.srv.Scheduling(a.Name)
	return &scheduler{name: a.Name, addr: a, kick: make(chan struct{}, 1), quit: make(chan struct{}), seen: seen}
}

// Start starts a worker per scheduler that connects to it when a cycle
// is due; a server started with scheduling true asks the default
// scheduler for the "first" cycle. The workers end when done is closed.
func (l *Link) Start(done <-chan struct{}) {
	now := l.srv.Now()
	l.mu.Lock()
	l.done = done
	scheds := append([]*scheduler(nil), l.scheds...)
	l.mu.Unlock()
	for _, sc := range scheds {
		sc.mu.Lock()
		sc.lastCycle = now
		sc.mu.Unlock()
	}
	for _, sc := range scheds {
		if on, _ := l.srv.Scheduling(sc.name); on && sc.isDefault() {
			l.requestTo(sc, batchreq.SCH_SCHEDULE_FIRST, true)
		}
		go l.worker(sc, done)
	}
}

// Run tells the link that scheduler a listens at its host and port (a
// scheduler of a partition the server has started, found running, or
// that runs on another host) and asks it for a cycle cmd: "first" after
// a start, "command" after a change of its object. A scheduler the link
// does not serve yet gets a worker of its own.
func (l *Link) Run(a Scheduler, cmd int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	sc := l.find(a.Name)
	if sc == nil {
		sc = l.newScheduler(a)
		sc.lastCycle = l.srv.Now()
		l.scheds = append(l.scheds, sc)
		if l.done != nil {
			go l.worker(sc, l.done)
		}
	}
	l.mu.Unlock()
	sc.mu.Lock()
	sc.addr = a
	sc.mu.Unlock()
	l.requestTo(sc, cmd, true)
}

// Remove stops serving the named (non-default) scheduler: its worker
// ends after the cycle in progress, if any.
func (l *Link) Remove(name string) {
	if l == nil || name == DefaultName {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, sc := range l.scheds {
		if sc.name == name {
			close(sc.quit)
			l.scheds = append(l.scheds[:i], l.scheds[i+1:]...)
			return
		}
	}
}

// Serves reports whether the link serves the named scheduler.
func (l *Link) Serves(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.find(name) != nil
}

// find returns the named scheduler; called with l.mu held.
func (l *Link) find(name string) *scheduler {
	for _, sc := range l.scheds {
		if sc.name == name {
			return sc
		}
	}
	return nil
}

// list returns the schedulers served.
func (l *Link) list() []*scheduler {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*scheduler(nil), l.scheds...)
}

// defaultSched returns the default scheduler, or nil.
func (l *Link) defaultSched() *scheduler {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.find(DefaultName)
}

// Notify records that a scheduling cycle is needed for cmd: a job was
// submitted, ended or released, or scheduling was switched on. The
// default scheduler is asked as TORQUE asks its scheduler; the
// scheduler of a partition only when the job events of its partitions
// changed. A trigger that arrives while a cycle is in progress is
// remembered, and one more cycle starts as soon as the current one ends
// (never two at once): the running cycle may have read the server's
// state before the change. TORQUE drops such a trigger, and the job
// then waits for the next timed cycle (scheduler_iteration, 600 s by
// default); this is a deliberate difference (README). Each cycle is the
// same on the wire.
//
// It must be called without the server's lock held: a "new" request
// takes note of the job events so far, so that the tick does not ask
// again. Requests made while scheduling is off are dropped. A nil Link
// (a server not started) notifies nothing.
func (l *Link) Notify(cmd int) {
	if l == nil {
		return
	}
	for _, sc := range l.list() {
		if sc.isDefault() {
			l.requestTo(sc, cmd, true)
			continue
		}
		on, ev := l.srv.Scheduling(sc.name)
		sc.mu.Lock()
		changed := ev != sc.seen
		sc.mu.Unlock()
		if on && changed {
			l.requestTo(sc, cmd, true)
		}
	}
}

// Request asks the named scheduler for a cycle cmd.
func (l *Link) Request(name string, cmd int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	sc := l.find(name)
	l.mu.Unlock()
	if sc != nil {
		l.requestTo(sc, cmd, true)
	}
}

// jobEvent reports whether cmd is asked for by job events, which a
// job_accumulation_time gathers.
func jobEvent(cmd int) bool {
	return cmd == batchreq.SCH_SCHEDULE_NEW || cmd == batchreq.SCH_SCHEDULE_TERM
}

// requestTo asks sc for a cycle cmd; a request made during a cycle is
// remembered for the next cycle if later is true, dropped otherwise (the
// tick's own requests: the state changes it notices during a cycle are
// the cycle's own doing, such as a job requeued after a failed start).
// With a job_accumulation_time, a request for job events waits that
// long for more (the tick sends it).
func (l *Link) requestTo(sc *scheduler, cmd int, later bool) {
	on, events := l.srv.Scheduling(sc.name)
	if !on {
		return // with scheduling off the reason is dropped
	}
	var acc time.Duration
	if jobEvent(cmd) {
		acc = l.srv.Accumulation(sc.name)
	}
	now := l.srv.Now()
	sc.mu.Lock()
	// the default scheduler's counter is QueuedSeq, which a job's end
	// does not move; a partition's counts ends too
	if cmd == batchreq.SCH_SCHEDULE_NEW || jobEvent(cmd) && !sc.isDefault() {
		sc.seen = events
	}
	if acc > 0 {
		if sc.accum.IsZero() {
			sc.accum, sc.accumCmd = now.Add(acc), cmd
		}
		sc.mu.Unlock()
		return
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
// scheduling attribute to true asks the default scheduler for a "cmd"
// cycle at once, right after the Manager reply (spec 12 §10.1, capture
// 71), whatever the attribute was before.
func (l *Link) Managed(body *batchreq.Manage) {
	if l == nil || body.Command != batchreq.MGR_CMD_SET || body.ObjType != batchreq.MGR_OBJ_SERVER {
		return
	}
	for _, a := range body.Attrs {
		if on, ok := state.ParseBool(a.Value); a.Name == "scheduling" && ok && on {
			l.Request(DefaultName, batchreq.SCH_SCHEDULE_CMD)
			return
		}
	}
}

// Active reports whether a cycle of the default scheduler is in
// progress (server_state Scheduling).
func (l *Link) Active() bool {
	sc := l.defaultSched()
	return sc != nil && sc.active.Load()
}

// Down reports whether the last attempt to contact the default
// scheduler failed.
func (l *Link) Down() bool {
	sc := l.defaultSched()
	return sc != nil && sc.down.Load()
}

// Busy reports whether a cycle of any scheduler is being started or
// served.
func (l *Link) Busy() bool {
	for _, sc := range l.list() {
		sc.mu.Lock()
		busy := sc.busy
		sc.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

// Tick runs every second: for each scheduler a timed cycle every
// scheduler_iteration seconds, a "new" cycle for job events that did not
// ask for one (released holds, routing, execution times, requeues), and
// the cycle a job_accumulation_time held back once it has passed.
func (l *Link) Tick() {
	now := l.srv.Now()
	for _, sc := range l.list() {
		on, events := l.srv.Scheduling(sc.name)
		iter := l.srv.Iteration(sc.name)
		sc.mu.Lock()
		due := iter > 0 && now.Sub(sc.lastCycle) >= time.Duration(iter)*time.Second
		newJobs := events != sc.seen
		sc.seen = events
		accumDue := !sc.accum.IsZero() && !now.Before(sc.accum)
		accumCmd := sc.accumCmd
		if accumDue || !on {
			sc.accum = time.Time{}
		}
		sc.mu.Unlock()
		switch {
		case !on:
		case accumDue:
			l.send(sc, accumCmd)
		case newJobs:
			l.requestTo(sc, batchreq.SCH_SCHEDULE_NEW, false)
		case due:
			l.requestTo(sc, batchreq.SCH_SCHEDULE_TIME, false)
		}
	}
}

// send makes cmd sc's next cycle, as requestTo does without waiting for
// more job events.
func (l *Link) send(sc *scheduler, cmd int) {
	sc.mu.Lock()
	if sc.busy {
		sc.again = cmd
	} else {
		sc.pending = cmd
	}
	sc.mu.Unlock()
	select {
	case sc.kick <- struct{}{}:
	default:
	}
}

// worker sends sc's pending commands, one cycle at a time, and has the
// server serve the scheduler's requests on the same connection.
func (l *Link) worker(sc *scheduler, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-sc.quit:
			return
		case <-sc.kick:
		}
		for {
			on, _ := l.srv.Scheduling(sc.name)
			ok := on && !l.srv.ShuttingDown()
			select {
			case <-sc.quit:
				ok = false
			default:
			}
			sc.mu.Lock()
			cmd := sc.pending
			sc.pending = batchreq.SCH_SCHEDULE_NULL
			if cmd != batchreq.SCH_SCHEDULE_NULL && ok {
				sc.lastCycle = l.srv.Now()
				sc.busy = true
				sc.accum = time.Time{} // the cycle sees the events gathered so far
			}
			addr := sc.addr
			sc.mu.Unlock()
			if cmd == batchreq.SCH_SCHEDULE_NULL || !ok {
				break
			}
			started, ran := l.cycle(sc, addr, cmd)
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
func (l *Link) cycle(sc *scheduler, a Scheduler, cmd int) (int, bool) {
	begin := time.Now()
	host := a.Host
	if host == "" {
		host = "127.0.0.1"
	}
	def := sc.isDefault()
	if !def {
		l.srv.CycleState(sc.name, true, true)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	d := iff.ReservedDialer{Unprivileged: true}
	nc, err := d.Dial(ctx, net.JoinHostPort(host, strconv.Itoa(a.Port)))
	cancel()
	sc.down.Store(err != nil)
	if err != nil {
		l.unreachable(sc, a)
		return 0, false
	}
	if err := batchreq.WriteSchedCommand(nc, cmd); err != nil {
		nc.Close()
		if !def {
			l.srv.CycleState(sc.name, false, false)
		}
		return 0, false
	}
	if def {
		l.log.Logf(logline.EventSched, logline.ClassServer, l.name, "Scheduler was sent the command %s", batchreq.SchedCommandName(cmd))
	} else {
		l.log.Logf(logline.EventSched, logline.ClassServer, sc.name, "Scheduler %s was sent the command %s", sc.name, batchreq.SchedCommandName(cmd))
		sc.mu.Lock()
		sc.named = nil // reached: a later outage names its jobs again
		sc.mu.Unlock()
	}
	cy := &Cycle{}
	c, ok := l.srv.CycleConn(sc.name, nc, cy)
	if !ok {
		if !def {
			l.srv.CycleState(sc.name, false, false)
		}
		return 0, false
	}
	sc.active.Store(true)
	c.Serve()
	sc.active.Store(false)
	n := cy.Started()
	took := time.Since(begin)
	sc.cycles.add(cmd, begin, took, n)
	l.obs.SchedCycle(sc.name, took)
	if !def {
		select {
		case <-sc.quit: // removed meanwhile: the Supervisor has set its state
		default:
			l.srv.CycleState(sc.name, false, true)
		}
		l.log.Logf(logline.EventSched, logline.ClassServer, sc.name, "Scheduler %s cycle %s ended after %.3f s, %d jobs run",
			sc.name, batchreq.SchedCommandName(cmd), took.Seconds(), n)
	}
	return n, true
}

// unreachable logs that a scheduler could not be contacted: for the
// default scheduler TORQUE's line; for the scheduler of partitions the
// seed's lines (seed 003, interface 4), one for its partitions and one
// for each job waiting in them, each job named once until the scheduler
// is reached again.
func (l *Link) unreachable(sc *scheduler, a Scheduler) {
	if sc.isDefault() {
		l.log.Logf(logline.EventSched, logline.ClassServer, l.name, "Could not contact Scheduler - port %d", a.Port)
		return
	}
	l.srv.CycleState(sc.name, false, false)
	l.log.Logf(logline.EventSched, logline.ClassServer, sc.name, "Could not contact Scheduler %s - port %d", sc.name, a.Port)
	parts, jobs := l.srv.Unreachable(sc.name)
	l.log.Logf(logline.EventSched, logline.ClassServer, sc.name, "Unable to reach scheduler associated with partition %s", parts)
	sc.mu.Lock()
	if sc.named == nil {
		sc.named = map[string]bool{}
	}
	var fresh []string
	for _, id := range jobs {
		if !sc.named[id] {
			sc.named[id] = true
			fresh = append(fresh, id)
		}
	}
	sc.mu.Unlock()
	for _, id := range fresh {
		l.log.Logf(logline.EventSched, logline.ClassJob, id, "Unable to reach scheduler associated with job %s", id)
	}
}
