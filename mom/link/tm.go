package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"gopbs/dis"
	"gopbs/internal/logline"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
)

// The TM service (spec 10 §11.2): the tasks of a job talk to their MOM
// over TCP on the RM port, protocol 2. A connection carries any number of
// requests; each is answered on the connection it came on, possibly out
// of order (TM_OBIT is answered when the task ends, a remote TM_SPAWN
// when the sister answers). Requests for tasks on other nodes are relayed
// to the sisters as IM requests with the TM event and task.

// maxTMBuffer bounds the bytes of one pending TM request.
const maxTMBuffer = 1 << 20

// tmConn is one TM connection.
type tmConn struct {
	c  net.Conn
	mu sync.Mutex // serialises replies
	wg sync.WaitGroup
}

// reply sends one TM reply.
func (tc *tmConn) reply(rep *momproto.TMReply) {
	b := rep.Append(nil)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	_ = tc.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	_, _ = tc.c.Write(b)
}

func tmOkay(event int, body momproto.Body) *momproto.TMReply {
	return &momproto.TMReply{Version: momproto.TM_PROTOCOL_VER, Code: momproto.TM_OKAY, Event: event, Body: body}
}

func tmError(event, code int) *momproto.TMReply {
	return &momproto.TMReply{Version: momproto.TM_PROTOCOL_VER, Code: momproto.TM_ERROR, Event: event,
		Body: &momproto.Ints{Values: []int{code}}}
}

