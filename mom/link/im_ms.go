package link

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
)

// msJob is a job this MOM is mother superior of, as far as tasks and
// sisters are concerned (spec 10 §11, spec 11 §3 step 2).
type msJob struct {
	id     string
	cookie string
	vnodes []jobexec.Vnode
	hosts  []string // distinct hosts in node order; hosts[0] is this MOM

	// relink serialises the job's relinks (relinkSister, peerLink) with
	// each other and with the job's end (endSisters, abortSisters): no
	// link is added once the job's end has taken them. The streams
	// themselves are the MOM's, shared by its jobs (im_peer.go).
	relink sync.Mutex

	mu       sync.Mutex
	nextTask int                       // next task id (1 is the top task)
	remote   map[int][]int             // node → ids of the tasks started there
	polled   map[int]*momproto.IMUsage // node → last IM_POLL_JOB answer
	sisters  []*sisterLink
	demux    *demux
	ended    bool
	// relayOnly marks the links a sister opens to the other nodes of a
	// job for its tasks' TM requests (tm_sister.go): their failure does
	// not kill the job.
	relayOnly bool
	// linked, when not nil, is closed once the streams to the sisters
	// of a recovered job are open again (im_persist.go).
	linked chan struct{}
}

// nodeOf returns the node number of a virtual node's host.
func (mj *msJob) nodeOf(vnode int) (int, bool) {
	if vnode < 0 || vnode >= len(mj.vnodes) {
		if vnode == 0 && len(mj.vnodes) == 0 {
			return 0, true
		}
		return 0, false
	}
	for i, h := range mj.hosts {
		if h == mj.vnodes[vnode].Host {
			return i, true
		}
	}
	return 0, false
}

// newTask allocates a task id.
func (mj *msJob) newTask() int {
	mj.mu.Lock()
	defer mj.mu.Unlock()
	id := mj.nextTask
	mj.nextTask++
	return id
}

// sisterLink is a job's link from the mother superior to one sister (or
// from a sister to another node of the job): the IM stream to that MOM,
// which the MOM's other jobs with that node share (im_peer.go).
type sisterLink struct {
	node   int
	host   string
	misses int // usage polls in a row without an answer (pollSisters only)

	mu   sync.Mutex
	peer *imPeer // the stream the link uses now
}

// current returns the stream the link uses now.
func (sl *sisterLink) current() *imPeer {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.peer
}

// imCall is a request waiting for its reply.
type imCall struct {
	cmd   int
	key   peerKey
	peer  *imPeer
	reply chan *momproto.IMMessage // gets the reply, or is closed when the stream dies
}

// newEvent allocates an event number for an IM request of the MOM's own
// (IM_JOIN_JOB, IM_KILL_JOB, IM_ABORT_JOB): one counter for the whole
// MOM, from 1 (captures 105 and 106).
func (m *Mom) newEvent() int {
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	m.mn.event++
	return m.mn.event
}

// joinAttrs returns the job attributes an IM_JOIN_JOB carries: those the
// server sent in QueueJob, with job_state (T), mtime and cookie where
// TORQUE's mother superior puts them (captures 105, 106).
func joinAttrs(attrs batchreq.AttrList, cookie string, now time.Time) batchreq.AttrList {
	mtime := strconv.FormatInt(now.Unix(), 10)
	if v, ok := attrs.Get("start_time"); ok {
		mtime = v
	}
	hasCookie := false
	out := make(batchreq.AttrList, 0, len(attrs)+3)
	for _, a := range attrs {
		switch a.Name {
		case "job_state", "mtime", "cookie":
			continue
		case "start_time":
			if !hasCookie {
				out = append(out, batchreq.NewAttr("cookie", cookie))
				hasCookie = true
			}
		}
		out = append(out, a)
		switch a.Name {
		case "Job_Owner":
			out = append(out, batchreq.NewAttr("job_state", "T"))
		case "Keep_Files":
			out = append(out, batchreq.NewAttr("mtime", mtime))
		}
	}
	if !hasCookie {
		out = append(out, batchreq.NewAttr("cookie", cookie))
	}
	return out
}

