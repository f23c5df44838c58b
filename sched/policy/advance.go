package policy

import (
	"slices"
	"time"

	"gopbs/resv"
	"gopbs/sched/placement"
	"gopbs/sched/profile"
	"gopbs/sched/world"
)

// Advance reservations (issue 17, seed 002). The server keeps them; the
// scheduler honours them in two ways:
//
//   - Each reservation that holds its nodes is booked in the cycle's
//     resource-time profile (the look-ahead's, kind profile.Advance): no
//     other job starts on those nodes unless its walltime ends before the
//     reservation begins (backfill), and a job that cannot start is told
//     which reservation stands in its way.
//   - The jobs of a reservation's queue (named by its id) run only while
//     it runs and only on its nodes: they are placed in a profile of the
//     reservation's nodes alone, and started with those nodes named.

// CommentAdvancePrefix begins the comment of a job that would run into
// an advance reservation's window on the nodes free now.
const CommentAdvancePrefix = "Not Running: nodes reserved by "

// CommentAdvanceFull is the comment of a reservation's job when its
// reservation's nodes are taken by its other jobs.
const CommentAdvanceFull = "Not Running: the reservation's nodes are busy"

// holding reports whether r keeps its nodes at or after now.
func holding(r *resv.Reservation, now int64) bool {
	return r.Holds() && r.End.Unix() > now
}

// bookAdvance books the reservations that hold nodes, each node whole.
func (l *lookahead) bookAdvance(c *cycle) {
	for _, r := range c.w.Reservations {
		if !holding(r, l.now) {
			continue
		}
		var slots []profile.Slot
		for _, name := range r.Assigned {
			if n := c.node(name); n != nil && n.NP > 0 {
				slots = append(slots, profile.Slot{Node: name, Slots: n.NP})
			}
		}
		if len(slots) == 0 {
			continue
		}
		l.advance = true
		l.prof.Book(profile.Booking{Job: r.ID, Kind: profile.Advance, Start: max(r.Start.Unix(), l.now),
			End: r.End.Unix(), Nodes: slots})
	}
}

// node returns the world's node name, or nil.
func (c *cycle) node(name string) *world.Node {
	for _, n := range c.w.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// reservedJobs takes the jobs of reservation queues out of the cycle's
// lists and schedules them on their reservations' nodes.
func (c *cycle) reservedJobs(lists [][]*world.Job) [][]*world.Job {
	if len(c.w.Reservations) == 0 {
		return lists
	}
	byQueue := map[string]*resv.Reservation{}
	for _, r := range c.w.Reservations {
		byQueue[r.ID] = r
	}
	var mine []*world.Job
	for i, l := range lists {
		lists[i] = slices.DeleteFunc(l, func(j *world.Job) bool {
			if byQueue[j.Queue.Name] != nil {
				mine = append(mine, j)
				return true
			}
			return false
		})
	}
	profiles := map[string]*profile.Profile{}
	for _, j := range mine {
		r := byQueue[j.Queue.Name]
		now := c.now.Unix()
		if r.State != resv.Running || now < r.Start.Unix() || now >= r.End.Unix() {
			// the server comments the job with the reservation's start
			c.logJob(j, "Waiting for reservation "+r.ID)
			continue
		}
		// The server's and the queue's max_running, max_user_run and
		// max_group_run hold for a reservation's jobs as for any other.
		if res := c.reservationLimits(j); !res.ok {
			c.comment(j, res.comment)
			c.logJob(j, res.log)
			continue
		}
		p := profiles[r.ID]
		if p == nil {
			p = c.reservationProfile(r)
			profiles[r.ID] = p
		}
		spec, err := placement.ParseSpec(c.allocSpec(j), func(n string) bool { return slices.Contains(r.Assigned, n) })
		if err != nil {
			c.comment(j, CommentNodes)
			continue
		}
		req := profile.Request{Spec: spec, Duration: max(r.End.Unix()-now, 1)}
		slots, ok := p.Fit(req, now)
		if !ok {
			c.comment(j, CommentAdvanceFull)
			c.logJob(j, "Nodes of reservation "+r.ID+" are busy")
			continue
		}
		dest := formatHosts(slots)
		if c.run(j, nil, dest) {
			p.Book(profile.Booking{Job: j.ID, Kind: profile.Starting, Start: now, End: now + req.Duration, Nodes: slots})
		}
	}
	return lists
}

// reservationLimits checks a reservation's job against the server's and
// its queue's run limits, counting it blocked as the stages do.
func (c *cycle) reservationLimits(j *world.Job) checkResult {
	for _, st := range []stage{{"server limits", (*cycle).serverLimits}, {"queue limits", (*cycle).queueLimits}} {
		if res := st.run(c, j); !res.ok {
			c.block(st.name)
			return res
		}
	}
	return okResult
}

// reservationProfile is a profile of r's nodes alone with the jobs that
// run on them.
func (c *cycle) reservationProfile(r *resv.Reservation) *profile.Profile {
	now := c.now.Unix()
	p := profile.New(now)
	for _, name := range r.Assigned {
		if n := c.node(name); n != nil {
			p.AddNode(profile.Node{Name: n.Name, Slots: n.NP, Props: n.Properties, Down: !n.Up()})
		}
	}
	for _, j := range c.w.Jobs() {
		if j.State != 'R' && j.State != 'E' && j.State != 'S' {
			continue
		}
		var on []profile.Slot
		for _, s := range execSlots(j.ExecHost) {
			if slices.Contains(r.Assigned, s.Node) {
				on = append(on, s)
			}
		}
		if len(on) > 0 {
			p.Book(profile.Booking{Job: j.ID, Kind: profile.Running, Start: now, End: profile.Forever, Nodes: on})
		}
	}
	return p
}

// advanceComment is the comment of a job an advance reservation keeps
// from starting now.
func (c *cycle) advanceComment(b profile.Booking) string {
	for _, r := range c.w.Reservations {
		if r.ID == b.Job {
			return CommentAdvancePrefix + r.ID + " from " + c.date(r.Start) + " to " + c.date(r.End)
		}
	}
	return CommentAdvancePrefix + b.Job + " from " + c.date(time.Unix(b.Start, 0))
}
