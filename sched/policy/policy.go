// Package policy is the FIFO scheduling policy of TORQUE's pbs_sched,
// organised as a pipeline over a world snapshot:
//
//	read the world → select candidates (queues that may run, queued jobs)
//	→ order (sort_queues, sort_by/multi_sort, by_queue, round_robin,
//	  fair_share, the starving job first) → filter (the feasibility checks,
//	  in TORQUE's order, each with its job comment) → place (nodes,
//	  load balancing) → run.
//
// The effects on the batch system go through the Actions interface, so
// the same code drives the daemon (batch requests to the server) and the
// Simulator (tests, benchmarks). With max_reservation the cycle also plans
// ahead (lookahead.go): reservations at the earliest start of the
// resource-time profile (package profile) and backfilling that never
// delays them.
//
// policy.go holds the Scheduler, its Actions and the cycle's loop (count
// what runs, then check and run each candidate); order.go selects and
// orders the candidates; checks.go holds the feasibility checks;
// nodes.go the placement on nodes; plussort.go the PluS sort keys;
// lookahead.go and advance.go the plan ahead (reservations, backfilling,
// advance reservations); comments.go the job comments and log texts;
// simulator.go the in-memory Actions.
package policy

import (
	"strconv"
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/placement"
	"gopbs/sched/timeplan"
	"gopbs/sched/world"
)

// Actions are the scheduler's effects on the batch system.
type Actions interface {
	// QueryNodes asks whether the node specification spec of job can be
	// satisfied now, later, or never (ResourceQuery).
	QueryNodes(job *world.Job, spec string) (placement.Availability, error)
	// SetComment sets the job's comment attribute (ModifyJob).
	SetComment(job *world.Job, comment string) error
	// RunJob starts the job, on destination if not empty (RunJob). The
	// error text of a refusal becomes part of the job comment.
	RunJob(job *world.Job, destination string) error
	// DeleteJob deletes the job with message (DeleteJob).
	DeleteJob(job *world.Job, message string) error
	// MoveJob moves the queued job to queue (MoveJob). The FIFO policy
	// never moves jobs; the NAS policy moves each job from its submit
	// queue to the execution queue it will run in.
	MoveJob(job *world.Job, queue string) error
}

// Policy is a scheduling policy pbs_sched can run. Each cycle the daemon
// reads the world from the server and the MOMs and hands it to Cycle
// with the actions on the server; the policy decides what to run and
// acts. Scheduler (TORQUE's FIFO policy) implements it, and so does the
// NAS policy of package sched/nas.
type Policy interface {
	Cycle(w *world.World, act Actions) Stats
}

var _ Policy = (*Scheduler)(nil)

// Logger receives the scheduler's log messages.
type Logger interface {
	Log(event int, class, object, text string)
}

// Scheduler holds the policy configuration and what persists between
// cycles (fair-share usage, the round-robin position of load balancing).
type Scheduler struct {
	Config    *config.Config
	Holidays  *timeplan.Holidays
	Dedicated timeplan.Dedicated
	// FairShare is the fair-share tree; nil disables usage accounting.
	FairShare *fairshare.Tree
	Log       Logger
	// Location is the time zone of comment dates (default time.Local).
	Location *time.Location
	// NoPrefilter restores TORQUE's request sequence exactly. By default
	// the cycle keeps its own model of the cluster nodes' free VPs
	// (placement.Pool, from StatusNode and the jobs started in the cycle)
	// and does not ask the server about a job the model says cannot fit
	// now: a job requesting nodes gets no node query (ResourceQuery), a
	// job without a nodes request no RunJob; either gets the comment of a
	// negative node query (CommentNodes). On a full cluster this saves a
	// node query, or a RunJob the server refuses plus two comment
	// changes, per waiting job and cycle. A job the model says could
	// never fit is still left to the server, which decides its deletion.
	NoPrefilter bool
	// MonitorPath is the file that params MONITOR appends each cycle's
	// plan to (sched_priv/schedule); "" writes none.
	MonitorPath string

	lastLBNode  int
	lastSMPNode string // smp_cluster_dist round_robin: the node used last
}

// New returns a Scheduler for cfg with empty calendars and a fair-share
// tree holding only root and unknown.
func New(cfg *config.Config, log Logger) *Scheduler {
	return &Scheduler{
		Config:     cfg,
		Holidays:   &timeplan.Holidays{},
		FairShare:  fairshare.New(cfg.UnknownShares),
		Log:        log,
		lastLBNode: -1,
	}
}

// Stats summarises one cycle.
type Stats struct {
	Considered int // queued jobs looked at
	Started    int // jobs started
	Deleted    int // jobs deleted as never runnable
	Comments   int // comment changes sent
	Period     config.Period
	Starving   string // the starving job of the cycle, if any
	// Reservations counts the reservations made (max_reservation).
	Reservations int
	// Blocked counts the jobs stopped by each pipeline stage ("nodes",
	// "server limits", ...).
	Blocked map[string]int
}

