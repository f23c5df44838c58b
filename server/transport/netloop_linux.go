//go:build linux

package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/transport/netsys"
)

// The event loop: one goroutine accepts the server's connections and
// serves the requests of a submission on them itself, over non-blocking
// sockets and one epoll set, instead of a goroutine per connection
// parked in the runtime's network poller.
//
// Per connection the loop keeps the bytes received and not yet used; a
// request is decoded once it is complete (a decode of the buffered bytes
// that runs out of bytes waits for more). The requests of a submission —
// AuthenticateUser, QueueJob, JobScript, JobCred, RdytoCommit, Commit and
// Disconnect — run on the loop; Commit hands its batch to the store
// (Host.Commit) and the loop answers it when the store's goroutine
// posts back that the batch is durable, serving other connections
// meanwhile. Any other request, an AuthenticateUser whose client
// connection is not accepted yet, a reply the socket cannot take whole,
// a request larger than maxLoopRequest or a peer whose host name is not
// known yet hand the connection to a goroutine running the blocking path
// (conn.serve) for the rest of its life: the loop never waits for a MOM,
// the scheduler, a slow client or a long status.
//
// Timeouts: a periodic sweep closes connections idle for IdleTimeout and
// answers a request stalled for RequestTimeout as conn.serve does.

// maxLoopRequest is the most the loop buffers of an incomplete request;
// a larger one is read by the goroutine path.
const maxLoopRequest = 64 << 10

// loopReadSize is the size of the loop's read buffer.
const loopReadSize = 64 << 10

// busyWait is how long (ms) the loop waits for the next event keeping
// its P after it has had work: longer idle periods release the P.
const busyWait = 1

// acceptBatch bounds the connections accepted per readiness event, so
// that a flood of connections does not starve the established ones.
const acceptBatch = 64

// errNeedMore ends the bytes given to the decoder: the request is
// incomplete.
var errNeedMore = errors.New("request incomplete")

// loopConn is the loop's state of one connection.
type loopConn struct {
	fd         int
	in         []byte    // received, not yet used (an incomplete request)
	since      time.Time // of the last byte received or reply sent
	unsent     []byte    // a reply the socket did not take whole
	committing bool      // a Commit waits for the store
	paused     bool      // the loop does not watch the socket
	eof        bool      // the peer has closed its side
	broken     bool      // a write failed
	closed     bool      // the socket is closed (or handed off)
}

// write sends a reply; what the socket does not take now is kept in
// unsent (the loop then hands the connection to a goroutine).
func (lc *loopConn) write(b []byte) {
	if lc.broken || lc.closed || len(b) == 0 {
		return
	}
	if len(lc.unsent) > 0 {
		lc.unsent = append(lc.unsent, b...)
		return
	}
	for len(b) > 0 {
		n, err := netsys.Send(lc.fd, b)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			lc.broken = true
			return
		}
		b = b[n:]
	}
	if len(b) > 0 {
		lc.unsent = append([]byte(nil), b...)
	}
}

// completion is a durable (or failed) Commit posted back to the loop.
type completion struct {
	c     *conn
	id    string
	err   error
	begin time.Time // when the Commit was decoded
}

// loopSource serves the buffered bytes of a connection to the decoder
// and notes whether it wanted more.
type loopSource struct {
	b     []byte
	end   error // returned once b is used up
	short bool
}

func (s *loopSource) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		s.short = true
		return 0, s.end
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// netLoop is the event loop of one listening socket.
type netLoop struct {
	t     *Transport
	lfd   int // listening socket
	ep    int // epoll set
	efd   int // eventfd: completions posted, stop
	conns []*conn

	events      []unix.EpollEvent
	buf         []byte // read buffer
	out         []byte // reply buffer shared by the loop's connections
	src         loopSource
	r           *dis.Reader
	sweepEvery  time.Duration
	nextSweep   time.Time
	acceptAgain time.Time // accepting paused until then (out of descriptors)

	mu       sync.Mutex
	posted   []completion
	spare    []completion
	signaled bool // efd has been written since the loop last read it
	stopping bool
	stopped  bool // efd is closed: post drops completions
}

