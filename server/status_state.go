package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/handler/status"
	"gopbs/server/state"
)

// statusState is the server as the status and select handlers (package
// status) see it.
type statusState struct{ s *Server }

func (v statusState) RLock()                         { v.s.mu.RLock() }
func (v statusState) RUnlock()                       { v.s.mu.RUnlock() }
func (v statusState) Name() string                   { return v.s.name }
func (v statusState) Attrs() state.Attrs             { return v.s.attrs }
func (v statusState) NextJob() int64                 { return v.s.nextJob }
func (v statusState) NetCounter() string             { return v.s.rate.String(v.s.now()) }
func (v statusState) Jobs() *state.Jobs              { return &v.s.jobs }
func (v statusState) FindJob(id string) *state.Job   { return v.s.findJob(id) }
func (v statusState) Queues() []*state.Queue         { return v.s.queues }
func (v statusState) Queue(name string) *state.Queue { return v.s.queueByName[name] }
func (v statusState) Nodes() []*state.Node           { return v.s.nodes }
func (v statusState) Node(name string) *state.Node   { return v.s.nodeByName[name] }
func (v statusState) WithRemaining(view state.Attrs, j *state.Job) state.Attrs {
	return v.s.withRemaining(view, j) // run_status.go
}

func (v statusState) ServerState() string {
	switch {
	case v.s.shutting:
		return "Terminating"
	case !v.s.serverFlag(pbsattr.SrvScheduling):
		return "Idle"
	case v.s.sched.Active():
		return "Scheduling"
	}
	return "Active"
}

// register registers the status and select family.
func (st statusState) register() {
	s := st.s
	m := &s.mux
	m.HandleFunc(batchreq.PBS_BATCH_StatusSvr, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		status.Server(st, c.Writer, &who, req.Body.(*batchreq.StatusReq))
	})
	m.HandleFunc(batchreq.PBS_BATCH_StatusQue, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		status.Queue(st, c.Writer, &who, req.Body.(*batchreq.StatusReq))
	})
	m.HandleFunc(batchreq.PBS_BATCH_StatusNode, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		status.Node(st, c.Writer, &who, req.Body.(*batchreq.StatusReq))
	})
	m.HandleFunc(batchreq.PBS_BATCH_StatusJob, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		status.Job(st, c.Writer, &who, req)
	})
	sel := func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		status.Select(st, c.Writer, &who, req)
	}
	m.HandleFunc(batchreq.PBS_BATCH_SelectJobs, sel)
	m.HandleFunc(batchreq.PBS_BATCH_SelStat, sel)
}