// jobHosts returns the distinct hosts of an exec_host list in order.
func jobHosts(vnodes []jobexec.Vnode) []string {
	var hosts []string
	seen := map[string]bool{}
	for _, v := range vnodes {
		if !seen[v.Host] {
			seen[v.Host] = true
			hosts = append(hosts, v.Host)
		}
	}
	return hosts
}

// newCookie returns a job cookie: 32 upper-case hexadecimal digits.
func newCookie() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// msJobFor returns the mother-superior record of a job, creating it (for
// a job recovered after a restart, or one started before) when needed.
func (m *Mom) msJobFor(j *job) *msJob {
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	if mj := m.mn.ms[j.id]; mj != nil {
		return mj
	}
	m.mu.Lock()
	spec := j.spec
	m.mu.Unlock()
	vnodes, _ := jobexec.ParseExecHost(spec.ExecHost)
	mj := &msJob{id: j.id, cookie: spec.Cookie, vnodes: vnodes, hosts: jobHosts(vnodes), nextTask: 2}
	if len(mj.hosts) == 0 {
		mj.hosts = []string{m.opt.Host}
	}
	if m.mn.ms == nil {
		m.mn.ms = map[string]*msJob{}
	}
	m.mn.ms[j.id] = mj
	return mj
}

// prepareStart runs before a committed job starts: it makes sure the job
// has a cookie and, for a job on several hosts, starts the output
// demultiplexer and joins the sisters (IM_JOIN_JOB, waiting for every
// IM_ALL_OKAY). A failure aborts the sisters already joined.
func (m *Mom) prepareStart(ctx context.Context, j *job, spec *jobexec.Job) error {
	if spec.Cookie == "" {
		spec.Cookie = newCookie()
		m.mu.Lock()
		j.spec.Cookie = spec.Cookie
		m.mu.Unlock()
	}
	mj := m.msJobFor(j)
	if len(mj.hosts) < 2 {
		return nil
	}
	tr := m.tasks()
	if tr == nil {
		return errors.New("multi-node jobs are not supported by this executor")
	}
	d, err := m.startDemux(j.id, tr)
	if err != nil {
		return fmt.Errorf("output demultiplexer: %w", err)
	}
	mj.mu.Lock()
	mj.demux = d
	mj.mu.Unlock()
	ep := m.mn.ep
	if ep == nil {
		return errors.New("no RPP endpoint for IM")
	}
	m.mu.Lock()
	attrs := joinAttrs(j.attrs, spec.Cookie, m.opt.Now())
	m.mu.Unlock()
	event := m.newEvent()
	// A sister that does not answer within $timeout fails the start.
	ctx, cancel := context.WithTimeout(ctx, m.tcpTimeout())
	defer cancel()
	type joined struct {
		sl  *sisterLink
		err error
	}
	results := make(chan joined, len(mj.hosts)-1)
	for node := 1; node < len(mj.hosts); node++ {
		go func() {
			sl, err := m.joinSister(ctx, mj, node, event, attrs, d)
			results <- joined{sl, err}
		}()
	}
	var errs []error
	for range len(mj.hosts) - 1 {
		r := <-results
		if r.sl != nil {
			mj.mu.Lock()
			mj.sisters = append(mj.sisters, r.sl)
			mj.mu.Unlock()
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		m.abortSisters(mj)
		return err
	}
	m.goFunc(func() { m.pollSisters(mj) })
	return nil
}

// pollSisters asks every sister for the job's usage there (IM_POLL_JOB)
// each $check_poll_time until the job ends (spec 11 §9).
func (m *Mom) pollSisters(mj *msJob) {
	for {
		period := max(m.conf().CheckPollTime, time.Second)
		select {
		case <-m.ctx.Done():
			return
		case <-time.After(period):
		}
		mj.mu.Lock()
		sisters := append([]*sisterLink(nil), mj.sisters...)
		ended := mj.ended
		mj.mu.Unlock()
		if ended {
			return
		}
		for _, sl := range sisters {
			polledOn := sl.current()
			ctx, cancel := context.WithTimeout(m.ctx, period)
			rep, err := m.imCall(ctx, mj, sl, momproto.IM_POLL_JOB, m.newEvent(), 0, momproto.Empty{})
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				// A sister restarted with -p lost the stream (its
				// datagrams go nowhere until RPP gives up, minutes
				// later): after a second poll without an answer, try
				// a new stream.
				sl.misses++
				if sl.misses >= 2 {
					if nrep := m.relinkSister(mj, sl, polledOn, period); nrep != nil {
						rep, err = nrep, nil
					}
				}
			}
			if err != nil || rep.Command != momproto.IM_ALL_OKAY {
				continue
			}
			sl.misses = 0
			if u, ok := rep.Body.(*momproto.IMUsage); ok {
				mj.mu.Lock()
				if mj.polled == nil {
					mj.polled = map[int]*momproto.IMUsage{}
				}
				mj.polled[sl.node] = u
				mj.mu.Unlock()
			}
		}
	}
}

