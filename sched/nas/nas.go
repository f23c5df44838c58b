// Package nas is the NAS scheduler's policy (seed 000, the scheduler
// NASA Ames wrote for its Origin2000 clusters and shipped with OpenPBS
// 2.3) as a second policy of GoPBS's pbs_sched. It shares the world model
// (sched/world), node placement (sched/placement), the MOM queries, the
// log and the server connection with the FIFO policy, and implements
// policy.Policy.
//
// Jobs arrive in the SUBMIT_QUEUE. Each cycle the jobs of the submit,
// special and dedicated queues are sorted into a preferred order (special
// jobs first, then waiting jobs, then in prime time the largest first);
// for each the scheduler finds a BATCH_QUEUES execution queue the job
// fits, checks the policy (run limits, load, prime time, dedicated time,
// allocations, fragmentation, draining for waiting jobs), moves the job
// there (MoveJob) and runs it (RunJob). A job that fits no batch queue is
// rejected (deleted) at once. Jobs of the EXTERNAL_QUEUES are run where
// they are at the end of the cycle. Comments saying why a job does not
// run are lazy (MinCommentAge). TEST_ONLY logs every decision and
// changes nothing. The configuration language is package
// sched/nas/config; docs/nas-scheduler.md documents every option.
package nas

import (
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/nas/config"
	"gopbs/sched/placement"
	"gopbs/sched/policy"
	"gopbs/sched/world"
)

// Scheduler is the NAS policy with what persists between cycles.
type Scheduler struct {
	Config *config.Config
	Log    policy.Logger
	// Location is the time zone of prime time, dedicated times and
	// comment dates (default time.Local).
	Location *time.Location
	// Dedicated is the dedicated time source; nil unless
	// ENFORCE_DEDICATED_TIME.
	Dedicated *Dedicated
	// Usage is the past usage and allocation usage; UsagePath is where
	// it is saved after a cycle that changed it ("" keeps it in memory).
	Usage     *Usage
	UsagePath string
	// Allocations are the accounts' allocations (ENFORCE_ALLOCATION).
	Allocations Allocations

	lastRun   time.Time // start of the previous cycle
	restarted bool      // SCHED_RESTART_ACTION applied
	checked   bool      // queue sanity checked
	fatal     error
	noted     map[string]bool // queues whose nodemask was noted
}

var _ policy.Policy = (*Scheduler)(nil)

// New returns the policy for cfg. The caller sets Dedicated, Usage and
// Allocations as the configuration asks (see the daemon).
func New(cfg *config.Config, log policy.Logger) *Scheduler {
	return &Scheduler{Config: cfg, Log: log, Usage: NewUsage(), noted: map[string]bool{}}
}

// ContinueFrom carries over from the policy prev that this one replaces
// (its configuration re-read) what belongs to the scheduler's run rather
// than to its configuration: the time of the last cycle (lazy comments)
// and that the restart action is done.
func (s *Scheduler) ContinueFrom(prev *Scheduler) {
	s.lastRun, s.restarted = prev.lastRun, prev.restarted
}

// Fatal returns the queue sanity problems found in the first cycle, after
// which the scheduler must exit (the seed: "note it in the logs
// (possibly suggesting a fix) and exit").
func (s *Scheduler) Fatal() error { return s.fatal }

// notedSysTime keys the one-time note that no MOM reports systime.
const notedSysTime = "\x00systime"

// momSysTime is the MOM resource HIGH_SYSTIME reads
// (momquery.SysTimeLine).
const momSysTime = "systime"

// bqueue is an execution queue (batch or external) in one cycle.
type bqueue struct {
	q       *world.Queue
	spec    config.QueueSpec
	running int
	byUser  map[string]int
	used    int       // nodes of the running jobs
	emptyAt time.Time // when the last running job should end
	drainer string    // the waiting job the queue is drained for
}

// capacity is the number of nodes assigned to the queue
// (resources_available.nodect times FAKE_MACHINE_MULT), or -1.
func (b *bqueue) capacity(mult int) int {
	if n := b.q.Resources.Available.NodeCt; n >= 0 {
		return int(min(n, 1<<30)) * max(mult, 1)
	}
	return -1
}

