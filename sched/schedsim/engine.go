package schedsim

import (
	"container/heap"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/placement"
	"gopbs/sched/policy"
	"gopbs/sched/timeplan"
	"gopbs/sched/world"
)

// Mode is the scheduling policy a run uses.
type Mode int

// The policies compared.
const (
	// FIFO is TORQUE's FIFO scheduler in submission order: every job
	// that fits starts, so large jobs can starve.
	FIFO Mode = iota
	// FIFOStarving adds help_starving_jobs: a job queued longer than
	// max_starve drains the cluster until it runs.
	FIFOStarving
	// Reservation is look-ahead scheduling: reservations (every job
	// asks for one) and backfilling.
	Reservation
)

var modeNames = [...]string{FIFO: "FIFO", FIFOStarving: "FIFO+starving", Reservation: "reservation+backfill"}

func (m Mode) String() string { return modeNames[m] }

// Options configure a run.
type Options struct {
	Nodes int // cluster nodes (default 128)
	NP    int // slots per node (default 8)
	Mode  Mode
	// MaxReservation is max_reservation in Reservation mode (default
	// 20; negative means no cap).
	MaxReservation int
	// MaxStarve is max_starve in FIFOStarving mode (default 24 h, the
	// shipped value).
	MaxStarve time.Duration
	// Offset is duration_offset (default 60 s; negative for none).
	Offset time.Duration
	// ReserveLarger, in Reservation mode, asks reservations only for jobs
	// of at least this many slots (0: every job).
	ReserveLarger int
	// Check verifies, in Reservation mode, that no reservation ever gets
	// later and that every job holding one starts no later than planned;
	// the findings are in Result.Violations.
	Check bool
	// Queues names the execution queues (default one, "batch"); a job's
	// Queue indexes them, and queue i has priority i.
	Queues []string
	// Config is sched_config text read after the mode's own keys (e.g.
	// "fair_share: true\n", "by_queue: true\n", "dedicated_prefix: ded\n").
	Config string
	// FairShare is the fair-share tree (nil: none). With one, every job
	// requests cput = walltime x slots, which its start adds to its
	// user's usage.
	FairShare *fairshare.Tree
	// Dedicated are dedicated-time periods [start, end) in simulated
	// seconds; a cycle runs at each of their bounds.
	Dedicated [][2]int64
	// Log, if set, receives the scheduler's log lines.
	Log policy.Logger
}

// JobResult is what happened to one job.
type JobResult struct {
	Job
	Start, End int64 // -1 when it never started
	// Slots are the (node, virtual processor) pairs it ran on.
	Slots []NodeVP
	// Planned is the first planned start it got (-1: none).
	Planned int64
}

// NodeVP is one virtual processor of a node.
type NodeVP struct{ Node, VP int }

// Result is the outcome of a run.
type Result struct {
	Options
	Jobs   []JobResult
	Cycles int
	// Violations lists broken promises (Options.Check).
	Violations []string
}

// base is the simulated clock's origin (a Monday, so the empty
// holidays file makes it prime time throughout).
var base = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).Unix()

type simJob struct {
	res  *JobResult
	wj   *world.Job
	done bool
	// dropped is the planned start of a plan the scheduler removed
	// while the job still waited (0: none).
	dropped int64
}

// endHeap orders running jobs by end.
type endHeap []*simJob

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].res.End < h[j].res.End }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(*simJob)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// engine is one run's state.
type engine struct {
	opts    Options
	now     int64
	nodes   []*world.Node
	vps     [][]int // per node, per VP: index+1 of the job holding it, 0 if free
	queues  []*world.Queue
	waiting []*simJob
	running endHeap
	byID    map[string]*simJob
	all     []*simJob
	pool    *placement.Pool
	res     *Result
}

func spec(procs, np int) string {
	if procs <= np {
		return "1:ppn=" + strconv.Itoa(procs)
	}
	s := strconv.Itoa(procs/np) + ":ppn=" + strconv.Itoa(np)
	if r := procs % np; r > 0 {
		s += "+1:ppn=" + strconv.Itoa(r)
	}
	return s
}

