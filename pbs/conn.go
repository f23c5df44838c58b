package pbs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// DefaultTimeout is the reply timeout unless $PBSAPITIMEOUT sets one.
const DefaultTimeout = 10800 * time.Second

// Conn is an authenticated connection to a pbs_server. It is not safe for
// concurrent use: the protocol is strictly one request, one reply.
type Conn struct {
	nc      net.Conn
	r       *dis.Reader
	user    string
	server  string // the server string connected to, as given
	host    string
	port    int
	timeout time.Duration
	// broken marks the pseudo-connection to an unresolvable host (see
	// dialOne): every request on it fails with PBSE_PROTOCOL.
	broken bool
}

// Options adjust how Dial connects.
type Options struct {
	// User is the name put in request headers; default: the login name of
	// the real uid.
	User string
	// NoAuth skips pbs_iff, for connections that are privileged by their
	// source port or tests against fake servers.
	NoAuth bool
	// LocalAddr, if set, is the local address to connect from (e.g. a
	// reserved port for daemons).
	LocalAddr *net.TCPAddr
}

// Connect connects to server ("host[:port]", a comma list, or "" for the
// default server list) and authenticates the connection with pbs_iff.
// Like TORQUE's pbs_connect (spec 03 §1.1) it tries a named server first
// and then the default list, so a named server that cannot be reached
// falls back silently to the default servers.
func Connect(server string) (*Conn, error) {
	return Dial(candidates(server), Options{})
}

// candidates is the list of servers Connect tries for server: server
// itself followed by the default list, or the default list alone.
func candidates(server string) string {
	defaults := ServerList()
	switch {
	case strings.TrimSpace(server) == "":
		return defaults
	case strings.TrimSpace(defaults) == "":
		return server
	}
	return server + "," + defaults
}

// Dial connects to the servers of list ("host[:port]" or a comma list; ""
// means the default list) in turn, with options, and returns the first
// connection made. Unlike Connect it does not add the default list after
// a named server.
func Dial(server string, opt Options) (*Conn, error) {
	list := server
	if list == "" {
		list = ServerList()
	}
	if strings.TrimSpace(list) == "" {
		return nil, &Error{Code: batchreq.PBSE_NOSERVER}
	}
	var lastErr error
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		c, err := dialOne(s, opt)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// CurrentUser returns the login name of the real user id.
func CurrentUser() (string, error) {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		return "", &Error{Code: batchreq.PBSE_SYSTEM}
	}
	return u.Username, nil
}

func dialOne(server string, opt Options) (*Conn, error) {
	host, port := SplitServer(server)
	name := opt.User
	if name == "" {
		var err error
		if name, err = CurrentUser(); err != nil {
			return nil, err
		}
	}
	ips, err := ResolveHost(host)
	if err != nil || len(ips) == 0 {
		// TORQUE's connect routine hands back a bogus handle for a host
		// it cannot resolve; callers take it for a connection, nothing
		// is sent, and the first request fails with PBSE_PROTOCOL
		// ("qstat: Error (15033 - Batch protocol error) getting status
		// of server nosuchsrv", spec 03 §1.2). Reproduce that.
		return &Conn{user: name, server: server, host: host, port: port, broken: true}, nil
	}
	d := net.Dialer{}
	if opt.LocalAddr != nil {
		d.LocalAddr = opt.LocalAddr
	} else if ifname := ReadTorqueConfig(Home())["TRQ_IFNAME"]; ifname != "" {
		// torque.cfg's TRQ_IFNAME: connect from that interface's
		// address (spec 03 §1.1 step 4); an unusable name is a system
		// call failure, as TORQUE's bind would be.
		la, err := interfaceAddr(ifname)
		if err != nil {
			return nil, &Error{Code: batchreq.PBSE_SYSTEM}
		}
		d.LocalAddr = la
	}
	nc, err := d.Dial("tcp", net.JoinHostPort(ips[0].String(), strconv.Itoa(port)))
	if err != nil {
		var en syscall.Errno
		if errors.As(err, &en) {
			return nil, en
		}
		return nil, fmt.Errorf("connect to %s: %w", server, err)
	}
	if !opt.NoAuth {
		if err := authenticate(nc.(*net.TCPConn), host, port); err != nil {
			nc.Close()
			return nil, err
		}
	}
	timeout := DefaultTimeout
	if s, err := strconv.Atoi(os.Getenv("PBSAPITIMEOUT")); err == nil && s > 0 {
		timeout = time.Duration(s) * time.Second
	}
	return &Conn{nc: nc, r: dis.NewReader(nc), user: name, server: server,
		host: host, port: port, timeout: timeout}, nil
}

// User returns the user name sent in request headers.
func (c *Conn) User() string { return c.user }

// Server returns the server string this connection was made to.
func (c *Conn) Server() string { return c.server }

// Host returns the server host name (without port).
func (c *Conn) Host() string { return c.host }

// Close sends a Disconnect request and closes the connection.
func (c *Conn) Close() error {
	if c.broken {
		return nil
	}
	_, _ = c.nc.Write(DisconnectRequest(c.user))
	return c.nc.Close()
}

// request returns a request of type reqType from the connection's user
// with body b and extension ext ("" for none).
func (c *Conn) request(reqType int, b batchreq.Body, ext string) *batchreq.Request {
	req := batchreq.NewRequest(reqType, c.user, b)
	req.SetExtension(ext)
	return req
}

// roundTrip sends a request and reads its reply. A reply that does not
// decode, or whose choice the request does not accept
// (batchreq.ClientAcceptsChoice), is PBSE_PROTOCOL; a reply with a
// non-zero code is an *Error with the code and the reply's text.
func (c *Conn) roundTrip(req *batchreq.Request) (*batchreq.Reply, error) {
	if c.broken {
		return nil, &Error{Code: batchreq.PBSE_PROTOCOL}
	}
	if _, err := c.nc.Write(req.Append(nil)); err != nil {
		return nil, &Error{Code: batchreq.PBSE_PROTOCOL}
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(c.timeout))
	rp, err := batchreq.ReadReply(c.r)
	if err != nil || !batchreq.ClientAcceptsChoice(req.Type, rp.Choice) {
		return nil, &Error{Code: batchreq.PBSE_PROTOCOL}
	}
	if rp.Code != 0 {
		return rp, &Error{Code: rp.Code, Text: rp.Text}
	}
	return rp, nil
}

// Drop closes the connection without sending Disconnect, as qsub does
// after a failed submission.
func (c *Conn) Drop() error {
	if c.broken {
		return nil
	}
	return c.nc.Close()
}
