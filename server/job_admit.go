package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// admit runs the queue admission checks (spec 12 §4.3). manager moves skip
// the enabled and host checks.
func (s *Server) admit(j *state.Job, q *state.Queue, host string, mgrMove bool) *batchreq.Reply {
	return s.admitFrom(j, q, host, mgrMove, false)
}

// admitFrom is admit for a job coming from a route queue when routed is
// set (from_route_only queues accept it).
func (s *Server) admitFrom(j *state.Job, q *state.Queue, host string, mgrMove, routed bool) *batchreq.Reply {
	who := "user " + j.Owner() + ", queue " + q.Name
	if q.IsExec() {
		if p := s.checkRoot(j); p != nil {
			return p
		}
		for _, t := range state.ParseArst(q.Attrs.Get(pbsattr.QueueDisallowedTypes)) {
			var code int
			var what string
			switch t {
			case "interactive":
				if j.Attrs.Has(pbsattr.JobInteractive) {
					code, what = batchreq.PBSE_NOINTERACTIVE, "interactive job is not allowed for queue: "
				}
			case "batch":
				if !j.Attrs.Has(pbsattr.JobInteractive) {
					code, what = batchreq.PBSE_NOBATCH, "batch job is not allowed for queue: "
				}
			case "rerunable":
				if state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)) {
					code, what = batchreq.PBSE_NORERUNABLE, "rerunable job is not allowed for queue: "
				}
			case "nonrerunable":
				if !state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)) {
					code, what = batchreq.PBSE_NONONRERUNABLE, "only rerunable jobs are allowed for queue: "
				}
			case "fault_tolerant":
				if state.IsTrue(j.Attrs.Get(pbsattr.JobFaultTolerant)) {
					code, what = batchreq.PBSE_NOFAULTTOLERANT, "fault_tolerant jobs are not allowed for queue: "
				}
			case "fault_intolerant":
				if !state.IsTrue(j.Attrs.Get(pbsattr.JobFaultTolerant)) {
					code, what = batchreq.PBSE_NOFAULTINTOLERANT, "only fault_tolerant jobs are allowed for queue: "
				}
			case "job_array":
				if j.Array != nil {
					code, what = batchreq.PBSE_NOJOBARRAYS, "job arrays are not allowed for queue: "
				}
			}
			if code != 0 {
				return batchreq.ErrorReply(code, "", what+who)
			}
		}
	}
	if !mgrMove && !state.IsTrue(q.Attrs.Get(pbsattr.QueueEnabled)) {
		return batchreq.ErrorReply(batchreq.PBSE_QUNOENB, "", "queue is disabled: "+who)
	}
	if max, ok := q.Long(pbsattr.QueueMaxQueuable); ok {
		extra := 0
		if j.Array != nil {
			if subs, _, ok := state.ParseArrayRequest(j.Array.Request); ok {
				extra = len(subs) - 1
			}
		}
		if int64(q.Active()+extra) >= max {
			return batchreq.ErrorReply(batchreq.PBSE_MAXQUED, "", "total number of jobs in queue exceeds the queue limit: "+who)
		}
	}
	if max, ok := q.Long(pbsattr.QueueMaxUserQueuable); ok {
		if int64(q.Users[j.OwnerUser()]) >= max {
			return batchreq.ErrorReply(batchreq.PBSE_MAXUSERQUED, "", "total number of current user's jobs exceeds the queue limit: "+who)
		}
	}
	if state.IsTrue(q.Attrs.Get(pbsattr.QueueFromRouteOnly)) && !mgrMove && !routed {
		return batchreq.ErrorReply(batchreq.PBSE_QACESS, "", "queue accepts only routed jobs, no direct submission: "+who)
	}
	if !mgrMove && state.IsTrue(q.Attrs.Get(pbsattr.QueueACLHostEnable)) {
		ok := false
		for _, h := range state.ParseArst(q.Attrs.Get(pbsattr.QueueACLHosts)) {
			if hostMatch(h, host) {
				ok = true
			}
		}
		if !ok {
			return batchreq.ErrorReply(batchreq.PBSE_BADHOST, "", "host ACL rejected the submitting host: "+who+", host "+host)
		}
	}
	userOK := !state.IsTrue(q.Attrs.Get(pbsattr.QueueACLUserEnable)) || aclMatchUser(state.ParseArst(q.Attrs.Get(pbsattr.QueueACLUsers)), j.Owner())
	logicOr := state.IsTrue(q.Attrs.Get(pbsattr.QueueACLLogicOr)) || s.serverFlag(pbsattr.SrvACLLogicOr)
	if q.IsExec() && state.IsTrue(q.Attrs.Get(pbsattr.QueueACLGroupEnable)) {
		groupOK := false
		acl := state.ParseArst(q.Attrs.Get(pbsattr.QueueACLGroups))
		for _, g := range jobGroups(j, state.IsTrue(q.Attrs.Get(pbsattr.QueueACLGroupSloppy)) || s.serverFlag(pbsattr.SrvACLGroupSloppy)) {
			if contains(acl, g) {
				groupOK = true
				break
			}
		}
		switch {
		case groupOK || logicOr && state.IsTrue(q.Attrs.Get(pbsattr.QueueACLUserEnable)) && userOK:
		case logicOr && !userOK:
			return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "both user and group ACL rejected the submitting user: "+who)
		default:
			return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "group ACL is not satisfied: "+who)
		}
	} else if !userOK {
		return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "user ACL rejected the submitting user: "+who)
	}
	// resources_min / resources_max (queue, then server for max)
	for _, r := range q.Attrs.Resources(pbsattr.QueueResourcesMin) {
		jv, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, r.Resource)
		if !ok {
			continue
		}
		if c, ok := state.CompareResource(state.Resources[r.Resource].Type, jv, r.Value); ok && c < 0 {
			return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "cannot satisfy queue min "+r.Resource+" requirement")
		}
	}
	for _, r := range j.Attrs.Resources(pbsattr.JobResourceList) {
		limit, ok := q.Attrs.LookupRes(pbsattr.QueueResourcesMax, r.Resource)
		where := "queue"
		if !ok {
			if limit, ok = s.attrs.LookupRes(pbsattr.SrvResourcesMax, r.Resource); !ok {
				continue
			}
			where = "server"
		}
		if c, ok := state.CompareResource(state.Resources[r.Resource].Type, r.Value, limit); ok && c > 0 {
			return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "cannot satisfy "+where+" max "+r.Resource+" requirement")
		}
	}
	// a node request the configured nodes can never satisfy (busy or
	// down nodes do not count against it)
	if q.IsExec() && !s.feasible(j.Attrs.GetRes(pbsattr.JobResourceList, "nodes")) {
		return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", msgInfeasible)
	}
	return s.refuseCheckpoints(j, q)
}

// aclMatchUser reports whether user@host matches an entry of a user ACL
// (state.MatchUserACL).
func aclMatchUser(acl []string, who string) bool { return state.MatchUserACL(acl, who) }

// hostMatch reports whether host matches a host ACL entry: the same name
// without regard to case, or a pattern with '*' wildcards
// (attr.MatchHostEntry).
func hostMatch(pattern, host string) bool { return pbsattr.MatchHostEntry(pattern, host) }
