package config

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Problem is a configuration mistake found before start-up, with the fix
// the scheduler suggests.
type Problem struct {
	Text string
	Fix  string
}

func (p *Problem) Error() string {
	if p.Fix == "" {
		return p.Text
	}
	return p.Text + " (suggestion: " + p.Fix + ")"
}

// Problems are all the problems Check found.
type Problems []*Problem

func (ps Problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "; ")
}

// Check looks for the common mistakes of a configuration that parsed: a
// missing submit or batch queue, a queue with two roles, options that
// need others, values out of range, files and directories that are not
// there, a SCHED_HOST that is not this host (isLocal reports whether a
// host name is one of this machine's; nil skips that check). It returns
// nil or Problems.
func Check(c *Config, isLocal func(host string) bool) error {
	var ps Problems
	add := func(fix, format string, args ...any) {
		ps = append(ps, &Problem{Text: fmt.Sprintf(format, args...), Fix: fix})
	}
	if c.SubmitQueue == nil {
		add("add a line 'SUBMIT_QUEUE <queue>' naming the queue jobs are submitted to", "no SUBMIT_QUEUE is configured")
	}
	if len(c.BatchQueues) == 0 {
		add("add a line 'BATCH_QUEUES <queue>[,<queue>...]' naming the execution queues", "no BATCH_QUEUES are configured")
	}
	roles := map[string]string{}
	role := func(q *QueueSpec, r string) {
		if q == nil {
			return
		}
		if prev, ok := roles[q.Queue]; ok {
			add("give each role its own queue", "queue %s is both %s and %s", q.Queue, prev, r)
			return
		}
		roles[q.Queue] = r
	}
	role(c.SubmitQueue, "SUBMIT_QUEUE")
	role(c.SpecialQueue, "SPECIAL_QUEUE")
	role(c.DedicatedQueue, "DEDICATED_QUEUE")
	for i := range c.BatchQueues {
		role(&c.BatchQueues[i], "BATCH_QUEUES")
	}
	for i := range c.ExternalQueues {
		role(&c.ExternalQueues[i], "EXTERNAL_QUEUES")
	}
	if c.EnforcePrimeTime {
		_, hasStart := c.Set["PRIME_TIME_START"]
		_, hasEnd := c.Set["PRIME_TIME_END"]
		switch {
		case !hasStart || !hasEnd:
			add("set PRIME_TIME_START and PRIME_TIME_END (e.g. 08:00:00 and 17:00:00) or turn ENFORCE_PRIME_TIME off",
				"ENFORCE_PRIME_TIME needs PRIME_TIME_START and PRIME_TIME_END")
		case c.PrimeTimeStart >= 24*time.Hour || c.PrimeTimeEnd >= 24*time.Hour:
			add("give the times of day as 00:00:00 to 23:59:59", "PRIME_TIME_START and PRIME_TIME_END must be times of day")
		case c.PrimeTimeStart == c.PrimeTimeEnd:
			add("give prime time a length, or turn ENFORCE_PRIME_TIME off", "PRIME_TIME_START equals PRIME_TIME_END")
		}
		if c.PrimeTimeSmallWalltLimit > 0 && c.PrimeTimeWalltLimit > 0 && c.PrimeTimeSmallWalltLimit > c.PrimeTimeWalltLimit {
			add("make PRIME_TIME_SMALL_WALLT_LIMIT at most PRIME_TIME_WALLT_LIMIT",
				"PRIME_TIME_SMALL_WALLT_LIMIT is longer than PRIME_TIME_WALLT_LIMIT")
		}
	}
	if c.EnforceDedicatedTime {
		if c.DedicatedTimeCommand == "" {
			add("add 'DEDICATED_TIME_COMMAND <path>' or turn ENFORCE_DEDICATED_TIME off", "ENFORCE_DEDICATED_TIME needs DEDICATED_TIME_COMMAND")
		} else if fi, err := os.Stat(c.DedicatedTimeCommand); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			add("install the command or correct the path", "DEDICATED_TIME_COMMAND %s is not an executable file", c.DedicatedTimeCommand)
		}
		if c.SystemName == "" {
			add("add 'SYSTEM_NAME <name>' (the name of this system in the command's output)", "ENFORCE_DEDICATED_TIME needs SYSTEM_NAME")
		}
	} else if c.DedicatedQueue != nil {
		add("set 'ENFORCE_DEDICATED_TIME true' or remove DEDICATED_QUEUE",
			"DEDICATED_QUEUE %s is set but dedicated time is not enforced: its jobs would never run", c.DedicatedQueue.Queue)
	}
	if c.EnforceAllocation {
		if c.SchedAcctDir == "" {
			add("add 'SCHED_ACCT_DIR <directory>' holding the allocations file", "ENFORCE_ALLOCATION needs SCHED_ACCT_DIR")
		}
	}
	if c.SchedAcctDir != "" {
		if fi, err := os.Stat(c.SchedAcctDir); err != nil || !fi.IsDir() {
			add("create the directory or correct the path", "SCHED_ACCT_DIR %s is not a directory", c.SchedAcctDir)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"DECAY_FACTOR", c.DecayFactor}, {"OA_DECAY_FACTOR", c.OADecayFactor}} {
		if f.v <= 0 || f.v > 1 {
			add("use a factor greater than 0 and at most 1 (1 keeps usage forever)", "%s %g is out of range", f.name, f.v)
		}
	}
	if c.MaxJobs > 0 && c.MinJobs > c.MaxJobs {
		add("make MIN_JOBS at most MAX_JOBS", "MIN_JOBS %d is larger than MAX_JOBS %d", c.MinJobs, c.MaxJobs)
	}
	if c.FakeMachineMult < 1 {
		add("use 1 (no multiplication) or more", "FAKE_MACHINE_MULT must be at least 1")
	}
	if _, ok := c.Set["TARGET_LOAD_VARIANCE"]; ok && c.TargetLoadPct == 0 {
		add("set TARGET_LOAD_PCT, or remove TARGET_LOAD_VARIANCE", "TARGET_LOAD_VARIANCE is set without TARGET_LOAD_PCT")
	}
	if c.HighSystime > 100 {
		add("give a percentage of CPU time from 1 to 100", "HIGH_SYSTIME %d is more than 100 percent", c.HighSystime)
	}
	if (c.WalltLimitSmallJob > 0 || c.PrimeTimeSmallWalltLimit > 0) && c.SmallJobMax == 0 && c.PrimeTimeSmallNodeLimit == 0 {
		add("set SMALL_JOB_MAX (the most nodes of a small job)", "a small-job walltime limit is set but no job is small: SMALL_JOB_MAX is 0")
	}
	switch c.SchedRestartAction {
	case "NONE", "RESUBMIT", "RERUN":
	default:
		add("use NONE, RESUBMIT or RERUN", "SCHED_RESTART_ACTION %q is not known", c.SchedRestartAction)
	}
	if c.SchedHost != "" && isLocal != nil && !isLocal(c.SchedHost) {
		add("run the scheduler on "+c.SchedHost+", or correct SCHED_HOST", "SCHED_HOST %s is not this host", c.SchedHost)
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}