// withSisterUsage adds to a job's local usage what its sisters reported
// in their last IM_POLL_JOB answers.
func (m *Mom) withSisterUsage(id string, u jobexec.Usage) jobexec.Usage {
	m.mn.mu.Lock()
	mj := m.mn.ms[id]
	m.mn.mu.Unlock()
	if mj == nil {
		return u
	}
	mj.mu.Lock()
	defer mj.mu.Unlock()
	for _, p := range mj.polled {
		u.CPUTime += int64(p.CPUT)
		u.Mem += p.Mem * 1024
		u.VMem += p.Vmem * 1024
	}
	return u
}

// joinSister opens the IM stream to one sister and asks it to join.
func (m *Mom) joinSister(ctx context.Context, mj *msJob, node, event int, attrs batchreq.AttrList, d *demux) (*sisterLink, error) {
	host := mj.hosts[node]
	addr, err := m.resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("sister %s: %w", host, err)
	}
	sl := &sisterLink{node: node, host: host}
	if err := m.attach(mj, sl, netip.AddrPortFrom(addr, uint16(m.opt.RMPort))); err != nil {
		return nil, fmt.Errorf("sister %s: open stream: %w", host, err)
	}
	body := &momproto.IMJoinJob{NodeID: node, NumNodes: len(mj.hosts), StdoutPort: d.stdoutPort, StderrPort: d.stderrPort, Attrs: attrs}
	rep, err := m.imCall(ctx, mj, sl, momproto.IM_JOIN_JOB, event, 0, body)
	if err != nil {
		return sl, fmt.Errorf("sister %s: join: %w", host, err)
	}
	if rep.Command == momproto.IM_ERROR {
		return sl, fmt.Errorf("sister %s refused to join: error %d", host, imErrCode(rep))
	}
	return sl, nil
}

func imErrCode(rep *momproto.IMMessage) int {
	if b, ok := rep.Body.(*momproto.Ints); ok && len(b.Values) > 0 {
		return b.Values[0]
	}
	return 0
}

// errSisterGone is the error of requests to a sister whose stream ended.
var errSisterGone = errors.New("stream to sister ended")

// imCall sends a request to a sister and waits for its reply (or for the
// stream to die, or ctx).
func (m *Mom) imCall(ctx context.Context, mj *msJob, sl *sisterLink, cmd, event, fromTask int, body momproto.Body) (*momproto.IMMessage, error) {
	call, err := m.imSend(mj, sl, cmd, event, fromTask, body)
	if err != nil {
		return nil, err
	}
	return call.wait(ctx)
}

