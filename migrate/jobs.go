package migrate

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/attr"
	"gopbs/migrate/torque"
	"gopbs/server/importdb"
	"gopbs/server/state"
)

// TORQUE job states and substates the import looks at (spec 12 §2.1).
const (
	stateTransit     = 0
	stateQueued      = 1
	stateHeld        = 2
	stateRunning     = 4
	stateExiting     = 5
	stateComplete    = 6
	substateTrnOut   = 2 // being moved to another server
	substateTrnOutCM = 3
	substateQueued   = 10
	substateHeld     = 20
)

// attrValue returns a job file attribute ("" if absent).
func attrValue(j *torque.Job, name string) string {
	v, _ := j.File.Get(name, "")
	return v
}

// isSubjob reports whether j is an array sub-job: a .JB file with a
// job_array_id.
func isSubjob(j *torque.Job) bool {
	_, ok := j.File.Get("job_array_id", "")
	return ok && !j.Template
}

// templateID returns the id of the template of sub-job id ("3[0].vm" →
// "3[].vm").
func templateID(id string) (string, bool) {
	i := strings.IndexByte(id, '[')
	k := strings.IndexByte(id, ']')
	if i < 0 || k < i {
		return "", false
	}
	return id[:i+1] + id[k:], true
}

// checkRunning applies the policy for running jobs: the error names the
// jobs that stop the import.
func checkRunning(h *torque.Home, opt Options) error {
	var running, stuck []string
	for _, j := range h.Jobs {
		switch j.File.State {
		case stateRunning:
			running = append(running, j.File.ID)
			if opt.Running == Requeue && !strings.EqualFold(attrValue(j, "Rerunable"), "True") {
				stuck = append(stuck, j.File.ID+" (not rerunnable)")
			}
		case stateExiting:
			running = append(running, j.File.ID)
			if opt.Running == Requeue {
				stuck = append(stuck, j.File.ID+" (exiting)")
			}
		}
	}
	switch {
	case len(running) > 0 && opt.Running == Refuse:
		return fmt.Errorf("jobs were running when TORQUE stopped: %s; let them finish (drain the queues) and import again, or import with -running=requeue (rerunnable jobs are put back in their queue) or -running=keep (they stay running under GoPBS)", strings.Join(running, ", "))
	case len(stuck) > 0:
		return fmt.Errorf("running jobs cannot be requeued: %s; let them finish and import again, or import with -running=keep", strings.Join(stuck, ", "))
	}
	return nil
}

// addJobs adds the jobs of h to db: array templates first (sub-jobs need
// them), each with Seq its place in TORQUE's recovery order (queue_rank),
// which is the order the server will list them in.
func addJobs(db *importdb.Database, h *torque.Home, opt Options, res *Result) error {
	if err := checkRunning(h, opt); err != nil {
		return err
	}
	arrays := map[string]*torque.Array{}
	for _, a := range h.Arrays {
		arrays[a.ParentID] = a
	}
	seq := map[*torque.Job]int64{}
	for i, j := range h.Jobs {
		seq[j] = int64(i + 1)
	}
	for pass := 0; pass < 2; pass++ {
		for _, j := range h.Jobs {
			if j.Template != (pass == 0) {
				continue
			}
			if j.File.State == stateTransit {
				switch j.File.Substate {
				case substateTrnOut, substateTrnOutCM:
					// a move to another server cut short: the job stays
					// here, queued (TORQUE's recovery does the same)
					j.File.State, j.File.Substate = stateQueued, substateQueued
				default:
					// still being received: never acknowledged to its
					// submitter, and TORQUE's recovery discards it
					res.Skipped = append(res.Skipped, j.File.ID)
					continue
				}
			}
			r, err := jobRecord(j, seq[j], arrays)
			if err != nil {
				return fmt.Errorf("%s: %w", j.Path, err)
			}
			if err := db.AddJob(r, j.Script); err != nil {
				return fmt.Errorf("%s: %w", j.Path, err)
			}
			if r.State == stateRunning || r.State == stateExiting {
				if opt.Running == Requeue {
					if err := db.Requeue(r.ID); err != nil {
						return fmt.Errorf("%s: %w", j.Path, err)
					}
					res.Requeued = append(res.Requeued, r.ID)
				} else {
					res.Kept = append(res.Kept, r.ID)
				}
			}
		}
	}
	return nil
}

// jobRecord converts a TORQUE job file into a server job record.
func jobRecord(j *torque.Job, seq int64, arrays map[string]*torque.Array) (*state.JobRecord, error) {
	f := j.File
	r := &state.JobRecord{
		ID: f.ID, Seq: seq, State: int64(f.State), Substate: int64(f.Substate),
		Queue: f.Queue, Rank: j.Rank(), ArrayIndex: -1,
		Attrs: recordAttrs(f.Attrs),
	}
	hold, err := attr.ParseHold(attrValue(j, "Hold_Types"))
	if err != nil {
		return nil, fmt.Errorf("Hold_Types %q: %w", attrValue(j, "Hold_Types"), err)
	}
	switch {
	case j.Template:
		a := arrays[f.ID]
		if a == nil {
			return nil, fmt.Errorf("array template %s has no arrays/%s.AR", f.ID, f.Prefix)
		}
		if len(a.Pending) > 0 {
			return nil, fmt.Errorf("TORQUE had not created all sub-jobs of %s yet (%d index ranges pending): start TORQUE again until it has, then import", f.ID, len(a.Pending))
		}
		r.ArrayRequest = attrValue(j, "job_array_request")
		if r.ArrayRequest == "" {
			return nil, fmt.Errorf("array template %s has no job_array_request", f.ID)
		}
		r.ArrayCounts = []int64{int64(a.Cloned), int64(a.Successful), int64(a.Failed), int64(a.Started)}
	case isSubjob(j):
		parent, ok := templateID(f.ID)
		if !ok {
			return nil, fmt.Errorf("sub-job id %q has no array index", f.ID)
		}
		idx, err := strconv.Atoi(attrValue(j, "job_array_id"))
		if err != nil || idx < 0 {
			return nil, fmt.Errorf("bad job_array_id %q", attrValue(j, "job_array_id"))
		}
		r.Parent, r.ArrayIndex = parent, int64(idx)
		// Sub-jobs carry the array bit, as the server's own; a held sub-job
		// without hold types waits for its slot (spec 13 §6.6).
		hold |= attr.HoldArray
		if f.State == stateHeld && f.Substate == substateHeld && hold == attr.HoldArray {
			hold |= attr.HoldSlotLimit
		}
	case j.Script == nil && f.State != stateComplete:
		return nil, fmt.Errorf("job %s has no script (%s.SC)", f.ID, f.Prefix)
	}
	r.Hold = int64(hold)
	return r, nil
}
