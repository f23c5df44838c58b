package admit

import (
	"os/user"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// The defaults a job gets in a queue (at its submission, a move or
// routing), and the groups of the group ACL (admit.go).

// jobGroups returns the groups a job runs under for the group ACL: the
// group_list entry, else the owner's primary group, plus (sloppy) every
// group the owner belongs to.
func jobGroups(j *state.Job, sloppy bool) []string {
	var out []string
	if l := state.ParseArst(j.Attrs.Get(pbsattr.JobGroupList)); len(l) > 0 {
		g, _, _ := strings.Cut(l[0], "@")
		out = append(out, g)
	} else if u, err := user.Lookup(j.OwnerUser()); err == nil {
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			out = append(out, g.Name)
		}
	}
	if sloppy {
		if u, err := user.Lookup(j.OwnerUser()); err == nil {
			if ids, err := u.GroupIds(); err == nil {
				for _, id := range ids {
					if g, err := user.LookupGroupId(id); err == nil {
						out = append(out, g.Name)
					}
				}
			}
		}
	}
	return out
}

// ApplyDefaults fills unset resources in seed 001's order (Resource
// Limits): the queue's resources_default, the server's resources_default,
// then, for the limits a MOM enforces (limitResources), the queue's
// resources_max and the server's resources_max; it derives
// nodect/neednodes from nodes. TORQUE 2.5.13 stopped after the server's
// resources_default (README, deliberate differences).
func (c *Checker) ApplyDefaults(j *state.Job, q *state.Queue) {
	srv := c.st.Attrs()
	applyCheckpointDefaults(j, q)
	fill := func(list []state.AttrValue, limitsOnly bool) {
		for _, r := range list {
			if limitsOnly && !limitResources[r.Resource] {
				continue
			}
			if _, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, r.Resource); !ok {
				j.Attrs.SetRes(pbsattr.JobResourceList, r.Resource, r.Value)
			}
		}
	}
	fill(q.Attrs.Resources(pbsattr.QueueResourcesDefault), false)
	fill(srv.Resources(pbsattr.SrvResourcesDefault), false)
	fill(q.Attrs.Resources(pbsattr.QueueResourcesMax), true)
	fill(srv.Resources(pbsattr.SrvResourcesMax), true)
	if n, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, "nodes"); ok {
		j.Attrs.SetRes(pbsattr.JobResourceList, "nodect", strconv.Itoa(state.NodeCount(n)))
		j.Attrs.SetRes(pbsattr.JobResourceList, "neednodes", n)
	}
}

// limitResources are the usage limits a MOM enforces (spec 11 §7, §9):
// the resources whose resources_max is also their default. A maximum of
// anything else (nodes, ncpus, ...) is no amount to give every job.
var limitResources = map[string]bool{
	"cput": true, "pcput": true, "walltime": true, "mem": true, "pmem": true,
	"vmem": true, "pvmem": true, "file": true,
}