// Run replays w under opts.
func Run(w Workload, opts Options) (*Result, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 128
	}
	if opts.NP == 0 {
		opts.NP = 8
	}
	if opts.MaxReservation == 0 {
		opts.MaxReservation = 20
	}
	if opts.MaxStarve == 0 {
		opts.MaxStarve = 24 * time.Hour
	}
	if opts.Offset == 0 {
		opts.Offset = time.Minute
	}
	opts.Offset = max(opts.Offset, 0)
	cfg, err := modeConfig(opts)
	if err != nil {
		return nil, err
	}
	e := &engine{opts: opts, now: -1, byID: map[string]*simJob{}, res: &Result{Options: opts}}
	if len(opts.Queues) == 0 {
		opts.Queues = []string{"batch"}
	}
	for i, name := range opts.Queues {
		e.queues = append(e.queues, world.FromQueue(name, []world.Attr{{Name: "queue_type", Value: "Execution"},
			{Name: "started", Value: "True"}, {Name: "Priority", Value: strconv.Itoa(i)}}))
	}
	for i := 0; i < opts.Nodes; i++ {
		e.nodes = append(e.nodes, &world.Node{Name: fmt.Sprintf("n%04d", i), NP: opts.NP, State: world.NodeFree, MomOK: true})
		e.vps = append(e.vps, make([]int, opts.NP))
	}
	e.res.Jobs = make([]JobResult, len(w))
	for i, j := range w {
		if j.Procs > opts.Nodes*opts.NP {
			return nil, fmt.Errorf("job %d asks for %d slots, the cluster has %d", j.ID, j.Procs, opts.Nodes*opts.NP)
		}
		if j.Queue < 0 || j.Queue >= len(e.queues) {
			return nil, fmt.Errorf("job %d is in queue %d of %d", j.ID, j.Queue, len(e.queues))
		}
		e.res.Jobs[i] = JobResult{Job: j, Start: -1, End: -1, Planned: -1}
		sj := &simJob{res: &e.res.Jobs[i]}
		id := strconv.Itoa(j.ID) + ".sim"
		wall := time.Duration(-1)
		if j.Walltime > 0 {
			wall = time.Duration(j.Walltime) * time.Second
		}
		reserve := opts.Mode == Reservation && j.Procs >= opts.ReserveLarger
		sj.wj = &world.Job{ID: id, Queue: e.queues[j.Queue], State: 'Q', User: "u" + strconv.Itoa(j.User), Group: "g",
			QTime: time.Unix(base+j.Submit, 0), CPUT: -1, Walltime: wall, Mem: -1, NCPUs: -1, NodeCt: -1,
			UsedCPUT: -1, Nodes: spec(j.Procs, opts.NP), Reserve: reserve}
		if opts.FairShare != nil && wall > 0 {
			sj.wj.CPUT = wall * time.Duration(j.Procs)
		}
		e.byID[id] = sj
		e.all = append(e.all, sj)
	}
	s := policy.New(cfg, opts.Log)
	s.Location = time.UTC
	if opts.FairShare != nil {
		s.FairShare = opts.FairShare
	}
	for _, d := range opts.Dedicated {
		s.Dedicated = append(s.Dedicated, timeplan.Period{Start: time.Unix(base+d[0], 0), End: time.Unix(base+d[1], 0)})
	}
	next := 0
	for {
		t, ok := e.nextEvent(next)
		if !ok {
			break
		}
		e.now = t
		for e.running.Len() > 0 && e.running[0].res.End <= t {
			e.finish(heap.Pop(&e.running).(*simJob))
		}
		for next < len(e.all) && e.all[next].res.Submit <= t {
			e.waiting = append(e.waiting, e.all[next])
			next++
		}
		if len(e.waiting) == 0 {
			continue
		}
		s.Cycle(e.world(), e)
		e.res.Cycles++
		e.afterCycle()
	}
	return e.res, nil
}

// modeConfig is the sched_config of a mode.
func modeConfig(o Options) (*config.Config, error) {
	text := "sort_by: no_sort\nby_queue: false\n"
	switch o.Mode {
	case FIFOStarving:
		text += "help_starving_jobs: true\nmax_starve: " + strconv.Itoa(int(o.MaxStarve/time.Second)) + "\n"
	case Reservation:
		n := o.MaxReservation
		if n < 0 {
			n = 1 << 30
		}
		text += "max_reservation: " + strconv.Itoa(n) + "\n"
	}
	text += "duration_offset: " + strconv.Itoa(int(o.Offset/time.Second)) + "\n" + o.Config
	cfg, errs, err := config.Parse(strings.NewReader(text), "schedsim")
	if err != nil || len(errs) > 0 {
		return nil, errors.Join(err, fmt.Errorf("schedsim config: %v", errs))
	}
	return cfg, nil
}

// nextEvent returns the time of the next submission, job end or planned
// start after the current time.
func (e *engine) nextEvent(next int) (int64, bool) {
	t, ok := int64(0), false
	consider := func(x int64) {
		if x > e.now {
			if !ok || x < t {
				t, ok = x, true
			}
		}
	}
	if next < len(e.all) {
		consider(e.all[next].res.Submit)
	}
	if e.running.Len() > 0 {
		consider(e.running[0].res.End)
	}
	for _, sj := range e.waiting {
		if !sj.wj.EstStart.IsZero() {
			consider(sj.wj.EstStart.Unix() - base)
		}
	}
	if ok || len(e.waiting) > 0 {
		for _, d := range e.opts.Dedicated {
			consider(d[0])
			consider(d[1])
		}
	}
	return t, ok
}

func (e *engine) finish(sj *simJob) {
	sj.done = true
	sj.wj.State = 'C'
	for _, s := range sj.res.Slots {
		e.vps[s.Node][s.VP] = 0
	}
}

