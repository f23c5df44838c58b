// This file serves the scheduler port: it binds it (Listen), accepts the
// server's connections (Serve) and acts on the command each one carries
// (Handle).

package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/sched/svrconn"
)

// Listen binds the scheduler port on the configured address (by default
// the address of the local host name, not the wildcard address).
func (d *Daemon) Listen() (net.Listener, error) {
	host := d.opts.ListenAddr
	if host == "" {
		host = "127.0.0.1"
		if hn, err := os.Hostname(); err == nil {
			if addrs, err := net.LookupHost(hn); err == nil && len(addrs) > 0 {
				host = addrs[0]
				for _, a := range addrs {
					if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
						host = a
						break
					}
				}
			}
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(d.opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("bind scheduler port: %w", err)
	}
	return ln, nil
}

// ErrQuit is returned by Serve after a QUIT command.
var ErrQuit = errors.New("scheduler quit")

// Serve accepts connections until ctx ends, the listener fails, or a
// QUIT command arrives. Connections are handled one at a time.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("accept: %w", err)
			}
			// Transient (e.g. out of descriptors): log, pause, go on.
			d.Log.Log(logline.EventError, logline.ClassServer, "main", "accept: "+err.Error())
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		if reason := d.allowed(c.RemoteAddr()); reason != "" {
			d.Log.Log(logline.EventSystem, logline.ClassRequest, "server_command", reason+" "+c.RemoteAddr().String())
			c.Close()
			continue
		}
		if d.Handle(ctx, c) {
			if d.fatal != nil {
				return d.fatal
			}
			return ErrQuit
		}
	}
}

// Handle reads the command from an accepted connection and acts on it; it
// reports whether the scheduler should exit. The connection is closed.
func (d *Daemon) Handle(ctx context.Context, c net.Conn) (quit bool) {
	conn := svrconn.New(c)
	defer conn.Close()
	c.SetDeadline(time.Now().Add(CommandWait))
	cmd, err := conn.ReadCommand()
	if err != nil {
		d.Log.Log(logline.EventError, logline.ClassServer, "server_command", err.Error())
		return false
	}
	// The alarm runs from the command on: it bounds the cycle, not the
	// time the peer took to send the command.
	deadline := time.Now().Add(d.opts.Alarm)
	conn.SetDeadline(deadline)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	switch cmd {
	case batchreq.SCH_SCHEDULE_NEW, batchreq.SCH_SCHEDULE_TERM, batchreq.SCH_SCHEDULE_TIME,
		batchreq.SCH_SCHEDULE_CMD, batchreq.SCH_SCHEDULE_FIRST:
		_, err := d.Cycle(ctx, conn)
		if d.policyFatal() || errors.Is(err, ErrNoPartition) {
			return true
		}
		if err != nil || !time.Now().Before(deadline) {
			var ne net.Error
			if !time.Now().Before(deadline) || errors.As(err, &ne) && ne.Timeout() {
				d.Log.Log(logline.EventSystem, logline.ClassServer, "schedule", "scheduling iteration took too long")
			} else {
				d.Log.Log(logline.EventError, logline.ClassServer, "schedule", err.Error())
			}
		}
	case batchreq.SCH_CONFIGURE:
		if err := d.LoadPolicy(); err != nil {
			d.Log.Log(logline.EventError, logline.ClassServer, "schedinit", err.Error())
		}
	case batchreq.SCH_QUIT:
		return true
	}
	return false
}
