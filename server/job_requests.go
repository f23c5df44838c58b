package server

import (
	"net"
	"strconv"

	"gopbs/batchreq"
	"gopbs/server/depend"
	"gopbs/server/handler"
	"gopbs/server/lifecycle"
	"gopbs/server/link/remote"
	"gopbs/server/state"
	"gopbs/server/store"
)

// The job life cycle is package lifecycle's (s.life) and the dependency
// rules with the sync sets package depend's (s.deps); this file makes
// them (newLife) over the adapters lifeHost and dependHost, and holds the
// request helpers the handlers and links in package server share.

// newLife makes the dependency rules and the life cycle over the
// server's state. Called by New once the store is open.
func (s *Server) newLife() {
	s.deps = depend.New(depend.Config{Name: s.name, DB: &s.db, Log: s.log, Now: s.now, Host: dependHost{s}, Lock: &s.mu})
	s.life = lifecycle.New(lifecycle.Config{Name: s.name, DB: &s.db, Deps: s.deps, Log: s.log, Acct: s.acct, Now: s.now, Host: lifeHost{s}})
}

// lifeHost is the server as the life cycle sees it (lifecycle.Host).
type lifeHost struct{ s *Server }

func (h lifeHost) ApplyDefaults(j *state.Job, q *state.Queue) { h.s.admission.ApplyDefaults(j, q) }

func (h lifeHost) Route(tx *state.Txn, j *state.Job, now int64) { h.s.router.Route(tx, j, now) } // server/route

// dependHost is the server as the dependency rules see it (depend.Host).
type dependHost struct{ s *Server }

// MailAbort sends the abort mail when the server runs jobs (not in the
// tests without a MOM link).
func (h dependHost) MailAbort(j *state.Job, text string) {
	s := h.s
	if s.run == nil {
		return
	}
	if m := s.mailer.Compose(s.attrs, j, 'a', false, text); m != nil {
		go s.mailer.Send(j.ID, m) // the caller holds s.mu
	}
}

func (h dependHost) SyncSelf() string {
	s := h.s
	if a, ok := s.Addr().(*net.TCPAddr); ok && a.Port != batchreq.PBS_BATCH_SERVICE_PORT {
		return s.name + ":" + strconv.Itoa(a.Port)
	}
	return s.name
}

func (h dependHost) Destination(server string) (string, bool) {
	dest := h.s.router.Destination("x@" + server) // server/route
	return dest.Addr, dest.Addr != "" && !dest.Bad
}

func (h dependHost) SendRegistDep(addr string, body *batchreq.RegistDep) (*batchreq.Reply, error) {
	return remote.Request(addr, batchreq.PBS_BATCH_RegistDep, body)
}

func (h dependHost) Shutting() bool { return h.s.shutting }

// handleRegistDep serves a RegisterDependency (request type 13) from
// another server: lifecycle.Life.RegistDep.
func (s *Server) handleRegistDep(c *handler.Conn, req *batchreq.Request) {
	if !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	s.mu.Lock()
	tx := s.db.Begin()
	if code := s.life.RegistDep(tx, req.Body.(*batchreq.RegistDep)); code != 0 {
		if !tx.Empty() {
			tx.Commit() // a sync set opened before the refusal
		}
		s.mu.Unlock()
		c.Reject(code, "")
		return
	}
	s.commitAndReply(c, tx.Ops(), batchreq.NullReply())
}

// commitAndReply submits the batch ops (under the lock held by the caller), unlocks,
// waits for durability and sends reply p.
func (s *Server) commitAndReply(w replyWriter, ops []store.Op, p *batchreq.Reply) {
	if s.waitSaved(w, s.store.Submit(ops...)) {
		w.Send(p)
	}
}

// waitSaved unlocks s.mu and waits for a submitted batch. If the batch
// could not be saved it answers the request with a system error and
// returns false.
func (s *Server) waitSaved(w replyWriter, wait func() error) bool {
	s.mu.Unlock()
	if err := wait(); err != nil {
		w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job"))
		return false
	}
	return true
}
