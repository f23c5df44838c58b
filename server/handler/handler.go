// Package handler holds what pbs_server's request handlers share, so that
// a family of handlers can live in a package of its own: the reply writer
// a handler answers through, who is asking, and Conn, a client connection
// as the handlers see it. It knows no socket: the transport's
// connections (server/transport) implement Writer.
//
// A handler is a function from (the state it needs, the reply writer, who
// asks, the decoded request) to a reply, in the manner of net/http's
// handlers over a ResponseWriter and a Request. Each family declares the
// narrow interface to the server's state it needs (see package locate).
package handler

import (
	"gopbs/batchreq"
	"gopbs/server/state"
)

// ReplyWriter answers the request being served. Exactly one reply is sent
// per request.
type ReplyWriter interface {
	// Send sends the reply p.
	Send(p *batchreq.Reply)
	// Reject sends an error reply of code with the message msg ("" for the
	// code's standard text) and logs the rejection as the server does.
	Reject(code int, msg string)
}

// ValueWriter is implemented by reply writers that also take a reply by
// value, as the transport's connections do. A reply given to Send
// through the ReplyWriter interface escapes to the heap; one given by
// value does not, which counts on the submission path (four replies a
// job).
type ValueWriter interface {
	SendValue(p batchreq.Reply)
}

// SendReply sends p through w, by value when w is a ValueWriter.
func SendReply(w ReplyWriter, p batchreq.Reply) {
	if v, ok := w.(ValueWriter); ok {
		v.SendValue(p)
		return
	}
	escaped := p
	w.Send(&escaped)
}

// Asker is who makes a request.
type Asker struct {
	User string // authenticated user
	Host string // host the request came from
	// Operator and Manager are the user's rights on this server;
	// Privileged is set for the server's own peers (other servers, the
	// scheduler, MOMs).
	Operator, Manager, Privileged bool
	// Slice, if not nil, is the part of the server a scheduler's
	// connection sees (its partitions); nil: everything.
	Slice Slice
}

// Slice is the partitions a scheduler sees (schedulers.Slice).
type Slice interface {
	// Sees reports whether the partition p ("" for none) is seen.
	Sees(p string) bool
}

// Requester returns "user@host" as the logs and accounting name it.
func (a Asker) Requester() string { return a.User + "@" + a.Host }

// Unlocker releases the server's lock.
type Unlocker interface{ Unlock() }

// CommitAndReply is the end of a handler that changed the state: called
// with the lock held, it submits tx's batch to the store (which fixes its
// order among batches), releases the lock, waits until the batch is
// durable and sends p through w, or a system error if the batch could not
// be saved. It reports whether p was sent.
func CommitAndReply(l Unlocker, w ReplyWriter, tx *state.Txn, p *batchreq.Reply) bool {
	wait := tx.Commit()
	l.Unlock()
	if err := wait(); err != nil {
		w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job"))
		return false
	}
	w.Send(p)
	return true
}
