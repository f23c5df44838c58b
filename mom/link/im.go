package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
	"gopbs/rpp"
)

// IMHandler serves IM (MOM ↔ MOM) requests arriving on an RPP stream
// (spec 10 §11.1). It returns the reply to send, or nil for none. Without
// one (Options.IM nil) the Mom serves IM itself: see serveIM.
type IMHandler interface {
	ServeIM(ctx context.Context, s *rpp.Stream, msg *momproto.IMMessage) *momproto.IMMessage
}

// TaskRunner is what multi-node jobs need of the executor; *jobexec.Engine
// implements it. An executor without it runs single-node jobs only: IM
// requests are refused with IM_ERROR/PBSE_NOSUP.
type TaskRunner interface {
	Join(spec *jobexec.Job, nodeID int) error
	AdoptTasks(jobID string) (int, error)
	Spawn(ctx context.Context, jobID string, ts jobexec.TaskSpec) error
	WaitTask(ctx context.Context, jobID string, taskID int) (int, error)
	Tasks(jobID string) ([]int, error)
	SignalTask(jobID string, taskID int, sig syscall.Signal) error
	KillTasks(jobID string) (jobexec.Usage, error)
	AppendOutput(jobID string, stderr bool) (*os.File, error)
	SisterPrologue(ctx context.Context, spec *jobexec.Job) (int, error)
	SisterEpilogue(ctx context.Context, spec *jobexec.Job, sid int, used jobexec.Usage, exitStatus int) (int, error)
}

// multiNode is the state of the multi-node jobs of a Mom: those it is
// mother superior of (with their sister links and output demultiplexers)
// and those it joined as a sister.
type multiNode struct {
	mu      sync.Mutex
	ep      *rpp.Endpoint              // the endpoint IM streams to other MOMs are opened from
	peers   map[netip.AddrPort]*imPeer // the open IM streams, by peer (im_peer.go)
	ms      map[string]*msJob          // by job id: jobs this MOM is mother superior of
	sisters map[string]*sisterJob      // by job id: jobs joined as a sister
	event   int                        // last event number of the MOM's own IM requests
	// ready is closed once ep is set (Serve): jobs recovered before
	// that wait for it to reach their sisters.
	ready chan struct{}
}

// tasks returns the executor's TaskRunner, or nil.
func (m *Mom) tasks() TaskRunner {
	t, _ := m.exec.(TaskRunner)
	return t
}

// imMessage serves one IM message of a stream; it reports whether the
// stream may go on.
func (m *Mom) imMessage(ctx context.Context, s *rpp.Stream, b []byte) bool {
	peer := s.RemoteAddr()
	if !m.Trusted(peer.Addr()) {
		m.log.Error(0, "", "im_request", fmt.Sprintf("bad connect from %v", peer))
		return false
	}
	msg, err := momproto.DecodeIM(b, nil)
	if err != nil {
		m.logErr("im_request", err, "from "+peer.String())
		return false
	}
	var rep *momproto.IMMessage
	if m.opt.IM != nil {
		rep = m.opt.IM.ServeIM(ctx, s, msg)
	} else {
		rep = m.serveIM(ctx, s, msg)
	}
	if rep != nil {
		if err := s.Send(rep.Append(nil)); err != nil {
			return false
		}
	}
	return true
}

// imReply returns the reply to req: same header, command IM_ALL_OKAY.
func imReply(req *momproto.IMMessage, body momproto.Body) *momproto.IMMessage {
	h := req.IMHeader
	h.Command = momproto.IM_ALL_OKAY
	return &momproto.IMMessage{IMHeader: h, ReplyTo: req.Command, Body: body}
}

// imError returns the IM_ERROR reply to req with a PBSE code.
func imError(req *momproto.IMMessage, code int) *momproto.IMMessage {
	h := req.IMHeader
	h.Command = momproto.IM_ERROR
	return &momproto.IMMessage{IMHeader: h, ReplyTo: req.Command, Body: &momproto.Ints{Values: []int{code}}}
}

// sisterJob is a job this MOM joined as a sister node.
type sisterJob struct {
	id         string
	cookie     string
	spec       jobexec.Job
	nodeID     int
	msHost     string     // mother-superior host (first exec_host entry)
	msAddr     netip.Addr // its address: where the IM stream comes from
	stdoutPort int        // the mother superior's output demultiplexer
	stderrPort int
	stream     *rpp.Stream       // the stream the job was joined on (nil once recovered, until the MS speaks)
	attrs      batchreq.AttrList // as IM_JOIN_JOB carried them, for the job file
	prefix     string            // job file prefix
	order      uint64            // arrival order among the MOM's jobs (jobs= status)
	stime      int64             // when it was joined
	relay      *msJob            // links to the job's other nodes for TM requests of its tasks (guarded by m.mn.mu)
}

