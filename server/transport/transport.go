// Package transport is pbs_server's side of its client connections: the
// listener, the event loop, connections and their lifetimes,
// authentication (the pbs_iff table, AuthenticateUser, the server's host
// and user ACLs, who is a manager or an operator) and the replies.
//
// A request is read and decoded here (package batchreq), checked, and
// handed with the connection as the handlers see it, a *handler.Conn, to
// the dispatcher (a batchreq.ServeMux) the server has filled; the
// handlers answer through the connection's handler.Writer. The transport
// knows nothing of jobs except the one fast path it serves itself: the
// event loop (netloop_linux.go) answers the Commit of a submission once
// the store has made it durable, through Host.
//
// On Linux an event loop accepts the connections and serves the requests
// of job submissions itself over non-blocking sockets, handing any other
// request, and any connection that could make it wait, to a goroutine of
// its own; elsewhere (and with Config.GoroutinePerConn) one goroutine per
// connection reads and serves its requests.
package transport

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
)

// DefaultIdleTimeout closes connections that send nothing for this long;
// DefaultRequestTimeout bounds a stall inside a request (tcp_timeout,
// spec 01 §8, spec README #20).
const (
	DefaultIdleTimeout    = 900 * time.Second
	DefaultRequestTimeout = 6 * time.Second
	// writeTimeout bounds how long a reply may wait for a client that
	// does not read; the connection is then broken.
	writeTimeout = 60 * time.Second
)

// Host is the server as the transport sees it.
type Host interface {
	// Policy fills in p with what the checks before each request read
	// of the server (host is the requesting host), in one look under
	// the server's lock, and counts the request (net_counter).
	Policy(host string, p *Policy)
	// Drop discards the submission left pending on a connection that
	// closes (hc.Pending() is not nil).
	Drop(hc *handler.Conn)
	// Commit serves the Commit of the job id pending on hc for the event
	// loop, which must not wait: the job is queued and its batch handed
	// to the store, which calls done on its own goroutine once the batch
	// is durable (or failed). It reports false, having answered, if hc
	// has no such job ready to commit.
	Commit(hc *handler.Conn, id string, done func(error)) bool
	// FlushLogs writes the log lines held for the Commits made durable;
	// called in done before their replies are posted to the loop.
	FlushLogs()
	// Committed answers a Commit of the event loop once done has been
	// called with err; took is the time from its decoding.
	Committed(hc *handler.Conn, id string, err error, took time.Duration)
}

// Policy is what the checks before each request read of the server.
type Policy struct {
	Now time.Time
	// CredentialLifetime is how long an AuthenticateUser holds
	// (negative: for ever).
	CredentialLifetime time.Duration
	// Managers and Operators are the values of the server's managers
	// and operators attributes (user@host patterns, comma-separated).
	Managers, Operators string
	// ACLHostEnable and ACLHosts are the server's host ACL; HostIsNode
	// reports whether the requesting host is a node (nodes pass it).
	ACLHostEnable bool
	ACLHosts      string
	HostIsNode    bool
	// ACLUserEnable and ACLUsers are the server's user ACL.
	ACLUserEnable bool
	ACLUsers      string
	// Shutting is set once the server is shutting down.
	Shutting bool
}

// Config configures a Transport.
type Config struct {
	// Name is the server's host name: requests from loopback and from
	// the server's own addresses come from it.
	Name string
	Log  *pbslog.Logger
	// Mux dispatches the requests; New registers the transport's own
	// (AuthenticateUser, Connect, AltAuthenUser) on it.
	Mux  *batchreq.ServeMux[*handler.Conn]
	Host Host
	// AuthWait bounds how long an AuthenticateUser waits for the client
	// connection it names to be accepted.
	AuthWait time.Duration
	// RequestTimeout bounds a stall inside a request; IdleTimeout
	// closes connections idle between requests.
	RequestTimeout, IdleTimeout time.Duration
	// GoroutinePerConn serves every connection on its own goroutine
	// instead of the event loop.
	GoroutinePerConn bool
}

// Transport serves the server's client connections.
type Transport struct {
	cfg  Config
	mux  *batchreq.ServeMux[*handler.Conn]
	host Host
	auth *iff.Table
	ln   net.Listener

	mu     sync.Mutex
	conns  map[*conn]struct{} // connections served by goroutines
	closed bool               // Close has closed conns
	loop   *netLoop           // the event loop, if Serve runs one
	wg     sync.WaitGroup     // goroutines serving connections

	readers sync.Pool // *dis.Reader of closed connections, reused

	hostMu    sync.Mutex
	hostCache map[netip.Addr]string // reverse DNS of peers
}

