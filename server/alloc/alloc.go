// Package alloc chooses the virtual processors (VPs) of the nodes a job
// runs on (spec 12 §9.3) and keeps what the node table shows of the
// running jobs: each node's jobs attribute and job-exclusive state, and
// the resources_assigned of the server and its execution queues.
//
// It works on a Cluster, the node table and job table as the server
// hands them over under its lock; it changes node and queue attributes
// only in Refresh and never locks or writes the store.
package alloc

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/nodespec"
	"gopbs/server/state"
)

// Cluster is what allocation reads: the server's nodes and the jobs that
// may hold them. The server makes one under its lock for each use.
type Cluster struct {
	Nodes  []*state.Node          // the node table, in order
	ByName map[string]*state.Node // the nodes by name
	Jobs   *state.Jobs            // the job table
	// Suspended reports whether a running job is suspended (qsig -s
	// suspend): its VPs are free for others meanwhile.
	Suspended func(id string) bool
	// Server is the server's host, where jobs run when there are no
	// nodes.
	Server string
	// DefaultNode is the server's default_node ("": nodespec.Default).
	DefaultNode string
}

// holds reports whether a job's exec_host VPs count as in use.
func (c Cluster) holds(j *state.Job) bool {
	if j.State != pbsattr.StateRunning && j.State != pbsattr.StateExiting {
		return false
	}
	return c.Suspended == nil || !c.Suspended(j.ID)
}

// VPJobs lists the jobs holding one node's VPs: index VP, value the job
// id ("" for a free VP).
type VPJobs []string

// maxVP bounds the VP indexes UsedVPs records: exec_host values come
// from allocate, so larger (or negative) ones can only be damaged data,
// which must not make it allocate without bound.
const maxVP = 1 << 16

// UsedVPs returns, per node name, the jobs holding its VPs, for every
// job holding nodes. It walks only the Running/Exiting jobs, parses
// exec_host in place and looks each host up once per run of slots on it.
func (c Cluster) UsedVPs() map[string]VPJobs {
	used := make(map[string]VPJobs, len(c.Nodes))
	for _, j := range c.Jobs.Holding() {
		if !c.holds(j) {
			continue
		}
		var host string
		var m VPJobs
		for rest := j.Attrs.Get(pbsattr.JobExecHost); rest != ""; {
			var e string
			e, rest, _ = strings.Cut(rest, "+")
			h, n, ok := strings.Cut(e, "/")
			vp, err := strconv.Atoi(n)
			if !ok || err != nil || vp < 0 || vp >= maxVP {
				continue
			}
			if h != host || m == nil {
				if m != nil {
					used[host] = m
				}
				host, m = h, used[h]
				if m == nil {
					np := 1
					if n := c.ByName[h]; n != nil && n.NP > 0 {
						np = n.NP
					}
					m = make(VPJobs, 0, np)
				}
			}
			if vp >= len(m) {
				m = append(m, make(VPJobs, vp+1-len(m))...)
			}
			m[vp] = j.ID
		}
		if m != nil {
			used[host] = m
		}
	}
	return used
}

// Refresh recomputes every node's jobs attribute and job-exclusive bit,
// and the resources_assigned of the server (srv) and of its execution
// queues, from the running jobs.
func (c Cluster) Refresh(srv *state.Attrs, queues []*state.Queue) {
	c.refreshAssigned(srv, queues)
	used := c.UsedVPs()
	var buf []byte
	for _, n := range c.Nodes {
		buf = buf[:0]
		count := 0
		for vp, id := range used[n.Name] {
			if id == "" {
				continue
			}
			if count > 0 {
				buf = append(buf, ", "...)
			}
			buf = strconv.AppendInt(buf, int64(vp), 10)
			buf = append(buf, '/')
			buf = append(buf, id...)
			count++
		}
		if string(buf) != n.Attrs.Get(pbsattr.NodeJobs) {
			n.Attrs.Set(pbsattr.NodeJobs, string(buf))
		}
		if count >= n.NP && n.NP > 0 {
			n.State |= state.NodeStateJobExclusive
		} else {
			n.State &^= state.NodeStateJobExclusive
		}
	}
}

// assignedResources are the job resources summed into the server's and
// the queues' resources_assigned while jobs run (spec 04 §9).
var assignedResources = []string{"mem", "ncpus", "nodect", "vmem"}