// serveIM is the Mom's own IM service: the sister side of multi-node jobs
// (spec 10 §11.1). Replies to requests this MOM sent as mother superior
// arrive on the streams it opened and never come here.
func (m *Mom) serveIM(ctx context.Context, s *rpp.Stream, msg *momproto.IMMessage) *momproto.IMMessage {
	switch msg.Command {
	case momproto.IM_ALL_OKAY, momproto.IM_ERROR:
		return nil // a stray reply
	}
	tr := m.tasks()
	if tr == nil {
		if msg.Command == momproto.IM_ABORT_JOB {
			return nil
		}
		return imError(msg, batchreq.PBSE_NOSUP)
	}
	if msg.Command == momproto.IM_JOIN_JOB {
		return m.imJoin(ctx, tr, s, msg)
	}
	m.mn.mu.Lock()
	sj := m.mn.sisters[msg.JobID]
	mj := m.mn.ms[msg.JobID]
	m.mn.mu.Unlock()
	if sj == nil && mj == nil {
		if msg.Command == momproto.IM_ABORT_JOB {
			return nil
		}
		m.log.Job(logline.EventJob, msg.JobID, "im_request: "+momproto.IMCommandName(msg.Command)+" for unknown job")
		return imError(msg, batchreq.PBSE_UNKJOBID)
	}
	cookie := ""
	if sj != nil {
		cookie = sj.cookie
	} else {
		cookie = mj.cookie
	}
	if msg.Cookie != cookie {
		m.log.Error(0, "", "im_request", fmt.Sprintf("job %s: bad cookie from %v", msg.JobID, s.RemoteAddr()))
		return imError(msg, batchreq.PBSE_BADSTATE)
	}
	if sj != nil && s.RemoteAddr().Addr().Unmap() == sj.msAddr {
		m.adoptSisterStream(sj, s)
	}
	// Requests about the tasks of this node: from the mother superior,
	// or, relayed from a task's TM request, from another node of the
	// job (tm_sister.go).
	switch msg.Command {
	case momproto.IM_SPAWN_TASK:
		return m.imSpawn(ctx, tr, sj, mj, msg)
	case momproto.IM_OBIT_TASK:
		v := msg.Body.(*momproto.Ints).Values
		taskID := v[1]
		m.goFunc(func() {
			status, err := tr.WaitTask(m.ctx, msg.JobID, taskID)
			rep := imReply(msg, &momproto.Ints{Values: []int{status}})
			if err != nil {
				rep = imError(msg, batchreq.PBSE_UNKJOBID)
			}
			_ = s.Send(rep.Append(nil))
		})
		return nil
	case momproto.IM_GET_TASKS:
		ids, err := tr.Tasks(msg.JobID)
		if err != nil {
			return imError(msg, batchreq.PBSE_UNKJOBID)
		}
		return imReply(msg, &momproto.Ints{Values: ids})
	case momproto.IM_SIGNAL_TASK:
		v := msg.Body.(*momproto.Ints).Values
		if err := tr.SignalTask(msg.JobID, v[1], syscall.Signal(v[2])); err != nil {
			return imError(msg, batchreq.PBSE_UNKJOBID)
		}
		return imReply(msg, momproto.Empty{})
	case momproto.IM_GET_RESC:
		return imReply(msg, &momproto.IMData{Data: []byte(m.nodeResources(ctx))})
	case momproto.IM_GET_INFO:
		// Nothing is ever posted: TM_POSTINFO's body is not defined by
		// the specification, so the request is refused.
		return imError(msg, batchreq.PBSE_RMNOPARAM)
	case momproto.IM_GET_TID:
		if mj == nil {
			return imError(msg, batchreq.PBSE_BADSTATE) // only the mother superior numbers tasks
		}
		tid := mj.newTask()
		if v := msg.Body.(*momproto.Ints).Values; len(v) > 0 && v[0] > 0 {
			mj.addRemote(v[0], tid) // the node the task will run on
		}
		return imReply(msg, &momproto.Ints{Values: []int{tid}})
	}
	if sj == nil {
		// IM_KILL_JOB, IM_POLL_JOB, IM_ABORT_JOB go from the mother
		// superior to its sisters only.
		if msg.Command == momproto.IM_ABORT_JOB {
			return nil
		}
		return imError(msg, batchreq.PBSE_BADSTATE)
	}
	switch msg.Command {
	case momproto.IM_POLL_JOB:
		st, _ := m.exec.Status(sj.id)
		u := usageKB(st.Usage)
		u.HasExiting = true
		return imReply(msg, u)
	case momproto.IM_KILL_JOB:
		used := m.endSisterJob(ctx, tr, sj, true)
		return imReply(msg, usageKB(used))
	case momproto.IM_ABORT_JOB:
		m.endSisterJob(ctx, tr, sj, false)
		return nil
	}
	return imError(msg, batchreq.PBSE_NOSUP)
}

