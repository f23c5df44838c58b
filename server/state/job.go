package state

import (
	"gopbs/attr"
)

// Job is one job. Like every object of this package it is owned by the
// server and only touched under the server's lock.
type Job struct {
	ID       string
	Seq      int64
	State    attr.JobStateNum
	Substate attr.Substate
	Hold     int
	// LateHold holds the bits of hold set after the job's state was
	// computed, by a dependency registration its parent refused
	// (capture 82): the evaluation that follows the registration leaves
	// them out, so the job stays queued; later ones count them.
	LateHold int
	Queue    *Queue
	Rank     int64
	Attrs    Attrs

	// Array bookkeeping
	Array      *ArrayInfo // set on an array template
	Parent     *Job       // set on an array sub-job
	ArrayIndex int

	// pending submission (state TRANSIT)
	Script []byte

	// list links (all jobs in submission order)
	prev, next *Job

	// completed-job purge time (unix seconds), 0 if none
	PurgeAt int64

	// routing bookkeeping: when to try again, destinations that refused
	// the job for good, and those (other servers) that refused it for now
	// in the current round
	RouteRetryAt int64
	RouteTried   map[string]bool
	RouteLater   map[string]bool
}

// ArrayInfo is the bookkeeping of an array template (job id "N[]").
type ArrayInfo struct {
	Request string
	Subjobs []*Job // by position in request order
	Size    int    // sub-jobs created
	// counters of Started and ended sub-jobs for the array dependency
	// types
	Started, OK, NotOK int
}

// StateLetter returns the job_state letter; a running job suspended by
// qsig -s suspend shows S (spec 10 §9.1).
func (j *Job) StateLetter() string {
	return attr.JobStateNum(j.State).StateValue(j.Substate == attr.SubSuspend).Str()
}

// Owner returns Job_Owner.
func (j *Job) Owner() string { return j.Attrs.Get(attr.JobOwner) }

// OwnerUser returns the user part of Job_Owner.
func (j *Job) OwnerUser() string {
	o := j.Owner()
	for i := 0; i < len(o); i++ {
		if o[i] == '@' {
			return o[:i]
		}
	}
	return o
}

// Name returns Job_Name.
func (j *Job) Name() string { return j.Attrs.Get(attr.JobName) }
