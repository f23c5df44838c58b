package handler

import (
	"net/netip"

	"gopbs/batchreq"
	"gopbs/server/state"
)

// Writer is the reply writer of a client connection: besides
// ReplyWriter it sends replies encoded already (large job statuses are
// written straight into one buffer) and rejects a request naming the
// attribute at fault. The transport's connections implement it.
type Writer interface {
	ReplyWriter
	ValueWriter
	SendRaw(b []byte)
	RejectAttr(code int, a *batchreq.Attr)
}

// Conn is a client connection as the request handlers see it, in the
// manner of net/http's ResponseWriter: the writer of the replies, who
// makes the request being served, and what the server keeps on the
// connection from one request to the next. The transport
// (server/transport) makes one per connection and hands it with each
// request to the dispatcher, a batchreq.ServeMux[*Conn]; handlers never
// see the connection itself.
type Conn struct {
	// Writer answers the request being served (Send, Reject, ...).
	Writer
	// Request is the request being served (the handler's argument too,
	// for the helpers that name it in the logs).
	Request *batchreq.Request
	// Asker is who makes the request being served; the transport sets
	// it before each request (all but Slice, which a scheduler's
	// connection keeps).
	Asker Asker
	// Remote is the peer's address.
	Remote netip.AddrPort
	// CloseAfter, set by a handler, has the transport close the
	// connection once the request is answered.
	CloseAfter bool
	// ShutdownAsker marks the connection whose request shuts the server
	// down: the transport leaves it open for the handler's reply.
	ShutdownAsker bool
	// Cycle, on a scheduler's connection, counts the jobs run over it
	// (nil on any other).
	Cycle CycleCounter

	pending *state.Job // job being submitted on the connection
}

// CycleCounter counts the jobs a scheduling cycle runs (the scheduler
// link's sched.Cycle).
type CycleCounter interface {
	CountStart()
}

// Pending returns the job being submitted on the connection (nil if
// none): package submit's Session.
func (c *Conn) Pending() *state.Job { return c.pending }

// SetPending sets the job being submitted on the connection.
func (c *Conn) SetPending(j *state.Job) { c.pending = j }

// OK answers the request with a null (success) reply.
func (c *Conn) OK() { c.Send(batchreq.NullReply()) }