// cycle is one scheduling cycle.
type cycle struct {
	s     *Scheduler
	w     *world.World
	act   policy.Actions
	now   time.Time
	loc   *time.Location
	prime bool

	inDed, nextDed *Period

	queues   map[string]*world.Queue
	batch    []*bqueue
	external []*bqueue
	byQueue  map[*world.Queue]*bqueue

	running int
	byUser  map[string]int
	load    float64
	cpus    float64
	// sysTime is the average system time percentage of the up nodes
	// whose MOMs report it (sysNodes of them); sysOf is per node.
	sysTime  float64
	sysNodes int
	sysOf    map[string]float64
	pool     *placement.Pool
	drainAll string // the waiting job the whole system drains for
	stats    policy.Stats
}

// Cycle implements policy.Policy.
func (s *Scheduler) Cycle(w *world.World, act policy.Actions) policy.Stats {
	c := &cycle{s: s, w: w, act: act, now: w.Now, loc: s.Location,
		queues: map[string]*world.Queue{}, byQueue: map[*world.Queue]*bqueue{}, byUser: map[string]int{}}
	if c.now.IsZero() {
		c.now = time.Now()
	}
	if c.loc == nil {
		c.loc = time.Local
	}
	if s.fatal != nil {
		return c.stats
	}
	for _, q := range w.Queues {
		c.queues[q.Name] = q
	}
	if !s.checked {
		s.checked = true
		if err := c.queueSanity(); err != nil {
			s.fatal = err
			return c.stats
		}
	}
	defer func() { s.lastRun = c.now }()
	cfg := s.Config
	c.prime = cfg.EnforcePrimeTime && c.isPrime(c.now)
	if cfg.EnforceDedicatedTime && s.Dedicated != nil {
		ps, errs := s.Dedicated.Periods(c.now)
		for _, err := range errs {
			c.logServer(logline.EventError, "dedicated time: "+err.Error())
		}
		c.inDed, c.nextDed = dedicatedAt(ps, c.now)
	}
	s.Usage.Decay(c.now, cfg.DecayFactor, cfg.OADecayFactor)
	c.setup()
	var resubmitted []*world.Job
	if !s.restarted {
		s.restarted = true
		resubmitted = c.restartAction()
	}
	cands := c.candidates(resubmitted)
	c.order(cands)
	for _, cd := range cands {
		c.consider(cd, nil)
	}
	c.runExternal()
	if s.UsagePath != "" && !cfg.TestOnly {
		if err := s.Usage.Save(s.UsagePath); err != nil {
			c.logServer(logline.EventError, err.Error())
		}
	}
	return c.stats
}

// setup counts the running jobs, the load and the nodes.
func (c *cycle) setup() {
	cfg := c.s.Config
	mk := func(spec config.QueueSpec) *bqueue {
		q := c.queues[spec.Queue]
		if q == nil {
			return nil
		}
		b := &bqueue{q: q, spec: spec, byUser: map[string]int{}}
		c.byQueue[q] = b
		if _, ok := q.Resources.Max.Values["nodemask"]; ok && !c.s.noted[q.Name] {
			c.s.noted[q.Name] = true
			c.logServer(logline.EventSystem, "queue "+q.Name+": nodemask has no effect on this platform (an Origin2000 feature)")
		}
		return b
	}
	for _, spec := range cfg.BatchQueues {
		if b := mk(spec); b != nil {
			c.batch = append(c.batch, b)
		}
	}
	for _, spec := range cfg.ExternalQueues {
		if b := mk(spec); b != nil {
			c.external = append(c.external, b)
		}
	}
	for _, q := range c.w.Queues {
		for _, j := range q.Jobs {
			if j.State != 'R' {
				continue
			}
			b := c.byQueue[q]
			if b == nil {
				continue // not the scheduler's queues
			}
			c.count(b, j, jobSize(j), j.StartTime)
		}
	}
	c.sysOf = map[string]float64{}
	for _, n := range c.w.Nodes {
		if n.Up() && n.MomOK {
			c.cpus += float64(max(n.NCPUs, 1) * max(cfg.FakeMachineMult, 1))
			c.load += max(n.LoadAve, 0)
		}
		if n.Up() && n.HasSysTime {
			c.sysOf[n.Name] = n.SysTime
			c.sysTime += n.SysTime
			c.sysNodes++
		}
	}
	if c.sysNodes > 0 {
		c.sysTime /= float64(c.sysNodes)
	} else if cfg.HighSystime > 0 && !c.s.noted[notedSysTime] {
		c.s.noted[notedSysTime] = true
		c.logServer(logline.EventSystem, "HIGH_SYSTIME: no MOM reports "+momSysTime+
			" (define it in mom_priv/config): the check is not applied")
	}
	if p := placement.NewModel(c.w.Nodes); p.Len() > 0 {
		c.pool = p
	}
}