// newNetLoop takes over the listening socket of ln (a *net.TCPListener):
// the loop gets a duplicate of its descriptor and ln is closed, so that
// the runtime's poller no longer watches it. It returns nil, leaving ln
// alone, if ln is not a TCP listener or the loop cannot be set up.
func newNetLoop(t *Transport, ln net.Listener) *netLoop {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil
	}
	lfd := -1
	var dupErr error
	if err := rc.Control(func(fd uintptr) {
		lfd, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil || dupErr != nil {
		return nil
	}
	l := &netLoop{t: t, lfd: lfd, ep: -1, efd: -1}
	if err := l.setup(); err != nil {
		l.closeFds()
		return nil
	}
	ln.Close()
	return l
}

func (l *netLoop) setup() error {
	if err := unix.SetNonblock(l.lfd, true); err != nil {
		return err
	}
	var err error
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return err
	}
	if l.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return err
	}
	if err := netsys.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.lfd, unix.EPOLLIN); err != nil {
		return err
	}
	if err := netsys.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, l.efd, unix.EPOLLIN); err != nil {
		return err
	}
	l.events = make([]unix.EpollEvent, 128)
	l.buf = make([]byte, loopReadSize)
	l.out = make([]byte, 0, 4096)
	l.r = dis.NewReader(&l.src)
	cfg := &l.t.cfg
	l.sweepEvery = min(max(min(cfg.IdleTimeout, cfg.RequestTimeout)/8, 5*time.Millisecond), 250*time.Millisecond)
	return nil
}

func (l *netLoop) closeFds() {
	for _, fd := range []int{l.lfd, l.ep, l.efd} {
		if fd >= 0 {
			netsys.Close(fd)
		}
	}
}

// stop asks the loop to close every connection and return.
func (l *netLoop) stop() {
	l.mu.Lock()
	l.stopping = true
	if !l.stopped {
		netsys.EventfdSignal(l.efd)
	}
	l.mu.Unlock()
}

// post hands a completed Commit to the loop; called by the store.
func (l *netLoop) post(x completion) {
	l.mu.Lock()
	if !l.stopped {
		l.posted = append(l.posted, x)
		if !l.signaled {
			l.signaled = true
			netsys.EventfdSignal(l.efd)
		}
	}
	l.mu.Unlock()
}

// run serves until stop.
func (l *netLoop) run() {
	defer l.shutdown()
	l.nextSweep = time.Now().Add(l.sweepEvery)
	holdP := runtime.GOMAXPROCS(0) >= 2
	busy := false
	for {
		n := netsys.EpollPoll(l.ep, l.events)
		if n == 0 && busy && holdP {
			// Busy: the next event is likely within a millisecond; wait
			// for it keeping the P (see epollWaitHoldingP).
			n = netsys.EpollWaitHoldingP(l.ep, l.events, busyWait)
		}
		if n == 0 {
			wait := time.Until(l.nextSweep)
			n = netsys.EpollWait(l.ep, l.events, max(int(wait/time.Millisecond)+1, 1))
		}
		busy = n > 0
		now := time.Now()
		for i := range n {
			ev := &l.events[i]
			switch fd := int(ev.Fd); fd {
			case l.lfd:
				l.accept(now)
			case l.efd:
				if !l.completions(now) {
					return
				}
			default:
				if fd < len(l.conns) && l.conns[fd] != nil {
					l.input(l.conns[fd], ev.Events, now)
				}
			}
		}
		if !now.Before(l.nextSweep) {
			l.sweep(now)
			l.nextSweep = now.Add(l.sweepEvery)
		}
	}
}

// shutdown closes every connection of the loop and its descriptors.
func (l *netLoop) shutdown() {
	for _, c := range l.conns {
		if c != nil {
			l.close(c)
		}
	}
	l.mu.Lock()
	l.stopped = true
	l.posted = nil
	l.mu.Unlock()
	l.closeFds()
}

// accept takes the connections waiting on the listening socket.
func (l *netLoop) accept(now time.Time) {
	t := l.t
	for range acceptBatch {
		fd, ap, err := netsys.Accept4(l.lfd)
		switch err {
		case nil:
		case unix.EINTR, unix.ECONNABORTED:
			continue
		case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
			// Out of descriptors or memory: stop watching the listening
			// socket for a while (it would be ready at once again).
			netsys.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, l.lfd, 0)
			l.acceptAgain = now.Add(10 * time.Millisecond)
			return
		default: // EAGAIN: none left
			return
		}
		if !ap.IsValid() {
			netsys.Close(fd)
			continue
		}
		// The connection and the loop's state of it in one allocation;
		// replies are encoded in the loop's buffer (written at once).
		both := &struct {
			c  conn
			lc loopConn
		}{conn{t: t, out: l.out[:0]}, loopConn{fd: fd, since: now, paused: true}}
		c := &both.c
		c.lc = &both.lc
		c.hc.Writer, c.hc.Remote = c, ap
		c.auth = t.auth.Add(ap)
		if fd >= len(l.conns) {
			l.conns = append(l.conns, make([]*conn, fd+1-len(l.conns)+len(l.conns)/2)...)
		}
		l.conns[fd] = c
		host, ok := t.cachedHostName(ap.Addr())
		if !ok {
			// Finding the name may take a DNS query: not on the loop.
			l.handoff(c, nil, nil)
			continue
		}
		c.host = host
		if err := netsys.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN|unix.EPOLLRDHUP); err != nil {
			l.close(c)
			continue
		}
		c.lc.paused = false
	}
}