// serveTM serves a TM connection whose first bytes (already read) are
// buf. It returns when the peer closes, sends TM_FINALIZE or garbage.
func (m *Mom) serveTM(ctx context.Context, c net.Conn, buf []byte) {
	tc := &tmConn{c: c}
	defer tc.wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tmp := make([]byte, 4096)
	for {
		for len(buf) > 0 {
			req, n, err := momproto.DecodeTMRequest(buf)
			if err != nil {
				if errors.Is(err, dis.ErrEOF) || errors.Is(err, dis.ErrEOD) {
					break // incomplete: read more
				}
				if req != nil {
					tc.reply(tmError(req.Event, momproto.TM_ENOTIMPLEMENTED))
				}
				m.log.Record(logline.EventDebug, 0, "tm_request", fmt.Sprintf("bad request from %v: %v", c.RemoteAddr(), err))
				return
			}
			buf = buf[n:]
			if !m.tmRequest(ctx, tc, req) {
				return
			}
		}
		if len(buf) > maxTMBuffer {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil && n == 0 {
			return
		}
	}
}

// tmRequest serves one request; it reports whether the connection may go
// on.
func (m *Mom) tmRequest(ctx context.Context, tc *tmConn, req *momproto.TMRequest) bool {
	if req.Command == momproto.TM_FINALIZE {
		return false
	}
	j := m.lookup(req.JobID)
	if j == nil {
		m.mn.mu.Lock()
		sj := m.mn.sisters[req.JobID]
		m.mn.mu.Unlock()
		if sj != nil {
			m.tmSister(ctx, tc, sj, req) // a task on this sister (tm_sister.go)
			return true
		}
		tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		return true
	}
	m.mu.Lock()
	cookie, running := j.spec.Cookie, j.stage == stageRunning || j.stage == stageSuspended
	m.mu.Unlock()
	if cookie == "" || req.Cookie != cookie {
		m.log.Job(logline.EventJob, j.id, "tm_request: bad cookie")
		tc.reply(tmError(req.Event, momproto.TM_EBADENVIRONMENT))
		return true
	}
	if !running {
		tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		return true
	}
	tr := m.tasks()
	if tr == nil {
		tc.reply(tmError(req.Event, momproto.TM_ENOTIMPLEMENTED))
		return true
	}
	mj := m.msJobFor(j)
	switch req.Command {
	case momproto.TM_INIT:
		n := max(len(mj.vnodes), 1)
		nodes := make([]int, n)
		for i := range nodes {
			nodes[i] = i
		}
		tc.reply(tmOkay(req.Event, &momproto.TMInitReply{Nodes: nodes, JobID: j.id, Parent: -1, Last: 0}))
	case momproto.TM_SPAWN:
		m.tmSpawn(ctx, tc, tr, mj, req)
	case momproto.TM_OBIT:
		v := req.Body.(*momproto.Ints).Values
		m.tmTaskCall(ctx, tc, tr, mj, req, v[0], v[1], momproto.IM_OBIT_TASK, func(taskID int) (momproto.Body, error) {
			status, err := tr.WaitTask(ctx, mj.id, taskID)
			return &momproto.Ints{Values: []int{status}}, err
		})
	case momproto.TM_SIGNAL:
		v := req.Body.(*momproto.Ints).Values
		m.tmTaskCall(ctx, tc, tr, mj, req, v[0], v[1], momproto.IM_SIGNAL_TASK, func(taskID int) (momproto.Body, error) {
			return momproto.Empty{}, tr.SignalTask(mj.id, taskID, syscall.Signal(v[2]))
		}, v[2])
	case momproto.TM_TASKS:
		vnode := req.Body.(*momproto.Ints).Values[0]
		node, ok := mj.nodeOf(vnode)
		switch {
		case !ok:
			tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		case node == 0:
			ids, err := tr.Tasks(mj.id)
			if err != nil {
				tc.reply(tmError(req.Event, momproto.TM_ESYSTEM))
				break
			}
			tc.reply(tmOkay(req.Event, &momproto.TMTasksReply{Tasks: ids}))
		default:
			m.tmRelay(ctx, tc, mj, req, node, momproto.IM_GET_TASKS, &momproto.Ints{Values: []int{0}},
				func(rep *momproto.IMMessage) momproto.Body {
					var ids []int
					if b, ok := rep.Body.(*momproto.Ints); ok {
						ids = b.Values
					}
					return &momproto.TMTasksReply{Tasks: ids}
				})
		}
	case momproto.TM_RESOURCES:
		m.tmResources(ctx, tc, mj, req)
	default:
		tc.reply(tmError(req.Event, momproto.TM_ENOTIMPLEMENTED))
	}
	return true
}

// tmSpawn serves TM_SPAWN: a task on this host starts at once; one on a
// sister is asked for with IM_SPAWN_TASK.
func (m *Mom) tmSpawn(ctx context.Context, tc *tmConn, tr TaskRunner, mj *msJob, req *momproto.TMRequest) {
	sp := req.Body.(*momproto.TMSpawn)
	node, ok := mj.nodeOf(sp.Node)
	if !ok || len(sp.Argv) == 0 {
		tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		return
	}
	taskID := mj.newTask()
	if node == 0 {
		ts := jobexec.TaskSpec{TaskID: taskID, ParentTask: int(req.FromTask), NodeID: 0, VNode: sp.Node,
			Argv: sp.Argv, Env: sp.Env}
		files := m.demuxFiles(ctx, mj)
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		if len(files) == 2 {
			ts.Stdout, ts.Stderr = files[0], files[1]
		}
		if err := tr.Spawn(ctx, mj.id, ts); err != nil {
			m.log.Job(logline.EventJob, mj.id, "tm_spawn: "+err.Error())
			tc.reply(tmError(req.Event, momproto.TM_ESYSTEM))
			return
		}
		tc.reply(tmOkay(req.Event, &momproto.Ints{Values: []int{taskID}}))
		return
	}
	env := append([]string{vnodeEnv(sp.Node)}, sp.Env...)
	body := &momproto.IMSpawnTask{ParentNode: 0, TaskID: taskID, GlobalID: "none", Argv: sp.Argv, Env: env}
	m.tmRelay(ctx, tc, mj, req, node, momproto.IM_SPAWN_TASK, body, func(*momproto.IMMessage) momproto.Body {
		mj.addRemote(node, taskID)
		return &momproto.Ints{Values: []int{taskID}}
	})
}

// tmTaskCall serves a request about one task (TM_OBIT, TM_SIGNAL): local
// answers itself (in the background: an obit waits for the task's end),
// remote is relayed as the IM request cmd with body node 0, task[,
// extra...].
func (m *Mom) tmTaskCall(ctx context.Context, tc *tmConn, tr TaskRunner, mj *msJob, req *momproto.TMRequest,
	vnode, taskID, cmd int, local func(taskID int) (momproto.Body, error), extra ...int) {
	node, ok := mj.nodeOf(vnode)
	if !ok {
		tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		return
	}
	if node == 0 {
		tc.wg.Add(1)
		m.goFunc(func() {
			defer tc.wg.Done()
			body, err := local(taskID)
			switch {
			case err == nil:
				tc.reply(tmOkay(req.Event, body))
			case errors.Is(err, jobexec.ErrUnknownTask), errors.Is(err, jobexec.ErrUnknownJob):
				tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
			case ctx.Err() != nil:
			default:
				tc.reply(tmError(req.Event, momproto.TM_ESYSTEM))
			}
		})
		return
	}
	body := &momproto.Ints{Values: append([]int{0, taskID}, extra...)}
	m.tmRelay(ctx, tc, mj, req, node, cmd, body, func(rep *momproto.IMMessage) momproto.Body {
		if cmd == momproto.IM_OBIT_TASK {
			mj.removeRemote(node, taskID) // it has ended: no more signals for it
		}
		if b, ok := rep.Body.(*momproto.Ints); ok {
			return b
		}
		return momproto.Empty{}
	})
}

// tmRelay sends an IM request for a TM request to the sister of node and
// answers the TM request when the sister replies, in the background.
func (m *Mom) tmRelay(ctx context.Context, tc *tmConn, mj *msJob, req *momproto.TMRequest, node, cmd int,
	body momproto.Body, okBody func(*momproto.IMMessage) momproto.Body) {
	sl := mj.sister(node)
	if sl == nil {
		tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		return
	}
	tc.wg.Add(1)
	m.goFunc(func() {
		defer tc.wg.Done()
		rep, err := m.imCall(ctx, mj, sl, cmd, req.Event, int(req.FromTask), body)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				m.log.Job(logline.EventJob, mj.id, fmt.Sprintf("%s to %s: %v", momproto.IMCommandName(cmd), sl.host, err))
				tc.reply(tmError(req.Event, momproto.TM_ESYSTEM))
			}
		case rep.Command == momproto.IM_ERROR:
			tc.reply(tmError(req.Event, momproto.TM_ESYSTEM))
		default:
			tc.reply(tmOkay(req.Event, okBody(rep)))
		}
	})
}

// demuxFiles returns connections to the output demultiplexer of a job on
// several hosts, for a task started on this host: TORQUE's tasks on the
// mother superior send their output through it too, over the loopback
// (capture 106: one stdout and one stderr connection per task). It
// returns nil when the job has no demultiplexer or it cannot be reached
// (the task then writes to the job's files directly).
func (m *Mom) demuxFiles(ctx context.Context, mj *msJob) []*os.File {
	mj.mu.Lock()
	d := mj.demux
	mj.mu.Unlock()
	if d == nil {
		return nil
	}
	var files []*os.File
	for _, port := range []int{d.stdoutPort, d.stderrPort} {
		f, err := m.dialOutput(ctx, netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
		if err != nil {
			m.logErr("tm_spawn", err, mj.id+": connect to the output demultiplexer")
			for _, f := range files {
				f.Close()
			}
			return nil
		}
		files = append(files, f)
	}
	return files
}
