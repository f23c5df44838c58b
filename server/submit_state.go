package server

import (
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/admit"
	"gopbs/server/depend"
	"gopbs/server/handler"
	submission "gopbs/server/handler/submit"
	"gopbs/server/link/remote"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// maxJobNumber is where next_job_number wraps to 0.
const maxJobNumber = 99999999

// submitState is the server as the submission handlers (package submit)
// see it.
type submitState struct{ s *Server }

func (v submitState) Lock()                                  { v.s.mu.Lock() }
func (v submitState) Unlock()                                { v.s.mu.Unlock() }
func (v submitState) Begin() *state.Txn                      { return v.s.db.Begin() }
func (v submitState) Log() *pbslog.Logger                    { return v.s.log }
func (v submitState) Acct() *pbslog.Accounting               { return v.s.acct }
func (v submitState) FlushLogs()                             { v.s.log.Flush(); v.s.acct.Flush() }
func (v submitState) Now() time.Time                         { return v.s.now() }
func (v submitState) Name() string                           { return v.s.name }
func (v submitState) Attrs() state.Attrs                     { return v.s.attrs }
func (v submitState) AdvresQueue(a batchreq.AttrList) string { return advresQueue(v.s.resv, a) } // reservations.go
func (v submitState) Jobs() *state.Jobs                      { return &v.s.jobs }
func (v submitState) Queue(name string) *state.Queue         { return v.s.queueByName[name] }
func (v submitState) CountHop(j *state.Job) *batchreq.Reply  { return remote.CountHop(j) } // server/link/remote
func (v submitState) CheckUserList(j *state.Job) *batchreq.Reply {
	return v.s.admission.CheckUserList(j)
}
func (v submitState) ExecUser(j *state.Job) string               { return admit.ExecUser(j, "") }
func (v submitState) ApplyDefaults(j *state.Job, q *state.Queue) { v.s.admission.ApplyDefaults(j, q) }
func (v submitState) Evaluate(tx *state.Txn, j *state.Job)       { v.s.life.Evaluate(tx, j) }
func (v submitState) SchedNotify(cmd int)                        { v.s.sched.Notify(cmd) }

func (v submitState) TakeJobNumber(incoming bool) int64 {
	seq := v.s.nextJob
	if !incoming {
		v.s.nextJob++
		if v.s.nextJob > maxJobNumber {
			v.s.nextJob = 0
		}
	}
	return seq
}

func (v submitState) NextRank() int64 {
	v.s.rankCounter++
	return v.s.rankCounter
}

func (v submitState) ValidDepend(val string) bool {
	_, ok := v.s.deps.Parse(val)
	return ok
}

func (v submitState) SetDepend(j *state.Job) bool {
	deps, ok := v.s.deps.Parse(j.Attrs.Get(pbsattr.JobDepend))
	if ok {
		depend.Set(j, deps)
	}
	return ok
}

func (v submitState) RegisterDeps(tx *state.Txn, j *state.Job) (holds, sync bool) {
	v.s.deps.Register(tx, j)
	if !depend.Holds(j) {
		return false, false
	}
	return true, depend.HasSync(j)
}

// PrimaryGroup is the user's primary group, looked up only when the
// server runs jobs (not in the tests without a MOM link).
func (v submitState) PrimaryGroup(user string) string {
	if v.s.run == nil {
		return ""
	}
	return v.s.primaryGroup(user)
}

func (v submitState) Admit(j *state.Job, q *state.Queue, host string) *batchreq.Reply {
	return v.s.admission.Admit(j, q, host, false)
}

func (v submitState) Route(tx *state.Txn, j *state.Job) { v.s.router.Route(tx, j, v.s.now().Unix()) }

// pendingJob is submission.Pending for the event loop's Commit.
func (s *Server) pendingJob(c *handler.Conn, id string, want pbsattr.Substate) *state.Job {
	return submission.Pending(submitState{s}, c, c.Writer, id, want)
}

// commitJob is submission.CommitJob in a transaction of its own, for the
// event loop's Commit: it returns the batch to submission.
func (s *Server) commitJob(j *state.Job, requester string) []store.Op {
	tx := s.db.Begin()
	submission.CommitJob(submitState{s}, tx, j, requester)
	return tx.Ops()
}

// register registers the submission family.
func (st submitState) register() {
	s := st.s
	m := &s.mux
	m.HandleFunc(batchreq.PBS_BATCH_QueueJob, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		submission.QueueJob(st, c, c.Writer, &who, req.Body.(*batchreq.QueueJob))
	})
	m.HandleFunc(batchreq.PBS_BATCH_JobCred, func(c *handler.Conn, req *batchreq.Request) {
		submission.JobCred(st, c, c.Writer)
	})
	m.HandleFunc(batchreq.PBS_BATCH_jobscript, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		submission.JobScript(st, c, c.Writer, &who, req.Body.(*batchreq.JobFile))
	})
	m.HandleFunc(batchreq.PBS_BATCH_RdytoCommit, func(c *handler.Conn, req *batchreq.Request) {
		submission.RdytoCommit(st, c, c.Writer, req.Body.(*batchreq.JobID))
	})
	m.HandleFunc(batchreq.PBS_BATCH_Commit, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		submission.Commit(st, c, c.Writer, &who, req.Body.(*batchreq.JobID))
	})
}
