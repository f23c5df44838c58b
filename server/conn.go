package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/schedulers"
	"gopbs/server/state"
)

// idleTimeout closes connections that send nothing for this long;
// tcpTimeout bounds a stall inside a request (spec 01 §8, spec README #20).
const (
	idleTimeout = 900 * time.Second
	tcpTimeout  = 6 * time.Second
	// writeTimeout bounds how long a reply may wait for a client that
	// does not read; the connection is then broken.
	writeTimeout = 60 * time.Second
)

// perm is what a requester may do.
type perm struct {
	oper, mgr bool
	svr       bool // privileged connection
}

// conn is one client connection.
type conn struct {
	// hc is the connection as the request handlers see it; its Writer
	// is the conn itself.
	hc   handler.Conn
	s    *Server
	nc   net.Conn
	auth *iff.Conn
	host string // requesting host name

	// state of the request being served
	req  *batchreq.Request
	perm perm

	started bool // bytes of the current request have been read
	// readLimit is the read deadline last set and readInRequest whether it
	// was set for a request in progress (tcpTimeout) rather than for an
	// idle connection; Read refreshes it only when needed (see Read).
	readLimit     time.Time
	readInRequest bool
	writeLimit    time.Time // write deadline last set
	out           []byte    // reply encoding buffer, reused

	// lc is the event loop's state of a connection the loop serves
	// (netloop_linux.go); nil for one served by its own goroutine.
	lc *loopConn
	// pre holds bytes the loop received but did not use before it handed
	// the connection to a goroutine; Read returns them first.
	pre []byte
}

func (s *Server) newConn(nc net.Conn) *conn {
	var ap netip.AddrPort
	if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		ap = ta.AddrPort()
	} else {
		var err error
		if ap, err = netip.ParseAddrPort(nc.RemoteAddr().String()); err != nil {
			nc.Close()
			return nil
		}
	}
	if !ap.IsValid() {
		nc.Close()
		return nil
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	c := &conn{s: s, nc: nc}
	c.hc.Writer, c.hc.Remote = c, ap
	c.auth = s.auth.Add(ap)
	c.host = s.hostName(ap.Addr())
	s.connMu.Lock()
	s.conns[c] = struct{}{}
	s.connMu.Unlock()
	return c
}

// peerConn makes nc, a connection the server opened to a scheduler, a
// privileged client's (spec 03 §5.1: its requests need no pbs_iff and
// carry full privileges) that sees the slice sl and counts the jobs it
// runs on cy. It returns nil if nc's peer address is unusable.
func (s *Server) peerConn(nc net.Conn, sl *schedulers.Slice, cy handler.CycleCounter) *conn {
	c := s.newConn(nc)
	if c == nil {
		return nil
	}
	s.auth.Remove(c.auth)
	c.auth = s.auth.AddPrivileged(c.hc.Remote)
	setConnSlice(&c.hc, sl)
	c.hc.Cycle = cy
	return c
}

// maxHostCache bounds the number of peer addresses hostName remembers.
const maxHostCache = 4096

// deadlineSlack is how stale a read deadline may get before Read moves
// it: a stall is then cut after between the timeout less deadlineSlack
// and the timeout, and a busy connection re-arms its timer about once per
// deadlineSlack instead of on every read.
const deadlineSlack = 500 * time.Millisecond

// Read implements io.Reader for the DIS reader, applying the idle timeout
// before a request starts and tcpTimeout inside one.
func (c *conn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		c.started = true
		return n, nil
	}
	d := c.s.cfg.IdleTimeout
	if c.started {
		d = c.s.cfg.RequestTimeout
	}
	now := time.Now()
	if limit := now.Add(d); c.started != c.readInRequest || limit.Sub(c.readLimit) > min(deadlineSlack, d/4) {
		c.nc.SetReadDeadline(limit)
		c.readLimit, c.readInRequest = limit, c.started
	}
	n, err := c.nc.Read(p)
	if n > 0 {
		c.started = true
	}
	return n, err
}

