// This file holds the feasibility checks of a job, in TORQUE's order
// (stages, spec 14 §6.2): the server's and the queue's run limits,
// dedicated time, draining for a starving job, the queue's and the
// server's resources and the tokens; the node placement stage is in
// nodes.go.

package policy

import (
	"strconv"

	"gopbs/sched/world"
)

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
