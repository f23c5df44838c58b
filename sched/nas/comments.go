package nas

import (
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/world"
)

// Job comments of the NAS policy. The seed gives one literally, the
// started comment of a special job ("Started on Fri Aug  7 17:24:26 1998
// (special access job)"); the others follow its style.
const (
	// SpecialSuffix ends the started comment of a special-queue job.
	SpecialSuffix = " (special access job)"
	// MessageRejected is the DeleteJob message (mailed to the owner) and
	// the log text for a job that fits no batch queue: the seed's
	// "cannot fit on any queue ... immediately rejected".
	MessageRejected = "Job rejected: it cannot fit on any execution queue"
	// MessageIllegalSize is the DeleteJob message for a job whose
	// walltime exceeds WALLT_LIMIT_SMALL_JOB or WALLT_LIMIT_LARGE_JOB.
	MessageIllegalSize = "Job rejected: its walltime exceeds the limit for jobs of its size"

	CommentMaxJobs   = "Not Running: Maximum number of running jobs reached"
	CommentUserLimit = "Not Running: User has reached the running job limit"
	CommentLoad      = "Not Running: System load is above its target"
	// CommentSystime: the execution hosts spend more than HIGH_SYSTIME
	// percent of their CPU time in system mode; CommentSystimeHostPrefix
	// precedes the exechost of a batch queue that does.
	CommentSystime           = "Not Running: System CPU time is above HIGH_SYSTIME"
	CommentSystimeHostPrefix = "Not Running: System CPU time is above HIGH_SYSTIME on "
	CommentPrimeWallt        = "Not Running: Walltime is over the prime-time limit"
	CommentNonprimeDrain     = "Not Running: Draining system for prime time"
	CommentDedicatedCross    = "Not Running: Job would cross into dedicated time"
	CommentDedicatedOnly     = "Not Running: Dedicated queue jobs run only in dedicated time"
	CommentInDedicated       = "Not Running: System is in dedicated time"
	CommentMaxDedicated      = "Not Running: Maximum number of dedicated-time jobs reached"
	CommentNoWalltime        = "Not Running: Job requests no walltime and dedicated time is scheduled"
	CommentAllocation        = "Not Running: Allocation used up for account "
	CommentNoAllocation      = "Not Running: No allocation for account "
	CommentNoRoom            = "Not Running: Not enough nodes available in the queues it fits"
	CommentFragment          = "Not Running: Job would fragment queue "
	CommentDrainingPrefix    = "Not Running: Draining queue for waiting job "
	CommentDrainingAll       = "Not Running: Draining system for waiting job "
	CommentRunFailedPrefix   = "Not Running - PBS Error: "
	CommentMoveFailed        = "Not Running: Could not move job to queue "
)

// LogJobRun is logged for each started job, as the FIFO policy does.
const LogJobRun = "Job Run"

// MinCommentAge is the seed's MIN_COMMENT_AGE: an optional comment ("Not
// Running: ...") replaces a job's comment only if the job was queued
// since the previous cycle, has no comment, or was last modified at least
// this long ago.
const MinCommentAge = 5 * time.Minute

// startedComment is the comment set before RunJob: "Started on Fri Aug  7
// 17:24:26 1998", with SpecialSuffix for a special-queue job.
func startedComment(t time.Time, special bool) string {
	s := "Started on " + t.Format(time.ANSIC)
	if special {
		s += SpecialSuffix
	}
	return s
}

// comment sets a job's comment. A mandatory comment is sent whenever it
// differs from the job's; an optional one only when lazy commenting
// allows it (see MinCommentAge). Under TEST_ONLY the change is logged
// instead.
func (c *cycle) comment(j *world.Job, text string, optional bool) {
	if j.Comment == text {
		return
	}
	if optional && !c.commentDue(j) {
		return
	}
	if c.s.Config.TestOnly {
		c.log(j, "TEST_ONLY: would set comment: "+text)
		return
	}
	if err := c.act.SetComment(j, text); err != nil {
		return
	}
	j.Comment = text
	c.stats.Comments++
}

// commentDue reports whether an optional comment may replace j's.
func (c *cycle) commentDue(j *world.Job) bool {
	switch {
	case j.Comment == "":
		return true
	case !c.s.lastRun.IsZero() && j.QTime.After(c.s.lastRun):
		return true
	case j.MTime.IsZero():
		return true
	}
	return !c.now.Before(j.MTime.Add(MinCommentAge))
}

// log writes one decision about job j to the scheduler log.
func (c *cycle) log(j *world.Job, text string) {
	if c.s.Log != nil {
		c.s.Log.Log(logline.EventSched, logline.ClassJob, j.ID, text)
	}
}

// logServer writes a scheduler-wide message.
func (c *cycle) logServer(event int, text string) {
	if c.s.Log != nil {
		c.s.Log.Log(event, logline.ClassServer, "nas", text)
	}
}
