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

// Manager returns root's Manager request (what qmgr sends) with command
// cmd (batchreq.MGR_CMD_*) on the object of type obj and name.
func Manager(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root",
		&batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

// Status sends a status request of type typ (PBS_BATCH_StatusJob,
// StatusNode, StatusQue, ...) for one object and returns its attributes
// by name, a resource's as "Resource_List.mem"; nil when the daemon
// refuses or knows no such object.
func (c *Conn) Status(typ int, id string) map[string]string {
	c.t.Helper()
	p := c.Do(batchreq.NewRequest(typ, "root", &batchreq.StatusReq{ID: id}))
	if p.Code != 0 || len(p.Status) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, a := range p.Status[0].Attrs {
		name := a.Name
		if a.HasResource {
			name += "." + a.Resource
		}
		out[name] = a.Value
	}
	return out
}

// Submit queues a job with attrs and script as qsub does (QueueJob,
// JobScript, ReadyToCommit, Commit) and returns its id; any refusal
// fails the test.
func (c *Conn) Submit(attrs batchreq.AttrList, script string) string {
	c.t.Helper()
	id := c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: attrs})).JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte(script)}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	} {
		c.Must(r)
	}
	return id
}
