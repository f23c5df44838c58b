// Package admit holds the rules a job meets to enter a queue of the
// server (spec 12 §4.3): the queue's admission checks (Checker.Admit),
// the feasibility of its node request against the configured nodes
// (feasible.go), the user it runs as and who may run as root
// (execuser.go), and the defaults it takes in a queue (defaults.go).
// Submission, moves and routing call them, through the narrow interfaces
// of their own packages, over the state API; admission reads the server
// through State and changes nothing but the job it is given defaults.
package admit

import (
	"slices"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// State is the server as admission reads it, with the server's lock
// held.
type State interface {
	// Attrs returns the server's attributes.
	Attrs() state.Attrs
	// Nodes returns the node table, in its order.
	Nodes() []*state.Node
	// Node returns the node named name, or nil.
	Node(name string) *state.Node
}

// Checker runs the admission rules over one server's state. Its methods
// are called with the server's lock held.
type Checker struct{ st State }

// New returns the Checker over st.
func New(st State) *Checker { return &Checker{st: st} }

// Admit runs the queue admission checks (spec 12 §4.3) for job j
// submitted from host into q. A manager's move (mgrMove) skips the
// enabled and host checks.
func (c *Checker) Admit(j *state.Job, q *state.Queue, host string, mgrMove bool) *batchreq.Reply {
	return c.admit(j, q, host, mgrMove, false)
}

// AdmitRouted is Admit for a job a route queue moves into q: the host and
// manager checks do not apply and from_route_only queues accept it.
func (c *Checker) AdmitRouted(j *state.Job, q *state.Queue) *batchreq.Reply {
	return c.admit(j, q, "", false, true)
}

func (c *Checker) admit(j *state.Job, q *state.Queue, host string, mgrMove, routed bool) *batchreq.Reply {
	srv := c.st.Attrs()
	who := "user " + j.Owner() + ", queue " + q.Name
	if q.IsExec() {
		if p := c.CheckRoot(j); p != nil {
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
			if pbsattr.MatchHostEntry(h, host) {
				ok = true
			}
		}
		if !ok {
			return batchreq.ErrorReply(batchreq.PBSE_BADHOST, "", "host ACL rejected the submitting host: "+who+", host "+host)
		}
	}
	userOK := !state.IsTrue(q.Attrs.Get(pbsattr.QueueACLUserEnable)) || state.MatchUserACL(state.ParseArst(q.Attrs.Get(pbsattr.QueueACLUsers)), j.Owner())
	logicOr := state.IsTrue(q.Attrs.Get(pbsattr.QueueACLLogicOr)) || state.IsTrue(srv.Get(pbsattr.SrvACLLogicOr))
	if q.IsExec() && state.IsTrue(q.Attrs.Get(pbsattr.QueueACLGroupEnable)) {
		groupOK := false
		acl := state.ParseArst(q.Attrs.Get(pbsattr.QueueACLGroups))
		for _, g := range jobGroups(j, state.IsTrue(q.Attrs.Get(pbsattr.QueueACLGroupSloppy)) || state.IsTrue(srv.Get(pbsattr.SrvACLGroupSloppy))) {
			if slices.Contains(acl, g) {
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
			if limit, ok = srv.LookupRes(pbsattr.SrvResourcesMax, r.Resource); !ok {
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
	if q.IsExec() && !c.Feasible(j.Attrs.GetRes(pbsattr.JobResourceList, "nodes")) {
		return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", MsgInfeasible)
	}
	return c.refuseCheckpoints(j, q)
}