// jobState is the per-job bookkeeping of one cycle.
type jobState struct {
	job     *world.Job
	tried   bool // already handled this cycle
	cantRun bool // skipped (strict fifo)
}

// runCounts are the running-job counters of the server or a queue.
type runCounts struct {
	total   int
	byUser  map[string]int
	byGroup map[string]int
}

func newRunCounts() *runCounts {
	return &runCounts{byUser: map[string]int{}, byGroup: map[string]int{}}
}

func (c *runCounts) add(j *world.Job) {
	c.total++
	c.byUser[j.User]++
	c.byGroup[j.Group]++
}

// cycle is the state of one scheduling cycle.
type cycle struct {
	s      *Scheduler
	w      *world.World
	act    Actions
	now    time.Time
	period config.Period

	inDedicated bool
	dedicated   timeplan.Period
	hasDed      bool

	server *runCounts
	queues map[*world.Queue]*runCounts
	tokens map[string]float64 // tokens in use

	timeShared []*world.Node
	smpDist    config.SMPDist
	dist       *placement.Pool      // cluster nodes for smp_cluster_dist; nil when unset
	pool       *placement.Pool      // node model; nil with NoPrefilter or without cluster nodes
	specs      map[string]*specInfo // pool answers per node specification

	states   map[*world.Job]*jobState
	starving *world.Job
	stats    Stats
	look     *lookahead // the time dimension; nil without reservations and MONITOR
}

// Cycle runs one scheduling cycle over w.
func (s *Scheduler) Cycle(w *world.World, act Actions) Stats {
	c := &cycle{s: s, w: w, act: act, now: w.Now, server: newRunCounts(),
		queues: map[*world.Queue]*runCounts{}, tokens: map[string]float64{},
		states: map[*world.Job]*jobState{}}
	if c.now.IsZero() {
		c.now = time.Now()
	}
	c.period = config.Prime
	if !s.Holidays.IsPrime(c.now) {
		c.period = config.NonPrime
	}
	c.stats.Period = c.period
	_, c.inDedicated = s.Dedicated.Current(c.now)
	c.dedicated, c.hasDed = s.Dedicated.Next(c.now)
	for _, n := range w.Nodes {
		if n.TimeShared {
			c.timeShared = append(c.timeShared, n)
		}
	}

	if c.smpDist = s.Config.SMPClusterDist.At(c.period); c.smpDist != config.SMPUnset {
		if p := placement.NewModel(w.Nodes); p.Len() > 0 {
			c.dist = p
		}
	}
	if !s.NoPrefilter {
		if p := placement.NewModel(w.Nodes); p.Len() > 0 {
			c.pool, c.specs = p, map[string]*specInfo{}
		}
	}
	c.countRunning()
	c.accountUsage()
	c.look = c.newLookahead()
	lists := c.reservedJobs(c.candidates())
	c.findStarving(lists)
	c.loop(lists)
	if c.look != nil {
		c.look.finish(c)
	}
	return c.stats
}

// countRunning fills the running-job counters and the tokens in use.
func (c *cycle) countRunning() {
	for _, q := range c.w.Queues {
		qc := newRunCounts()
		c.queues[q] = qc
		for _, j := range q.Jobs {
			if j.State != 'R' {
				continue
			}
			qc.add(j)
			c.server.add(j)
			for name, n := range world.ParseTokens(j.Tokens) {
				c.tokens[name] += n
			}
		}
	}
}

// accountUsage decays fair-share usage and starts the cycle's
// bookkeeping.
func (c *cycle) accountUsage() {
	t := c.s.FairShare
	if t == nil {
		return
	}
	t.Decay(c.now, c.s.Config.HalfLife)
	t.StartCycle()
}

// loop considers each job in policy order.
func (c *cycle) loop(lists [][]*world.Job) {
	if len(lists) == 0 {
		return
	}
	sel := c.newSelector(lists)
	strict := c.s.Config.StrictFIFO.At(c.period)
	for j := sel.Next(); j != nil; j = sel.Next() {
		st := c.states[j]
		st.tried = true
		res := c.check(j)
		switch {
		case res.ok:
			var in *specInfo
			if res.node == nil && j.Nodes == "" {
				in = c.runModel(j)
			}
			if in.skip() {
				// The server would refuse the RunJob: no free VP for
				// the node specification it allocates.
				c.block("nodes")
				c.comment(j, CommentNodes)
				c.logJob(j, LogNodes)
				if c.look != nil {
					c.look.reserve(c, j, nil)
				}
				break
			}
			dest := ""
			if c.look != nil {
				var ok bool
				if dest, ok = c.look.admit(c, j, res.node); !ok {
					break
				}
			}
			ran := c.run(j, res.node, dest)
			if in != nil {
				c.learn(in, ran)
			}
			if ran {
				if c.look != nil {
					c.look.started(c, j, res.node, dest)
				}
				if j == c.starving {
					c.starving = nil
				}
				continue
			}
		case res.never:
			c.logJob(j, LogNeverRun)
			if err := c.act.DeleteJob(j, MessageNeverRun); err == nil {
				c.stats.Deleted++
			}
			continue
		default:
			c.comment(j, res.comment)
			c.logJob(j, res.log)
			if c.look != nil && reservable[res.stage] {
				c.look.reserve(c, j, nil)
			}
		}
		if strict {
			c.strictFIFO(j)
		}
	}
}

