package nas

import (
	"time"

	"gopbs/sched/placement"
	"gopbs/sched/world"
)

// isPrime reports whether t is in prime time: a weekday (Monday to
// Friday) between PRIME_TIME_START and PRIME_TIME_END (a window whose
// end is before its start spans midnight).
func (c *cycle) isPrime(t time.Time) bool {
	t = t.In(c.loc)
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	cfg := c.s.Config
	tod := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second
	if cfg.PrimeTimeStart <= cfg.PrimeTimeEnd {
		return tod >= cfg.PrimeTimeStart && tod < cfg.PrimeTimeEnd
	}
	return tod >= cfg.PrimeTimeStart || tod < cfg.PrimeTimeEnd
}

// nextPrimeStart returns the next start of prime time after t.
func (c *cycle) nextPrimeStart(t time.Time) time.Time {
	t = t.In(c.loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, c.loc)
	start := c.s.Config.PrimeTimeStart
	for d := 0; d <= 8; d++ {
		at := day.AddDate(0, 0, d)
		cand := time.Date(at.Year(), at.Month(), at.Day(), int(start/time.Hour), int(start%time.Hour/time.Minute),
			int(start%time.Minute/time.Second), 0, c.loc)
		if wd := cand.Weekday(); wd != time.Saturday && wd != time.Sunday && cand.After(t) {
			return cand
		}
	}
	return t.AddDate(0, 0, 7)
}

// small reports whether a job is small: at most SMALL_JOB_MAX nodes.
func (c *cycle) small(cd *candidate) bool { return cd.size <= c.s.Config.SmallJobMax }

// illegalSize reports a job whose requested walltime exceeds
// WALLT_LIMIT_SMALL_JOB (jobs of at most SMALL_JOB_MAX nodes) or
// WALLT_LIMIT_LARGE_JOB (larger jobs): it can never run.
func (c *cycle) illegalSize(cd *candidate) bool {
	cfg := c.s.Config
	limit := cfg.WalltLimitLargeJob
	if c.small(cd) {
		limit = cfg.WalltLimitSmallJob
	}
	return limit > 0 && cd.wall > limit
}

// primeLimit returns the walltime limit of a job in prime time (0: none):
// PRIME_TIME_SMALL_WALLT_LIMIT for jobs of at most
// PRIME_TIME_SMALL_NODE_LIMIT nodes, PRIME_TIME_WALLT_LIMIT for the
// others.
func (c *cycle) primeLimit(cd *candidate) time.Duration {
	cfg := c.s.Config
	if cfg.PrimeTimeSmallNodeLimit > 0 && cd.size <= cfg.PrimeTimeSmallNodeLimit && cfg.PrimeTimeSmallWalltLimit > 0 {
		return cfg.PrimeTimeSmallWalltLimit
	}
	return cfg.PrimeTimeWalltLimit
}

// timeChecks apply to every job, special ones included: dedicated time
// (only dedicated-queue jobs run in it, none crosses into it) and prime
// time. It returns the comment and the stage of a failure, or "".
func (c *cycle) timeChecks(cd *candidate) (reason, stage string) {
	cfg := c.s.Config
	end := c.now.Add(cd.wall)
	if cfg.EnforceDedicatedTime {
		switch {
		case c.inDed != nil:
			if !cd.dedicated {
				return CommentInDedicated, "dedicated time"
			}
			if cd.wall == 0 {
				return CommentNoWalltime, "dedicated time"
			}
			if end.After(c.inDed.End) {
				return CommentDedicatedCross, "dedicated time"
			}
			if cfg.MaxDedicatedJobs > 0 && c.running >= cfg.MaxDedicatedJobs {
				return CommentMaxDedicated, "dedicated time"
			}
			return "", ""
		case cd.dedicated:
			return CommentDedicatedOnly, "dedicated time"
		case c.nextDed != nil:
			if cd.wall == 0 {
				return CommentNoWalltime, "dedicated time"
			}
			if end.After(c.nextDed.Start) {
				return CommentDedicatedCross, "dedicated time"
			}
		}
	}
	if cfg.EnforcePrimeTime && !cd.special {
		limit := c.primeLimit(cd)
		if c.prime {
			if limit > 0 && (cd.wall == 0 || cd.wall > limit) {
				return CommentPrimeWallt, "prime time"
			}
		} else if cfg.NonprimeDrainSys && limit > 0 && (cd.wall == 0 || cd.wall > limit) {
			if cd.wall == 0 || end.After(c.nextPrimeStart(c.now)) {
				return CommentNonprimeDrain, "prime time"
			}
		}
	}
	return "", ""
}

// policyChecks are the checks special jobs skip: MAX_JOBS,
// MAX_USER_RUN_JOBS, the load target (unless fewer than MIN_JOBS run)
// and allocations.
func (c *cycle) policyChecks(cd *candidate) (reason, stage string) {
	cfg := c.s.Config
	j := cd.job
	if cfg.MaxJobs > 0 && c.running >= cfg.MaxJobs {
		return CommentMaxJobs, "max jobs"
	}
	if cfg.MaxUserRunJobs > 0 && c.byUser[j.User] >= cfg.MaxUserRunJobs {
		return CommentUserLimit, "user limit"
	}
	if cfg.TargetLoadPct > 0 && c.cpus > 0 && c.running >= cfg.MinJobs {
		pct := c.load / c.cpus * 100
		after := (c.load + float64(cd.size)) / c.cpus * 100
		low := float64(cfg.TargetLoadPct - cfg.TargetLoadVariance.Minus)
		high := float64(cfg.TargetLoadPct + cfg.TargetLoadVariance.Plus)
		if pct >= low && after > high {
			return CommentLoad, "load"
		}
	}
	if cfg.HighSystime > 0 && c.sysNodes > 0 && c.sysTime > float64(cfg.HighSystime) {
		return CommentSystime, "systime"
	}
	if cfg.EnforceAllocation {
		acct := account(j)
		alloc, ok := c.s.Allocations.Of(acct)
		if !ok {
			return CommentNoAllocation + acct, "allocation"
		}
		if c.s.Usage.Accounts[acct]+nodeHours(cd) > alloc {
			return CommentAllocation + acct, "allocation"
		}
	}
	return "", ""
}

