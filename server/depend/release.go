package depend

import (
	"strings"

	"gopbs/server/state"
)

// ParentGone releases or dooms the dependents of job p that ends (ok:
// with exit status 0; a job deleted while queued ends not ok): beforeany
// children are released, beforeok children released when ok, beforenotok
// children when not ok, and the others returned as doomed (their
// condition can no longer be met); a sync set p belongs to hears of its
// end (Sync). The jobs released are noted in tx and returned as changed.
func (g *Graph) ParentGone(tx *state.Txn, p *state.Job, ok bool) (changed, doomed []*state.Job) {
	self := p.ID + "@" + g.name
	changed, doomed = g.sync.gone(tx, p)
	for _, e := range g.Of(p) {
		for _, arg := range e.Args {
			id, local := g.localJobID(arg)
			if !local {
				continue
			}
			c := g.Find(id)
			if c == nil {
				continue
			}
			release := false
			switch e.Type {
			case "beforeany":
				release = true
			case "beforeok":
				release = ok
			case "beforenotok":
				release = !ok
			default:
				// synccount and syncwith: Sync.gone
				continue
			}
			remove(c, g.name, Mirror(e.Type), self)
			if release {
				g.ReleaseHold(tx, c)
				tx.SaveJob(c)
				changed = append(changed, c)
			} else {
				doomed = append(doomed, c)
			}
		}
	}
	return changed, doomed
}

// ArrayEnded counts one ended sub-job of array template p (ok: exit 0)
// and releases or dooms the jobs depending on the array (spec 12 §6.4:
// …okarray against sub-jobs ended with 0, …notokarray against non-zero,
// …anyarray against all ended; the optional [count] is the threshold).
// The template and the jobs released are noted in tx.
func (g *Graph) ArrayEnded(tx *state.Txn, p *state.Job, ok bool) (doomed []*state.Job) {
	if ok {
		p.Array.OK++
	} else {
		p.Array.NotOK++
	}
	tx.SaveJob(p)
	total := p.Array.Size
	done := p.Array.OK + p.Array.NotOK
	for _, e := range g.Of(p) {
		var have int
		switch e.Type {
		case "beforeokarray":
			have = p.Array.OK
		case "beforenotokarray":
			have = p.Array.NotOK
		case "beforeanyarray":
			have = done
		default:
			continue
		}
		for _, arg := range e.Args {
			id, local := g.localJobID(arg)
			c := g.Find(id)
			if !local || c == nil {
				continue
			}
			switch thr := g.arrayThresholdOf(c, Mirror(e.Type), p); {
			case have >= thr:
				g.removeArrayDep(c, Mirror(e.Type), p)
				remove(p, g.name, e.Type, arg)
				g.ReleaseHold(tx, c)
				tx.SaveJob(c)
			case done >= total:
				remove(p, g.name, e.Type, arg)
				doomed = append(doomed, c)
			}
		}
	}
	return doomed
}

// arrayThresholdOf returns how many sub-jobs of array p child c waits for
// under its dependency type t: the [count] of its argument, else the
// whole array.
func (g *Graph) arrayThresholdOf(c *state.Job, t string, p *state.Job) int {
	thr := p.Array.Size
	for _, ce := range g.Of(c) {
		if ce.Type == t {
			for _, a := range ce.Args {
				if strings.HasPrefix(a, state.JobIDSeq(p.ID)+"[]") {
					if n := arrayThreshold(a); n > 0 {
						thr = n
					}
				}
			}
		}
	}
	return thr
}

// removeArrayDep drops child c's dependency of type t on array p.
func (g *Graph) removeArrayDep(c *state.Job, t string, p *state.Job) {
	deps := g.Of(c)
	prefix := state.JobIDSeq(p.ID) + "[]"
	for i := range deps {
		if deps[i].Type != t {
			continue
		}
		var keep []string
		for _, a := range deps[i].Args {
			if !strings.HasPrefix(a, prefix) {
				keep = append(keep, a)
			}
		}
		deps[i].Args = keep
	}
	Set(c, deps)
}

// Started releases the jobs waiting for j to start (spec 12 §6.4): the
// next member of the sync set j was released from (Sync), children
// recorded under "before" on j, and afterstartarray children of j's
// array once enough sub-jobs started. The run path calls it after a
// successful launch; j and every job changed are noted in tx. It returns
// the children released and the array template counted.
func (g *Graph) Started(tx *state.Txn, j *state.Job) (changed []*state.Job) {
	tx.SaveJob(j)
	g.sync.started(tx, j)
	self := j.ID + "@" + g.name
	for _, e := range g.Of(j) {
		if e.Type != "before" {
			continue
		}
		for _, arg := range e.Args {
			id, local := g.localJobID(arg)
			c := g.Find(id)
			if !local || c == nil {
				continue
			}
			remove(c, g.name, "after", self)
			remove(j, g.name, "before", arg)
			g.ReleaseHold(tx, c)
			tx.SaveJob(c)
			changed = append(changed, c)
		}
	}
	p := j.Parent
	if p == nil || p.Array == nil {
		return changed
	}
	p.Array.Started++
	tx.SaveJob(p)
	for _, e := range g.Of(p) {
		if e.Type != "beforestartarray" {
			continue
		}
		for _, arg := range e.Args {
			id, local := g.localJobID(arg)
			c := g.Find(id)
			if !local || c == nil {
				continue
			}
			if p.Array.Started >= g.arrayThresholdOf(c, "afterstartarray", p) {
				g.removeArrayDep(c, "afterstartarray", p)
				remove(p, g.name, e.Type, arg)
				g.ReleaseHold(tx, c)
				tx.SaveJob(c)
				changed = append(changed, c)
			}
		}
	}
	return append(changed, p)
}
