// Package iff implements the server side of TORQUE's privileged-port
// authentication (spec 03): connections from a port below 1024 are trusted
// daemons; any other connection is unusable until a privileged helper
// (pbs_iff) sends an AuthenticateUser request naming the connection's
// source port, which binds a user name to it.
//
// The server registers every accepted connection in a Table, asks the
// table to Authenticate when an AuthenticateUser arrives, and calls Check
// on the connection before dispatching each request.
package iff

import (
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// PBSE codes produced by this package (spec 02 §9).
const (
	PBSE_PERM    = 15007
	PBSE_BADCRED = 15021
	PBSE_EXPIRED = 15022
)

// DefaultLifetime is the credential lifetime when the server attribute
// credential_lifetime is unset.
const DefaultLifetime = 3600 * time.Second

// clockSkew is how far in the future a credential timestamp may lie.
const clockSkew = 300 * time.Second

// maxUser is the number of header user characters compared (PBS_MAXUSER).
const maxUser = 32

// Error is an authentication failure: Code is the PBSE number of the reply
// and Msg the text after "MSG=" (empty for none).
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("iff: PBSE %d", e.Code)
	}
	return fmt.Sprintf("iff: PBSE %d: %s", e.Code, e.Msg)
}

// ErrNotFound is returned by Authenticate when no registered connection has
// the named peer address and port.
var ErrNotFound = &Error{Code: PBSE_BADCRED, Msg: "cannot authenticate user. Client connection not found"}

// Conn is the authentication state of one client connection.
type Conn struct {
	remote     netip.AddrPort
	privileged bool

	mu   sync.Mutex
	user string
	host string
	when time.Time
	auth bool
}

// Remote returns the peer address of the connection.
func (c *Conn) Remote() netip.AddrPort { return c.remote }

// Privileged reports whether the connection came from a reserved port.
func (c *Conn) Privileged() bool { return c.privileged }

// Credential returns the bound user and host and whether the connection has
// been authenticated.
func (c *Conn) Credential() (user, host string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.user, c.host, c.auth
}

// Check validates a request on this connection made in the name of user
// from host. Privileged connections always pass. lifetime < 0 disables the
// expiry check. On failure the server replies with the error and closes
// the connection.
func (c *Conn) Check(user, host string, now time.Time, lifetime time.Duration) error {
	if c.privileged {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.auth {
		return &Error{Code: PBSE_BADCRED}
	}
	if truncate(user, maxUser) != truncate(c.user, maxUser) {
		return &Error{Code: PBSE_BADCRED, Msg: "Users do not match"}
	}
	if truncate(host, 1024) != truncate(c.host, 1024) {
		return &Error{Code: PBSE_BADCRED, Msg: "Hosts do not match"}
	}
	if now.Before(c.when.Add(-clockSkew)) || (lifetime >= 0 && now.After(c.when.Add(lifetime))) {
		return &Error{Code: PBSE_EXPIRED}
	}
	return nil
}

// sameHost reports whether two peer addresses belong to the same host:
// equal, or both loopback (a client may reach the server over 127.0.0.1
// while its pbs_iff resolves the server name to ::1).
func sameHost(a, b netip.Addr) bool {
	a, b = a.Unmap(), b.Unmap()
	return a == b || a.IsLoopback() && b.IsLoopback()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Table is the server's connection table for authentication. It is safe
// for concurrent use.
type Table struct {
	mu sync.Mutex
	// changed, if not nil, is closed (and dropped) when a connection is
	// added: Authenticate calls waiting for their connection make it.
	changed chan struct{}
	byPort  map[uint16][]*Conn
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{byPort: make(map[uint16][]*Conn)}
}

// Add registers an accepted connection and classifies it by source port.
func (t *Table) Add(remote netip.AddrPort) *Conn {
	return t.add(remote, remote.Port() < 1024)
}

// AddPrivileged registers a connection that is privileged whatever its
// peer port: one the server opened itself from a reserved port, such as
// its connection to the scheduler (spec 03 §5.1), whose peer is the
// scheduler's listening port.
func (t *Table) AddPrivileged(remote netip.AddrPort) *Conn {
	return t.add(remote, true)
}

func (t *Table) add(remote netip.AddrPort, privileged bool) *Conn {
	c := &Conn{remote: remote, privileged: privileged}
	t.mu.Lock()
	t.byPort[remote.Port()] = append(t.byPort[remote.Port()], c)
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
	t.mu.Unlock()
	return c
}

// Remove forgets a closed connection.
func (t *Table) Remove(c *Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.byPort[c.remote.Port()]
	for i, x := range list {
		if x == c {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(t.byPort, c.remote.Port())
	} else {
		t.byPort[c.remote.Port()] = list
	}
}

// Len returns the number of registered connections.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, l := range t.byPort {
		n += len(l)
	}
	return n
}

// Authenticate binds user and host to the connection whose peer is
// (from's address, port): the request of a pbs_iff that connected from
// address from (loopback addresses count as one host). Both forms of pbs_iff (descriptor and port number) send
// only the port. The match is on the peer address and port, which is
// stricter than TORQUE's reverse-name comparison and accepts every real
// client. If no such connection is registered yet, Authenticate waits up
// to wait for it to appear (the client connection and the helper's race
// in a concurrent server). A connection that is already authenticated or
// privileged is left unchanged and the call succeeds, as in TORQUE.
func (t *Table) Authenticate(from netip.Addr, port uint16, user, host string, now time.Time, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		t.mu.Lock()
		var found *Conn
		for _, c := range t.byPort[port] {
			if sameHost(c.remote.Addr(), from) {
				found = c
				break
			}
		}
		var changed chan struct{}
		if found == nil {
			if t.changed == nil {
				t.changed = make(chan struct{})
			}
			changed = t.changed
		}
		t.mu.Unlock()
		if found != nil {
			if found.privileged {
				return nil
			}
			found.mu.Lock()
			if !found.auth {
				found.user, found.host, found.when, found.auth = user, host, now, true
			}
			found.mu.Unlock()
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ErrNotFound
		}
		timer := time.NewTimer(left)
		select {
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}
