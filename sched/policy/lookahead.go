package policy

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopbs/internal/logline"
	"gopbs/resv"
	"gopbs/sched/placement"
	"gopbs/sched/profile"
	"gopbs/sched/world"
)

// PlanActions is implemented by Actions that can record a job's
// reservation on the server: its planned start and nodes in the job
// attributes estimated_start_time and estimated_exec_host. A zero start
// removes the plan. Actions without it keep plans to the cycle.
type PlanActions interface {
	SetPlan(job *world.Job, start time.Time, hosts string) error
}

// CommentReservedPrefix begins the comment of a job that could start now
// but would delay a reservation: "Not Running: resources reserved for
// 12.vm until Thu Nov 27 14:00" (the reserved job's planned start).
const CommentReservedPrefix = "Not Running: resources reserved for "

// lookahead is the time dimension of one cycle (seed 004): the
// resource-time profile with the running jobs' expected ends, the
// reservations, and the backfill test for jobs that would start now.
type lookahead struct {
	prof    *profile.Profile
	max     int   // reservations allowed this cycle; 0: none, no backfill test
	made    int   // reservations made this cycle
	offset  int64 // duration_offset, seconds
	defDur  int64 // default_duration, seconds; 0 = infinite
	now     int64
	res     []string // consumables planned at server and queue level
	nodeMem bool     // per-node memory is planned (resources line lists mem)

	overran  map[string][]string // node → running jobs past their planned end
	planned  map[*world.Job]bool // jobs given a reservation this cycle
	seen     map[*world.Job]bool // jobs the cycle looked at for a start or a reservation
	previous map[*world.Job]profile.Booking
	advance  bool // advance reservations are booked (advance.go)
}

// defaultPlanned are the consumables planned without a sched_config
// resources line: TORQUE's fixed set.
var defaultPlanned = []string{"mem", "ncpus", "nodect"}

// newLookahead builds the cycle's profile, or returns nil when neither
// reservations nor the MONITOR file are configured.
func (c *cycle) newLookahead() *lookahead {
	cfg := c.s.Config
	maxRes := cfg.MaxReservation.At(c.period)
	if maxRes <= 0 && !cfg.Monitor.At(c.period) &&
		!slices.ContainsFunc(c.w.Reservations, func(r *resv.Reservation) bool { return holding(r, c.now.Unix()) }) {
		return nil
	}
	l := &lookahead{max: max(maxRes, 0), offset: int64(cfg.Offset(c.period) / time.Second),
		defDur: int64(cfg.DefaultDuration.At(c.period) / time.Second), now: c.now.Unix(),
		res: cfg.Resources, overran: map[string][]string{}, planned: map[*world.Job]bool{}, seen: map[*world.Job]bool{},
		previous: map[*world.Job]profile.Booking{}}
	if l.res == nil {
		l.res = defaultPlanned
	}
	l.nodeMem = slices.Contains(cfg.Resources, "mem")
	p := profile.New(l.now)
	l.prof = p
	for _, n := range c.w.Nodes {
		if n.TimeShared {
			continue
		}
		pn := profile.Node{Name: n.Name, Slots: n.NP, Props: n.Properties, Down: !n.Up()}
		if l.nodeMem && n.PhysMem > 0 {
			pn.Consumables = map[string]float64{"mem": float64(n.PhysMem)}
		}
		p.AddNode(pn)
	}
	for _, name := range l.res {
		if total, ok := capacityOf(&c.w.Server.Resources, name); ok {
			p.SetGlobal(name, total)
		}
		for _, q := range c.w.Queues {
			if total, ok := capacityOf(&q.Resources, name); ok {
				p.SetQueue(q.Name, name, total)
			}
		}
	}
	for _, q := range c.w.Queues {
		for _, j := range q.Jobs {
			switch j.State {
			case 'R', 'S', 'E':
				l.bookRunning(c, j)
			case 'Q':
				l.bookPrevious(c, j)
			}
		}
	}
	l.bookAdvance(c)
	return l
}

// capacityOf returns resources_available (else resources_max) of a
// consumable.
func capacityOf(r *world.ResourceSet, name string) (float64, bool) {
	if v, ok := world.ParseAmount(r.Available.Values[name]); ok {
		return v, true
	}
	return world.ParseAmount(r.Max.Values[name])
}

// planDuration is the run time planned for j: its walltime, else
// default_duration, plus duration_offset; profile.Forever without either.
func (l *lookahead) planDuration(j *world.Job) int64 {
	switch {
	case j.Walltime > 0:
		return int64(j.Walltime/time.Second) + l.offset
	case l.defDur > 0:
		return l.defDur + l.offset
	}
	return profile.Forever
}