// world is the snapshot the daemon would read.
func (e *engine) world() *world.World {
	w := &world.World{Now: time.Unix(base+e.now, 0), Server: world.FromServer("sim", nil)}
	for i, n := range e.nodes {
		used := 0
		for _, v := range e.vps[i] {
			if v != 0 {
				used++
			}
		}
		n.UsedSlots, n.JobExclusive, n.State = used, used == n.NP, world.NodeFree
		if used == n.NP {
			n.State = world.NodeJobExclusive
		}
	}
	w.Nodes = e.nodes
	for _, q := range e.queues {
		q.Jobs = q.Jobs[:0]
	}
	for _, sj := range e.running {
		sj.wj.Queue.Jobs = append(sj.wj.Queue.Jobs, sj.wj)
	}
	for _, sj := range e.waiting {
		sj.wj.Queue.Jobs = append(sj.wj.Queue.Jobs, sj.wj)
	}
	w.Queues = e.queues
	e.pool = placement.NewPool(e.nodes)
	return w
}

// afterCycle drops started and deleted jobs from the waiting list.
func (e *engine) afterCycle() {
	k := 0
	for _, sj := range e.waiting {
		if sj.wj.State == 'Q' {
			e.waiting[k] = sj
			k++
		}
	}
	clear(e.waiting[k:])
	e.waiting = e.waiting[:k]
}

// QueryNodes implements policy.Actions.
func (e *engine) QueryNodes(j *world.Job, s string) (placement.Availability, error) {
	sp, err := e.pool.Parse(s)
	if err != nil {
		return placement.Never, nil
	}
	return e.pool.Query(sp), nil
}

// SetComment implements policy.Actions.
func (e *engine) SetComment(j *world.Job, comment string) error { return nil }

// DeleteJob implements policy.Actions: the job never runs.
func (e *engine) DeleteJob(j *world.Job, message string) error {
	j.State = 'C'
	return nil
}

// MoveJob implements policy.Actions.
func (e *engine) MoveJob(j *world.Job, queue string) error { return errors.New("one queue only") }

// SetPlan implements policy.PlanActions.
func (e *engine) SetPlan(j *world.Job, start time.Time, hosts string) error {
	sj := e.byID[j.ID]
	if !start.IsZero() {
		at := start.Unix() - base
		if sj.res.Planned < 0 {
			sj.res.Planned = at
		}
		if e.opts.Check && !j.EstStart.IsZero() && start.After(j.EstStart) {
			e.res.Violations = append(e.res.Violations, fmt.Sprintf("t=%d: plan of %s got later: %d -> %d",
				e.now, j.ID, j.EstStart.Unix()-base, at))
		}
	}
	if start.IsZero() && !j.EstStart.IsZero() && j.State == 'Q' {
		sj.dropped = j.EstStart.Unix() - base
	}
	j.EstStart, j.EstHosts = start, hosts
	return nil
}

// RunJob implements policy.Actions: it allocates the destination's
// nodes (or the job's own specification) as the server would.
func (e *engine) RunJob(j *world.Job, dest string) error {
	sj := e.byID[j.ID]
	s := j.Nodes
	if dest != "" {
		s = dest
	}
	sp, err := e.pool.Parse(s)
	if err != nil {
		return fmt.Errorf("bad node specification %q", s)
	}
	names, ok := e.pool.Allocate(sp)
	if !ok {
		return errors.New("no nodes can be allocated to job")
	}
	if e.opts.Check && !j.EstStart.IsZero() && e.now > j.EstStart.Unix()-base {
		e.res.Violations = append(e.res.Violations, fmt.Sprintf("t=%d: %s started after its planned start %d",
			e.now, j.ID, j.EstStart.Unix()-base))
	}
	if e.opts.Check && e.opts.MaxReservation < 0 && sj.dropped > 0 && e.now > sj.dropped {
		// Without a cap on reservations a plan is only dropped when
		// the job can no longer be planned: it must not then start
		// later than promised.
		e.res.Violations = append(e.res.Violations, fmt.Sprintf("t=%d: %s started after the plan it lost (%d)",
			e.now, j.ID, sj.dropped))
	}
	k := 0
	var exec []string
	for _, el := range sp.Elements {
		for c := 0; c < el.Count; c++ {
			ni := e.nodeIndex(names[k])
			k++
			for p := 0; p < el.PPN; p++ {
				vp := e.freeVP(ni)
				e.vps[ni][vp] = 1
				sj.res.Slots = append(sj.res.Slots, NodeVP{Node: ni, VP: vp})
				exec = append(exec, e.nodes[ni].Name+"/"+strconv.Itoa(vp))
			}
		}
	}
	sj.res.Start, sj.res.End = e.now, e.now+sj.res.Runtime
	j.ExecHost, j.StartTime = strings.Join(exec, "+"), time.Unix(base+e.now, 0)
	heap.Push(&e.running, sj)
	return nil
}

func (e *engine) nodeIndex(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "n"))
	return n
}

func (e *engine) freeVP(ni int) int {
	for vp, v := range e.vps[ni] {
		if v == 0 {
			return vp
		}
	}
	return 0
}