// strictFIFO marks every untried job of j's queue as unable to run.
func (c *cycle) strictFIFO(j *world.Job) {
	for _, o := range j.Queue.Jobs {
		st := c.states[o]
		if st == nil || st.tried || st.cantRun {
			continue
		}
		st.cantRun = true
		c.comment(o, CommentStrictFIFO)
	}
}

func (c *cycle) logJob(j *world.Job, text string) {
	if c.s.Log != nil && text != "" {
		c.s.Log.Log(logline.EventSched, logline.ClassJob, j.ID, text)
	}
}

// comment sets the job's comment if it changes.
func (c *cycle) comment(j *world.Job, text string) {
	if j.Comment == text {
		return
	}
	if err := c.act.SetComment(j, text); err != nil {
		return
	}
	j.Comment = text
	c.stats.Comments++
}

// run starts job j (on node, for load balancing, or on the nodes of the
// node specification spec that reservations chose) and updates the
// cycle's accounting; it reports success.
func (c *cycle) run(j *world.Job, node *world.Node, spec string) bool {
	loc := c.s.Location
	if loc == nil {
		loc = time.Local
	}
	t := c.now.In(loc)
	date := t.Format("Mon Jan 02") + " at " + t.Format("15:04")
	dest := ""
	if node != nil {
		dest = node.Name
	}
	c.comment(j, startedComment(dest, date))
	if spec != "" {
		dest = spec
	}
	if err := c.act.RunJob(j, dest); err != nil {
		c.comment(j, CommentRunFailedPrefix+err.Error())
		return false
	}
	c.stats.Started++
	j.State = 'R'
	alloc := c.allocSpec(j)
	if spec != "" {
		alloc = spec
	}
	if node == nil && c.dist != nil {
		// the server placed the job itself: first fit, as the pool does
		if sp, err := c.dist.Parse(alloc); err == nil {
			c.dist.Allocate(sp)
		}
	}
	if node == nil {
		if in := c.model(alloc); in != nil {
			if _, ok := c.pool.Allocate(in.spec); !ok {
				// The server started a job the model has no room
				// for: the model is out of date.
				c.pool, c.specs = nil, nil
			}
		}
	}
	c.server.add(j)
	c.queues[j.Queue].add(j)
	for name, n := range world.ParseTokens(j.Tokens) {
		c.tokens[name] += n
	}
	assign := func(l *world.Limits) {
		add := func(v *int64, n int64) {
			if n > 0 {
				if *v < 0 {
					*v = 0
				}
				*v += n
			}
		}
		add(&l.Mem, j.Mem)
		add(&l.NCPUs, j.NCPUs)
		add(&l.NodeCt, j.NodeCt)
	}
	assign(&j.Queue.Resources.Assigned)
	assign(&c.w.Server.Resources.Assigned)
	c.assignRequests(j, &j.Queue.Resources)
	c.assignRequests(j, &c.w.Server.Resources)
	if node != nil && !node.TimeShared {
		// smp_cluster_dist placed the job on a cluster node
		c.s.lastSMPNode = node.Name
		if c.dist != nil {
			c.dist.Take(node.Name, 1)
		}
		if c.pool != nil && !c.pool.Take(node.Name, 1) {
			c.pool, c.specs = nil, nil
		}
	}
	if node != nil {
		if node.LoadAve < 0 {
			node.LoadAve = 0
		}
		node.LoadAve += jobCPUs(j)
	}
	if t := c.s.FairShare; t != nil && j.CPUT > 0 {
		// The job's requested cput becomes its user's usage.
		t.AddUsage(j.User, j.CPUT.Seconds())
	}
	c.logJob(j, LogJobRun)
	return true
}

// String describes the stats for logs.
func (s Stats) String() string {
	return "considered " + strconv.Itoa(s.Considered) + ", started " + strconv.Itoa(s.Started) +
		", deleted " + strconv.Itoa(s.Deleted) + ", comments " + strconv.Itoa(s.Comments)
}