// count adds a running job of size nodes to the counters of queue b.
func (c *cycle) count(b *bqueue, j *world.Job, size int, start time.Time) {
	c.running++
	c.byUser[j.User]++
	b.running++
	b.byUser[j.User]++
	b.used += size
	if start.IsZero() {
		start = c.now
	}
	if j.Walltime > 0 {
		if end := start.Add(j.Walltime); end.After(b.emptyAt) {
			b.emptyAt = end
		}
	}
}

// candidates returns the queued jobs of the submit, special and dedicated
// queues, and the jobs resubmitted by the restart action.
func (c *cycle) candidates(resubmitted []*world.Job) []*candidate {
	cfg := c.s.Config
	var out []*candidate
	add := func(spec *config.QueueSpec, special, dedicated bool) {
		if spec == nil || c.queues[spec.Queue] == nil {
			return
		}
		jobs := c.queues[spec.Queue].Jobs
		if spec == cfg.SubmitQueue {
			jobs = append(jobs[:len(jobs):len(jobs)], resubmitted...)
		}
		for _, j := range jobs {
			if j.State != 'Q' {
				continue
			}
			c.stats.Considered++
			cd := &candidate{job: j, size: jobSize(j), eligible: eligibleTime(j), special: special, dedicated: dedicated,
				usage: c.s.Usage.Users[j.User]}
			if j.Walltime > 0 {
				cd.wall = j.Walltime
			}
			cd.waiting = !special && c.isWaiting(cd)
			out = append(out, cd)
		}
	}
	add(cfg.SpecialQueue, true, false)
	add(cfg.SubmitQueue, false, false)
	add(cfg.DedicatedQueue, false, true)
	return out
}

// runExternal runs as many jobs of the external queues as possible,
// where they are, under the same policy.
func (c *cycle) runExternal() {
	for _, b := range c.external {
		for _, j := range b.q.Jobs {
			if j.State != 'Q' {
				continue
			}
			c.stats.Considered++
			cd := &candidate{job: j, size: jobSize(j), eligible: eligibleTime(j), usage: c.s.Usage.Users[j.User]}
			if j.Walltime > 0 {
				cd.wall = j.Walltime
			}
			c.consider(cd, b)
		}
	}
}

// consider decides about one job: it runs it, leaves it with a comment,
// or rejects it. fixed is the queue of a job that runs where it is (an
// external queue), nil for a job to move to a batch queue.
func (c *cycle) consider(cd *candidate, fixed *bqueue) {
	j := cd.job
	targets := c.batch
	if fixed != nil {
		targets = []*bqueue{fixed}
	}
	var fits []*bqueue
	for _, b := range targets {
		if fitsLimits(cd, b.q) {
			fits = append(fits, b)
		}
	}
	if len(fits) == 0 {
		if fixed == nil {
			c.reject(j, MessageRejected)
		} else {
			c.block(j, "limits", "Not Running: Job does not fit the limits of queue "+fixed.q.Name, true)
		}
		return
	}
	if c.illegalSize(cd) {
		c.reject(j, MessageIllegalSize)
		return
	}
	if reason, stage := c.timeChecks(cd); reason != "" {
		c.block(j, stage, reason, true)
		return
	}
	if !cd.special {
		if c.drainAll != "" {
			c.block(j, "waiting job", CommentDrainingAll+c.drainAll, true)
			return
		}
		if reason, stage := c.policyChecks(cd); reason != "" {
			if cd.waiting && (stage == "max jobs" || stage == "load") {
				c.drainAll = j.ID
				c.log(j, "waiting job: draining the system for it")
			}
			c.block(j, stage, reason, true)
			return
		}
	}
	reason, stage := CommentNoRoom, "nodes"
	for _, b := range fits {
		if r, st := c.queueChecks(cd, b); r != "" {
			reason, stage = r, st
			continue
		}
		c.run(cd, b, fixed != nil)
		return
	}
	if cd.waiting {
		b := fits[0]
		if b.drainer == "" {
			b.drainer = j.ID
			c.log(j, "waiting job: draining queue "+b.q.Name+" for it")
		}
	}
	c.block(j, stage, reason, true)
}

