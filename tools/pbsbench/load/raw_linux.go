//go:build linux

package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
)

// rawSupported reports whether this platform has the raw submitter.
const rawSupported = true

// rawRequests holds a submission's requests pre-encoded: whole ones, and
// the parts around the one varying field of the others.
type rawRequests struct {
	queueJob, disconnect     []byte
	authPrefix, authSuffix   []byte // around the port
	scriptPrefix, scriptTail []byte // around the job id
	readyPrefix, readyTail   []byte
	commitPrefix, commitTail []byte
}

// idMark stands for the job id while the requests are encoded.
const idMark = "\x00job-id\x00"

// split encodes req, whose body carries idMark in place of the job id,
// and returns the bytes before and after the encoded id.
func split(req *batchreq.Request) (prefix, tail []byte, err error) {
	b := req.Append(nil)
	mark := dis.AppendString(nil, idMark)
	i := bytes.Index(b, mark)
	if i < 0 {
		return nil, nil, fmt.Errorf("%s: job id not found in the encoding", batchreq.RequestName(req.Type))
	}
	return b[:i:i], b[i+len(mark):], nil
}

// newRawRequests encodes the requests of a submission of j as user.
func newRawRequests(j *Job, user string) (rawRequests, error) {
	var q rawRequests
	script := j.Script
	if script == nil {
		script = DefaultScript
	}
	q.queueJob = batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, user,
		&batchreq.QueueJob{Destination: j.Queue, Attrs: j.attrs(user)}).Append(nil)
	q.disconnect = batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, user, nil).Append(nil)
	// The port is the body's only field: encode the request around a
	// port of 0 ("+0") and cut it out.
	auth := batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{}).Append(nil)
	// Without a body the request is its header and the extension flag.
	n := len(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, nil).Append(nil)) - len("+0")
	if n+len("+0") > len(auth) || string(auth[n:n+2]) != "+0" {
		return q, errors.New("AuthenticateUser: unexpected encoding")
	}
	q.authPrefix, q.authSuffix = auth[:n:n], auth[n+2:]
	var err error
	if q.scriptPrefix, q.scriptTail, err = split(batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, user,
		&batchreq.JobFile{JobID: idMark, Data: script})); err != nil {
		return q, err
	}
	if q.readyPrefix, q.readyTail, err = split(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, user,
		&batchreq.JobID{ID: idMark})); err != nil {
		return q, err
	}
	if q.commitPrefix, q.commitTail, err = split(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, user,
		&batchreq.JobID{ID: idMark})); err != nil {
		return q, err
	}
	return q, nil
}

// auth appends the AuthenticateUser request naming port to dst.
func (q *rawRequests) auth(dst []byte, port int) []byte {
	dst = append(dst, q.authPrefix...)
	dst = dis.AppendUint(dst, uint64(port))
	return append(dst, q.authSuffix...)
}

// withID appends prefix, the counted job id and tail to dst.
func withID(dst, prefix, id, tail []byte) []byte {
	dst = append(dst, prefix...)
	dst = dis.AppendBytes(dst, id)
	return append(dst, tail...)
}

// The raw submitter: one OS thread drives every client's submission as
// a state machine over non-blocking system calls and one epoll set,
// without the runtime's network poller or scheduler. Per submission: a
// client socket connected to the server, a socket bound to one of the
// client's own reserved ports sending AuthenticateUser for the client
// socket's port, then QueueJob, JobScript, RdytoCommit, Commit and
// Disconnect on the client socket, the server closing each connection
// first. The requests are encoded once (rawRequests) and only the port
// and the job id are appended per submission, into buffers the slots
// keep, so a submission allocates nothing. When several replies are
// ready, one epoll_wait collects them all: the thread sleeps and wakes
// far less often than one blocked reader per connection would.

// Steps of a slot's submission: what the slot waits for.
const (
	stepAuth        = iota // the AuthenticateUser reply (reserved socket)
	stepAuthClose          // the server closing the reserved socket
	stepQueueJob           // the replies on the client socket
	stepJobScript          //
	stepRdytoCommit        //
	stepCommit             //
	stepClose              // the server closing the client socket
)

// stepType is the request each reply step answers.
var stepType = [...]int{
	stepAuth:        batchreq.PBS_BATCH_AuthenUser,
	stepQueueJob:    batchreq.PBS_BATCH_QueueJob,
	stepJobScript:   batchreq.PBS_BATCH_jobscript,
	stepRdytoCommit: batchreq.PBS_BATCH_RdytoCommit,
	stepCommit:      batchreq.PBS_BATCH_Commit,
}