// refreshAssigned recomputes resources_assigned of the server and of
// every execution queue from the running jobs. A resource once assigned
// stays listed (with 0) after its jobs end, as TORQUE shows it. Called
// with the server's lock held.
func (c Cluster) refreshAssigned(srv *state.Attrs, queues []*state.Queue) {
	type sums map[string]int64
	total := sums{}
	perQueue := map[*state.Queue]sums{}
	for _, j := range c.Jobs.Holding() {
		if j.State != pbsattr.StateRunning && j.State != pbsattr.StateExiting || j.Queue == nil {
			continue
		}
		q := perQueue[j.Queue]
		if q == nil {
			q = sums{}
			perQueue[j.Queue] = q
		}
		for _, r := range assignedResources {
			v, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, r)
			if !ok {
				continue
			}
			n, ok := resourceAmount(r, v)
			if !ok {
				continue
			}
			total[r] += n
			q[r] += n
		}
	}
	apply := func(l *state.Attrs, idx int, m sums) {
		for _, r := range assignedResources {
			n, ok := m[r]
			if _, had := l.LookupRes(idx, r); !ok && !had {
				continue
			}
			l.SetRes(idx, r, formatAmount(r, n))
		}
	}
	apply(srv, pbsattr.SrvResourcesAssigned, total)
	for _, q := range queues {
		if q.IsExec() {
			apply(&q.Attrs, pbsattr.QueueResourcesAssigned, perQueue[q])
		}
	}
}

// resourceAmount parses an assigned resource: a count, or a size in
// bytes for mem and vmem.
func resourceAmount(res, v string) (int64, bool) {
	if res == "mem" || res == "vmem" {
		return state.SizeBytes(v)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// formatAmount formats a sum of resourceAmount values: sizes in kb when
// whole kilobytes, else in bytes ("0b").
func formatAmount(res string, n int64) string {
	if res != "mem" && res != "vmem" {
		return strconv.FormatInt(n, 10)
	}
	if n != 0 && n%1024 == 0 {
		return strconv.FormatInt(n/1024, 10) + "kb"
	}
	return strconv.FormatInt(n, 10) + "b"
}

// Allocate chooses VPs for job j from a node specification (dest if
// given, else neednodes, nodes or default_node) among the nodes usable
// accepts (all if nil: a scheduler's slice, the reservations) and
// returns the exec_host slots, or an error reply (spec 12 §9.3). It
// changes nothing.
func (c Cluster) Allocate(j *state.Job, dest string, usable func(*state.Node) bool) ([]state.Slot, *batchreq.Reply) {
	if len(c.Nodes) == 0 {
		return []state.Slot{{Host: c.Server, VP: 0}}, nil
	}
	spec := dest
	if spec == "" {
		spec = j.Attrs.GetRes(pbsattr.JobResourceList, "neednodes")
	}
	if spec == "" {
		spec = j.Attrs.GetRes(pbsattr.JobResourceList, "nodes")
	}
	if spec == "" {
		spec = c.DefaultNode
	}
	if spec == "" {
		spec = nodespec.Default
	}
	elems, ok := nodespec.Parse(spec, func(n string) bool { return c.ByName[n] != nil })
	if !ok {
		return nil, batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", "")
	}
	used := c.UsedVPs()
	taken := map[string]bool{}
	var out []state.Slot
	for _, e := range elems {
		var group []state.Slot
		for k := 0; k < e.Count; k++ {
			var pick *state.Node
			var free []int
			for _, n := range c.Nodes {
				if taken[n.Name] || usable != nil && !usable(n) || !eligible(n, e) {
					continue
				}
				f := FreeVPs(n, used[n.Name])
				if len(f) < e.PPN {
					continue
				}
				pick, free = n, f
				break
			}
			if pick == nil {
				return nil, batchreq.ErrorReply(batchreq.PBSE_RESCUNAV, "", "")
			}
			taken[pick.Name] = true
			for _, vp := range free[:e.PPN] {
				group = append(group, state.Slot{Host: pick.Name, VP: vp})
			}
		}
		// most recently allocated first within an element
		for i := len(group) - 1; i >= 0; i-- {
			out = append(out, group[i])
		}
	}
	return out, nil
}

// eligible reports whether node n may serve element e.
// It is nodespec.Offers restricted to nodes in a usable state.
func eligible(n *state.Node, e nodespec.Element) bool {
	if n.State&(state.NodeStateDown|state.NodeStateOffline|state.NodeStateNotReported|state.NodeStateUnknown|state.NodeStateReserve) != 0 {
		return false
	}
	return nodespec.Offers(n, e)
}

// FreeVPs returns the VPs of node n that no job holds (used: its
// UsedVPs entry).
func FreeVPs(n *state.Node, used VPJobs) []int {
	var out []int
	for vp := 0; vp < n.NP; vp++ {
		if vp >= len(used) || used[vp] == "" {
			out = append(out, vp)
		}
	}
	return out
}
