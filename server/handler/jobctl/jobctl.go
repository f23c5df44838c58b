// Package jobctl serves the job-control family: DeleteJob, HoldJob,
// ReleaseJob, ModifyJob (and its asynchronous form), MoveJob and OrderJob
// (spec 02 §3.3-§3.8, §10). Each handler is a function of the server's
// state as the family sees it (State), a reply writer, who asks and the
// decoded request; the changes go through a state.Txn, and what concerns
// running jobs is handed to the MOM link (handler.Running).
package jobctl

import (
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// State is what the family needs of the server. Every method but Lock
// and Log is called with the lock held.
type State interface {
	// Lock and Unlock guard a change of the state.
	Lock()
	Unlock()
	// Begin starts a transaction over the state.
	Begin() *state.Txn
	// Log returns the server's log.
	Log() *pbslog.Logger
	// Now returns the time.
	Now() time.Time
	// Attrs returns the server's attributes.
	Attrs() state.Attrs
	// FindJob returns the job named as clients name it, or nil.
	FindJob(id string) *state.Job
	// Targets resolves the job id of a job request: the job and itself,
	// or an array template and its sub-jobs (ext "array_range=..."
	// restricting them); a nil top for an unknown job.
	Targets(id, ext string) (targets []*state.Job, top *state.Job)
	// Queue returns the queue of the name, or nil.
	Queue(name string) *state.Queue
	// RemovedAsConsequence reports whether the job named id was removed
	// lately as a consequence of another job's end, for a requester who
	// may act on it.
	RemovedAsConsequence(who *handler.Asker, id string) bool
	// NoteConsequence remembers a sub-job deleted with its array.
	NoteConsequence(j *state.Job)
	// Delete deletes a job that is not running at the request of
	// requester; Purge removes a job; Move moves a job between local
	// queues (all in tx).
	Delete(tx *state.Txn, j *state.Job, requester string)
	Purge(tx *state.Txn, j *state.Job)
	Move(tx *state.Txn, j *state.Job, from, to *state.Queue)
	// Evaluate recomputes a job's state from its holds, execution
	// time and dependencies, in tx; Touch sets its modification time.
	Evaluate(tx *state.Txn, j *state.Job)
	Touch(j *state.Job)
	// Admit checks a job's move into queue q (host: the requesting
	// host; mgrMove: the checks a manager's move skips).
	Admit(j *state.Job, q *state.Queue, host string, mgrMove bool) *batchreq.Reply
	// RefreshNodeJobs recomputes the nodes' job lists after jobs ended.
	RefreshNodeJobs()
	// Running is the MOM link's side of running jobs.
	Running() handler.Running
	// SchedNotify asks the scheduler for a cycle (cmd: the reason),
	// without the lock.
	SchedNotify(cmd int)
	// MoveRemote serves a MoveJob whose destination (as written) is
	// another server, answering through w and releasing the lock; it
	// reports false, doing nothing, for a destination on this server,
	// whose queue name it returns.
	MoveRemote(w handler.ReplyWriter, who *handler.Asker, j *state.Job, destination string) (queue string, remote bool)
	// Feasible reports whether some nodes could ever serve the node
	// specification spec; InfeasibleText is the refusal's text.
	Feasible(spec string) bool
	InfeasibleText() string
	// NormalizeDepend decodes a depend attribute value and returns its
	// canonical text.
	NormalizeDepend(v string) (string, bool)
	// RegisterDeps registers a job's changed dependencies with the jobs
	// it depends on (saved in tx) and reports whether they hold it.
	RegisterDeps(tx *state.Txn, j *state.Job) (holds bool)
}

// unknownJob logs and refuses a request naming no job here.
func unknownJob(st State, w handler.ReplyWriter, id, msg string) {
	st.Log().Log(logline.EventDebug, logline.ClassJob, id, "Unknown Job Id")
	w.Reject(batchreq.PBSE_UNKJOBID, msg)
}

// permitted reports whether the asker may act on the job (owner,
// operator or manager); otherwise it logs the security line.
func permitted(st State, who *handler.Asker, reqType int, j *state.Job) bool {
	if who.Operator || who.Manager || j.OwnerUser() == who.User {
		return true
	}
	handler.LogUnauthorized(st.Log(), reqType, j.ID, who)
	return false
}

// finishedState returns the text of the common job check's BADSTATE
// reply (spec 02 §8) for a job that is exiting or complete, or "" for a
// job in any other state.
func finishedState(j *state.Job) string {
	if j.State == pbsattr.StateExiting || j.State == pbsattr.StateComplete {
		return "invalid state for job - " + state.StateName(j.State)
	}
	return ""
}

// Delete serves a DeleteJob.
func Delete(st State, w handler.ReplyWriter, who *handler.Asker, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	ext := req.Extension
	switch {
	case strings.HasPrefix(ext, "purgecomplete="):
		if !who.Operator && !who.Manager {
			w.Reject(batchreq.PBSE_PERM, "must have operator or manager privilege to use -c parameter")
			return
		}
		purgeComplete(st, w, ext)
		return
	case ext == "" || strings.HasPrefix(ext, "deldelay=") || ext == "delasync" || strings.HasPrefix(ext, "array_range="):
	case strings.HasPrefix(ext, "delpurge="):
		if !who.Operator && !who.Manager && !ownerPurge(st) {
			w.Reject(batchreq.PBSE_PERM, "")
			return
		}
	default:
		if !who.Operator && !who.Manager {
			w.Reject(batchreq.PBSE_PERM, "must have operator or manager privilege to use -m parameter")
			return
		}
	}
	if ext == "delasync" {
		w.Send(batchreq.NullReply())
	}
	st.Lock()
	targets, top := st.Targets(body.ObjName, ext)
	if top == nil {
		gone := st.RemovedAsConsequence(who, body.ObjName)
		st.Unlock()
		if gone {
			// Removed by the deletion of a job it depended on, maybe
			// named earlier in the same qdel: it existed when the
			// client started, and it is deleted as asked.
			w.Send(batchreq.NullReply())
			return
		}
		unknownJob(st, w, body.ObjName, "")
		return
	}
	for _, j := range targets {
		if !permitted(st, who, req.Type, j) {
			st.Unlock()
			w.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
			return
		}
	}
	tx := st.Begin()
	var running []*state.Job
	for _, j := range targets {
		if j.State == pbsattr.StateComplete {
			continue
		}
		if j.State == pbsattr.StateRunning && !strings.HasPrefix(ext, "delpurge=") {
			running = append(running, j) // through the MOM
			continue
		}
		st.Delete(tx, j, who.Requester())
		if j != top {
			// a sub-job deleted with its array: a later "qdel 5[1]" in
			// the same command was named while it existed
			st.NoteConsequence(j)
		}
	}
	if top.Array != nil && len(top.Array.Subjobs) == 0 && tx.Jobs().Get(top.ID) != nil {
		st.Purge(tx, top)
	}
	if len(running) > 0 {
		st.Running().DeleteRunning(w, *who, running, tx.Ops(), ext)
		return
	}
	st.RefreshNodeJobs()
	handler.CommitAndReply(st, w, tx, batchreq.NullReply())
}

// ownerPurge reports the server's owner_purge: owners may purge their
// jobs (qdel -p).
func ownerPurge(st State) bool {
	st.Lock()
	defer st.Unlock()
	return state.IsTrue(st.Attrs().Get(pbsattr.SrvOwnerPurge))
}

// purgeComplete handles qdel -c: completed jobs with comp_time <= t are
// purged.
func purgeComplete(st State, w handler.ReplyWriter, ext string) {
	t, _ := strconv.ParseInt(strings.TrimPrefix(ext, "purgecomplete="), 10, 64)
	st.Lock()
	tx := st.Begin()
	for j := tx.Jobs().First(); j != nil; {
		next := j.Next()
		if j.State == pbsattr.StateComplete {
			ct, _ := strconv.ParseInt(j.Attrs.Get(pbsattr.JobCompTime), 10, 64)
			if ct <= t {
				st.Purge(tx, j)
			}
		}
		j = next
	}
	handler.CommitAndReply(st, w, tx, batchreq.NullReply())
}

// HoldRelease serves a HoldJob or a ReleaseJob.
func HoldRelease(st State, w handler.ReplyWriter, who *handler.Asker, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	hold := req.Type == batchreq.PBS_BATCH_HoldJob
	// The common job checks come first (spec 02 §10: chk, then the
	// Hold_Types list, then the privilege its letters need).
	st.Lock()
	targets, top := st.Targets(body.ObjName, req.Extension)
	if top == nil {
		st.Unlock()
		unknownJob(st, w, body.ObjName, "")
		return
	}
	for _, j := range targets {
		if !permitted(st, who, req.Type, j) {
			st.Unlock()
			w.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
			return
		}
	}
	for _, j := range targets {
		if msg := finishedState(j); msg != "" {
			st.Unlock()
			w.Reject(batchreq.PBSE_BADSTATE, msg)
			return
		}
	}
	if len(body.Attrs) != 1 || body.Attrs[0].Name != "Hold_Types" {
		st.Unlock()
		w.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	letters := body.Attrs[0].Value
	bits, ok := state.ParseHold(letters)
	if !ok {
		st.Unlock()
		w.Send(batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, &body.Attrs[0]))
		return
	}
	if bits&state.HoldSystem != 0 && !who.Manager || bits&state.HoldOther != 0 && !who.Operator && !who.Manager {
		st.Unlock()
		w.Reject(batchreq.PBSE_PERM, "")
		return
	}
	log := st.Log()
	tx := st.Begin()
	for _, j := range targets {
		if hold {
			j.Hold |= bits
			log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Holds %s set at request of %s", letters, who.Requester())
		} else {
			j.Hold &^= bits
			if bits&state.HoldSystem != 0 {
				// dependencies released by hand are dropped
				if j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold {
					j.Substate = pbsattr.SubHeld
				}
			}
			log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Holds %s released at request of %s", letters, who.Requester())
		}
		if j.State != pbsattr.StateRunning {
			if j.Hold == 0 && (j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold) {
				j.Substate = pbsattr.SubHeld
			}
			st.Evaluate(tx, j)
		}
		st.Touch(j)
		tx.SaveJob(j)
	}
	if hold {
		st.Running().HoldRunning(w, targets, body.Attrs, bits, tx.Ops()) // checkpoint-hold of running jobs
		return
	}
	released := false
	for _, j := range targets {
		released = released || j.State == pbsattr.StateQueued
	}
	handler.CommitAndReply(st, w, tx, batchreq.NullReply())
	if released {
		// a released job asks for a cycle, remembered if one is in
		// progress; the tick would drop it then
		st.SchedNotify(batchreq.SCH_SCHEDULE_NEW)
	}
}