// rawSlot is one concurrent client.
type rawSlot struct {
	client, resv int // sockets (-1: none)
	step         int
	busy         bool
	start        time.Time // of the submission
	since        time.Time // of the current wait
	ports        []int     // the reserved ports this slot alone binds
	next         int
	in           []byte // received, not yet decoded
	id           []byte // the job id
	text         []byte // the text of an error reply
}

// rawHooks connect the loop to Run's accounting.
type rawHooks struct {
	claim func() bool                      // takes the next operation; false: stop
	ok    func(id []byte, d time.Duration) // a job acknowledged
	fail  func(err error)                  // an operation failed
}

// rawLoop is the state of one raw submitter.
type rawLoop struct {
	server  *sockAddr
	locals  []*sockAddr // by reserved port - FirstReservedPort
	family  int
	timeout time.Duration
	req     rawRequests
	hooks   rawHooks

	ep     int
	slots  []rawSlot
	slotOf []int32 // fd -> slot index + 1
	events []unix.EpollEvent
	ev     unix.EpollEvent // argument of epoll_ctl
	out    []byte
	rbuf   []byte
	src    sliceReader
	r      *dis.Reader
}

// sliceReader serves a byte slice to a dis.Reader and notes when the
// reader wanted more than there was.
type sliceReader struct {
	b     []byte
	short bool
}

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		s.short = true
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// errIncomplete means a reply has not arrived whole yet.
var errIncomplete = errors.New("incomplete reply")

// runRaw submits with clients concurrent slots on the calling goroutine
// until hooks.claim says stop.
func runRaw(d *Dialer, j *Job, clients int, hooks rawHooks) error {
	l, err := newRawLoop(d, j, clients, hooks)
	if err != nil {
		return err
	}
	defer sysClose(l.ep)
	return l.run()
}

func newRawLoop(d *Dialer, j *Job, clients int, hooks rawHooks) (*rawLoop, error) {
	addr, err := net.ResolveTCPAddr("tcp", d.Addr)
	if err != nil {
		return nil, fmt.Errorf("server address: %w", err)
	}
	l := &rawLoop{timeout: d.timeout(), hooks: hooks}
	v6 := addr.IP.To4() == nil
	l.server, l.family = newSockAddr(addr.IP, addr.Port, v6), unix.AF_INET
	if v6 {
		l.family = unix.AF_INET6
	}
	if l.req, err = newRawRequests(j, d.User); err != nil {
		return nil, err
	}
	for p := iff.FirstReservedPort; p <= iff.LastReservedPort; p++ {
		l.locals = append(l.locals, newSockAddr(nil, p, v6))
	}
	// Each slot binds only its own share of the reserved ports, so no
	// two slots ever try the same port.
	l.slots = make([]rawSlot, clients)
	for w := range l.slots {
		s := &l.slots[w]
		s.client, s.resv = -1, -1
		for p := iff.LastReservedPort - w; p >= iff.FirstReservedPort; p -= clients {
			s.ports = append(s.ports, p)
		}
		if len(s.ports) == 0 {
			return nil, fmt.Errorf("%d clients: more than reserved ports", clients)
		}
		s.in = make([]byte, 0, 4096)
		s.id = make([]byte, 0, 256)
	}
	l.events = make([]unix.EpollEvent, clients*2)
	l.out = make([]byte, 0, 8192)
	l.rbuf = make([]byte, 16<<10)
	l.r = dis.NewReader(&l.src)
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return l, nil
}

// run starts every slot and serves events until no slot is busy.
func (l *rawLoop) run() error {
	for i := range l.slots {
		l.begin(i)
	}
	lastScan := time.Now()
	for {
		busy := false
		for i := range l.slots {
			busy = busy || l.slots[i].busy
		}
		if !busy {
			return nil
		}
		n, err := epollWait(l.ep, l.events, 250)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, e := range l.events[:n] {
			fd := int(e.Fd)
			if fd < len(l.slotOf) && l.slotOf[fd] > 0 {
				l.ready(int(l.slotOf[fd]-1), fd)
			}
		}
		if now := time.Now(); now.Sub(lastScan) > 250*time.Millisecond {
			lastScan = now
			for i := range l.slots {
				if s := &l.slots[i]; s.busy && now.Sub(s.since) > l.timeout {
					l.failed(i, fmt.Errorf("%s: no reply within %v", l.stepName(s.step), l.timeout))
				}
			}
		}
	}
}

func (l *rawLoop) stepName(step int) string {
	switch step {
	case stepAuthClose, stepClose:
		return "Disconnect"
	}
	return batchreq.RequestName(stepType[step])
}