// imSend sends a request to a sister; its reply comes to the call.
func (m *Mom) imSend(mj *msJob, sl *sisterLink, cmd, event, fromTask int, body momproto.Body) (*imCall, error) {
	p := sl.current()
	if p == nil {
		return nil, errSisterGone
	}
	call := &imCall{cmd: cmd, key: peerKey{mj.id, event, fromTask}, peer: p, reply: make(chan *momproto.IMMessage, 1)}
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		return nil, p.dead
	}
	p.pending[call.key] = append(p.pending[call.key], call)
	p.mu.Unlock()
	msg := &momproto.IMMessage{IMHeader: momproto.IMHeader{Version: momproto.IM_PROTOCOL_VER, JobID: mj.id,
		Cookie: mj.cookie, Command: cmd, Event: event, FromTask: fromTask}, Body: body}
	if err := p.stream.Send(msg.Append(nil)); err != nil {
		call.forget()
		return nil, err
	}
	return call, nil
}

// wait waits for the reply to a call.
func (call *imCall) wait(ctx context.Context) (*momproto.IMMessage, error) {
	select {
	case rep, ok := <-call.reply:
		if !ok {
			return nil, errSisterGone
		}
		return rep, nil
	case <-ctx.Done():
		call.forget()
		return nil, ctx.Err()
	}
}

// forget drops a call that no longer waits.
func (call *imCall) forget() {
	p, key := call.peer, call.key
	p.mu.Lock()
	defer p.mu.Unlock()
	calls := p.pending[key]
	for i, c := range calls {
		if c == call {
			p.pending[key] = append(calls[:i:i], calls[i+1:]...)
			break
		}
	}
	if len(p.pending[key]) == 0 {
		delete(p.pending, key)
	}
}

// addRemote records a task started on a sister's node.
func (mj *msJob) addRemote(node, taskID int) {
	mj.mu.Lock()
	defer mj.mu.Unlock()
	if mj.remote == nil {
		mj.remote = map[int][]int{}
	}
	mj.remote[node] = append(mj.remote[node], taskID)
}

// removeRemote forgets a task on a sister's node that has ended.
func (mj *msJob) removeRemote(node, taskID int) {
	mj.mu.Lock()
	defer mj.mu.Unlock()
	mj.remote[node] = slices.DeleteFunc(mj.remote[node], func(id int) bool { return id == taskID })
}

// signalSisters passes a SignalJob on to the tasks the job runs on its
// sisters (IM_SIGNAL_TASK): a signal name or number, or suspend (SIGSTOP)
// and resume (SIGCONT). The requests are sent before it returns; the
// answers are not waited for.
func (m *Mom) signalSisters(id, signal string) {
	m.mn.mu.Lock()
	mj := m.mn.ms[id]
	m.mn.mu.Unlock()
	if mj == nil {
		return
	}
	var sig syscall.Signal
	switch strings.ToLower(signal) {
	case "suspend":
		sig = syscall.SIGSTOP
	case "resume":
		sig = syscall.SIGCONT
	default:
		s, err := jobexec.ParseSignal(signal)
		if err != nil || s == 0 {
			return
		}
		sig = s
	}
	mj.mu.Lock()
	type target struct {
		sl   *sisterLink
		task int
	}
	var targets []target
	for _, sl := range mj.sisters {
		for _, task := range mj.remote[sl.node] {
			targets = append(targets, target{sl, task})
		}
	}
	mj.mu.Unlock()
	for _, tg := range targets {
		// Sent now, in stream order before anything the job's end
		// brings (IM_KILL_JOB); the answers are awaited in the
		// background.
		call, err := m.imSend(mj, tg.sl, momproto.IM_SIGNAL_TASK, m.newEvent(), 0,
			&momproto.Ints{Values: []int{0, tg.task, int(sig)}})
		if err != nil {
			m.log.Job(logline.EventJob, id, fmt.Sprintf("signal %d to task %d on %s: %v", sig, tg.task, tg.sl.host, err))
			continue
		}
		m.goFunc(func() {
			ctx, cancel := context.WithTimeout(m.ctx, m.tcpTimeout())
			defer cancel()
			rep, err := call.wait(ctx)
			if err == nil && rep.Command == momproto.IM_ERROR {
				err = fmt.Errorf("error %d", imErrCode(rep))
			}
			if err != nil {
				m.log.Job(logline.EventJob, id, fmt.Sprintf("signal %d to task %d on %s: %v", sig, tg.task, tg.sl.host, err))
			}
		})
	}
}

