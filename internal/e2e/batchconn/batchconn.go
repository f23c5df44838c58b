// Package batchconn is the batch-protocol client the end-to-end tests
// share: a connection to a GoPBS daemon (from a reserved port, as root
// and the daemons connect, or any connection a test authenticated
// otherwise) that sends one request at a time and reads its reply,
// failing the test on transport errors.
package batchconn

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
)

// DefaultTimeout bounds one request and its reply unless Conn.Timeout is
// set.
const DefaultTimeout = 20 * time.Second

// Conn is a batch-protocol connection of a test.
type Conn struct {
	// Timeout bounds each request and its reply (zero: DefaultTimeout).
	Timeout time.Duration

	t  testing.TB
	nc net.Conn
	r  *dis.Reader
}

// New returns a Conn over nc; it is closed when the test ends.
func New(t testing.TB, nc net.Conn) *Conn {
	t.Cleanup(func() { nc.Close() })
	return &Conn{t: t, nc: nc, r: dis.NewReader(nc)}
}

// DialReserved connects to addr ("host:port") from a reserved local port,
// which the daemons trust as root's (the test must run as root), trying
// again until limit passes while the daemon is not listening yet.
func DialReserved(t testing.TB, addr string, limit time.Duration) *Conn {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		nc, err := iff.DialReserved(ctx, addr)
		cancel()
		if err == nil {
			return New(t, nc)
		}
		if time.Now().After(deadline) {
			t.Fatalf("connect to %s from a reserved port: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Reader returns the DIS reader replies are read with, for tests that
// read more than Do does.
func (c *Conn) Reader() *dis.Reader { return c.r }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Do sends req and returns the reply, whatever its code. The test fails
// when the request cannot be sent or no reply can be read in time.
func (c *Conn) Do(req *batchreq.Request) *batchreq.Reply {
	c.t.Helper()
	rep, err := c.Try(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return rep
}

// Must is Do that also fails the test when the reply's code is not 0.
func (c *Conn) Must(req *batchreq.Request) *batchreq.Reply {
	c.t.Helper()
	rep := c.Do(req)
	if rep.Code != 0 {
		c.t.Fatalf("%s: error %d %s", batchreq.RequestName(req.Type), rep.Code, rep.Text)
	}
	return rep
}

// Try sends req and returns the reply or the transport error, for tests
// that expect the daemon to drop the connection.
func (c *Conn) Try(req *batchreq.Request) (*batchreq.Reply, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if err := c.nc.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, fmt.Errorf("batch request: %w", err)
	}
	if _, err := c.nc.Write(req.Append(nil)); err != nil {
		return nil, fmt.Errorf("send %s: %w", batchreq.RequestName(req.Type), err)
	}
	rep, err := batchreq.ReadReply(c.r)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", batchreq.RequestName(req.Type), err)
	}
	return rep, nil
}