// backfillDuration is the run time j is held to when it would start
// before a reservation: its walltime plus duration_offset, or forever
// without a walltime (such a job never backfills into a reservation).
func (l *lookahead) backfillDuration(j *world.Job) int64 {
	if j.Walltime > 0 {
		return int64(j.Walltime/time.Second) + l.offset
	}
	return profile.Forever
}

func endOf(start, d int64) int64 {
	if d == profile.Forever || start > profile.Forever-d {
		return profile.Forever
	}
	return start + d
}

// consumables returns what j uses of the planned consumables, at server
// level (global) and against its queue's limits.
func (l *lookahead) consumables(j *world.Job) map[string]float64 {
	var m map[string]float64
	for _, name := range l.res {
		var v float64
		var ok bool
		switch name {
		case "mem":
			v, ok = float64(j.Mem), j.Mem > 0
		case "ncpus":
			v, ok = float64(j.NCPUs), j.NCPUs > 0
		case "nodect":
			v, ok = float64(j.NodeCt), j.NodeCt > 0
		default:
			v, ok = world.ParseAmount(j.Request[name])
		}
		if ok && v > 0 {
			if m == nil {
				m = map[string]float64{}
			}
			m[name] = v
		}
	}
	return m
}

// execSlots reads exec_host "n1/0+n1/1+n2/0" as slots per node.
func execSlots(v string) []profile.Slot {
	var out []profile.Slot
	for _, e := range strings.Split(v, "+") {
		host, _, _ := strings.Cut(e, "/")
		if host == "" {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Node == host {
			out[k].Slots++
			continue
		}
		found := false
		for i := range out {
			if out[i].Node == host {
				out[i].Slots++
				found = true
				break
			}
		}
		if !found {
			out = append(out, profile.Slot{Node: host, Slots: 1})
		}
	}
	return out
}

// bookRunning books a running (or suspended, or exiting) job until its
// expected end. A job past its planned end is assumed to end within
// duration_offset; it is remembered as overrunning.
func (l *lookahead) bookRunning(c *cycle, j *world.Job) {
	start := j.StartTime.Unix()
	if j.StartTime.IsZero() {
		start = l.now
	}
	end := endOf(start, l.planDuration(j))
	nodes := execSlots(j.ExecHost)
	if end <= l.now {
		end = l.now + max(l.offset, 1)
		for _, s := range nodes {
			l.overran[s.Node] = append(l.overran[s.Node], j.ID)
		}
	}
	kind := profile.Running
	if j.State == 'S' {
		kind = profile.Suspended
	}
	use := l.consumables(j)
	l.prof.Book(profile.Booking{Job: j.ID, Kind: kind, Start: start, End: end, Nodes: nodes,
		PerNode: l.perNode(j, len(nodes)), Global: use, Queue: j.Queue.Name, QueueUse: use})
}

// perNode returns the per-node memory of j spread over n nodes, when
// per-node memory is planned.
func (l *lookahead) perNode(j *world.Job, n int) map[string]float64 {
	if !l.nodeMem || j.Mem <= 0 || n == 0 {
		return nil
	}
	return map[string]float64{"mem": float64(j.Mem) / float64(n)}
}

// bookPrevious books the plan a queued job got in an earlier cycle, so
// that no job ahead of it in this cycle takes what was promised to it;
// the job's own turn replaces it.
func (l *lookahead) bookPrevious(c *cycle, j *world.Job) {
	if j.EstStart.IsZero() || l.max == 0 {
		return
	}
	start := max(j.EstStart.Unix(), l.now)
	nodes := parseHosts(j.EstHosts)
	b := profile.Booking{Job: j.ID, Kind: profile.Reserving, Start: start, End: endOf(start, l.planDuration(j)),
		Nodes: nodes, PerNode: l.perNode(j, len(nodes)), Global: l.consumables(j), Queue: j.Queue.Name, QueueUse: l.consumables(j)}
	l.previous[j] = b
	l.prof.Book(b)
}

// formatHosts writes slots as a node specification naming the nodes,
// "n1:ppn=4+n2:ppn=4": the RunJob destination and estimated_exec_host.
func formatHosts(slots []profile.Slot) string {
	var b strings.Builder
	for i, s := range slots {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(s.Node)
		if s.Slots != 1 {
			b.WriteString(":ppn=" + strconv.Itoa(s.Slots))
		}
	}
	return b.String()
}

// parseHosts reads formatHosts' form back.
func parseHosts(v string) []profile.Slot {
	var out []profile.Slot
	for _, e := range strings.Split(v, "+") {
		name, ppn, _ := strings.Cut(e, ":ppn=")
		if name == "" {
			continue
		}
		n := 1
		if ppn != "" {
			if k, err := strconv.Atoi(ppn); err == nil && k >= 0 {
				n = k
			}
		}
		out = append(out, profile.Slot{Node: name, Slots: n})
	}
	return out
}

// request is what j asks of the profile, for duration d; node is the
// cluster node load balancing or smp_cluster_dist chose, if any.
func (l *lookahead) request(c *cycle, j *world.Job, node *world.Node, d int64) profile.Request {
	r := profile.Request{Queue: j.Queue.Name, Duration: d}
	use := l.consumables(j)
	r.Global, r.QueueUse = use, use
	if l.prof.Nodes() == 0 || node != nil && node.TimeShared {
		return r
	}
	spec := c.allocSpec(j)
	if node != nil {
		spec = node.Name
	}
	if sp, err := placement.ParseSpec(spec, func(n string) bool {
		return slices.ContainsFunc(c.w.Nodes, func(x *world.Node) bool { return x.Name == n })
	}); err == nil {
		r.Spec = sp
		r.PerNode = l.perNode(j, sp.Nodes())
	}
	return r
}

// admit decides whether j, which passed every check, may start now: it
// must not touch a reservation before its (walltime) end. It returns the
// RunJob destination (the nodes the profile chose, so the server cannot
// pick reserved ones) or, when j must wait, ok false after commenting.
func (l *lookahead) admit(c *cycle, j *world.Job, node *world.Node) (dest string, ok bool) {
	l.seen[j] = true
	if prev, had := l.previous[j]; had {
		l.prof.Unbook(prev.Job)
	}
	if l.max == 0 && !l.advance {
		return "", true
	}
	r := l.request(c, j, node, l.backfillDuration(j))
	slots, fits := l.prof.Fit(r, l.now)
	if fits {
		if node != nil || r.Spec.Shared || len(slots) == 0 {
			return "", true
		}
		return formatHosts(slots), true
	}
	if b, blocked := l.prof.Blocker(r, l.now); blocked && b.Kind == profile.Advance {
		c.block("reservation")
		c.comment(j, c.advanceComment(b))
		c.logJob(j, "Nodes reserved by "+b.Job)
	} else if blocked {
		c.block("reservation")
		c.comment(j, CommentReservedPrefix+b.Job+" until "+c.date(time.Unix(b.Start, 0)))
		c.logJob(j, "Resources reserved for "+b.Job)
	} else {
		c.block("nodes")
		c.comment(j, CommentNodes)
		c.logJob(j, LogNodes)
	}
	l.reserve(c, j, node)
	return "", false
}

// started books a job the cycle started.
func (l *lookahead) started(c *cycle, j *world.Job, node *world.Node, dest string) {
	r := l.request(c, j, node, l.planDuration(j))
	slots := parseHosts(dest)
	if dest == "" {
		slots, _ = l.prof.Fit(profile.Request{Spec: r.Spec, Duration: r.Duration}, l.now)
	}
	l.prof.Book(profile.Booking{Job: j.ID, Kind: profile.Starting, Start: l.now, End: endOf(l.now, r.Duration),
		Nodes: slots, PerNode: r.PerNode, Global: r.Global, Queue: r.Queue, QueueUse: r.QueueUse})
	if !j.EstStart.IsZero() {
		l.setPlan(c, j, time.Time{}, "")
	}
}

// wantsReservation reports whether j gets a reservation when it cannot
// start: it asks for one, or it is the cycle's starving job (whose drain
// of the whole cluster reservations replace).
func (l *lookahead) wantsReservation(c *cycle, j *world.Job) bool {
	return l.max > 0 && (j.Reserve || j == c.starving)
}

// reserve gives j, which cannot start now, a reservation at its earliest
// start, if it wants one and the cycle has reservations left.
func (l *lookahead) reserve(c *cycle, j *world.Job, node *world.Node) {
	l.seen[j] = true
	if prev, had := l.previous[j]; had {
		l.prof.Unbook(prev.Job)
	}
	if !l.wantsReservation(c, j) || l.made >= l.max {
		return
	}
	r := l.request(c, j, node, l.planDuration(j))
	var start int64
	var slots []profile.Slot
	for from := l.now; ; {
		var ok bool
		if start, slots, ok = l.prof.Earliest(r, from); !ok {
			return
		}
		later, clash := c.dedicatedClash(j, start)
		if !clash {
			break
		}
		if later <= start {
			return // no dedicated period admits the job
		}
		from = later
	}
	l.made++
	c.stats.Reservations++
	l.planned[j] = true
	l.prof.Book(profile.Booking{Job: j.ID, Kind: profile.Reserving, Start: start, End: endOf(start, r.Duration),
		Nodes: slots, PerNode: r.PerNode, Global: r.Global, Queue: r.Queue, QueueUse: r.QueueUse})
	hosts := formatHosts(slots)
	if prev, had := l.previous[j]; had && start > j.EstStart.Unix() {
		c.logJob(j, fmt.Sprintf("Reservation delayed from %s to %s: %s", c.date(j.EstStart),
			c.date(time.Unix(start, 0)), l.delayCause(c, prev)))
	}
	l.setPlan(c, j, time.Unix(start, 0), hosts)
}

// delayCause says why a reservation could not keep its previous start: a
// running job on its nodes overran its planned end, or one of its nodes
// is down.
func (l *lookahead) delayCause(c *cycle, prev profile.Booking) string {
	var causes []string
	for _, s := range prev.Nodes {
		for _, id := range l.overran[s.Node] {
			causes = append(causes, "job "+id+" overran its walltime on "+s.Node)
		}
		if l.prof.FreeSlots(s.Node, l.now) == 0 && !slices.ContainsFunc(c.w.Nodes, func(n *world.Node) bool { return n.Name == s.Node && n.Up() }) {
			causes = append(causes, "node "+s.Node+" is down")
		}
	}
	if len(causes) == 0 {
		return "its resources were taken outside the plan"
	}
	return strings.Join(slices.Compact(causes), ", ")
}

// setPlan records j's plan on the server when it changed.
func (l *lookahead) setPlan(c *cycle, j *world.Job, start time.Time, hosts string) {
	if start.Unix() == j.EstStart.Unix() && start.IsZero() == j.EstStart.IsZero() && hosts == j.EstHosts {
		return
	}
	pa, ok := c.act.(PlanActions)
	if !ok {
		return
	}
	if err := pa.SetPlan(j, start, hosts); err == nil {
		j.EstStart, j.EstHosts = start, hosts
	}
}

// finish drops the plans of queued jobs the cycle looked at that got no
// reservation and appends the cycle's plan to the MONITOR file. A job
// the cycle did not look at (its queue refused jobs this cycle, e.g. in
// dedicated time, or strict_fifo stopped before it) keeps its plan,
// which stayed booked.
func (l *lookahead) finish(c *cycle) {
	for j := range l.previous {
		if l.seen[j] && !l.planned[j] && j.State == 'Q' {
			l.prof.Unbook(j.ID)
			l.setPlan(c, j, time.Time{}, "")
		}
	}
	if !c.s.Config.Monitor.At(c.period) || c.s.MonitorPath == "" {
		return
	}
	f, err := os.OpenFile(c.s.MonitorPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		err = profile.WriteSchedule(f, c.w.Server.Name, l.prof.Bookings())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil && c.s.Log != nil {
		c.s.Log.Log(logline.EventError, logline.ClassServer, "schedule", "MONITOR: "+err.Error())
	}
}

// date formats a time for comments and log lines ("Thu Nov 27 14:00").
func (c *cycle) date(t time.Time) string {
	loc := c.s.Location
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format("Mon Jan 02 15:04")
}

// dedicatedClash reports whether j, started at t (Unix seconds), would
// break dedicated time as dedicatedTime checks it when t comes, and the
// earliest later time worth trying: a job of a dedicated queue must run
// (by its walltime) inside a dedicated period, any other job outside
// every period. later <= t means never.
func (c *cycle) dedicatedClash(j *world.Job, t int64) (later int64, clash bool) {
	if len(c.s.Dedicated) == 0 {
		return 0, false
	}
	wall := int64(-1)
	if j.Walltime >= 0 {
		wall = int64(j.Walltime / time.Second)
	}
	ded := c.dedicatedQueue(j.Queue)
	// the periods that have not ended by t, in order of start
	var periods [][2]int64
	for _, p := range c.s.Dedicated {
		if p.End.Unix() > t {
			periods = append(periods, [2]int64{p.Start.Unix(), p.End.Unix()})
		}
	}
	slices.SortFunc(periods, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	if ded {
		for _, p := range periods {
			switch {
			case t < p[0]:
				return p[0], true
			case wall >= 0 && t+wall <= p[1]:
				return 0, false
			}
		}
		return 0, true
	}
	for _, p := range periods {
		if wall < 0 || t+wall > p[0] {
			// a job without walltime fails while any period is to come
			return p[1], true
		}
	}
	return 0, false
}
