package jobexec

import (
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/mom/config"
	"gopbs/mom/resc"
)

// limitSet is what spec 11 §7 derives from Resource_List: the rlimits applied
// at start, the nice value, and the limits enforced by polling.
type limitSet struct {
	rlimits []Rlimit
	nice    int

	// Enforced by the monitor (0 = none).
	walltime int64  // seconds
	cput     int64  // seconds
	pcput    int64  // seconds
	mem      uint64 // bytes (job total rss or the cgroup's memory.max)
	pmem     uint64 // bytes per process rss
	vmem     uint64 // bytes (job total vsize)
	pvmem    uint64 // bytes per process vsize
}

// computeLimits evaluates the job's Resource_List. nodeCount is the number
// of distinct hosts in exec_host.
func (e *Engine) computeLimits(j *Job, nodeCount int) (limitSet, error) {
	var ls limitSet
	size := func(name, v string) (uint64, error) {
		n, err := resc.ParseSize(v)
		if err != nil {
			return 0, fmt.Errorf("resource %s: %w", name, err)
		}
		return n, nil
	}
	secs := func(name, v string) (int64, error) {
		n, err := resc.ParseTime(v)
		if err != nil {
			return 0, fmt.Errorf("resource %s: %w", name, err)
		}
		return n, nil
	}
	var memLimit, vmLimit uint64
	for _, r := range j.Resources {
		var err error
		switch r.Name {
		case "pcput":
			var n int64
			if n, err = secs(r.Name, r.Value); err == nil && !e.conf().IgnCput {
				ls.pcput = n
				// The poll kills the job whose process passes
				// pcput and says why; the kernel's RLIMIT_CPU,
				// two poll intervals later, only stops a process
				// that outlives the poll (TORQUE set it at pcput
				// itself, which killed the process alone, spec
				// 11 §7).
				lim := uint64(float64(n)/e.conf().CputMult) + uint64(2*e.opt.PollInterval/time.Second)
				ls.rlimits = append(ls.rlimits, Rlimit{Resource: unix.RLIMIT_CPU, Cur: lim, Max: lim})
			}
		case "cput":
			var n int64
			if n, err = secs(r.Name, r.Value); err == nil && !e.conf().IgnCput {
				ls.cput = n
			}
		case "walltime":
			var n int64
			if n, err = secs(r.Name, r.Value); err == nil && !e.conf().IgnWalltime {
				ls.walltime = n
			}
		case "file":
			var n uint64
			if n, err = size(r.Name, r.Value); err == nil {
				ls.rlimits = append(ls.rlimits, Rlimit{Resource: unix.RLIMIT_FSIZE, Cur: n, Max: n})
			}
		case "pmem", "mem":
			var n uint64
			if n, err = size(r.Name, r.Value); err != nil || e.conf().IgnMem {
				break
			}
			if r.Name == "mem" {
				ls.mem = n
				if nodeCount > 1 {
					break
				}
			} else {
				ls.pmem = n
			}
			if memLimit == 0 || n < memLimit {
				memLimit = n
			}
		case "vmem", "pvmem":
			var n uint64
			if n, err = size(r.Name, r.Value); err != nil || e.conf().IgnVmem {
				break
			}
			if r.Name == "vmem" {
				ls.vmem = n
			} else {
				ls.pvmem = n
			}
			if vmLimit == 0 || n < vmLimit {
				vmLimit = n
			}
		case "nice":
			ls.nice, err = strconv.Atoi(r.Value)
			if err != nil {
				err = fmt.Errorf("resource nice: bad value %q", r.Value)
			}
		}
		if err != nil {
			return ls, err
		}
	}
	// With mem/vmem enforced by the cgroup or the poll, a job over its
	// limit is killed and told why; TORQUE's rlimits would make its
	// allocations fail first (captures 97, 98), so they are set only
	// with "$enforce mem off" / "$enforce vmem off".
	if memLimit > 0 && e.conf().EnforceMem == config.EnforceOff {
		ls.rlimits = append(ls.rlimits,
			Rlimit{Resource: unix.RLIMIT_DATA, Cur: memLimit, Max: memLimit},
			Rlimit{Resource: unix.RLIMIT_RSS, Cur: memLimit, Max: memLimit})
	}
	if vmLimit > 0 && e.conf().EnforceVmem == config.EnforceOff {
		as := vmLimit
		if memLimit > 0 && e.conf().EnforceMem == config.EnforceOff {
			var stack unix.Rlimit
			if unix.Getrlimit(unix.RLIMIT_STACK, &stack) == nil && stack.Cur != unix.RLIM_INFINITY {
				if m := memLimit + stack.Cur; m > as {
					as = m
				}
			}
		}
		ls.rlimits = append(ls.rlimits, Rlimit{Resource: unix.RLIMIT_AS, Cur: as, Max: as})
	}
	return ls, nil
}
