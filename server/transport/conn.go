package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"gopbs/batchreq"
	"gopbs/iff"
	"gopbs/internal/logline"
	"gopbs/server/handler"
)

// conn is one client connection.
type conn struct {
	// hc is the connection as the request handlers see it; its Writer
	// is the conn itself.
	hc   handler.Conn
	t    *Transport
	nc   net.Conn
	auth *iff.Conn
	host string // requesting host name
	// policy is what the checks of the request being served read of the
	// server (Host.Policy).
	policy Policy

	started bool // bytes of the current request have been read
	// readLimit is the read deadline last set and readInRequest whether it
	// was set for a request in progress (RequestTimeout) rather than for
	// an idle connection; Read refreshes it only when needed (see Read).
	readLimit     time.Time
	readInRequest bool
	writeLimit    time.Time // write deadline last set
	out           []byte    // reply encoding buffer, reused

	// lc is the event loop's state of a connection the loop serves
	// (netloop_linux.go); nil for one served by its own goroutine.
	lc *loopConn
	// pre holds bytes the loop received but did not use before it handed
	// the connection to a goroutine; Read returns them first.
	pre []byte
}

// deadlineSlack is how stale a read deadline may get before Read moves
// it: a stall is then cut after between the timeout less deadlineSlack
// and the timeout, and a busy connection re-arms its timer about once per
// deadlineSlack instead of on every read.
const deadlineSlack = 500 * time.Millisecond

// Read implements io.Reader for the DIS reader, applying the idle timeout
// before a request starts and the request timeout inside one.
func (c *conn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		c.started = true
		return n, nil
	}
	d := c.t.cfg.IdleTimeout
	if c.started {
		d = c.t.cfg.RequestTimeout
	}
	now := time.Now()
	if limit := now.Add(d); c.started != c.readInRequest || limit.Sub(c.readLimit) > min(deadlineSlack, d/4) {
		c.nc.SetReadDeadline(limit)
		c.readLimit, c.readInRequest = limit, c.started
	}
	n, err := c.nc.Read(p)
	if n > 0 {
		c.started = true
	}
	return n, err
}

// serve reads and serves the connection's requests until it ends.
func (c *conn) serve() {
	t := c.t
	defer c.close()
	r := t.getReader(c)
	defer t.putReader(r)
	for {
		c.started = r.Buffered() > 0
		req, err := batchreq.ReadGoPBSServerRequest(r)
		if err != nil {
			if p := c.decodeFailure(err); p != nil {
				c.send(p)
			}
			return
		}
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		if !c.vet(req) {
			if c.hc.CloseAfter {
				return
			}
			continue
		}
		t.mux.ServeBatch(&c.hc, req)
		if c.hc.CloseAfter {
			return
		}
	}
}

