package server

import (
	"time"

	"gopbs/batchreq"
	"gopbs/server/admit"
	"gopbs/server/depend"
	"gopbs/server/handler"
	"gopbs/server/handler/jobctl"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// jobctlState is the server as the job-control handlers (package jobctl)
// see it.
type jobctlState struct{ s *Server }

func (v jobctlState) Lock()                                { v.s.mu.Lock() }
func (v jobctlState) Unlock()                              { v.s.mu.Unlock() }
func (v jobctlState) Begin() *state.Txn                    { return v.s.db.Begin() }
func (v jobctlState) Log() *pbslog.Logger                  { return v.s.log }
func (v jobctlState) Now() time.Time                       { return v.s.now() }
func (v jobctlState) Attrs() state.Attrs                   { return v.s.attrs }
func (v jobctlState) FindJob(id string) *state.Job         { return v.s.life.Find(id) }
func (v jobctlState) Queue(name string) *state.Queue       { return v.s.queueByName[name] }
func (v jobctlState) Feasible(spec string) bool            { return v.s.admission.Feasible(spec) }
func (v jobctlState) InfeasibleText() string               { return admit.MsgInfeasible }
func (v jobctlState) Evaluate(tx *state.Txn, j *state.Job) { v.s.life.Evaluate(tx, j) }
func (v jobctlState) Touch(j *state.Job)                   { v.s.life.Touch(j) }
func (v jobctlState) RefreshNodeJobs()                     { v.s.refreshNodeJobs() }
func (v jobctlState) Running() handler.Running             { return v.s.run }
func (v jobctlState) SchedNotify(cmd int)                  { v.s.sched.Notify(cmd) }

func (v jobctlState) Targets(id, ext string) ([]*state.Job, *state.Job) {
	return v.s.life.Targets(id, ext)
}

func (v jobctlState) RemovedAsConsequence(who *handler.Asker, id string) bool {
	return v.s.life.RemovedAsConsequence(id, who.User, who.Operator || who.Manager)
}

func (v jobctlState) NoteConsequence(j *state.Job) {
	v.s.life.NoteConsequence(j)
}

func (v jobctlState) Delete(tx *state.Txn, j *state.Job, requester string) {
	v.s.life.Delete(tx, j, requester)
}

func (v jobctlState) Purge(tx *state.Txn, j *state.Job) { v.s.life.Purge(tx, j) }

func (v jobctlState) Move(tx *state.Txn, j *state.Job, from, to *state.Queue) {
	v.s.life.Move(tx, j, from, to)
}

func (v jobctlState) Admit(j *state.Job, q *state.Queue, host string, mgrMove bool) *batchreq.Reply {
	return v.s.admission.Admit(j, q, host, mgrMove)
}

func (v jobctlState) MoveRemote(w handler.ReplyWriter, who *handler.Asker, j *state.Job, destination string) (string, bool) {
	dest := v.s.router.Destination(destination)
	if dest.Addr != "" || dest.Bad {
		v.s.router.MoveRemote(w, who.Requester(), j, dest) // server/route
		return "", true
	}
	return dest.Queue, false
}

func (v jobctlState) NormalizeDepend(val string) (string, bool) {
	deps, ok := v.s.deps.Parse(val)
	if !ok {
		return "", false
	}
	return depend.Format(deps), true
}

func (v jobctlState) RegisterDeps(tx *state.Txn, j *state.Job) bool {
	v.s.deps.Register(tx, j)
	return depend.Holds(j)
}

// register registers the job-control family.
func (st jobctlState) register() {
	s := st.s
	handle := func(t int, f func(jobctl.State, handler.ReplyWriter, *handler.Asker, *batchreq.Request)) {
		s.mux.HandleFunc(t, func(c *handler.Conn, req *batchreq.Request) {
			who := c.Asker
			f(st, c.Writer, &who, req)
		})
	}
	handle(batchreq.PBS_BATCH_DeleteJob, jobctl.Delete)
	handle(batchreq.PBS_BATCH_HoldJob, jobctl.HoldRelease)
	handle(batchreq.PBS_BATCH_ReleaseJob, jobctl.HoldRelease)
	handle(batchreq.PBS_BATCH_ModifyJob, jobctl.Modify)
	handle(batchreq.PBS_BATCH_AsyModifyJob, jobctl.Modify)
	handle(batchreq.PBS_BATCH_MoveJob, jobctl.Move)
	handle(batchreq.PBS_BATCH_OrderJob, jobctl.Order)
}
