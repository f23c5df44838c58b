// Package lifecycle is a job's life on the server after its submission:
// its state evaluated from holds, execution time and dependencies, its
// completion and deletion with what they do to the jobs depending on it,
// moves between local queues, purging after keep_completed, the jobs
// removed as a consequence of another's end, and the once-a-second timer
// work (execution times, purges, routing retries).
//
// A Life works over the state package's job table and the dependency
// rules of package depend, and makes every change in the caller's
// state.Txn; it knows no connection, request handler or link. The server
// holds its lock over every call.
package lifecycle

import (
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/depend"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// Host is what the life cycle asks of the server beyond the state.
type Host interface {
	// ApplyDefaults applies queue q's and the server's resource
	// defaults to a job entering q.
	ApplyDefaults(j *state.Job, q *state.Queue)
	// Route tries to send a job of a route queue on, in tx.
	Route(tx *state.Txn, j *state.Job, now int64)
}

// Config is what a Life works over.
type Config struct {
	Name string    // the server's name, the host part of job ids
	DB   *state.DB // the job table, the server's attributes, the store
	Deps *depend.Graph
	Log  *pbslog.Logger
	Acct *pbslog.Accounting
	Now  func() time.Time
	Host Host
}

// Life is the job life cycle over the job table.
type Life struct {
	name       string
	db         *state.DB
	deps       *depend.Graph
	log        *pbslog.Logger
	acct       *pbslog.Accounting
	now        func() time.Time
	host       Host
	consequent consequences
}

// New returns the life cycle over cfg's state.
func New(cfg Config) *Life {
	return &Life{name: cfg.Name, db: cfg.DB, deps: cfg.Deps, log: cfg.Log, acct: cfg.Acct, now: cfg.Now, host: cfg.Host}
}

// Find looks a job up by id as clients give it: the full id, an id with
// "@server" appended, or the bare sequence number.
func (l *Life) Find(id string) *state.Job { return l.deps.Find(id) }

// Targets resolves the job id of a job request: a plain job, or every
// sub-job of an array ("N[]", optionally restricted by array_range=).
func (l *Life) Targets(id, ext string) ([]*state.Job, *state.Job) {
	j := l.Find(id)
	if j == nil {
		return nil, nil
	}
	if j.Array == nil {
		return []*state.Job{j}, j
	}
	subs := append([]*state.Job(nil), j.Array.Subjobs...)
	if r, ok := strings.CutPrefix(ext, "array_range="); ok {
		idxs, _, ok := state.ParseArrayRequest(r)
		if ok {
			want := map[int]bool{}
			for _, i := range idxs {
				want[i] = true
			}
			var sel []*state.Job
			for _, x := range subs {
				if want[x.ArrayIndex] {
					sel = append(sel, x)
				}
			}
			subs = sel
		}
	}
	return subs, j
}

// Evaluate recomputes a non-running job's state from its holds,
// execution time and dependencies (spec 12 §2.4), in tx.
func (l *Life) Evaluate(tx *state.Txn, j *state.Job) { l.deps.Evaluate(tx, j) }

// Touch sets a job's modification time.
func (l *Life) Touch(j *state.Job) { state.Touch(j, l.now().Unix()) }

// Requeue puts a running job back in its queue, in tx: where it ran is
// forgotten (its execution host and GPUs, and its session unless kept
// for a restart from a checkpoint, which the MOM's restart program
// gets), and its state follows from its holds, execution time and
// dependencies (QUEUED, HELD or WAITING). Its nodes are the caller's to
// free.
func (l *Life) Requeue(tx *state.Txn, j *state.Job) {
	j.Attrs.Set(pbsattr.JobExecHost, "")
	if !j.Attrs.Has(pbsattr.JobCheckpointName) {
		j.Attrs.Set(pbsattr.JobSessionID, "")
	}
	j.Attrs.Set(pbsattr.JobExecGpus, "")
	tx.SetState(j, pbsattr.StateQueued, pbsattr.SubQueued)
	l.Evaluate(tx, j)
	l.Touch(j)
}

// KeepCompleted returns how long (seconds) a job completed in queue q
// (nil: none) is kept: the queue's keep_completed, else the server's.
func (l *Life) KeepCompleted(q *state.Queue) int64 {
	var keep int64
	if v := l.db.Attrs.Get(pbsattr.SrvKeepCompleted); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			keep = n
		}
	}
	if q != nil {
		if v, ok := q.Long(pbsattr.QueueKeepCompleted); ok {
			keep = v
		}
	}
	return keep
}

