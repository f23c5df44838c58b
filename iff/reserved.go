package iff

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
)

// The reserved (privileged) local ports TORQUE programs bind, tried from
// the top down as bindresvport(3) does. A connection from one of them is
// trusted to come from a daemon or from pbs_iff (spec 03).
const (
	FirstReservedPort = 512
	LastReservedPort  = 1023
)

// A ReservedDialer connects over TCP from a reserved local port. Ports in
// use are skipped; SO_REUSEADDR lets a port whose last connection is in
// TIME_WAIT be bound again, so the few reserved ports last.
//
// The zero value counts down from 1023 on every dial, as TORQUE daemons
// do, and fails when the process may not bind a reserved port.
type ReservedDialer struct {
	// Unprivileged makes Dial fall back to an ordinary local port when
	// the process may not bind a reserved one (the peer then treats the
	// connection as an ordinary client's, if it accepts it at all).
	Unprivileged bool
	// Spread starts each dial one port lower than the previous one
	// (wrapping around), so that many concurrent dials do not all try the
	// same busy ports first.
	Spread bool

	next atomic.Uint32
}

// DialReserved connects to addr ("host:port") from a reserved local port
// with a zero ReservedDialer.
func DialReserved(ctx context.Context, addr string) (net.Conn, error) {
	var d ReservedDialer
	return d.Dial(ctx, addr)
}

// Dial connects to addr ("host:port") from the first free reserved port.
func (d *ReservedDialer) Dial(ctx context.Context, addr string) (net.Conn, error) {
	const span = LastReservedPort - FirstReservedPort + 1
	start := uint32(0)
	if d.Spread {
		start = d.next.Add(1)
	}
	var last error
	for i := range uint32(span) {
		port := reservedPort(start, i)
		// No keep-alive probes: batch connections are short exchanges,
		// and enabling them costs four setsockopt calls per dial.
		nd := net.Dialer{LocalAddr: &net.TCPAddr{Port: port}, Control: reuseAddr, KeepAlive: -1}
		c, err := nd.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		last = err
		switch {
		case errors.Is(err, syscall.EADDRINUSE), errors.Is(err, syscall.EADDRNOTAVAIL):
			continue
		case errors.Is(err, os.ErrPermission), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
			if d.Unprivileged {
				plain := net.Dialer{KeepAlive: -1}
				return plain.DialContext(ctx, "tcp", addr)
			}
			return nil, fmt.Errorf("connect to %s from a reserved port: %w", addr, err)
		}
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return nil, fmt.Errorf("connect to %s: no free reserved port: %w", addr, last)
}

// reservedPort is the i-th port a dial starting at offset start tries:
// counting down from LastReservedPort, wrapping around after
// FirstReservedPort.
func reservedPort(start, i uint32) int {
	const span = LastReservedPort - FirstReservedPort + 1
	return LastReservedPort - int((start+i)%span)
}

// reuseAddr sets SO_REUSEADDR on a socket before it is bound.
func reuseAddr(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	}); err != nil {
		return err
	}
	return serr
}