// usageKB converts a usage into the IM_KILL_JOB / IM_POLL_JOB body.
func usageKB(u jobexec.Usage) *momproto.IMUsage {
	return &momproto.IMUsage{CPUT: uint64(max(u.CPUTime, 0)), Mem: (u.Mem + 1023) / 1024, Vmem: (u.VMem + 1023) / 1024}
}

// imJoin serves IM_JOIN_JOB: the job is created here without a shell and
// prologue.parallel runs.
func (m *Mom) imJoin(ctx context.Context, tr TaskRunner, s *rpp.Stream, msg *momproto.IMMessage) *momproto.IMMessage {
	body := msg.Body.(*momproto.IMJoinJob)
	spec := jobSpec(msg.JobID, body.Attrs)
	spec.Cookie = msg.Cookie
	m.mn.mu.Lock()
	_, dup := m.mn.sisters[msg.JobID]
	m.mn.mu.Unlock()
	if dup {
		return imError(msg, batchreq.PBSE_JOBEXIST)
	}
	if err := tr.Join(&spec, body.NodeID); err != nil {
		m.log.Job(logline.EventJob, msg.JobID, "im_join_job: "+err.Error())
		if errors.Is(err, jobexec.ErrJobExists) {
			return imError(msg, batchreq.PBSE_JOBEXIST)
		}
		return imError(msg, batchreq.PBSE_BADUSER)
	}
	if rc, err := tr.SisterPrologue(ctx, &spec); rc != 0 || err != nil {
		m.log.Job(logline.EventJob, msg.JobID, fmt.Sprintf("prologue.parallel failed (%d)", rc))
		_, _ = tr.KillTasks(msg.JobID)
		_ = m.exec.Purge(msg.JobID)
		return imError(msg, batchreq.PBSE_SYSTEM)
	}
	sj := &sisterJob{id: msg.JobID, cookie: msg.Cookie, spec: spec, nodeID: body.NodeID,
		msHost: firstExecHost(spec.ExecHost), msAddr: s.RemoteAddr().Addr().Unmap(), stdoutPort: body.StdoutPort, stderrPort: body.StderrPort, stream: s,
		attrs: body.Attrs, prefix: spec.Prefix, stime: m.opt.Now().Unix()}
	m.addSister(sj)
	m.log.Job(logline.EventJob, sj.id, fmt.Sprintf("JOIN JOB as node %d", sj.nodeID)) // captured mom_logs
	if err := m.saveSisterJob(sj); err != nil {
		m.logErr("im_join_job", err, "cannot save job")
	}
	return imReply(msg, momproto.Empty{})
}

// imSpawn serves IM_SPAWN_TASK: a task of the job starts on this node.
// On a sister its output goes to the mother superior's demultiplexer
// ports; on the mother superior (a task asked for by a task on a sister)
// through its own demultiplexer.
func (m *Mom) imSpawn(ctx context.Context, tr TaskRunner, sj *sisterJob, mj *msJob, msg *momproto.IMMessage) *momproto.IMMessage {
	body := msg.Body.(*momproto.IMSpawnTask)
	ts := jobexec.TaskSpec{TaskID: body.TaskID, ParentTask: msg.FromTask, ParentNode: body.ParentNode,
		Argv: body.Argv, Env: body.Env}
	for _, kv := range body.Env {
		if v, ok := strings.CutPrefix(kv, "PBS_VNODENUM="); ok {
			ts.VNode, _ = strconv.Atoi(v)
		}
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if sj != nil {
		ts.NodeID = sj.nodeID
		for _, port := range []int{sj.stdoutPort, sj.stderrPort} {
			f, err := m.dialOutput(ctx, sj.msAddr, port)
			if err != nil {
				m.logErr("im_spawn_task", err, sj.id+": connect to the mother superior's output port")
				f, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					return imError(msg, batchreq.PBSE_SYSTEM)
				}
			}
			files = append(files, f)
		}
	} else {
		files = m.demuxFiles(ctx, mj)
	}
	if len(files) == 2 {
		ts.Stdout, ts.Stderr = files[0], files[1]
	}
	if err := tr.Spawn(ctx, msg.JobID, ts); err != nil {
		m.log.Job(logline.EventJob, msg.JobID, "im_spawn_task: "+err.Error())
		return imError(msg, batchreq.PBSE_SYSTEM)
	}
	return imReply(msg, &momproto.Ints{Values: []int{body.TaskID}})
}