// block leaves job j queued with an (optional) comment and logs why.
func (c *cycle) block(j *world.Job, stage, reason string, optional bool) {
	if c.stats.Blocked == nil {
		c.stats.Blocked = map[string]int{}
	}
	c.stats.Blocked[stage]++
	c.log(j, reason)
	c.comment(j, reason, optional)
}

// reject deletes a job that can never run (the seed: "These jobs are
// immediately rejected"), its comment and the DeleteJob message (mailed
// to the owner) saying why.
func (c *cycle) reject(j *world.Job, msg string) {
	c.log(j, msg)
	c.comment(j, msg, false)
	if c.s.Config.TestOnly {
		c.log(j, "TEST_ONLY: would delete the job")
		return
	}
	if err := c.act.DeleteJob(j, msg); err != nil {
		c.log(j, "delete failed: "+err.Error())
		return
	}
	c.stats.Deleted++
}

// run moves the job to queue b (unless it is there) and runs it.
func (c *cycle) run(cd *candidate, b *bqueue, inPlace bool) {
	j := cd.job
	src := j.Queue
	spec := c.allocSpec(j)
	if c.s.Config.TestOnly {
		if inPlace {
			c.log(j, "TEST_ONLY: would run the job in queue "+b.q.Name)
		} else {
			c.log(j, "TEST_ONLY: would move the job to queue "+b.q.Name+" and run it")
		}
	} else {
		if !inPlace {
			if err := c.act.MoveJob(j, b.q.Name); err != nil {
				c.block(j, "move", CommentMoveFailed+b.q.Name+": "+err.Error(), false)
				return
			}
			c.log(j, "Moved to queue "+b.q.Name)
			j.Queue = b.q
		}
		c.comment(j, startedComment(c.now.In(c.loc), cd.special), false)
		if err := c.act.RunJob(j, ""); err != nil {
			c.comment(j, CommentRunFailedPrefix+err.Error(), false)
			c.log(j, "run failed: "+err.Error())
			if !inPlace && src != nil {
				if err := c.act.MoveJob(j, src.Name); err == nil {
					j.Queue = src
				}
			}
			return
		}
		c.log(j, LogJobRun)
		if _, ok := j.Request["nodemask"]; ok {
			c.log(j, "nodemask request has no effect on this platform (an Origin2000 feature)")
		}
		j.State = 'R'
	}
	c.stats.Started++
	if c.pool != nil && spec != "" {
		if sp, err := c.pool.Parse(spec); err == nil {
			c.pool.Allocate(sp)
		}
	}
	c.count(b, j, cd.size, c.now)
	c.load += float64(cd.size)
	if !c.s.Config.TestOnly {
		c.s.Usage.Charge(j.User, account(j), nodeHours(cd))
	}
}

// allocSpec is the node specification the server allocates for j.
func (c *cycle) allocSpec(j *world.Job) string { return c.w.AllocSpec(j) }

// account is the account a job is charged to: its Account_Name, else its
// group.
func account(j *world.Job) string {
	if j.Account != "" {
		return j.Account
	}
	return j.Group
}

// nodeHours is what a job is charged when it starts.
func nodeHours(cd *candidate) float64 { return float64(cd.size) * cd.wall.Hours() }

// fitsLimits reports whether the job is within the queue's
// resources_max: nodect and nodes against its size, walltime against its
// request, and any other numeric resource it requests.
func fitsLimits(cd *candidate, q *world.Queue) bool {
	for name, v := range q.Resources.Max.Values {
		limit, ok := world.ParseAmount(v)
		if !ok {
			continue
		}
		var want float64
		switch name {
		case "nodect", "nodes":
			want = float64(cd.size)
		case "walltime":
			if cd.wall == 0 {
				continue
			}
			want = cd.wall.Seconds()
		default:
			r, ok := cd.job.Request[name]
			if !ok {
				continue
			}
			if want, ok = world.ParseAmount(r); !ok {
				continue
			}
		}
		if want > limit {
			return false
		}
	}
	return true
}
