package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/nodespec"
	"gopbs/server/state"
)

// vpSlot is one allocated virtual processor.
type vpSlot = state.Slot

// holdsNodes reports whether a job's exec_host VPs count as in use.
func (s *Server) holdsNodes(j *state.Job) bool {
	if j.State != pbsattr.StateRunning && j.State != pbsattr.StateExiting {
		return false
	}
	return !s.run.Suspended(j.ID)
}

// vpJobs lists the jobs holding one node's VPs: index VP, value the job
// id ("" for a free VP).
type vpJobs []string

// maxVP bounds the VP indexes usedVPs records: exec_host values come
// from allocate, so larger (or negative) ones can only be damaged data,
// which must not make it allocate without bound.
const maxVP = 1 << 16

// usedVPs returns, per node name, the jobs holding its VPs, for every
// job holding nodes. It walks only the Running/Exiting jobs, parses
// exec_host in place and looks each host up once per run of slots on it.
// Called with s.mu held.
func (s *Server) usedVPs() map[string]vpJobs {
	used := make(map[string]vpJobs, len(s.nodes))
	for _, j := range s.jobs.Holding() {
		if !s.holdsNodes(j) {
			continue
		}
		var host string
		var m vpJobs
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
					if n := s.nodeByName[h]; n != nil && n.NP > 0 {
						np = n.NP
					}
					m = make(vpJobs, 0, np)
				}
			}
			if vp >= len(m) {
				m = append(m, make(vpJobs, vp+1-len(m))...)
			}
			m[vp] = j.ID
		}
		if m != nil {
			used[host] = m
		}
	}
	return used
}

// refreshNodeJobs recomputes every node's jobs attribute and
// job-exclusive bit, and resources_assigned, from the running jobs.
// Called with s.mu held.
func (s *Server) refreshNodeJobs() {
	s.refreshAssigned()
	used := s.usedVPs()
	var buf []byte
	for _, n := range s.nodes {
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
// with s.mu held.
func (s *Server) refreshAssigned() {
	type sums map[string]int64
	total := sums{}
	perQueue := map[*state.Queue]sums{}
	for _, j := range s.jobs.Holding() {
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
	apply(&s.attrs, pbsattr.SrvResourcesAssigned, total)
	for _, q := range s.queues {
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

// allocate chooses VPs for job j from a node specification (dest if
// given, else neednodes, nodes or default_node) and returns the
// exec_host slots, or an error reply (spec 12 §9.3). Called with s.mu
// held; it changes nothing.
func (s *Server) allocate(j *state.Job, dest string) ([]vpSlot, *batchreq.Reply) {
	return s.allocateIn(j, dest, nil)
}

// allocateIn is allocate over the nodes usable accepts (all if nil): a
// scheduler's slice (sched_objects.go).
func (s *Server) allocateIn(j *state.Job, dest string, usable func(*state.Node) bool) ([]vpSlot, *batchreq.Reply) {
	if len(s.nodes) == 0 {
		return []vpSlot{{Host: s.name, VP: 0}}, nil
	}
	spec := dest
	if spec == "" {
		spec = j.Attrs.GetRes(pbsattr.JobResourceList, "neednodes")
	}
	if spec == "" {
		spec = j.Attrs.GetRes(pbsattr.JobResourceList, "nodes")
	}
	if spec == "" {
		spec = s.attrs.Get(pbsattr.SrvDefaultNode)
	}
	if spec == "" {
		spec = nodespec.Default
	}
	elems, ok := nodespec.Parse(spec, func(n string) bool { return s.nodeByName[n] != nil })
	if !ok {
		return nil, batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", "")
	}
	used := s.usedVPs()
	taken := map[string]bool{}
	var out []vpSlot
	for _, e := range elems {
		var group []vpSlot
		for k := 0; k < e.Count; k++ {
			var pick *state.Node
			var free []int
			for _, n := range s.nodes {
				if taken[n.Name] || usable != nil && !usable(n) || !s.eligible(n, e) {
					continue
				}
				f := freeVPs(n, used[n.Name])
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
				group = append(group, vpSlot{Host: pick.Name, VP: vp})
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
func (s *Server) eligible(n *state.Node, e nodespec.Element) bool {
	if n.State&(state.NodeStateDown|state.NodeStateOffline|state.NodeStateNotReported|state.NodeStateUnknown|state.NodeStateReserve) != 0 {
		return false
	}
	return nodespec.Offers(n, e)
}

func freeVPs(n *state.Node, used vpJobs) []int {
	var out []int
	for vp := 0; vp < n.NP; vp++ {
		if vp >= len(used) || used[vp] == "" {
			out = append(out, vp)
		}
	}
	return out
}

// handleRescQuery answers pbs_rescquery: for nodes=<spec> whether the
// specification could be satisfied now (1), later (0) or never (-1)
// (spec 12 §10.2).
func (s *Server) handleRescQuery(c *handler.Conn, req *batchreq.Request) {
	body, ok := req.Body.(*batchreq.Resc)
	if !ok {
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	var r batchreq.RescQueryReply
	s.mu.RLock()
	for _, q := range body.Queries {
		avail, alloc := 0, 0
		if spec, ok := strings.CutPrefix(q, "nodes="); ok {
			probe := &state.Job{}
			if _, bad := s.allocate(probe, spec); bad == nil {
				avail = 1
			} else if !s.admission.Satisfiable(spec) {
				avail = -1
			}
		}
		r.Avail = append(r.Avail, avail)
		r.Alloc = append(r.Alloc, alloc)
		r.Resvd = append(r.Resvd, 0)
		r.Down = append(r.Down, 0)
	}
	s.mu.RUnlock()
	c.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_RescQuery, Resc: r})
}
