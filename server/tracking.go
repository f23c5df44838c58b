package server

import (
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/handler/locate"
	"gopbs/server/state"
	"gopbs/server/store"
)

// locateState is the server as the locate and track handlers (package
// locate) see it.
type locateState struct{ s *Server }

func (l locateState) RLock()                    { l.s.mu.RLock() }
func (l locateState) RUnlock()                  { l.s.mu.RUnlock() }
func (l locateState) Lock()                     { l.s.mu.Lock() }
func (l locateState) Unlock()                   { l.s.mu.Unlock() }
func (l locateState) HasJob(id string) bool     { return l.s.findJob(id) != nil }
func (l locateState) Tracking() *state.Tracking { return &l.s.tracking }
func (l locateState) ServerName() string        { return l.s.name }
func (l locateState) Commit(w handler.ReplyWriter, ops []store.Op, p *batchreq.Reply) {
	l.s.commitAndReply(w, ops, p)
}

// register registers the locate and track family.
func (st locateState) register() {
	s := st.s
	s.mux.HandleFunc(batchreq.PBS_BATCH_LocateJob, func(c *handler.Conn, req *batchreq.Request) {
		locate.LocateJob(st, c.Writer, req.Body.(*batchreq.JobID))
	})
	s.mux.HandleFunc(batchreq.PBS_BATCH_TrackJob, func(c *handler.Conn, req *batchreq.Request) {
		locate.TrackJob(st, c.Writer, c.Asker, req.Body.(*batchreq.TrackJob))
	})
}
