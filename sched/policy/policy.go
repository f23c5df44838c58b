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
package policy

import (
	"sort"
	"strconv"
	"strings"
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

// queueReason returns the comment for the jobs of a queue that cannot run
// jobs now, or "".
func (c *cycle) queueReason(q *world.Queue) string {
	for _, name := range c.s.Config.IgnoreQueues {
		if name == q.Name {
			return CommentQueueIgnored
		}
	}
	if !q.Execution() {
		return CommentQueueNotExec
	}
	if !q.Started {
		return CommentQueueNotStarted
	}
	if c.dedicatedQueue(q) != c.inDedicated {
		return CommentDedicatedConflict
	}
	return ""
}

func (c *cycle) dedicatedQueue(q *world.Queue) bool {
	p := c.s.Config.DedicatedPrefix
	return p != "" && strings.HasPrefix(q.Name, p)
}

// candidates selects the queues that may run jobs and their queued jobs,
// and orders them. It returns one list per queue (by_queue, round_robin)
// or a single global list.
func (c *cycle) candidates() [][]*world.Job {
	cfg := c.s.Config
	var queues []*world.Queue
	for _, q := range c.w.Queues {
		if reason := c.queueReason(q); reason != "" {
			for _, j := range q.Jobs {
				if j.State == 'Q' {
					c.stats.Considered++
					c.comment(j, reason)
				}
			}
			continue
		}
		queues = append(queues, q)
	}
	if cfg.SortQueues.At(c.period) {
		sort.SliceStable(queues, func(a, b int) bool { return queues[a].Priority > queues[b].Priority })
	}
	less := c.jobLess()
	perQueue := cfg.ByQueue.At(c.period) || cfg.RoundRobin.At(c.period)
	var lists [][]*world.Job
	var all []*world.Job
	for _, q := range queues {
		var jobs []*world.Job
		for _, j := range q.Jobs {
			if j.State == 'Q' {
				jobs = append(jobs, j)
				c.states[j] = &jobState{job: j}
			}
		}
		c.stats.Considered += len(jobs)
		if perQueue {
			if less != nil {
				sort.SliceStable(jobs, func(a, b int) bool { return less(jobs[a], jobs[b]) })
			}
			lists = append(lists, jobs)
		} else {
			all = append(all, jobs...)
		}
	}
	if !perQueue {
		if less != nil {
			sort.SliceStable(all, func(a, b int) bool { return less(all[a], all[b]) })
		}
		lists = [][]*world.Job{all}
	}
	return lists
}

// compare returns <0 when a sorts before b under key k.
func (c *cycle) compare(k config.SortKey, a, b *world.Job) int {
	cmp := func(x, y int64) int {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	pos := func(d time.Duration) int64 {
		if d < 0 {
			return 0
		}
		return int64(d)
	}
	size := func(v int64) int64 {
		if v < 0 {
			return 0
		}
		return v
	}
	switch k {
	case config.ShortestJobFirst:
		return cmp(pos(a.CPUT), pos(b.CPUT))
	case config.LongestJobFirst:
		return cmp(pos(b.CPUT), pos(a.CPUT))
	case config.SmallestMemoryFirst:
		return cmp(size(a.Mem), size(b.Mem))
	case config.LargestMemoryFirst:
		return cmp(size(b.Mem), size(a.Mem))
	case config.HighPriorityFirst:
		return cmp(int64(b.Priority), int64(a.Priority))
	case config.LowPriorityFirst:
		return cmp(int64(a.Priority), int64(b.Priority))
	case config.LargeWalltimeFirst:
		return cmp(pos(b.Walltime), pos(a.Walltime))
	case config.ShortWalltimeFirst:
		return cmp(pos(a.Walltime), pos(b.Walltime))
	case config.FairShareSort:
		if t := c.s.FairShare; t != nil {
			pa, pb := t.User(a.User).Priority(), t.User(b.User).Priority()
			switch {
			case pa < pb:
				return -1
			case pa > pb:
				return 1
			}
		}
	}
	return 0
}

// jobLess returns the job ordering of sort_by, or nil for no sorting.
func (c *cycle) jobLess() func(a, b *world.Job) bool {
	cfg := c.s.Config
	if keys := cfg.PluS.JobOrder(); len(keys) > 0 {
		return plusLess(cfg.PluS, keys)
	}
	key := cfg.SortBy.At(c.period)
	switch key {
	case config.NoSort:
		return nil
	case config.MultiSort:
		keys := cfg.Keys.At(c.period)
		if len(keys) == 0 {
			return nil
		}
		return func(a, b *world.Job) bool {
			for _, k := range keys {
				if r := c.compare(k, a, b); r != 0 {
					return r < 0
				}
			}
			return false
		}
	}
	return func(a, b *world.Job) bool { return c.compare(key, a, b) < 0 }
}

// findStarving picks the starving job of the cycle: the queued job that
// has waited longest beyond max_starve, outside dedicated queues.
func (c *cycle) findStarving(lists [][]*world.Job) {
	if !c.s.Config.HelpStarvingJobs.At(c.period) {
		return
	}
	limit := c.s.Config.MaxStarve
	for _, l := range lists {
		for _, j := range l {
			if j.QTime.IsZero() || c.dedicatedQueue(j.Queue) || !j.QTime.Add(limit).Before(c.now) {
				continue
			}
			if c.starving == nil || j.QTime.Before(c.starving.QTime) {
				c.starving = j
			}
		}
	}
	if c.starving != nil {
		c.stats.Starving = c.starving.ID
	}
}

// selector yields the jobs of the cycle in policy order.
type selector struct {
	c        *cycle
	lists    [][]*world.Job
	next     []int // next index per list (sequential selection)
	cur      int   // current list (by_queue / global)
	rr       bool
	fair     bool
	starving *world.Job
	users    [][]*userJobs // fair share: per list, per user in order of appearance
}

// userJobs are the positions, in list order, of one user's jobs in a
// list.
type userJobs struct {
	node *fairshare.Node
	pos  []int
	next int
}

func (c *cycle) newSelector(lists [][]*world.Job) *selector {
	cfg := c.s.Config
	sel := &selector{c: c, lists: lists, next: make([]int, len(lists)),
		rr: cfg.RoundRobin.At(c.period), fair: cfg.FairShare.At(c.period) && c.s.FairShare != nil,
		starving: c.starving}
	if sel.fair {
		sel.users = make([][]*userJobs, len(lists))
		for i, l := range lists {
			byUser := map[string]*userJobs{}
			for k, j := range l {
				u := byUser[j.User]
				if u == nil {
					u = &userJobs{node: c.s.FairShare.User(j.User)}
					byUser[j.User] = u
					sel.users[i] = append(sel.users[i], u)
				}
				u.pos = append(u.pos, k)
			}
		}
	}
	return sel
}

func (sel *selector) usable(j *world.Job) bool {
	st := sel.c.states[j]
	return !st.tried && !st.cantRun
}

// fromList returns the next job of list i, or nil.
func (sel *selector) fromList(i int) *world.Job {
	l := sel.lists[i]
	if !sel.fair {
		for sel.next[i] < len(l) {
			j := l[sel.next[i]]
			sel.next[i]++
			if sel.usable(j) {
				return j
			}
		}
		return nil
	}
	// Fair share: the next job of the most deserving user (lowest usage
	// relative to shares); ties go to the job earlier in the list.
	var best *userJobs
	bestPrio := 0.0
	for _, u := range sel.users[i] {
		for u.next < len(u.pos) && !sel.usable(l[u.pos[u.next]]) {
			u.next++
		}
		if u.next == len(u.pos) {
			continue
		}
		p := u.node.Priority()
		if best == nil || p < bestPrio || (p == bestPrio && u.pos[u.next] < best.pos[best.next]) {
			best, bestPrio = u, p
		}
	}
	if best == nil {
		return nil
	}
	return l[best.pos[best.next]]
}

// Next returns the next job to consider, or nil at the end.
func (sel *selector) Next() *world.Job {
	if j := sel.starving; j != nil {
		sel.starving = nil
		if sel.usable(j) {
			return j
		}
	}
	if sel.rr {
		for tries := 0; tries < len(sel.lists); tries++ {
			i := sel.cur % len(sel.lists)
			sel.cur = (sel.cur + 1) % len(sel.lists)
			if j := sel.fromList(i); j != nil {
				return j
			}
		}
		return nil
	}
	for sel.cur < len(sel.lists) {
		if j := sel.fromList(sel.cur); j != nil {
			return j
		}
		sel.cur++
	}
	return nil
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

// checkResult is the outcome of the feasibility checks.
type checkResult struct {
	stage   string // the stage that stopped the job
	ok      bool
	never   bool
	comment string
	log     string
	node    *world.Node // load-balancing choice
}

func fail(comment, log string) checkResult { return checkResult{comment: comment, log: log} }

// over reports whether a limit is reached.
func over(limit, running int) bool { return limit != world.Unlimited && running >= limit }

// stage is one step of the per-job pipeline: a feasibility check or the
// placement. It returns ok, or the failure with its comment. Later
// features (backfill reservations, advance reservations, partitions) are
// further stages.
type stage struct {
	name string
	run  func(c *cycle, j *world.Job) checkResult
}

var okResult = checkResult{ok: true}

// stages are the checks in TORQUE's order (spec 14 §6.2).
var stages = []stage{
	{"server limits", (*cycle).serverLimits},
	{"queue limits", (*cycle).queueLimits},
	{"dedicated time", (*cycle).dedicatedTime},
	{"starving job", (*cycle).drainForStarving},
	{"nodes", (*cycle).placeNodes},
	{"queue resources", func(c *cycle, j *world.Job) checkResult { return c.checkResources(j, &j.Queue.Resources) }},
	{"server resources", func(c *cycle, j *world.Job) checkResult { return c.checkResources(j, &c.w.Server.Resources) }},
	{"tokens", (*cycle).checkTokens},
}

// check runs the stages; the result carries the chosen node, if any.
func (c *cycle) check(j *world.Job) checkResult {
	var node *world.Node
	for _, st := range stages {
		r := st.run(c, j)
		if !r.ok {
			c.block(st.name)
			r.stage = st.name
			return r
		}
		if r.node != nil {
			node = r.node
		}
	}
	return checkResult{ok: true, node: node}
}

// block counts a job stopped by the named stage.
func (c *cycle) block(stage string) {
	if c.stats.Blocked == nil {
		c.stats.Blocked = map[string]int{}
	}
	c.stats.Blocked[stage]++
}

// serverLimitFailures and queueLimitFailures are what stops a job at the
// server's or its queue's max_running, max_user_run and max_group_run.
var (
	serverLimitFailures = limitFailures{
		fail(CommentServerJobLimit, LogServerJobLimit),
		fail(CommentServerUserLimit, LogServerUserLimit),
		fail(CommentServerGroupLimit, LogServerGroupLimit),
	}
	queueLimitFailures = limitFailures{
		fail(CommentQueueJobLimit, LogQueueJobLimit),
		fail(CommentQueueUserLimit, LogQueueUserLimit),
		fail(CommentQueueGroupLimit, LogQueueGroupLimit),
	}
)

// limitFailures are the results of a job stopped by max_running,
// max_user_run and max_group_run.
type limitFailures struct{ running, user, group checkResult }

// runLimits checks j against limits, given the jobs counted running
// under them.
func runLimits(l world.RunLimits, n *runCounts, j *world.Job, failures *limitFailures) checkResult {
	switch {
	case over(l.MaxRunning, n.total):
		return failures.running
	case over(l.MaxUserRun, n.byUser[j.User]):
		return failures.user
	case over(l.MaxGroupRun, n.byGroup[j.Group]):
		return failures.group
	}
	return okResult
}

func (c *cycle) serverLimits(j *world.Job) checkResult {
	return runLimits(c.w.Server.RunLimits, c.server, j, &serverLimitFailures)
}

func (c *cycle) queueLimits(j *world.Job) checkResult {
	return runLimits(j.Queue.RunLimits, c.queues[j.Queue], j, &queueLimitFailures)
}

// dedicatedTime: with a dedicated period configured, the job must end
// (by its walltime) before the period starts, or inside it before it
// ends; a job without walltime fails.
func (c *cycle) dedicatedTime(j *world.Job) checkResult {
	if !c.hasDed {
		return okResult
	}
	limit := c.dedicated.Start
	if c.inDedicated {
		limit = c.dedicated.End
	}
	if j.Walltime < 0 || c.now.Add(j.Walltime).After(limit) {
		return fail(CommentDedicatedCross, LogDedicatedCross)
	}
	return okResult
}

// reservable are the stages whose failure a reservation can answer: the
// job waits for resources the profile plans, or for dedicated time to
// pass (its plan then starts after the period, lookahead.reserve).
var reservable = map[string]bool{"nodes": true, "queue resources": true, "server resources": true, "dedicated time": true}

// drainForStarving lets only the starving job run while there is one.
// With reservations (max_reservation > 0) nothing is drained: the
// starving job gets a reservation instead.
func (c *cycle) drainForStarving(j *world.Job) checkResult {
	if c.look != nil && c.look.max > 0 {
		return okResult
	}
	if c.starving != nil && c.starving != j {
		return fail(CommentDraining, "Draining system to allow "+c.starving.ID+" to run")
	}
	return okResult
}

// placeNodes checks a node request with the server (ResourceQuery), or
// picks a time-shared node when load balancing.
func (c *cycle) placeNodes(j *world.Job) checkResult {
	if j.Nodes != "" {
		in := c.model(j.Nodes)
		if in.skip() {
			return fail(CommentNodes, LogNodes)
		}
		avail, err := c.act.QueryNodes(j, j.Nodes)
		if in != nil && err == nil && avail >= 0 {
			c.learn(in, avail > 0)
		}
		switch {
		case err != nil:
			return fail(CommentInternalError, "")
		case avail < 0:
			return checkResult{never: true}
		case avail == 0:
			return fail(CommentNodes, LogNodes)
		}
		return okResult
	}
	if c.loadBalancing() && len(c.timeShared) > 0 {
		node := c.pickNode(j)
		if node == nil {
			return fail(CommentTimesharing, LogTimesharing)
		}
		return checkResult{ok: true, node: node}
	}
	if c.dist != nil {
		node := c.pickSMPNode(j)
		if node == nil {
			return fail(CommentNodes, LogNodes)
		}
		return checkResult{ok: true, node: node}
	}
	return okResult
}

// pickSMPNode places a job that requests no nodes on a cluster node as
// smp_cluster_dist says: pack fills the node with the fewest free
// virtual processors first, round_robin takes the next node after the
// one used last, lowest_load the node with the lowest load average (its
// MOM's, plus the jobs started on it in this cycle). The node must be up,
// have a free virtual processor and match a requested host. Ties go to
// the node listed first.
func (c *cycle) pickSMPNode(j *world.Job) *world.Node {
	nodes := c.dist.Nodes()
	fits := func(n *world.Node) bool {
		return c.dist.Free(n.Name) > 0 && (j.Host == "" || j.Host == n.Name)
	}
	load := func(n *world.Node) float64 { return max(n.LoadAve, 0) }
	switch c.smpDist {
	case config.SMPRoundRobin:
		start := 0
		for i, n := range nodes {
			if n.Name == c.s.lastSMPNode {
				start = i + 1
				break
			}
		}
		for k := range nodes {
			if n := nodes[(start+k)%len(nodes)]; fits(n) {
				return n
			}
		}
		return nil
	case config.SMPLowestLoad:
		var best *world.Node
		for _, n := range nodes {
			if fits(n) && (best == nil || load(n) < load(best)) {
				best = n
			}
		}
		return best
	}
	var best *world.Node // pack
	for _, n := range nodes {
		if fits(n) && (best == nil || c.dist.Free(n.Name) < c.dist.Free(best.Name)) {
			best = n
		}
	}
	return best
}

// specInfo is what the node model knows of one node specification in
// the cycle. VPs are only taken during a cycle, so once a specification
// does not fit the model it will not fit it for the rest of the cycle.
type specInfo struct {
	spec   placement.Spec
	parsed bool
	known  bool                   // avail is final for the cycle
	avail  placement.Availability // Later or Never when known
	// confirmed: the server, asked once, agreed that the specification
	// cannot be satisfied now.
	confirmed bool
}

// model returns what the node model says of specification s, or nil
// when there is no model (NoPrefilter, no cluster nodes, a model found
// stale) or s is not understood.
func (c *cycle) model(s string) *specInfo {
	if c.pool == nil {
		return nil
	}
	in := c.specs[s]
	if in == nil {
		in = &specInfo{}
		if sp, err := c.pool.Parse(s); err == nil {
			in.spec, in.parsed = sp, true
		}
		c.specs[s] = in
	}
	if !in.parsed {
		return nil
	}
	if !in.known {
		if a := c.pool.Query(in.spec); a != placement.Now {
			in.known, in.avail = true, a
		}
	}
	return in
}

// skip reports whether the server need not be asked about a job whose
// node specification has model answer in: the model says it cannot fit
// now and the server already agreed in this cycle.
func (in *specInfo) skip() bool { return in != nil && in.confirmed }

// notNow reports whether the model says the specification cannot fit now
// although an idle cluster could satisfy it.
func (in *specInfo) notNow() bool { return in != nil && in.known && in.avail == placement.Later }

// learn takes the server's answer for a specification the model knows:
// the first time the model says "not now", the server is asked anyway;
// if it agrees, later jobs with that specification are not asked about
// in this cycle. If it disagrees, the node status read at the start of
// the cycle is out of date (a job ended since), and the model is dropped
// for the rest of the cycle: every job is then asked about, as TORQUE
// does.
func (c *cycle) learn(in *specInfo, fitsNow bool) {
	if !in.notNow() {
		return
	}
	if fitsNow {
		c.pool, c.specs = nil, nil
		return
	}
	in.confirmed = true
}

// allocSpec is the node specification the server allocates for j.
func (c *cycle) allocSpec(j *world.Job) string { return c.w.AllocSpec(j) }

// runModel returns the model's answer for the VPs the server would give
// job j, which requests no nodes. Clusters with time-shared nodes are
// left to the server (a server may place such a job on one).
func (c *cycle) runModel(j *world.Job) *specInfo {
	if len(c.timeShared) > 0 {
		return nil
	}
	return c.model(c.allocSpec(j))
}

func (c *cycle) checkTokens(j *world.Job) checkResult {
	srv := c.w.Server
	if req := world.ParseTokens(j.Tokens); len(req) > 0 && srv.Tokens != nil {
		for name, n := range req {
			if total, ok := srv.Tokens[name]; ok && c.tokens[name]+n > total {
				return fail(CommentTokens, LogTokens)
			}
		}
	}
	return okResult
}

// available returns what remains of a resource, or -1 for no limit.
func available(avail, max, assigned int64) int64 {
	if assigned < 0 {
		assigned = 0
	}
	switch {
	case avail >= 0:
		return avail - assigned
	case max >= 0:
		return max - assigned
	}
	return -1
}

// checkResources checks the job's requests against what r has left: the
// resources of the sched_config resources line, or without one TORQUE's
// fixed mem, ncpus and nodect.
func (c *cycle) checkResources(j *world.Job, r *world.ResourceSet) checkResult {
	if c.s.Config.Resources == nil {
		return checkResources(j, *r)
	}
	for _, name := range c.s.Config.Resources {
		req, ok := j.Request[name]
		if !ok {
			continue
		}
		if want, ok := world.ParseAmount(req); ok {
			if left, limited := amountLeft(r, name); limited && want > left {
				return fail(resourceComment(name), resourceLog(name))
			}
			continue
		}
		// a string resource (arch, host, …) must equal what is available
		if have := r.Available.Values[name]; have != "" && have != req {
			return fail(CommentResourceValuePrefix+name+"="+req, LogResourceValuePrefix+name+"="+req)
		}
	}
	return okResult
}

// amountLeft returns what remains of resource name in r:
// resources_available (or else resources_max) less resources_assigned;
// limited is false when neither is set.
func amountLeft(r *world.ResourceSet, name string) (left float64, limited bool) {
	total, ok := world.ParseAmount(r.Available.Values[name])
	if !ok {
		if total, ok = world.ParseAmount(r.Max.Values[name]); !ok {
			return 0, false
		}
	}
	used, _ := world.ParseAmount(r.Assigned.Values[name])
	return total - max(used, 0), true
}

// assignRequests adds the job's requests for the resources of the
// sched_config resources line to r's resources_assigned.
func (c *cycle) assignRequests(j *world.Job, r *world.ResourceSet) {
	for _, name := range c.s.Config.Resources {
		want, ok := world.ParseAmount(j.Request[name])
		if !ok {
			continue
		}
		used, _ := world.ParseAmount(r.Assigned.Values[name])
		if r.Assigned.Values == nil {
			r.Assigned.Values = map[string]string{}
		}
		r.Assigned.Values[name] = strconv.FormatFloat(max(used, 0)+want, 'f', -1, 64)
	}
}

func checkResources(j *world.Job, r world.ResourceSet) checkResult {
	type item struct {
		req            int64
		avail, max, as int64
		comment, log   string
	}
	for _, it := range []item{
		{j.Mem, r.Available.Mem, r.Max.Mem, r.Assigned.Mem, CommentMemory, LogMemory},
		{j.NCPUs, r.Available.NCPUs, r.Max.NCPUs, r.Assigned.NCPUs, CommentCPUs, LogCPUs},
		{j.NodeCt, r.Available.NodeCt, r.Max.NodeCt, r.Assigned.NodeCt, CommentNodect, LogNodect},
	} {
		if it.req < 0 {
			continue
		}
		if left := available(it.avail, it.max, it.as); left >= 0 && it.req > left {
			return fail(it.comment, it.log)
		}
	}
	return checkResult{ok: true}
}

func (c *cycle) loadBalancing() bool {
	cfg := c.s.Config
	return cfg.LoadBalancing.At(c.period) || cfg.LoadBalancingRR.At(c.period)
}

func jobCPUs(j *world.Job) float64 {
	if j.NCPUs > 0 {
		return float64(j.NCPUs)
	}
	return 1
}

// nodeFits reports whether time-shared node n can take job j.
func nodeFits(n *world.Node, j *world.Job) bool {
	if !n.Up() {
		return false
	}
	if j.Host != "" && j.Host != n.Name {
		return false
	}
	maxLoad := n.MaxLoad
	if maxLoad <= 0 {
		maxLoad = float64(max(n.NCPUs, 1))
	}
	load := n.LoadAve
	if load < 0 {
		load = 0
	}
	if load+jobCPUs(j) > maxLoad {
		return false
	}
	if j.Mem > 0 && n.PhysMem > 0 && j.Mem > n.PhysMem {
		return false
	}
	if j.Arch != "" && j.Arch != n.Arch {
		return false
	}
	return true
}

// pickNode chooses a time-shared node for j: the least loaded fitting
// node, or with load_balancing_rr the next fitting node after the last one
// used.
func (c *cycle) pickNode(j *world.Job) *world.Node {
	nodes := c.timeShared
	if c.s.Config.LoadBalancingRR.At(c.period) {
		for k := 1; k <= len(nodes); k++ {
			i := (c.s.lastLBNode + k) % len(nodes)
			if i < 0 {
				i += len(nodes)
			}
			if nodeFits(nodes[i], j) {
				c.s.lastLBNode = i
				return nodes[i]
			}
		}
		return nil
	}
	var best *world.Node
	for _, n := range nodes {
		if nodeFits(n, j) && (best == nil || n.LoadAve < best.LoadAve) {
			best = n
		}
	}
	return best
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