// decodeFailure returns the reply to a request that could not be read
// (err from batchreq.ReadServerRequest), or nil when the connection is
// closed without one: at the end of the stream, on a broken connection,
// or on a timeout before the request's first byte (c.started false).
// Either way the connection is closed afterwards.
func (c *conn) decodeFailure(err error) *batchreq.Reply {
	if errors.Is(err, io.EOF) {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && !ne.Timeout() || errors.Is(err, net.ErrClosed) {
		return nil
	}
	if !c.started {
		return nil // idle timeout or reset before a request
	}
	return batchreq.DecodeErrorReply(err)
}

// vet makes req the connection's current request and applies the checks
// that precede every handler: the requester's credential, the server's
// ACLs and a shutdown under way. It reports whether the handler is to
// run; if not, the request has been answered and c.hc.CloseAfter tells
// whether the connection must be closed.
func (c *conn) vet(req *batchreq.Request) bool {
	t := c.t
	c.hc.Request = req
	c.hc.CloseAfter = false
	// One look at the server for everything the checks below need; they
	// then run in the order TORQUE applies them.
	p := &c.policy
	t.host.Policy(c.host, p)
	now, lifetime := p.Now, p.CredentialLifetime
	aclCode, aclMsg := t.serverACL(c, req.User, p)
	a := &c.hc.Asker
	a.User, a.Host = req.User, c.host
	a.Operator, a.Manager, a.Privileged = t.rights(c, req.User, p)
	shutting := p.Shutting
	if err := c.auth.Check(req.User, c.host, now, lifetime); err != nil {
		var ae *iff.Error
		if errors.As(err, &ae) {
			c.reject(ae.Code, ae.Msg)
		} else {
			c.reject(batchreq.PBSE_BADCRED, "")
		}
		c.hc.CloseAfter = true
		return false
	}
	if aclCode != 0 {
		c.reject(aclCode, aclMsg)
		c.hc.CloseAfter = true
		return false
	}
	if shutting {
		switch req.Type {
		case batchreq.PBS_BATCH_AsyrunJob, batchreq.PBS_BATCH_JobCred, batchreq.PBS_BATCH_MoveJob,
			batchreq.PBS_BATCH_QueueJob, batchreq.PBS_BATCH_RunJob, batchreq.PBS_BATCH_StageIn,
			batchreq.PBS_BATCH_jobscript:
			c.reject(batchreq.PBSE_SVRDOWN, "")
			return false
		}
	}
	return true
}

// close ends a connection served by a goroutine.
func (c *conn) close() {
	t := c.t
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	t.auth.Remove(c.auth)
	c.nc.Close()
	t.drop(c)
}

// send writes a reply; error replies are logged as TORQUE logs them.
func (c *conn) send(p *batchreq.Reply) {
	if p.Code != 0 {
		c.logReject(p)
	}
	c.out = p.Append(c.out[:0])
	c.sendRaw(c.out)
}

// Send sends a reply (handler.ReplyWriter).
func (c *conn) Send(p *batchreq.Reply) { c.send(p) }

// SendValue sends a reply given by value (handler.ValueWriter).
func (c *conn) SendValue(p batchreq.Reply) { c.send(&p) }

// Reject sends and logs an error reply (handler.ReplyWriter).
func (c *conn) Reject(code int, msg string) { c.reject(code, msg) }

// reject answers the current request with an error code and optional MSG,
// logging the rejection as TORQUE does.
func (c *conn) reject(code int, msg string) {
	c.sendReject(batchreq.ErrorReply(code, "", msg))
}

// rejectAttr answers with a bad-attribute reply naming a.
func (c *conn) rejectAttr(code int, a *batchreq.Attr) {
	c.sendReject(batchreq.BadAttrReply(code, a))
}

func (c *conn) sendReject(p *batchreq.Reply) { c.send(p) }

// SendRaw sends a reply encoded already (handler.Writer).
func (c *conn) SendRaw(b []byte) { c.sendRaw(b) }

// RejectAttr sends and logs an error reply naming the attribute a
// (handler.Writer).
func (c *conn) RejectAttr(code int, a *batchreq.Attr) { c.rejectAttr(code, a) }

func (c *conn) logReject(p *batchreq.Reply) {
	typ := -1
	user := ""
	if r := c.hc.Request; r != nil {
		typ, user = r.Type, r.User
	}
	c.t.cfg.Log.Logf(logline.EventDebug, logline.ClassRequest, "req_reject", "Reject reply code=%d(%s), aux=0, type=%s, from %s@%s",
		p.Code, p.Text, batchreq.RequestName(typ), user, c.host)
}

// sendRaw writes an already encoded (successful) reply in one write.
// The write deadline is moved only when it has gone stale by more than
// deadlineSlack (a timer operation saved on most replies).
func (c *conn) sendRaw(b []byte) {
	if c.lc != nil {
		c.lc.write(b)
		return
	}
	if limit := time.Now().Add(writeTimeout); limit.Sub(c.writeLimit) > deadlineSlack {
		c.nc.SetWriteDeadline(limit)
		c.writeLimit = limit
	}
	c.nc.Write(b)
}

func (c *conn) ok() { c.send(batchreq.NullReply()) }

// drop hands the submission left pending on a closing connection to the
// server. The pending job is set and cleared only by the connection's
// own requests, served on the goroutine that closes it: seeing that
// there is none needs no lock.
func (t *Transport) drop(c *conn) {
	if c.hc.Pending() != nil {
		t.host.Drop(&c.hc)
	}
}

func (c *conn) String() string { return fmt.Sprintf("conn %s (%s)", c.hc.Remote, c.host) }
