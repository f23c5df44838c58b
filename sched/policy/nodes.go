// This file places a job on nodes: the node request checked with the server
// or against the cycle's own node model (placeNodes, model, learn), a
// time-shared node chosen by load balancing (pickSMPNode, pickNode).

package policy

import (
	"gopbs/sched/config"
	"gopbs/sched/placement"
	"gopbs/sched/world"
)

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