// begin starts slot i's next submission, if there is one; a submission
// that cannot start is counted as failed and the next one tried.
func (l *rawLoop) begin(i int) {
	s := &l.slots[i]
	for l.hooks.claim() {
		err := l.open(i)
		if err == nil {
			return
		}
		l.closeSlot(s)
		l.hooks.fail(err)
	}
	s.busy = false
}

// open connects slot i's two sockets and sends AuthenticateUser.
func (l *rawLoop) open(i int) error {
	s := &l.slots[i]
	s.busy = true
	s.start = time.Now()
	s.since = s.start
	s.step = stepAuth
	s.in = s.in[:0]
	fd, err := l.socket(i)
	if err != nil {
		return err
	}
	s.client = fd
	if err := sysConnect(fd, l.server); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	delayAcks(fd)
	port, err := sysLocalPort(fd)
	if err != nil {
		return fmt.Errorf("getsockname: %w", err)
	}
	if s.resv, err = l.dialReserved(i); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	l.out = l.req.auth(l.out[:0], port)
	if err := sysSend(s.resv, l.out); err != nil {
		return fmt.Errorf("AuthenticateUser: %w", err)
	}
	return nil
}

// socket opens a TCP socket watched for input and hang-up
// (edge-triggered) on behalf of slot i. The socket blocks: connecting
// (immediate on loopback) and sending a request (small, into an empty
// send buffer) wait in the kernel; only reading does not (recv).
func (l *rawLoop) socket(i int) (int, error) {
	fd, err := sysSocket(l.family)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	for fd >= len(l.slotOf) {
		l.slotOf = append(l.slotOf, 0)
	}
	l.slotOf[fd] = int32(i + 1)
	l.ev = unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := sysEpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &l.ev); err != nil {
		l.closeFD(fd)
		return -1, fmt.Errorf("epoll_ctl: %w", err)
	}
	return fd, nil
}

// dialReserved connects from the next of slot i's reserved ports that
// binds and connects.
func (l *rawLoop) dialReserved(i int) (int, error) {
	s := &l.slots[i]
	var last error
	for range s.ports {
		port := s.ports[s.next]
		s.next = (s.next + 1) % len(s.ports)
		fd, err := l.socket(i)
		if err != nil {
			return -1, err
		}
		if err := sysSetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			l.closeFD(fd)
			return -1, fmt.Errorf("setsockopt SO_REUSEADDR: %w", err)
		}
		err = sysBind(fd, l.locals[port-iff.FirstReservedPort])
		if err == nil {
			err = sysConnect(fd, l.server)
		}
		if err == nil {
			delayAcks(fd)
			return fd, nil
		}
		l.closeFD(fd)
		last = err
		switch err {
		case unix.EADDRINUSE, unix.EADDRNOTAVAIL:
			continue // a port another program holds: the next one
		case unix.EACCES, unix.EPERM:
			return -1, fmt.Errorf("bind reserved port %d: %w", port, err)
		}
		return -1, fmt.Errorf("connect from reserved port %d: %w", port, err)
	}
	return -1, fmt.Errorf("no free reserved port: %w", last)
}

// delayAcks takes fd out of TCP's quick-ack mode, in which a new
// connection acknowledges every segment it receives at once with a
// segment of its own: the acknowledgement of each reply then travels
// with the next request instead. (Best effort: it changes no byte of
// the conversation.)
func delayAcks(fd int) {
	sysSetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, 0)
}

// ready handles input (or hang-up) on fd of slot i.
func (l *rawLoop) ready(i, fd int) {
	s := &l.slots[i]
	if !s.busy {
		return
	}
	want := s.client
	if s.step <= stepAuthClose {
		want = s.resv
	}
	if fd != want {
		return // the other socket of the slot: nothing expected there
	}
	for {
		n, err := sysRecv(fd, l.rbuf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return // wait for the next edge
		case err != nil:
			l.failed(i, fmt.Errorf("%s: read: %w", l.stepName(s.step), err))
			return
		case n == 0:
			l.eof(i)
			return
		}
		if s.step == stepAuthClose || s.step == stepClose {
			continue // anything after a Disconnect is ignored
		}
		s.in = append(s.in, l.rbuf[:n]...)
		err = l.reply(s)
		if err == errIncomplete {
			if n < len(l.rbuf) {
				return // the socket is drained; the rest comes with an edge
			}
			continue
		}
		if err != nil {
			l.failed(i, fmt.Errorf("%s: reply: %w", l.stepName(s.step), err))
			return
		}
		if err := l.advance(i); err != nil {
			l.failed(i, err)
		}
		return
	}
}

