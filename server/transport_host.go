package server

import (
	"net"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/schedulers"
	"gopbs/server/transport"
)

// transportHost is the server as its transport (server/transport) sees
// it.
type transportHost struct{ s *Server }

var _ transport.Host = transportHost{}

// Policy implements transport.Host: what the checks before a request
// read, in one read-locked look, and the request counted for
// net_counter.
func (h transportHost) Policy(host string, p *transport.Policy) {
	s := h.s
	p.Now = s.now()
	s.rate.add(p.Now)
	s.mu.RLock()
	p.CredentialLifetime = s.credentialLifetimeLocked()
	p.Managers = s.attrs.Get(pbsattr.SrvManagers)
	p.Operators = s.attrs.Get(pbsattr.SrvOperators)
	p.ACLHostEnable = s.serverFlag(pbsattr.SrvACLHostEnable)
	p.ACLHosts, p.HostIsNode = "", false
	if p.ACLHostEnable {
		p.ACLHosts = s.attrs.Get(pbsattr.SrvACLHosts)
		p.HostIsNode = s.nodeByName[host] != nil
	}
	p.ACLUserEnable = s.serverFlag(pbsattr.SrvACLUserEnable)
	p.ACLUsers = ""
	if p.ACLUserEnable {
		p.ACLUsers = s.attrs.Get(pbsattr.SrvACLUsers)
	}
	p.Shutting = s.shutting
	s.mu.RUnlock()
}

// Drop implements transport.Host (state.go).
func (h transportHost) Drop(hc *handler.Conn) { h.s.dropPending(hc) }

// Commit implements transport.Host: the event loop's Commit, which
// queues the job pending on hc and submits its batch to the store under
// the lock (which fixes its order among batches).
func (h transportHost) Commit(hc *handler.Conn, id string, done func(error)) bool {
	s := h.s
	s.mu.Lock()
	j := s.pendingJob(hc, id, pbsattr.SubTransICM)
	if j == nil {
		return false // answered, unlocked
	}
	hc.SetPending(nil)
	ops := s.commitJob(j, hc.Asker.Requester())
	s.store.SubmitAsync(done, ops...)
	s.mu.Unlock()
	return true
}

// FlushLogs implements transport.Host.
func (h transportHost) FlushLogs() { h.s.log.Flush(); h.s.acct.Flush() }

// Committed implements transport.Host: the reply of a Commit the event
// loop served, and the scheduler told of the new job.
func (h transportHost) Committed(hc *handler.Conn, id string, err error, took time.Duration) {
	s := h.s
	if err != nil {
		hc.Reject(batchreq.PBSE_SYSTEM, "cannot save job")
	} else {
		handler.SendReply(hc.Writer, batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Commit, JobID: id})
		s.sched.Notify(batchreq.SCH_SCHEDULE_NEW)
	}
	s.obs.Request(batchreq.PBS_BATCH_Commit, took)
}

// peerConn makes nc, a connection the server opened to a scheduler, a
// privileged client's that sees the slice sl and counts the jobs it runs
// on cy. It reports false if nc's peer address is unusable.
func (s *Server) peerConn(nc net.Conn, sl *schedulers.Slice, cy handler.CycleCounter) (transport.Peer, bool) {
	p, ok := s.tr.NewPeer(nc)
	if ok {
		setConnSlice(p.Conn(), sl)
		p.Conn().Cycle = cy
	}
	return p, ok
}

// registerHandlers makes the transport, which registers its own requests
// (authentication), and registers the server's.
func (s *Server) registerHandlers() {
	m := &s.mux
	s.tr = transport.New(transport.Config{
		Name: s.name, Log: s.log, Mux: m, Host: transportHost{s},
		AuthWait: s.cfg.AuthWait, RequestTimeout: s.cfg.RequestTimeout, IdleTimeout: s.cfg.IdleTimeout,
		GoroutinePerConn: s.cfg.GoroutinePerConn,
	})
	m.NotFound = batchreq.HandlerFunc[*handler.Conn](func(c *handler.Conn, req *batchreq.Request) {
		c.Reject(batchreq.PBSE_UNKREQ, "")
	})
	statusState{s}.register()
	managerState{s}.register()
	submitState{s}.register()
	jobctlState{s}.register()
	locateState{s}.register()
	m.HandleFunc(batchreq.PBS_BATCH_RegistDep, s.handleRegistDep)
	m.HandleFunc(batchreq.PBS_BATCH_Shutdown, s.handleShutdown)
	schedObjects{s}.register()
	// RunJob, SignalJob, MessJob, Rerun, CheckpointJob: registerRunHandlers.
}

// handleShutdown serves qterm: the running jobs are drained as the
// manner asks and the server shuts down, answering the requester last.
func (s *Server) handleShutdown(c *handler.Conn, req *batchreq.Request) {
	if !c.Asker.Operator && !c.Asker.Manager {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	manner := req.Body.(*batchreq.Shutdown).Manner
	if manner >= 0 && manner&batchreq.SHUT_WHO_SCHED != 0 {
		s.killScheds.Store(true) // qterm -s: the schedulers stop too
		manner &^= batchreq.SHUT_WHO_SCHED
	}
	how := map[int]string{0: "Immediate", 1: "Delayed", 2: "Quick"}[manner]
	if how == "" {
		how = "Quick"
	}
	s.log.Logf(logline.EventSystem|logline.EventAdmin|logline.EventDebug, logline.ClassServer, "PBS_Server", "Shutdown request from %s ", c.Asker.Requester())
	c.ShutdownAsker = true
	s.run.Drain(manner) // immediate/delay: requeue or kill running jobs first (server/link/running)
	s.Shutdown(how)
	c.OK()
	c.CloseAfter = true
}