// New returns a transport serving through cfg.Mux, on which it
// registers its own requests. Listen then gives it its socket.
func New(cfg Config) *Transport {
	t := &Transport{cfg: cfg, mux: cfg.Mux, host: cfg.Host, auth: iff.NewTable(), conns: make(map[*conn]struct{})}
	t.register()
	return t
}

// Listen sets the listening socket Serve accepts on.
func (t *Transport) Listen(ln net.Listener) { t.ln = ln }

// Addr returns the listening address.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

// Port returns the listening port (0 if unknown).
func (t *Transport) Port() int {
	if t.ln != nil {
		if a, ok := t.ln.Addr().(*net.TCPAddr); ok {
			return a.Port
		}
	}
	return 0
}

// EventLoop reports whether Serve serves the connections on the event
// loop.
func (t *Transport) EventLoop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loop != nil
}

// Serve accepts connections until Close. The goroutines serving
// connections may still run: Wait waits for them.
func (t *Transport) Serve() {
	if l := t.startNetLoop(); l != nil {
		l.run()
		return
	}
	for {
		nc, err := t.ln.Accept()
		if err != nil {
			t.mu.Lock()
			closed := t.closed
			t.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c := t.newConn(nc)
		if c == nil {
			continue
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			c.serve()
		}()
	}
}

// Wait waits for the goroutines serving connections to end.
func (t *Transport) Wait() { t.wg.Wait() }

// startNetLoop hands the listening socket to an event loop, unless the
// configuration, the platform or the listener rules it out or the
// transport is closed already (then nil: Serve accepts on t.ln itself).
func (t *Transport) startNetLoop() *netLoop {
	if t.cfg.GoroutinePerConn {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.loop = newNetLoop(t, t.ln)
	return t.loop
}

// Close stops accepting and closes every connection except the one
// whose request shuts the server down (handler.Conn.ShutdownAsker),
// whose reply its handler sends.
func (t *Transport) Close() {
	t.ln.Close()
	t.mu.Lock()
	t.closed = true
	for c := range t.conns {
		if !c.hc.ShutdownAsker {
			c.nc.Close()
		}
	}
	loop := t.loop
	t.mu.Unlock()
	if loop != nil {
		loop.stop()
	}
}

// Peer is a connection the server opened to a peer (a scheduler), served
// as a privileged client's on its caller's goroutine.
type Peer struct{ c *conn }

// NewPeer makes nc a privileged client's connection (spec 03 §5.1: its
// requests need no pbs_iff and carry full privileges). It reports false,
// having closed nc, if nc's peer address is unusable.
func (t *Transport) NewPeer(nc net.Conn) (Peer, bool) {
	c := t.newConn(nc)
	if c == nil {
		return Peer{}, false
	}
	t.auth.Remove(c.auth)
	c.auth = t.auth.AddPrivileged(c.hc.Remote)
	return Peer{c}, true
}

// Conn returns the connection as the handlers see it.
func (p Peer) Conn() *handler.Conn { return &p.c.hc }

// Serve serves the peer's requests until it closes the connection.
func (p Peer) Serve() { p.c.serve() }

// newConn registers a connection served by a goroutine; nil (nc closed)
// if its peer address is unusable.
func (t *Transport) newConn(nc net.Conn) *conn {
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
	c := &conn{t: t, nc: nc}
	c.hc.Writer, c.hc.Remote = c, ap
	c.auth = t.auth.Add(ap)
	c.host = t.hostName(ap.Addr())
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
	return c
}

// getReader returns a DIS reader on c from the pool (each holds a 16 KiB
// buffer: allocating one per connection was the largest allocation of a
// submission).
func (t *Transport) getReader(c *conn) *dis.Reader {
	if r, ok := t.readers.Get().(*dis.Reader); ok {
		r.Reset(c)
		return r
	}
	return dis.NewReader(c)
}

// putReader returns a reader to the pool, dropping its connection.
func (t *Transport) putReader(r *dis.Reader) {
	r.Reset(nil)
	t.readers.Put(r)
}