func (c *conn) serve() {
	s := c.s
	defer c.close()
	r := s.getReader(c)
	defer s.putReader(r)
	for {
		c.started = r.Buffered() > 0
		req, err := batchreq.ReadGoPBSServerRequest(r)
		if err != nil {
			if p := c.decodeFailure(err); p != nil {
				c.send(p)
			}
			return
		}
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		if !c.vet(req) {
			if c.hc.CloseAfter {
				return
			}
			continue
		}
		s.mux.ServeBatch(&c.hc, req)
		if c.hc.CloseAfter {
			return
		}
	}
}

// decodeFailure returns the reply to a request that could not be read
// (err from batchreq.ReadServerRequest), or nil when the connection is
// closed without one: at the end of the stream, on a broken connection,
// or on a timeout before the request's first byte (c.started false).
// Either way the connection is closed afterwards.
func (c *conn) decodeFailure(err error) *batchreq.Reply {
	if errors.Is(err, io.EOF) {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && !ne.Timeout() || errors.Is(err, net.ErrClosed) {
		return nil
	}
	if !c.started {
		return nil // idle timeout or reset before a request
	}
	return batchreq.DecodeErrorReply(err)
}

// vet makes req the connection's current request and applies the checks
// that precede every handler: the requester's credential, the server's
// ACLs and a shutdown under way. It reports whether the handler is to
// run; if not, the request has been answered and c.hc.CloseAfter tells
// whether the connection must be closed.
func (c *conn) vet(req *batchreq.Request) bool {
	s := c.s
	c.req = req
	c.hc.Request = req
	c.hc.CloseAfter = false
	now := s.now()
	s.rate.add(now)
	// One read-locked look at the server for everything the checks
	// below need; they then run in the order TORQUE applies them.
	s.mu.RLock()
	lifetime := s.credentialLifetimeLocked()
	aclCode, aclMsg := s.serverACL(c, req.User)
	c.perm = s.permFor(c, req.User)
	shutting := s.shutting
	s.mu.RUnlock()
	a := &c.hc.Asker
	a.User, a.Host = req.User, c.host
	a.Operator, a.Manager, a.Privileged = c.perm.oper, c.perm.mgr, c.perm.svr
	if err := c.auth.Check(req.User, c.host, now, lifetime); err != nil {
		var ae *iff.Error
		if errors.As(err, &ae) {
			c.reject(ae.Code, ae.Msg)
		} else {
			c.reject(batchreq.PBSE_BADCRED, "")
		}
		c.hc.CloseAfter = true
		return false
	}
	if aclCode != 0 {
		c.reject(aclCode, aclMsg)
		c.hc.CloseAfter = true
		return false
	}
	if shutting {
		switch req.Type {
		case batchreq.PBS_BATCH_AsyrunJob, batchreq.PBS_BATCH_JobCred, batchreq.PBS_BATCH_MoveJob,
			batchreq.PBS_BATCH_QueueJob, batchreq.PBS_BATCH_RunJob, batchreq.PBS_BATCH_StageIn,
			batchreq.PBS_BATCH_jobscript:
			c.reject(batchreq.PBSE_SVRDOWN, "")
			return false
		}
	}
	return true
}

// getReader returns a DIS reader on c from the server's pool (each holds
// a 16 KiB buffer: allocating one per connection was the largest
// allocation of a submission).
func (s *Server) getReader(c *conn) *dis.Reader {
	if r, ok := s.readers.Get().(*dis.Reader); ok {
		r.Reset(c)
		return r
	}
	return dis.NewReader(c)
}

// putReader returns a reader to the pool, dropping its connection.
func (s *Server) putReader(r *dis.Reader) {
	r.Reset(nil)
	s.readers.Put(r)
}

func (c *conn) close() {
	s := c.s
	s.connMu.Lock()
	delete(s.conns, c)
	s.connMu.Unlock()
	s.auth.Remove(c.auth)
	c.nc.Close()
	s.dropPending(&c.hc)
}

// send writes a reply; error replies are logged as TORQUE logs them.
func (c *conn) send(p *batchreq.Reply) {
	if p.Code != 0 {
		c.logReject(p)
	}
	c.out = p.Append(c.out[:0])
	c.sendRaw(c.out)
}

// Send sends a reply (handler.ReplyWriter).
func (c *conn) Send(p *batchreq.Reply) { c.send(p) }

// Reject sends and logs an error reply (handler.ReplyWriter).
func (c *conn) Reject(code int, msg string) { c.reject(code, msg) }

// reject answers the current request with an error code and optional MSG,
// logging the rejection as TORQUE does.
func (c *conn) reject(code int, msg string) {
	c.sendReject(batchreq.ErrorReply(code, "", msg))
}

// rejectAttr answers with a bad-attribute reply naming a.
func (c *conn) rejectAttr(code int, a *batchreq.Attr) {
	c.sendReject(batchreq.BadAttrReply(code, a))
}

func (c *conn) sendReject(p *batchreq.Reply) { c.send(p) }

// SendRaw sends a reply encoded already (handler.Writer).
func (c *conn) SendRaw(b []byte) { c.sendRaw(b) }

// RejectAttr sends and logs an error reply naming the attribute a
// (handler.Writer).
func (c *conn) RejectAttr(code int, a *batchreq.Attr) { c.rejectAttr(code, a) }

func (c *conn) logReject(p *batchreq.Reply) {
	typ := -1
	user := ""
	if c.req != nil {
		typ, user = c.req.Type, c.req.User
	}
	c.s.log.Logf(logline.EventDebug, logline.ClassRequest, "req_reject", "Reject reply code=%d(%s), aux=0, type=%s, from %s@%s",
		p.Code, p.Text, batchreq.RequestName(typ), user, c.host)
}

// sendRaw writes an already encoded (successful) reply in one write.
// The write deadline is moved only when it has gone stale by more than
// deadlineSlack (a timer operation saved on most replies).
func (c *conn) sendRaw(b []byte) {
	if c.lc != nil {
		c.lc.write(b)
		return
	}
	if limit := time.Now().Add(writeTimeout); limit.Sub(c.writeLimit) > deadlineSlack {
		c.nc.SetWriteDeadline(limit)
		c.writeLimit = limit
	}
	c.nc.Write(b)
}

func (c *conn) ok() { c.send(batchreq.NullReply()) }

// hostName returns the requesting host name of a peer address: the
// server's own name for loopback and local addresses, else the reverse
// DNS name (cached), else the dotted address.
//
// The answer for an address is remembered: a local address costs an
// enumeration of the interfaces (netlink requests) and a remote one a
// DNS query, and every connection (two per submission) asks.
func (s *Server) hostName(a netip.Addr) string {
	if a.IsLoopback() {
		return s.name
	}
	s.hostMu.Lock()
	h, ok := s.hostCache[a]
	s.hostMu.Unlock()
	if ok {
		return h
	}
	if isLocalAddr(a) {
		h = s.name
	} else {
		h = a.String()
		if names, err := net.LookupAddr(h); err == nil && len(names) > 0 {
			h = strings.TrimSuffix(names[0], ".")
		}
	}
	s.hostMu.Lock()
	if s.hostCache == nil || len(s.hostCache) >= maxHostCache {
		s.hostCache = make(map[netip.Addr]string)
	}
	s.hostCache[a] = h
	s.hostMu.Unlock()
	return h
}

// cachedHostName returns the requesting host name of a peer address if
// it is known without a look-up (loopback, or remembered by hostName).
func (s *Server) cachedHostName(a netip.Addr) (string, bool) {
	if a.IsLoopback() {
		return s.name, true
	}
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	h, ok := s.hostCache[a]
	return h, ok
}

func isLocalAddr(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// permFor computes the requester's privileges (spec 03 §3.2 step 5).
// Called with s.mu held (read).
func (s *Server) permFor(c *conn, user string) perm {
	if c.auth.Privileged() {
		return perm{oper: true, mgr: true, svr: true}
	}
	if len(user) > 32 {
		return perm{}
	}
	var p perm
	rootHere := user == "root" && strings.EqualFold(c.host, s.name)
	if rootHere {
		p.mgr, p.oper = true, true
	}
	who := user + "@" + c.host
	if aclMatchUser(state.ParseArst(s.attrs.Get(pbsattr.SrvManagers)), who) {
		p.mgr = true
	}
	if aclMatchUser(state.ParseArst(s.attrs.Get(pbsattr.SrvOperators)), who) {
		p.oper = true
	}
	return p
}

// serverACL applies the server's host and user ACLs to a request (spec
// 02 §5 step 5, spec 03 §3.2): a refusal is answered and the connection
// closed. Called with s.mu held (read).
func (s *Server) serverACL(c *conn, user string) (int, string) {
	if s.flag(pbsattr.SrvACLHostEnable) && !strings.EqualFold(c.host, s.name) && s.nodeByName[c.host] == nil {
		ok := false
		for _, h := range state.ParseArst(s.attrs.Get(pbsattr.SrvACLHosts)) {
			if hostMatch(h, c.host) {
				ok = true
				break
			}
		}
		if !ok {
			return batchreq.PBSE_BADHOST, "request not authorized from host " + c.host
		}
	}
	if !c.auth.Privileged() && s.flag(pbsattr.SrvACLUserEnable) {
		rootHere := user == "root" && strings.EqualFold(c.host, s.name)
		if !rootHere && !aclMatchUser(state.ParseArst(s.attrs.Get(pbsattr.SrvACLUsers)), user+"@"+c.host) {
			return batchreq.PBSE_PERM, ""
		}
	}
	return 0, ""
}

func (s *Server) registerHandlers() {
	m := &s.mux
	m.NotFound = batchreq.HandlerFunc[*handler.Conn](func(c *handler.Conn, req *batchreq.Request) {
		c.Reject(batchreq.PBSE_UNKREQ, "")
	})
	m.HandleFunc(batchreq.PBS_BATCH_AuthenUser, func(hc *handler.Conn, req *batchreq.Request) {
		s.authenUser(hc.Writer.(*conn), req, s.cfg.AuthWait)
	})
	m.HandleFunc(batchreq.PBS_BATCH_Connect, func(c *handler.Conn, _ *batchreq.Request) {
		c.Reject(batchreq.PBSE_UNKREQ, "")
		c.CloseAfter = true
	})
	m.HandleFunc(batchreq.PBS_BATCH_AltAuthenUser, func(c *handler.Conn, _ *batchreq.Request) {
		c.Reject(batchreq.PBSE_BADCRED, "")
		c.CloseAfter = true
	})
	s.registerStatusHandlers()
	s.registerManagerHandlers()
	s.registerSubmitHandlers()
	s.registerJobctlHandlers()
	s.registerLocateHandlers()
	m.HandleFunc(batchreq.PBS_BATCH_RegistDep, s.handleRegistDep)
	m.HandleFunc(batchreq.PBS_BATCH_Shutdown, s.handleShutdown)
	s.registerSchedHandlers()
	// RunJob, SignalJob, MessJob, Rerun, CheckpointJob: registerRunHandlers.
}

// authenUser binds the user to the connection named by port (spec 03
// §3.3). Unprivileged connections reach here only when already
// authenticated as the same user; they may vouch only for themselves.
//
// It serves AuthenticateUser, waiting up to wait for the client
// connection named to be accepted. With wait 0 (the event loop, which must
// not block) it reports later=true, having answered nothing, when that
// connection is not registered yet: the request is then to be served
// again with the full wait.
func (s *Server) authenUser(c *conn, req *batchreq.Request, wait time.Duration) (later bool) {
	body := req.Body.(*batchreq.AuthenUser)
	if body.Port < 0 || body.Port > 65535 {
		c.reject(batchreq.PBSE_BADCRED, iff.ErrNotFound.Msg)
		return false
	}
	if !c.auth.Privileged() {
		// An authenticated user may only vouch for a connection of its own.
		if int(c.hc.Remote.Port()) != body.Port {
			c.reject(batchreq.PBSE_BADCRED, iff.ErrNotFound.Msg)
			return false
		}
		c.ok()
		return false
	}
	err := s.auth.Authenticate(c.hc.Remote.Addr(), uint16(body.Port), req.User, c.host, s.now(), wait)
	if err != nil {
		if wait == 0 && errors.Is(err, iff.ErrNotFound) {
			return true
		}
		var ae *iff.Error
		if errors.As(err, &ae) {
			c.reject(ae.Code, ae.Msg)
		} else {
			c.reject(batchreq.PBSE_BADCRED, "")
		}
		return false
	}
	c.ok()
	return false
}

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
	s.run.drainJobs(manner) // immediate/delay: requeue or kill running jobs first (run_shutdown.go)
	s.Shutdown(how)
	c.OK()
	c.CloseAfter = true
}

func (c *conn) String() string { return fmt.Sprintf("conn %s (%s)", c.hc.Remote, c.host) }