// sister returns the link of a node, or nil.
func (mj *msJob) sister(node int) *sisterLink {
	mj.mu.Lock()
	defer mj.mu.Unlock()
	for _, sl := range mj.sisters {
		if sl.node == node {
			return sl
		}
	}
	return nil
}

// abortSisters sends IM_ABORT_JOB to the joined sisters and closes the
// streams and the demultiplexer.
func (m *Mom) abortSisters(mj *msJob) {
	mj.relink.Lock()
	defer mj.relink.Unlock()
	mj.mu.Lock()
	mj.ended = true
	sisters := mj.sisters
	mj.sisters = nil
	d := mj.demux
	mj.demux = nil
	mj.mu.Unlock()
	event := m.newEvent()
	for _, sl := range sisters {
		msg := &momproto.IMMessage{IMHeader: momproto.IMHeader{Version: momproto.IM_PROTOCOL_VER, JobID: mj.id,
			Cookie: mj.cookie, Command: momproto.IM_ABORT_JOB, Event: event}, Body: momproto.Empty{}}
		if p := sl.current(); p != nil {
			_ = p.stream.Send(msg.Append(nil))
		}
		m.detach(sl)
	}
	if d != nil {
		d.close()
	}
}

// endSisters runs when the job's top task has ended: every sister gets
// IM_KILL_JOB (which kills its tasks) and answers with its usage, which is
// returned summed; then the streams are closed with GOODBYE and the
// demultiplexer stopped.
func (m *Mom) endSisters(ctx context.Context, id string) jobexec.Usage {
	m.mn.mu.Lock()
	mj := m.mn.ms[id]
	m.mn.mu.Unlock()
	var total jobexec.Usage
	if mj == nil {
		return total
	}
	mj.mu.Lock()
	linked := mj.linked
	mj.mu.Unlock()
	if linked != nil {
		select {
		case <-linked:
		case <-ctx.Done():
		}
	}
	mj.relink.Lock() // a relink under way ends first: its stream is the one to use
	mj.mu.Lock()
	mj.ended = true
	sisters := mj.sisters
	mj.sisters = nil
	d := mj.demux
	mj.demux = nil
	mj.mu.Unlock()
	mj.relink.Unlock()
	if len(sisters) > 0 {
		event := m.newEvent()
		type result struct {
			host string
			rep  *momproto.IMMessage
			err  error
		}
		results := make(chan result, len(sisters))
		for _, sl := range sisters {
			go func() {
				cctx, cancel := context.WithTimeout(ctx, m.tcpTimeout())
				defer cancel()
				rep, err := m.imCall(cctx, mj, sl, momproto.IM_KILL_JOB, event, 0, momproto.Empty{})
				if errors.Is(err, errSisterGone) && cctx.Err() == nil {
					// The stream was replaced under the request (another
					// job's relink, im_peer.go): once more on the new one.
					rep, err = m.imCall(cctx, mj, sl, momproto.IM_KILL_JOB, event, 0, momproto.Empty{})
				}
				results <- result{sl.host, rep, err}
			}()
		}
		for range sisters {
			r := <-results
			switch {
			case r.err != nil:
				m.log.Job(logline.EventJob, id, fmt.Sprintf("kill of sister %s: %v", r.host, r.err))
			case r.rep.Command == momproto.IM_ERROR:
				m.log.Job(logline.EventJob, id, fmt.Sprintf("sister %s: kill failed: error %d", r.host, imErrCode(r.rep)))
			default:
				if u, ok := r.rep.Body.(*momproto.IMUsage); ok {
					total.CPUTime += int64(u.CPUT)
					total.Mem += u.Mem * 1024
					total.VMem += u.Vmem * 1024
				}
			}
		}
		for _, sl := range sisters {
			m.detach(sl)
		}
	}
	if d != nil {
		d.close()
	}
	return total
}

