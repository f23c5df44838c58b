package state

import (
	"strconv"

	"gopbs/attr"
)

// Evaluate recomputes a non-running job's state from its holds, its
// execution time and its dependencies (spec 12 §2.4), through the
// transaction: the new state is set with SetState, which notes the job
// as changed. now is the clock in seconds; dependHeld reports whether a
// dependency keeps a job on system hold (asked only for a job on system
// hold whose substate does not say so already). Holds set late
// (Job.LateHold) are left out this once. A running, transiting, exiting
// or completed job is left as it is.
func (t *Txn) Evaluate(j *Job, now int64, dependHeld func(*Job) bool) {
	hold := j.Hold &^ j.LateHold
	j.LateHold = 0
	if j.State == attr.StateRunning || j.State == attr.StateTransit || j.State == attr.StateExiting || j.State == attr.StateComplete {
		return
	}
	if j.Array != nil {
		t.SetState(j, attr.StateQueued, attr.SubArrayTemplate)
		if !j.Attrs.Has(attr.JobEtime) {
			j.Attrs.Set(attr.JobEtime, strconv.FormatInt(now, 10))
		}
		return
	}
	switch {
	case hold&^HoldArray != 0:
		sub := attr.SubHeld
		if j.Substate == attr.SubDepnHold || j.Substate == attr.SubSyncHold {
			sub = j.Substate
		}
		if sub == attr.SubHeld && j.Hold&HoldSystem != 0 && dependHeld(j) {
			sub = attr.SubDepnHold
		}
		t.SetState(j, attr.StateHeld, sub)
	case ExecTime(j) > now:
		t.SetState(j, attr.StateWaiting, attr.SubWaiting)
	default:
		t.SetState(j, attr.StateQueued, attr.SubQueued)
		if j.Queue != nil && j.Queue.IsExec() && !j.Attrs.Has(attr.JobEtime) {
			j.Attrs.Set(attr.JobEtime, strconv.FormatInt(now, 10))
		}
	}
}

// Touch sets a job's modification time (mtime) to now, in seconds.
func Touch(j *Job, now int64) {
	j.Attrs.Set(attr.JobMtime, strconv.FormatInt(now, 10))
}