// Delete deletes a non-running job at the request of requester, in tx:
// it becomes COMPLETE and is purged now or after keep_completed.
func (l *Life) Delete(tx *state.Txn, j *state.Job, requester string) {
	l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted at request of %s", requester)
	l.acct.Record(pbslog.AcctDelete, j.ID, "requestor="+requester)
	l.Complete(tx, j, false)
}

// Complete ends a job that did not run successfully (ok false) or did
// (ok true), in tx: its dependents are released or deleted, a slot of
// its array freed, and it is kept for keep_completed or purged at once.
func (l *Life) Complete(tx *state.Txn, j *state.Job, ok bool) {
	_, doomed := l.deps.ParentGone(tx, j, ok)
	if p := j.Parent; p != nil && p.Array != nil {
		doomed = append(doomed, l.deps.ArrayEnded(tx, p, ok)...)
	}
	if p := j.Parent; p != nil && p.Array != nil && j.Hold&state.HoldSlotLimit == 0 {
		// a slot of the array is free: release one sibling held by the
		// slot limit
		for _, x := range p.Array.Subjobs {
			if x != j && x.Hold&state.HoldSlotLimit != 0 {
				x.Hold &^= state.HoldSlotLimit
				l.Evaluate(tx, x)
				tx.SaveJob(x)
				break
			}
		}
	}
	tx.SetState(j, pbsattr.StateComplete, pbsattr.SubComplete)
	l.log.Logf(logline.EventJob, logline.ClassJob, "NULL", "on_job_exit valid pjob: %p (substate=%d)", j, pbsattr.SubComplete)
	now := l.now().Unix()
	j.Attrs.Set(pbsattr.JobCompTime, strconv.FormatInt(now, 10))
	keep := l.KeepCompleted(j.Queue)
	qname := ""
	if j.Queue != nil {
		qname = j.Queue.Name
	}
	if keep > 0 {
		j.PurgeAt = now + keep
		l.db.Jobs.Watch(j)
		l.Touch(j)
	} else {
		l.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state COMPLETE", qname)
		l.Purge(tx, j)
	}
	l.completeDoomed(tx, j, doomed)
}

// completeDoomed deletes the jobs whose dependency on job j can no
// longer be met, in tx.
func (l *Life) completeDoomed(tx *state.Txn, j *state.Job, doomed []*state.Job) {
	for _, x := range doomed {
		if l.db.Jobs.Get(x.ID) == nil || x.State == pbsattr.StateComplete {
			continue
		}
		l.log.Logf(logline.EventJob, logline.ClassJob, x.ID, "Job deleted as result of dependency on job %s", j.ID)
		l.acct.Record(pbslog.AcctAbort, x.ID, "")
		l.NoteConsequence(x)
		l.Complete(tx, x, false)
	}
}

// ReleaseDependents applies the end of job j (ok: exit status 0) to the
// jobs that depend on it, in tx, as j enters its end-of-job processing
// (spec 10 §8.5): released jobs are saved, jobs whose condition can no
// longer be met are deleted; Complete later finds nothing left to do for
// them. It reports whether a job was released to the queued state.
func (l *Life) ReleaseDependents(tx *state.Txn, j *state.Job, ok bool) bool {
	changed, doomed := l.deps.ParentGone(tx, j, ok)
	released := false
	for _, x := range changed {
		if l.db.Jobs.Get(x.ID) != nil {
			released = released || x.State == pbsattr.StateQueued
		}
	}
	l.completeDoomed(tx, j, doomed)
	return released
}