// forgetMS drops the mother-superior record of a job (after its obit).
func (m *Mom) forgetMS(id string) {
	m.mn.mu.Lock()
	mj := m.mn.ms[id]
	delete(m.mn.ms, id)
	m.mn.mu.Unlock()
	if mj != nil {
		m.abortSisters(mj)
	}
}

// vnodeEnv is the environment entry a mother superior adds to a task it
// asks a sister to start (capture 105).
func vnodeEnv(vnode int) string { return "PBS_VNODENUM=" + strconv.Itoa(vnode) }

// relinkSister replaces stale, the stream sl (a link of mj) used when it
// stopped answering (the sister may have been restarted with -p and taken
// the job back), by a new one, and polls the job there. The stream is the
// peer's, shared by this MOM's jobs with that sister: the new stream is
// theirs too (relinkPeer), and when another job replaced stale already
// the job is polled on the stream that did. When the sister answers, the
// tasks there are asked for again and its answer is returned; nil without
// an answer within timeout, or when the job has ended or sl is not its
// link any more.
func (m *Mom) relinkSister(mj *msJob, sl *sisterLink, stale *imPeer, timeout time.Duration) *momproto.IMMessage {
	mj.relink.Lock()
	defer mj.relink.Unlock()
	mj.mu.Lock()
	current := !mj.ended && slices.Contains(mj.sisters, sl)
	mj.mu.Unlock()
	if !current || stale == nil || m.relinkPeer(stale) == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(m.ctx, timeout)
	defer cancel()
	rep, err := m.imCall(ctx, mj, sl, momproto.IM_POLL_JOB, m.newEvent(), 0, momproto.Empty{})
	if err != nil || rep.Command != momproto.IM_ALL_OKAY {
		return nil
	}
	m.log.Job(logline.EventJob, mj.id, fmt.Sprintf("node %d (%s) answers on a new stream", sl.node, sl.host))
	tasks, err := m.imCall(ctx, mj, sl, momproto.IM_GET_TASKS, m.newEvent(), 0, &momproto.Ints{Values: []int{0}})
	if err == nil && tasks.Command == momproto.IM_ALL_OKAY {
		if b, ok := tasks.Body.(*momproto.Ints); ok {
			mj.mu.Lock()
			if mj.remote == nil {
				mj.remote = map[int][]int{}
			}
			mj.remote[sl.node] = b.Values
			mj.mu.Unlock()
		}
	}
	return rep
}

// sisterLost runs when dead, the stream sl (a link of mj) used, ended
// while the job runs: the sister may be restarting (-p) and is tried on a
// new stream each second for $timeout; if it does not answer, the job is
// killed, a sister failure aborting the job as in TORQUE. It stops early
// when the job ends, or when another relink (pollSisters', another job's)
// gave the link a stream that answers.
func (m *Mom) sisterLost(mj *msJob, sl *sisterLink, dead *imPeer, cause error) {
	deadline := time.Now().Add(m.tcpTimeout())
	for time.Now().Before(deadline) {
		if mj.sister(sl.node) != sl { // the job ended
			return
		}
		cur := sl.current()
		if cur != dead && cur != nil && cur.alive() {
			return
		}
		if rep := m.relinkSister(mj, sl, cur, time.Second); rep != nil {
			return
		}
		select {
		case <-m.ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	m.log.Job(logline.EventJob, mj.id, fmt.Sprintf("node %d (%s) failed: %v, killing the job", sl.node, sl.host, cause))
	_ = m.exec.Signal(m.ctx, mj.id, "SIGKILL", false)
}
