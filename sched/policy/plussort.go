package policy

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"gopbs/sched/config"
	"gopbs/sched/placement"
	"gopbs/sched/world"
)

// plusLess returns the job ordering of a PluS JobSortKey list outside the
// seed's §3.3 table (seed 002 §3.2): the keys in turn, the first deciding
// first; jobs equal under every key keep the server's order.
func plusLess(p *config.PluS, keys []config.JobSortKey) func(a, b *world.Job) bool {
	return func(a, b *world.Job) bool {
		for _, k := range keys {
			if r := plusCompare(p, k, a, b); r != 0 {
				return r < 0
			}
		}
		return false
	}
}

// plusCompare returns <0 when a sorts before b under the PluS key k.
func plusCompare(p *config.PluS, k config.JobSortKey, a, b *world.Job) int {
	switch k {
	case config.JobPriority:
		return cmp.Compare(b.Priority, a.Priority)
	case config.SubmitTime:
		return a.QTime.Compare(b.QTime)
	case config.LeastCPURequested:
		return cmp.Compare(cpusRequested(a), cpusRequested(b))
	case config.MostCPURequested:
		return cmp.Compare(cpusRequested(b), cpusRequested(a))
	case config.LeastNodeRequested:
		return cmp.Compare(nodesRequested(a), nodesRequested(b))
	case config.MostNodeRequested:
		return cmp.Compare(nodesRequested(b), nodesRequested(a))
	case config.LeastTimeRequested:
		return cmp.Compare(timeRequested(a), timeRequested(b))
	case config.MostTimeRequested:
		return cmp.Compare(timeRequested(b), timeRequested(a))
	case config.OwnersName:
		return cmp.Compare(rank(p.OwnersOrder, ownerName(a), strings.EqualFold), rank(p.OwnersOrder, ownerName(b), strings.EqualFold))
	case config.OwnersGroup:
		return cmp.Compare(rank(p.GroupsOrder, a.Group, strings.EqualFold), rank(p.GroupsOrder, b.Group, strings.EqualFold))
	case config.OwnersHost:
		return cmp.Compare(rank(p.HostsOrder, ownerHost(a), inDomain), rank(p.HostsOrder, ownerHost(b), inDomain))
	}
	return 0
}

// requestSpec parses the job's node specification (neednodes, else
// nodes), reporting false when it has none or it does not parse.
func requestSpec(j *world.Job) (placement.Spec, bool) {
	s := j.NeedNodes
	if s == "" {
		s = j.Nodes
	}
	if s == "" {
		return placement.Spec{}, false
	}
	spec, err := placement.ParseSpec(s, nil)
	return spec, err == nil
}

// cpusRequested is the job's ncpus, else the processors of its node
// specification, else 1.
func cpusRequested(j *world.Job) int64 {
	if j.NCPUs > 0 {
		return j.NCPUs
	}
	if spec, ok := requestSpec(j); ok && spec.Procs() > 0 {
		return int64(spec.Procs())
	}
	return 1
}

// nodesRequested is the number of nodes of the job's node specification
// (or its nodect), else 1.
func nodesRequested(j *world.Job) int64 {
	if spec, ok := requestSpec(j); ok && spec.Nodes() > 0 {
		return int64(spec.Nodes())
	}
	if j.NodeCt > 0 {
		return j.NodeCt
	}
	return 1
}

// timeRequested is the job's walltime; a job without one counts as the
// longest, since nothing bounds it.
func timeRequested(j *world.Job) int64 {
	if j.Walltime < 0 {
		return math.MaxInt64
	}
	return int64(j.Walltime)
}

// ownerName is the user of Job_Owner, or euser where it is not reported.
func ownerName(j *world.Job) string {
	if user, _, ok := strings.Cut(j.Owner, "@"); ok && user != "" {
		return user
	}
	return j.User
}

// ownerHost is the host of Job_Owner ("" if unknown).
func ownerHost(j *world.Job) string {
	_, host, _ := strings.Cut(j.Owner, "@")
	return host
}

// inDomain reports whether host is the domain entry or a host in it
// (HostsOrder lists domains such as apgrid.org).
func inDomain(entry, host string) bool {
	host, entry = strings.ToLower(host), strings.ToLower(entry)
	return host == entry || strings.HasSuffix(host, "."+entry)
}

// rank is the position of the first entry of order that value matches;
// a value no entry matches comes after all of them.
func rank(order []string, value string, match func(entry, value string) bool) int {
	if i := slices.IndexFunc(order, func(e string) bool { return match(e, value) }); i >= 0 {
		return i
	}
	return len(order)
}
