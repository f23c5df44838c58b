package transport

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/iff"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// register registers the transport's own requests on the mux: the
// authentication of a client connection (AuthenticateUser) and the
// requests GoPBS refuses outright (Connect, AltAuthenUser).
func (t *Transport) register() {
	m := t.mux
	m.HandleFunc(batchreq.PBS_BATCH_AuthenUser, func(hc *handler.Conn, req *batchreq.Request) {
		c, ok := hc.Writer.(*conn)
		if !ok { // not a connection of this transport's: nobody to vouch for
			hc.Reject(batchreq.PBSE_BADCRED, "")
			return
		}
		t.authenUser(c, req, t.cfg.AuthWait)
	})
	m.HandleFunc(batchreq.PBS_BATCH_Connect, func(c *handler.Conn, _ *batchreq.Request) {
		c.Reject(batchreq.PBSE_UNKREQ, "")
		c.CloseAfter = true
	})
	m.HandleFunc(batchreq.PBS_BATCH_AltAuthenUser, func(c *handler.Conn, _ *batchreq.Request) {
		c.Reject(batchreq.PBSE_BADCRED, "")
		c.CloseAfter = true
	})
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
func (t *Transport) authenUser(c *conn, req *batchreq.Request, wait time.Duration) (later bool) {
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
	err := t.auth.Authenticate(c.hc.Remote.Addr(), uint16(body.Port), req.User, c.host, c.policy.Now, wait)
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

// rights returns the requester's privileges (spec 03 §3.2 step 5) as
// operator, manager and privileged peer, from the server's managers and
// operators lists in p.
func (t *Transport) rights(c *conn, user string, p *Policy) (oper, mgr, svr bool) {
	if c.auth.Privileged() {
		return true, true, true
	}
	if len(user) > 32 {
		return false, false, false
	}
	if user == "root" && strings.EqualFold(c.host, t.cfg.Name) {
		mgr, oper = true, true // root on the server's host
	}
	who := user + "@" + c.host
	if state.MatchUserACL(state.ParseArst(p.Managers), who) {
		mgr = true
	}
	if state.MatchUserACL(state.ParseArst(p.Operators), who) {
		oper = true
	}
	return oper, mgr, false
}

// serverACL applies the server's host and user ACLs in p to a request
// (spec 02 §5 step 5, spec 03 §3.2): a refusal (a code and its message)
// is answered and the connection closed.
func (t *Transport) serverACL(c *conn, user string, p *Policy) (int, string) {
	if p.ACLHostEnable && !strings.EqualFold(c.host, t.cfg.Name) && !p.HostIsNode {
		ok := false
		for _, h := range state.ParseArst(p.ACLHosts) {
			if attr.MatchHostEntry(h, c.host) {
				ok = true
				break
			}
		}
		if !ok {
			return batchreq.PBSE_BADHOST, "request not authorized from host " + c.host
		}
	}
	if !c.auth.Privileged() && p.ACLUserEnable {
		rootHere := user == "root" && strings.EqualFold(c.host, t.cfg.Name)
		if !rootHere && !state.MatchUserACL(state.ParseArst(p.ACLUsers), user+"@"+c.host) {
			return batchreq.PBSE_PERM, ""
		}
	}
	return 0, ""
}

// maxHostCache bounds the number of peer addresses hostName remembers.
const maxHostCache = 4096

// hostName returns the requesting host name of a peer address: the
// server's own name for loopback and local addresses, else the reverse
// DNS name (cached), else the dotted address.
//
// The answer for an address is remembered: a local address costs an
// enumeration of the interfaces (netlink requests) and a remote one a
// DNS query, and every connection (two per submission) asks.
func (t *Transport) hostName(a netip.Addr) string {
	if a.IsLoopback() {
		return t.cfg.Name
	}
	t.hostMu.Lock()
	h, ok := t.hostCache[a]
	t.hostMu.Unlock()
	if ok {
		return h
	}
	if IsLocalAddr(a) {
		h = t.cfg.Name
	} else {
		h = a.String()
		if names, err := net.LookupAddr(h); err == nil && len(names) > 0 {
			h = strings.TrimSuffix(names[0], ".")
		}
	}
	t.hostMu.Lock()
	if t.hostCache == nil || len(t.hostCache) >= maxHostCache {
		t.hostCache = make(map[netip.Addr]string)
	}
	t.hostCache[a] = h
	t.hostMu.Unlock()
	return h
}

// cachedHostName returns the requesting host name of a peer address if
// it is known without a look-up (loopback, or remembered by hostName).
func (t *Transport) cachedHostName(a netip.Addr) (string, bool) {
	if a.IsLoopback() {
		return t.cfg.Name, true
	}
	t.hostMu.Lock()
	defer t.hostMu.Unlock()
	h, ok := t.hostCache[a]
	return h, ok
}

// IsLocalAddr reports whether a is an address of one of this machine's
// interfaces.
func IsLocalAddr(a netip.Addr) bool {
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
