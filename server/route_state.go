package server

import (
	"net"
	"strconv"

	"gopbs/batchreq"
	"gopbs/server/pbslog"
	"gopbs/server/route"
	"gopbs/server/state"
	"gopbs/server/store"
)

// routeHost is the server as routing and moves to other servers (package
// route) see it.
type routeHost struct{ s *Server }

func (h routeHost) Lock()                                { h.s.mu.Lock() }
func (h routeHost) Unlock()                              { h.s.mu.Unlock() }
func (h routeHost) Log() *pbslog.Logger                  { return h.s.log }
func (h routeHost) Acct() *pbslog.Accounting             { return h.s.acct }
func (h routeHost) Begin() *state.Txn                    { return h.s.db.Begin() }
func (h routeHost) Jobs() *state.Jobs                    { return &h.s.jobs }
func (h routeHost) Tracking() *state.Tracking            { return &h.s.tracking }
func (h routeHost) Queue(name string) *state.Queue       { return h.s.queueByName[name] }
func (h routeHost) Evaluate(tx *state.Txn, j *state.Job) { h.s.life.Evaluate(tx, j) }
func (h routeHost) Abort(tx *state.Txn, j *state.Job) {
	h.s.life.Complete(tx, j, false)
}
func (h routeHost) Purge(tx *state.Txn, j *state.Job) { h.s.life.Purge(tx, j) }

func (h routeHost) Move(tx *state.Txn, j *state.Job, from, to *state.Queue) {
	h.s.life.Move(tx, j, from, to)
}

func (h routeHost) AdmitRouted(j *state.Job, q *state.Queue) *batchreq.Reply {
	return h.s.admission.AdmitRouted(j, q)
}

func (h routeHost) Script(key string) ([]byte, error) { return h.s.store.Get(store.Script, key) }

// Self is the server's name and the port it listens on.
func (h routeHost) Self() route.Self {
	self := route.Self{Name: h.s.name}
	if a, ok := h.s.Addr().(*net.TCPAddr); ok {
		self.Port = strconv.Itoa(a.Port)
	}
	return self
}
