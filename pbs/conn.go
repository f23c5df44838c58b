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

	"gopbs/dis"
)

// Protocol constants of the batch protocol header (spec 02 §1).
const (
	PBS_BATCH_PROT_TYPE = 2
	PBS_BATCH_PROT_VER  = 1
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
func Connect(server string) (*Conn, error) {
	return Dial(server, Options{})
}

// Dial is Connect with options.
func Dial(server string, opt Options) (*Conn, error) {
	list := server
	if list == "" {
		list = ServerList()
	}
	if strings.TrimSpace(list) == "" {
		return nil, &Error{Code: PBSE_NOSERVER}
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
		return "", &Error{Code: PBSE_SYSTEM}
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
	var e encoder
	e.header(PBS_BATCH_Disconnect, c.user)
	_, _ = c.nc.Write(e.b)
	return c.nc.Close()
}

// send writes one encoded request.
func (c *Conn) send(b []byte) error {
	if c.broken {
		return &Error{Code: PBSE_PROTOCOL}
	}
	if _, err := c.nc.Write(b); err != nil {
		return &Error{Code: PBSE_PROTOCOL}
	}
	return nil
}

// roundTrip sends a request and reads its reply; accept lists the reply
// choices the request allows besides Text (an error text) — nil allows
// every choice.
func (c *Conn) roundTrip(b []byte, accept ...int) (*reply, error) {
	if err := c.send(b); err != nil {
		return nil, err
	}
	return c.readReply(accept...)
}

func (c *Conn) readReply(accept ...int) (*reply, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.timeout))
	rp, err := decodeReply(c.r)
	if err != nil {
		return nil, &Error{Code: PBSE_PROTOCOL}
	}
	if accept != nil && rp.choice != BATCH_REPLY_CHOICE_Text && !containsInt(accept, rp.choice) {
		return nil, &Error{Code: PBSE_PROTOCOL}
	}
	if rp.code != 0 {
		return rp, &Error{Code: rp.code, Text: rp.text}
	}
	return rp, nil
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Drop closes the connection without sending Disconnect, as qsub does
// after a failed submission.
func (c *Conn) Drop() error {
	if c.broken {
		return nil
	}
	return c.nc.Close()
}