// advance sends the request that follows the reply slot i just got.
func (l *rawLoop) advance(i int) error {
	s := &l.slots[i]
	s.since = time.Now()
	q := &l.req
	var fd int
	switch s.step {
	case stepAuth:
		fd, l.out = s.resv, append(l.out[:0], q.disconnect...)
	case stepQueueJob:
		if len(s.id) == 0 {
			return errors.New("QueueJob: reply without a job id")
		}
		fd, l.out = s.client, withID(l.out[:0], q.scriptPrefix, s.id, q.scriptTail)
	case stepJobScript:
		fd, l.out = s.client, withID(l.out[:0], q.readyPrefix, s.id, q.readyTail)
	case stepRdytoCommit:
		fd, l.out = s.client, withID(l.out[:0], q.commitPrefix, s.id, q.commitTail)
	case stepCommit:
		fd, l.out = s.client, append(l.out[:0], q.disconnect...)
	}
	s.step++
	if err := sysSend(fd, l.out); err != nil {
		return fmt.Errorf("%s: %w", l.stepName(s.step), err)
	}
	return nil
}

// eof handles the server closing the socket slot i waits on.
func (l *rawLoop) eof(i int) {
	s := &l.slots[i]
	switch s.step {
	case stepAuthClose:
		l.closeFD(s.resv)
		s.resv = -1
		s.step = stepQueueJob
		s.since = time.Now()
		if err := sysSend(s.client, l.req.queueJob); err != nil {
			l.failed(i, fmt.Errorf("QueueJob: %w", err))
		}
	case stepClose:
		l.closeFD(s.client)
		s.client = -1
		l.hooks.ok(s.id, time.Since(s.start))
		l.begin(i)
	default:
		l.failed(i, fmt.Errorf("%s: reply: server closed the connection", l.stepName(s.step)))
	}
}

// reply decodes the reply in s.in without allocating: a job id is kept
// in s.id, a non-zero code is a ReplyError.
func (l *rawLoop) reply(s *rawSlot) error {
	l.src = sliceReader{b: s.in}
	l.r.Reset(&l.src)
	r := l.r
	fail := func(err error) error {
		if l.src.short {
			return errIncomplete
		}
		return err
	}
	pt, err := r.Uint32()
	if err != nil {
		return fail(err)
	}
	pv, err := r.Uint32()
	if err != nil {
		return fail(err)
	}
	if pt != batchreq.PBS_BATCH_PROT_TYPE || pv != batchreq.PBS_BATCH_PROT_VER {
		return fmt.Errorf("protocol %d version %d: %w", pt, pv, batchreq.ErrBadReply)
	}
	code, err := r.Int()
	if err != nil {
		return fail(err)
	}
	if _, err := r.Int(); err != nil {
		return fail(err)
	}
	choice, err := r.Uint()
	if err != nil {
		return fail(err)
	}
	switch choice {
	case batchreq.BATCH_REPLY_CHOICE_NULL:
	case batchreq.BATCH_REPLY_CHOICE_Queue, batchreq.BATCH_REPLY_CHOICE_RdytoCommit, batchreq.BATCH_REPLY_CHOICE_Commit:
		if s.id, err = r.AppendBytes(s.id[:0]); err != nil {
			return fail(err)
		}
	case batchreq.BATCH_REPLY_CHOICE_Text:
		if s.text, err = r.AppendBytes(s.text[:0]); err != nil {
			return fail(err)
		}
	default:
		return fmt.Errorf("choice %d: %w", choice, batchreq.ErrBadReply)
	}
	s.in = s.in[:0]
	if code != 0 {
		e := &ReplyError{Type: stepType[s.step], Code: code}
		if choice == batchreq.BATCH_REPLY_CHOICE_Text {
			e.Text = string(s.text)
		}
		return e
	}
	return nil
}

// failed ends slot i's submission with err and starts the next one.
func (l *rawLoop) failed(i int, err error) {
	l.closeSlot(&l.slots[i])
	l.hooks.fail(err)
	l.begin(i)
}

// closeSlot closes the sockets of s.
func (l *rawLoop) closeSlot(s *rawSlot) {
	if s.client >= 0 {
		l.closeFD(s.client)
		s.client = -1
	}
	if s.resv >= 0 {
		l.closeFD(s.resv)
		s.resv = -1
	}
}

// closeFD closes fd, which leaves the epoll set with it.
func (l *rawLoop) closeFD(fd int) {
	if fd < len(l.slotOf) {
		l.slotOf[fd] = 0
	}
	sysClose(fd)
}
