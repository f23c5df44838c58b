package momd

import (
	"strings"

	"gopbs/internal/logline"
	"gopbs/mom/cgroup"
	"gopbs/mom/config"
	"gopbs/mom/momlog"
)

// SetupCgroups prepares the directory under which each job gets a cgroup
// of its own ($cgroup_root, default the pbs_mom directory at the top of
// the cgroup v2 hierarchy) and logs how limits will be enforced. It
// returns nil, saying why in the log, where jobs run without cgroups:
// $cgroup_root off, no cgroup v2 hierarchy, a hierarchy this MOM cannot
// write (not root, read-only) or a kernel that cannot start a process in
// a cgroup.
func SetupCgroups(log *momlog.Logger, cfg *config.Config) *cgroup.Root {
	note := func(text string) { log.Record(logline.EventSystem, momlog.ClassServer, "cgroups", text) }
	memNote := func(byCgroup bool) {
		switch {
		case cfg.IgnMem:
			note("mem limits ignored ($ignmem)")
		case cfg.EnforceMem == config.EnforceOff:
			note("mem limits are rlimits only ($enforce mem off)")
		case byCgroup:
			note("mem limits enforced by the job cgroup's memory.max")
		default:
			if cfg.EnforceMem == config.EnforceCgroup {
				log.Record(logline.EventError, momlog.ClassServer, "cgroups", "$enforce mem cgroup: no memory controller for job cgroups; mem limits enforced by polling")
			}
			note("mem limits enforced by polling")
		}
	}
	if cfg.CgroupRoot == config.CgroupRootOff {
		note("jobs run without cgroups ($cgroup_root off)")
		memNote(false)
		return nil
	}
	mount, err := cgroup.Mount()
	if err == nil {
		var root *cgroup.Root
		if root, err = cgroup.Setup(mount, cfg.CgroupRoot); err == nil {
			if err = root.Probe(); err == nil {
				note("job cgroups in " + root.Dir() + " (controllers: " + strings.Join(root.Controllers(), " ") + ")")
				memNote(root.Memory() && cfg.EnforceMem != config.EnforcePoll)
				return root
			}
		}
	}
	note("jobs run without cgroups: " + err.Error())
	memNote(false)
	return nil
}
