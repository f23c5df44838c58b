package server

import (
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/alloc"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// cluster is the node and job tables as node allocation (server/alloc)
// reads them. Called with s.mu held.
func (s *Server) cluster() alloc.Cluster {
	return alloc.Cluster{Nodes: s.nodes, ByName: s.nodeByName, Jobs: &s.jobs, Suspended: s.run.Suspended,
		Server: s.name, DefaultNode: s.attrs.Get(pbsattr.SrvDefaultNode)}
}

// refreshNodeJobs recomputes every node's jobs attribute and
// job-exclusive bit, and resources_assigned, from the running jobs
// (alloc.Cluster.Refresh). Called with s.mu held.
func (s *Server) refreshNodeJobs() { s.cluster().Refresh(&s.attrs, s.queues) }

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
			if _, bad := s.cluster().Allocate(probe, spec, nil); bad == nil {
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