// queueChecks decide whether the job can run in queue b now: the queue
// is started, within its run limits, not drained for another waiting
// job, has nodes for it, the cluster has nodes for it, and (for jobs
// that are not special) running it would not fragment the queue.
func (c *cycle) queueChecks(cd *candidate, b *bqueue) (reason, stage string) {
	j, q := cd.job, b.q
	if !q.Started {
		return "Not Running: Queue " + q.Name + " is not started", "queue"
	}
	if q.MaxRunning >= 0 && b.running >= q.MaxRunning {
		return "Not Running: Queue " + q.Name + " job limit has been reached", "queue"
	}
	if q.MaxUserRun >= 0 && b.byUser[j.User] >= q.MaxUserRun {
		return "Not Running: User has reached queue " + q.Name + " running job limit", "queue"
	}
	if !cd.special && b.drainer != "" && b.drainer != j.ID {
		return CommentDrainingPrefix + b.drainer, "waiting job"
	}
	if limit := c.s.Config.HighSystime; limit > 0 && !cd.special {
		if v, ok := c.sysOf[b.spec.Host]; ok && v > float64(limit) {
			return CommentSystimeHostPrefix + b.spec.Host, "systime"
		}
	}
	mult := c.s.Config.FakeMachineMult
	if capacity := b.capacity(mult); capacity >= 0 && b.used+cd.size > capacity {
		return CommentNoRoom, "nodes"
	}
	if c.pool != nil {
		sp, err := c.pool.Parse(c.allocSpec(j))
		if err != nil || c.pool.Query(sp) != placement.Now {
			return CommentNoRoom, "nodes"
		}
	}
	if !cd.special && c.s.Config.AvoidFragmentation && c.fragments(cd, b) {
		return CommentFragment + q.Name, "fragmentation"
	}
	return "", ""
}

// fragments applies the seed's fragmentation heuristic to running job cd
// in queue b; it reports whether the job must not run.
func (c *cycle) fragments(cd *candidate, b *bqueue) bool {
	if b.running == 0 {
		return false // an empty queue: run it, recover later
	}
	capacity := b.capacity(c.s.Config.FakeMachineMult)
	maxRun := b.q.MaxRunning
	if capacity < 0 || maxRun <= 0 {
		return false
	}
	frag := float64(capacity) / float64(maxRun)
	if frag < 2 {
		return false
	}
	size := float64(cd.size)
	if size >= frag {
		return false // it does not fragment the queue itself
	}
	end := c.now.Add(cd.wall)
	beforeEmpty := cd.wall > 0 && !end.After(b.emptyAt)
	if avg := float64(b.used) / float64(b.running); avg < frag && !beforeEmpty {
		return true // already fragmented, and the job would outlast it
	}
	if float64(capacity-b.used)-size < frag && !beforeEmpty {
		return true // the last fragment, past the time the queue empties
	}
	return false
}

// restartAction applies SCHED_RESTART_ACTION to the jobs left queued in
// the batch queues (moved there by a scheduler that stopped before it
// could run them): NONE leaves them, RESUBMIT moves them back to the
// submit queue (where this cycle considers them with the others), RERUN
// runs them where they are. It returns the resubmitted jobs.
func (c *cycle) restartAction() (resubmitted []*world.Job) {
	cfg := c.s.Config
	for _, b := range c.batch {
		for _, j := range b.q.Jobs {
			if j.State != 'Q' {
				continue
			}
			switch {
			case cfg.SchedRestartAction == "RESUBMIT" && cfg.SubmitQueue != nil:
				c.log(j, "SCHED_RESTART_ACTION RESUBMIT: moving the job back to queue "+cfg.SubmitQueue.Queue)
				if cfg.TestOnly {
					continue
				}
				sub := c.queues[cfg.SubmitQueue.Queue]
				if sub == nil {
					continue
				}
				if err := c.act.MoveJob(j, sub.Name); err != nil {
					c.log(j, "move failed: "+err.Error())
					continue
				}
				j.Queue = sub
				resubmitted = append(resubmitted, j)
			case cfg.SchedRestartAction == "RERUN":
				c.log(j, "SCHED_RESTART_ACTION RERUN: running the job in queue "+b.q.Name)
				if cfg.TestOnly {
					continue
				}
				if err := c.act.RunJob(j, ""); err != nil {
					c.log(j, "run failed: "+err.Error())
					continue
				}
				j.State = 'R'
				c.stats.Started++
				c.count(b, j, jobSize(j), c.now)
			default:
				c.log(j, "SCHED_RESTART_ACTION NONE: leaving the job queued in "+b.q.Name)
			}
		}
	}
	return resubmitted
}