// Started releases what waits for job j to start (depend.Graph.Started:
// its sync set's next member, its after: children, its array's
// afterstartarray children), in tx, which notes j too.
func (l *Life) Started(tx *state.Txn, j *state.Job) { l.deps.Started(tx, j) }

// Move moves a job between local queues, in tx: the new queue's
// defaults are applied and, entering an execution queue, the job
// registers its dependencies.
func (l *Life) Move(tx *state.Txn, j *state.Job, from, to *state.Queue) {
	l.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state %s", from.Name, state.StateName(j.State))
	tx.Dequeue(j)
	l.host.ApplyDefaults(j, to)
	tx.Enqueue(j, to)
	l.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop %s", to.Name, j.State, hopCount(j))
	l.acct.Record(pbslog.AcctQueue, j.ID, "queue="+to.Name)
	if to.IsExec() {
		l.deps.Register(tx, j)
		if depend.Holds(j) {
			j.Hold |= state.HoldSystem
			j.Substate = pbsattr.SubDepnHold
		}
	}
	l.Evaluate(tx, j)
	l.Touch(j)
}

// hopCount is a job's hop_count as the log lines print it (1 when
// unset).
func hopCount(j *state.Job) string {
	if v := j.Attrs.Get(pbsattr.JobHopCount); v != "" {
		return v
	}
	return "1"
}

// Purge removes a job from the table and the store, in tx; an array
// template goes with its last sub-job.
func (l *Life) Purge(tx *state.Txn, j *state.Job) {
	tx.Remove(j)
	if p := j.Parent; p != nil && p.Array != nil {
		subs := p.Array.Subjobs
		for i, x := range subs {
			if x == j {
				p.Array.Subjobs = append(subs[:i:i], subs[i+1:]...)
				break
			}
		}
		if len(p.Array.Subjobs) == 0 {
			l.log.Logf(logline.EventDebug2, logline.ClassJob, p.ID, "dequeuing from %s, state %s", p.Queue.Name, state.StateName(p.State))
			l.Purge(tx, p)
		}
	}
}

// Tick is the timer work of one second (now, in seconds), in tx: jobs
// waiting for their execution time are evaluated, completed jobs past
// their keep_completed purged, and jobs in route queues whose retry is
// due routed.
func (l *Life) Tick(tx *state.Txn, now int64) {
	l.db.Jobs.Watched(func(j *state.Job) bool {
		switch {
		case j.State == pbsattr.StateWaiting && state.ExecTime(j) <= now:
			j.Attrs.Set(pbsattr.JobExecutionTime, "")
			l.Evaluate(tx, j)
			l.Touch(j)
			tx.SaveJob(j)
		case j.State == pbsattr.StateComplete && j.PurgeAt != 0:
			if j.PurgeAt <= now {
				l.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "dequeuing from %s, state COMPLETE", state.QueueName(j))
				l.Purge(tx, j)
				return false
			}
		case j.Queue != nil && j.Queue.IsRoute():
			if j.RouteRetryAt <= now {
				l.host.Route(tx, j, now)
			}
		case j.State != pbsattr.StateWaiting:
			return false
		}
		return true
	})
}

// RegistDep serves a RegisterDependency from another server (request
// type 13, spec 12 §6.2) in tx and returns a PBSE code (0: done). A
// refusal may leave changes in tx, which the caller makes durable too.
func (l *Life) RegistDep(tx *state.Txn, body *batchreq.RegistDep) int {
	if body.DepType == batchreq.JOB_DEPEND_TYPE_SYNCWITH {
		doomed, code := l.deps.Sync().Serve(tx, body)
		if doomed != nil {
			l.Complete(tx, doomed, false)
		}
		return code
	}
	parent := l.Find(body.ParentID)
	if parent == nil {
		return batchreq.PBSE_UNKJOBID
	}
	if body.Op == batchreq.JOB_DEPEND_OP_DELETE {
		l.Complete(tx, parent, false)
		return 0
	}
	return l.deps.Registered(tx, parent, body)
}