// dialOutput connects to a demultiplexer port of the mother superior (at
// the address its IM stream comes from) and returns the connection as a
// file to hand to a task.
func (m *Mom) dialOutput(ctx context.Context, addr netip.Addr, port int) (*os.File, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("bad output port %d", port)
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, m.tcpTimeout())
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", netip.AddrPortFrom(addr, uint16(port)).String())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*net.TCPConn).File()
}

// endSisterJob kills a sister job's tasks, runs epilogue.parallel when
// asked (IM_KILL_JOB; not for IM_ABORT_JOB) and removes the job. It
// returns the usage of the job on this node.
func (m *Mom) endSisterJob(ctx context.Context, tr TaskRunner, sj *sisterJob, epilogue bool) jobexec.Usage {
	m.mn.mu.Lock()
	if m.mn.sisters[sj.id] != sj {
		m.mn.mu.Unlock()
		return jobexec.Usage{}
	}
	delete(m.mn.sisters, sj.id)
	relay := sj.relay
	m.mn.mu.Unlock()
	if relay != nil {
		relay.mu.Lock()
		links := relay.sisters
		relay.sisters, relay.ended = nil, true
		relay.mu.Unlock()
		for _, sl := range links {
			m.detach(sl)
		}
	}
	used, err := tr.KillTasks(sj.id)
	if err != nil {
		m.logErr("im_kill_job", err, sj.id)
	}
	if epilogue {
		if rc, err := tr.SisterEpilogue(ctx, &sj.spec, 0, used, 0); rc != 0 || err != nil {
			m.log.Job(logline.EventJob, sj.id, fmt.Sprintf("epilogue.parallel failed (%d)", rc))
		}
	}
	if err := m.exec.Purge(sj.id); err != nil && !errors.Is(err, jobexec.ErrUnknownJob) {
		m.logErr("im_kill_job", err, sj.id)
	}
	m.removeJobFiles(sj.prefix)
	return used
}

// sisterStreamEnded is called when an accepted stream ends. The sister
// jobs whose stream to their mother superior it was (one stream serves
// all the jobs of a mother superior) are not killed at once: the mother
// superior may be restarting (-p) and come back on a new stream
// (adoptSisterStream). One that has not within the grace period (twice
// $timeout or $check_poll_time, whichever is longer) is aborted and its
// tasks killed.
func (m *Mom) sisterStreamEnded(s *rpp.Stream) {
	m.mn.mu.Lock()
	var orphans []*sisterJob
	for _, sj := range m.mn.sisters {
		if sj.stream == s {
			sj.stream = nil
			orphans = append(orphans, sj)
		}
	}
	m.mn.mu.Unlock()
	tr := m.tasks()
	if tr == nil {
		return
	}
	for _, sj := range orphans {
		m.log.Job(logline.EventJob, sj.id, fmt.Sprintf("stream to mother superior ended, waiting %v for it to come back", m.orphanGrace()))
		m.watchOrphan(tr, sj)
	}
}

// orphanGrace is how long a sister job waits for its mother superior.
func (m *Mom) orphanGrace() time.Duration {
	return 2 * max(m.tcpTimeout(), m.conf().CheckPollTime)
}

// watchOrphan kills a sister job that has no stream to its mother
// superior after orphanGrace.
func (m *Mom) watchOrphan(tr TaskRunner, sj *sisterJob) {
	grace := m.orphanGrace()
	m.goFunc(func() {
		select {
		case <-m.ctx.Done():
			return
		case <-time.After(grace):
		}
		m.mn.mu.Lock()
		orphan := m.mn.sisters[sj.id] == sj && sj.stream == nil
		m.mn.mu.Unlock()
		if orphan {
			m.log.Job(logline.EventJob, sj.id, "mother superior did not come back, killing the job")
			m.endSisterJob(m.ctx, tr, sj, false)
		}
	})
}
