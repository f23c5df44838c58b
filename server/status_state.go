package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
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

// SendRaw sends a reply encoded already (status.Writer).
func (c *conn) SendRaw(b []byte) { c.sendRaw(b) }

// RejectAttr sends and logs an error reply naming the attribute a
// (status.Writer).
func (c *conn) RejectAttr(code int, a *batchreq.Attr) { c.rejectAttr(code, a) }

// registerStatusHandlers registers the status and select family.
func (s *Server) registerStatusHandlers() {
	st := statusState{s}
	m := &s.mux
	m.HandleFunc(batchreq.PBS_BATCH_StatusSvr, func(c *conn, req *batchreq.Request) {
		who := c.asker()
		status.Server(st, c, &who, req.Body.(*batchreq.StatusReq))
	})
	m.HandleFunc(batchreq.PBS_BATCH_StatusQue, func(c *conn, req *batchreq.Request) {
		who := c.asker()
		status.Queue(st, c, &who, req.Body.(*batchreq.StatusReq))
	})
	m.HandleFunc(batchreq.PBS_BATCH_StatusNode, func(c *conn, req *batchreq.Request) {
		who := c.asker()
		status.Node(st, c, &who, req.Body.(*batchreq.StatusReq))
	})
	m.HandleFunc(batchreq.PBS_BATCH_StatusJob, func(c *conn, req *batchreq.Request) {
		who := c.asker()
		status.Job(st, c, &who, req)
	})
	sel := func(c *conn, req *batchreq.Request) {
		who := c.asker()
		status.Select(st, c, &who, req)
	}
	m.HandleFunc(batchreq.PBS_BATCH_SelectJobs, sel)
	m.HandleFunc(batchreq.PBS_BATCH_SelStat, sel)
}