// input reads what the peer of c sent and serves it.
func (l *netLoop) input(c *conn, events uint32, now time.Time) {
	lc := c.lc
	if lc.paused {
		return
	}
	n, err := netsys.Read(lc.fd, l.buf)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		l.close(c) // reset by the peer: closed without a reply, as conn.serve does
		return
	case n == 0:
		lc.eof = true
	case n < len(l.buf) && events&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0:
		lc.eof = true // the bytes before the peer's end are all read
	}
	if n > 0 {
		lc.since = now
	}
	l.serve(c, l.buf[:n], now)
}

// serve serves the complete requests among the bytes c has buffered and
// data, keeps the rest and ends the connection if its peer has.
func (l *netLoop) serve(c *conn, data []byte, now time.Time) {
	lc := c.lc
	b := data
	if len(lc.in) > 0 {
		lc.in = append(lc.in, data...)
		b = lc.in
	}
	for len(b) > 0 && !lc.committing {
		req, n, err := l.decode(b, errNeedMore)
		if n < 0 {
			break // incomplete
		}
		b = b[n:]
		if err != nil {
			c.started = true
			if p := c.decodeFailure(err); p != nil {
				c.send(p)
			}
			l.close(c)
			return
		}
		if !l.request(c, req, b) {
			return
		}
	}
	lc.in = append(lc.in[:0], b...) // may overlap: append moves the bytes down
	if len(lc.in) == 0 && cap(lc.in) > 4096 {
		lc.in = nil
	}
	if lc.committing {
		if lc.eof || len(lc.in) > maxLoopRequest {
			l.pause(c) // until the Commit is answered
		}
		return
	}
	if len(lc.in) > maxLoopRequest {
		l.handoff(c, nil, lc.in)
		return
	}
	if lc.eof {
		l.cutShort(c, io.EOF)
	}
}

// decode decodes one request from the start of b, which end follows. It
// returns n < 0 if the request is incomplete (end is errNeedMore), else
// the bytes it used and the request or the decoding error.
func (l *netLoop) decode(b []byte, end error) (*batchreq.Request, int, error) {
	l.src = loopSource{b: b, end: end}
	l.r.Reset(&l.src)
	req, err := batchreq.ReadGoPBSServerRequest(l.r)
	if l.src.short && end == errNeedMore {
		return nil, -1, nil
	}
	return req, int(l.r.Offset()), err
}

// request serves one decoded request of c; rest is what follows it in
// the buffer. It reports whether the loop still serves c.
func (l *netLoop) request(c *conn, req *batchreq.Request, rest []byte) bool {
	t := l.t
	lc := c.lc
	if req.Type == batchreq.PBS_BATCH_Disconnect {
		l.close(c)
		return false
	}
	if c.vet(req) {
		switch req.Type {
		case batchreq.PBS_BATCH_AuthenUser:
			if t.authenUser(c, req, 0) {
				l.handoff(c, req, rest) // waits for the client connection
				return false
			}
		case batchreq.PBS_BATCH_QueueJob, batchreq.PBS_BATCH_jobscript, batchreq.PBS_BATCH_JobCred,
			batchreq.PBS_BATCH_RdytoCommit:
			t.mux.ServeBatch(&c.hc, req)
		case batchreq.PBS_BATCH_Commit:
			l.commit(c, req)
		default:
			l.handoff(c, req, rest)
			return false
		}
	}
	switch {
	case c.hc.CloseAfter || lc.broken:
		l.close(c)
		return false
	case len(lc.unsent) > 0:
		l.handoff(c, nil, rest)
		return false
	}
	return true
}

// commit serves Commit: the job is queued now and its batch handed to
// the store (Host.Commit); the reply goes when the store posts the batch
// durable.
func (l *netLoop) commit(c *conn, req *batchreq.Request) {
	begin := time.Now()
	id := req.Body.(*batchreq.JobID).ID
	host := l.t.host
	done := func(err error) {
		// On the store's goroutine: the log lines of the round's jobs
		// (the first callback of a round writes them all), then the
		// reply is the loop's.
		host.FlushLogs()
		l.post(completion{c: c, id: id, err: err, begin: begin})
	}
	if host.Commit(&c.hc, id, done) {
		c.lc.committing = true
	}
}

