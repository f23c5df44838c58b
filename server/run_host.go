package server

import (
	"os/user"
	"time"

	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/link/running"
	"gopbs/server/state"
	"gopbs/server/store"
)

// runHost is the server as the running-jobs link
// (server/link/running) sees it.
type runHost struct{ s *Server }

var _ running.Host = runHost{}

func (h runHost) Lock()                               { h.s.mu.Lock() }
func (h runHost) Unlock()                             { h.s.mu.Unlock() }
func (h runHost) RLock()                              { h.s.mu.RLock() }
func (h runHost) RUnlock()                            { h.s.mu.RUnlock() }
func (h runHost) Begin() *state.Txn                   { return h.s.db.Begin() }
func (h runHost) Jobs() *state.Jobs                   { return &h.s.jobs }
func (h runHost) FindJob(id string) *state.Job        { return h.s.life.Find(id) }
func (h runHost) Attrs() state.Attrs                  { return h.s.attrs }
func (h runHost) Now() time.Time                      { return h.s.now() }
func (h runHost) GroupOf(user string) string          { return h.s.groupOf(user) }
func (h runHost) Requeue(tx *state.Txn, j *state.Job) { h.s.life.Requeue(tx, j) }
func (h runHost) Touch(j *state.Job)                  { h.s.life.Touch(j) }
func (h runHost) RefreshNodeJobs()                    { h.s.refreshNodeJobs() }
func (h runHost) Shutting() bool                      { return h.s.shutting }
func (h runHost) StopStarting()                       { h.s.shutting = true }
func (h runHost) SchedNotify(cmd int)                 { h.s.sched.Notify(cmd) }

// Script implements running.Host.
func (h runHost) Script(j *state.Job) ([]byte, error) {
	return h.s.store.Get(store.Script, state.ScriptKey(j))
}

// Complete implements running.Host (server/lifecycle).
func (h runHost) Complete(tx *state.Txn, j *state.Job, ok bool) { h.s.life.Complete(tx, j, ok) }

// Started implements running.Host (server/lifecycle): the start releases
// a sync set's next member and the after: and afterstartarray children.
func (h runHost) Started(tx *state.Txn, j *state.Job) { h.s.life.Started(tx, j) }

// ReleaseDependents implements running.Host (server/lifecycle).
func (h runHost) ReleaseDependents(tx *state.Txn, j *state.Job, ok bool) bool {
	return h.s.life.ReleaseDependents(tx, j, ok)
}

// Allocate implements running.Host (server/alloc).
func (h runHost) Allocate(j *state.Job, spec string) (string, *batchreq.Reply) {
	slots, bad := h.s.cluster().Allocate(j, spec, nil)
	if bad != nil {
		return "", bad
	}
	return state.FormatExecHost(slots), nil
}

// NodeUp implements running.Host: node name is not DOWN, DELETED or
// UNKNOWN.
func (h runHost) NodeUp(name string) bool {
	s := h.s
	n := s.nodeByName[name]
	if n == nil {
		return len(s.nodes) == 0 // jobs run on the server host when there are no nodes
	}
	return n.State&(state.NodeStateDown|state.NodeStateUnknown) == 0
}

// MarkNodeDown implements running.Host.
func (h runHost) MarkNodeDown(name string) {
	if n := h.s.nodeByName[name]; n != nil {
		n.State |= state.NodeStateDown
	}
}

// Place implements running.Host: the connection's slice of partitions
// (sched_objects.go), the reservations (reservations.go) and the
// allocation (server/alloc).
func (h runHost) Place(c *handler.Conn, j *state.Job, dest string) (string, *batchreq.Reply) {
	s := h.s
	if bad := (schedObjects{s}).sliceRefusesRun(c, j, dest); bad != nil {
		return "", bad
	}
	slots, bad := s.cluster().Allocate(j, dest, reservationFilter(s.resv, j, dest, runsOn(c, j)))
	if bad == nil {
		bad = reservedRun(s.resv, j, slots)
	}
	if bad != nil {
		return "", bad
	}
	return state.FormatExecHost(slots), nil
}

// newLink makes the server's running-jobs link.
func (h runHost) newLink() *running.Link {
	s := h.s
	return running.New(runHost{s}, running.Config{
		Name:        s.name,
		Home:        s.cfg.Home,
		MomPort:     s.cfg.MomPort,
		Clean:       s.cfg.InitType == InitCold || s.cfg.InitType == InitCreate,
		ResolveHost: s.cfg.ResolveHost,
		Log:         s.log,
		Acct:        s.acct,
		Mail:        s.mailer,
		Obs:         s.obs,
		Done:        s.done,
	})
}

// register registers the requests the running-jobs link
// serves. The link is looked up when a request comes: it is made after
// the handlers are registered (and wrapped by initMonitoring).
func (h runHost) register() {
	s := h.s
	for typ, f := range map[int]func(*running.Link, *handler.Conn, *batchreq.Request){
		batchreq.PBS_BATCH_RunJob:        (*running.Link).RunJob,
		batchreq.PBS_BATCH_AsyrunJob:     (*running.Link).RunJob,
		batchreq.PBS_BATCH_JobObit:       (*running.Link).JobObit,
		batchreq.PBS_BATCH_SignalJob:     (*running.Link).SignalJob,
		batchreq.PBS_BATCH_MessJob:       (*running.Link).MessJob,
		batchreq.PBS_BATCH_Rerun:         (*running.Link).RerunJob,
		batchreq.PBS_BATCH_CheckpointJob: (*running.Link).CheckpointJob,
		batchreq.PBS_BATCH_MvJobFile:     (*running.Link).MvJobFile,
	} {
		s.mux.HandleFunc(typ, func(c *handler.Conn, req *batchreq.Request) { f(s.run, c, req) })
	}
	s.mux.HandleFunc(batchreq.PBS_BATCH_Rescq, s.handleRescQuery) // run_alloc.go
}

// start starts the MOM and scheduler links: the IS endpoint on the
// server's port (UDP), node checking, job polling and the scheduler
// timer. It returns at once; everything stops when the server is done.
func (h runHost) start() {
	s := h.s
	s.mu.Lock()
	for _, n := range s.nodes {
		// All nodes are down until their MOM says hello (spec 10 §5.6)
		// and offline until its first status (TORQUE).
		n.State |= state.NodeStateUnreported
	}
	s.mu.Unlock()
	s.is.Start(s.port())
	s.run.Recover()
	go h.timers()
	if s.cfg.InitType == InitHot {
		go s.run.HotStart()
	}
	s.sched.Start(s.done)
}

// timers runs the periodic work of the links: node checks, job polls
// and the scheduler's timed cycle.
func (h runHost) timers() {
	s := h.s
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var sec int64
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		sec++
		s.is.Tick()
		s.run.Poll(sec)
		s.sched.Tick()
	}
}

// logError writes a LOG_ERROR line (spec 12 §13.2).
func (s *Server) logError(fn, msg string) {
	s.log.Logf(1, "Svr", "PBS_Server", "LOG_ERROR::%s, %s", fn, msg)
}

// lookupPrimaryGroup returns the primary group name of a user, or "".
func lookupPrimaryGroup(name string) string {
	u, err := user.Lookup(name)
	if err != nil {
		return ""
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return ""
	}
	return g.Name
}