// completions answers the Commits the store has made durable. It
// reports false when the loop is to stop.
func (l *netLoop) completions(now time.Time) bool {
	netsys.EventfdClear(l.efd)
	l.mu.Lock()
	done := l.posted
	l.posted = l.spare[:0]
	l.signaled = false
	stopping := l.stopping
	l.mu.Unlock()
	for i := range done {
		l.committed(done[i], now)
	}
	clear(done)
	l.spare = done
	return !stopping
}

// committed sends the reply of a Commit whose batch the store has made
// durable (or failed to) and goes on serving its connection.
func (l *netLoop) committed(x completion, now time.Time) {
	c := x.c
	lc := c.lc
	lc.committing = false
	l.t.host.Committed(&c.hc, x.id, x.err, now.Sub(x.begin))
	if lc.closed {
		return
	}
	lc.since = now
	switch {
	case lc.broken:
		l.close(c)
	case len(lc.unsent) > 0:
		l.handoff(c, nil, lc.in)
	default:
		if lc.paused && !lc.eof {
			if netsys.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, lc.fd, unix.EPOLLIN|unix.EPOLLRDHUP) != nil {
				l.close(c)
				return
			}
			lc.paused = false
		}
		l.serve(c, nil, now)
	}
}

// cutShort closes c after its stream failed with readErr (io.EOF at its
// end, os.ErrDeadlineExceeded for a stalled request): a request cut short
// is answered as conn.serve answers a read failing so.
func (l *netLoop) cutShort(c *conn, readErr error) {
	if len(c.lc.in) > 0 {
		_, _, err := l.decode(c.lc.in, readErr)
		if err != nil {
			c.started = true
			if p := c.decodeFailure(err); p != nil {
				c.send(p)
			}
		}
	}
	l.close(c)
}

// pause stops watching c's socket.
func (l *netLoop) pause(c *conn) {
	if !c.lc.paused {
		netsys.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.lc.fd, 0)
		c.lc.paused = true
	}
}

// sweep applies the idle and request timeouts, and resumes accepting
// after a shortage of descriptors.
func (l *netLoop) sweep(now time.Time) {
	cfg := &l.t.cfg
	if !l.acceptAgain.IsZero() && !now.Before(l.acceptAgain) {
		l.acceptAgain = time.Time{}
		netsys.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, l.lfd, unix.EPOLLIN)
	}
	for _, c := range l.conns {
		if c == nil || c.lc.committing {
			continue
		}
		lc := c.lc
		if len(lc.in) == 0 {
			if now.Sub(lc.since) >= cfg.IdleTimeout {
				l.close(c) // idle: closed without a reply
			}
			continue
		}
		if now.Sub(lc.since) >= cfg.RequestTimeout {
			l.cutShort(c, os.ErrDeadlineExceeded) // stalled inside a request
		}
	}
}

// close closes c's socket and forgets the connection.
func (l *netLoop) close(c *conn) {
	lc := c.lc
	if lc.closed {
		return
	}
	lc.closed = true
	netsys.Close(lc.fd)
	l.conns[lc.fd] = nil
	l.t.auth.Remove(c.auth)
	l.t.drop(c)
}

// handoff gives c to a goroutine running the blocking path for the rest
// of the connection's life: it first sends what the socket did not take
// (lc.unsent), then serves req (already vetted; nil: none), then the
// bytes received and not yet used (rest), and goes on reading the socket.
func (l *netLoop) handoff(c *conn, req *batchreq.Request, rest []byte) {
	t := l.t
	lc := c.lc
	netsys.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, lc.fd, 0)
	lc.closed = true
	l.conns[lc.fd] = nil
	f := os.NewFile(uintptr(lc.fd), "")
	nc, err := net.FileConn(f) // a duplicate of the descriptor, in the runtime's poller
	f.Close()
	if err != nil {
		t.auth.Remove(c.auth)
		t.drop(c)
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetKeepAlive(false) // FileConn turns it on; the server's listener has it off
	}
	if len(rest) > 0 {
		c.pre = append([]byte(nil), rest...) // rest may be the loop's buffer
	}
	unsent := lc.unsent
	c.nc, c.lc = nc, nil
	c.out = nil // the loop's buffer
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		c.close()
		return
	}
	t.conns[c] = struct{}{}
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		if c.host == "" {
			c.host = t.hostName(c.hc.Remote.Addr())
		}
		if len(unsent) > 0 {
			c.sendRaw(unsent)
		}
		if req != nil {
			t.mux.ServeBatch(&c.hc, req)
			if c.hc.CloseAfter {
				c.close()
				return
			}
		}
		c.serve()
	}()
}
