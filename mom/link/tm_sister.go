package link

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"

	"gopbs/internal/logline"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
)

// TM for the tasks of a job on a sister node (spec 10 §11.2: the MOM
// relays TM operations that target other nodes as the corresponding IM
// requests). A task started on a sister (by pbsdsh on the mother superior,
// say) may itself use TM with its local MOM, the sister: requests about
// tasks of this node are served here; a new task's job-wide id comes from
// the mother superior (IM_GET_TID); requests about other nodes go to
// those nodes' MOMs as IM_SPAWN_TASK, IM_OBIT_TASK, IM_SIGNAL_TASK,
// IM_GET_TASKS and IM_GET_RESC on streams the sister opens.

// relayJob returns the relay record of a sister job: the job's nodes and
// the streams opened to them.
func (m *Mom) relayJob(sj *sisterJob) *msJob {
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	if sj.relay == nil {
		vnodes, _ := jobexec.ParseExecHost(sj.spec.ExecHost)
		sj.relay = &msJob{id: sj.id, cookie: sj.cookie, vnodes: vnodes, hosts: jobHosts(vnodes), relayOnly: true}
	}
	return sj.relay
}

// peerLink returns the stream from this sister to the MOM of node,
// opening it when needed.
func (m *Mom) peerLink(ctx context.Context, sj *sisterJob, rj *msJob, node int) (*sisterLink, error) {
	// One opening at a time: a second stream opened to a node makes it
	// discard the first (see relinkSister).
	rj.relink.Lock()
	defer rj.relink.Unlock()
	if sl := rj.sister(node); sl != nil {
		return sl, nil
	}
	if node < 0 || node >= len(rj.hosts) {
		return nil, fmt.Errorf("no node %d", node)
	}
	if m.mn.ep == nil {
		return nil, errors.New("no RPP endpoint for IM")
	}
	host := rj.hosts[node]
	addr := sj.msAddr
	if node != 0 || !addr.IsValid() {
		var err error
		if addr, err = m.resolve(ctx, host); err != nil {
			return nil, fmt.Errorf("node %s: %w", host, err)
		}
	}
	st, err := m.mn.ep.Open(netip.AddrPortFrom(addr, uint16(m.opt.RMPort)))
	if err != nil {
		return nil, fmt.Errorf("node %s: open stream: %w", host, err)
	}
	sl := &sisterLink{node: node, host: host, stream: st, pending: map[callKey][]*imCall{}}
	rj.mu.Lock()
	if rj.ended {
		rj.mu.Unlock()
		st.Close()
		return nil, errors.New("job ended")
	}
	rj.sisters = append(rj.sisters, sl)
	rj.mu.Unlock()
	m.goFunc(func() { m.readSister(rj, sl) })
	return sl, nil
}

// peerCall sends an IM request to the MOM of node and waits for its
// answer (up to $timeout).
func (m *Mom) peerCall(ctx context.Context, sj *sisterJob, rj *msJob, node, cmd, fromTask int, body momproto.Body) (*momproto.IMMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, m.tcpTimeout())
	defer cancel()
	sl, err := m.peerLink(ctx, sj, rj, node)
	if err != nil {
		return nil, err
	}
	rep, err := m.imCall(ctx, rj, sl, cmd, m.newEvent(), fromTask, body)
	if err != nil {
		return nil, err
	}
	if rep.Command == momproto.IM_ERROR {
		return rep, fmt.Errorf("%s refused %s: error %d", sl.host, momproto.IMCommandName(cmd), imErrCode(rep))
	}
	return rep, nil
}

// tmSister serves a TM request of a task running on this sister.
func (m *Mom) tmSister(ctx context.Context, tc *tmConn, sj *sisterJob, req *momproto.TMRequest) {
	if req.Cookie != sj.cookie {
		m.log.Job(logline.EventJob, sj.id, "tm_request: bad cookie")
		tc.reply(tmError(req.Event, momproto.TM_EBADENVIRONMENT))
		return
	}
	tr := m.tasks()
	if tr == nil {
		tc.reply(tmError(req.Event, momproto.TM_ENOTIMPLEMENTED))
		return
	}
	rj := m.relayJob(sj)
	// node returns the node of a virtual node, or answers TM_ENOTFOUND.
	node := func(vnode int) (int, bool) {
		n, ok := rj.nodeOf(vnode)
		if !ok {
			tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
		}
		return n, ok
	}
	// background runs a request whose answer takes time (an IM round
	// trip, a task's end).
	background := func(serve func() (momproto.Body, error)) {
		tc.wg.Add(1)
		m.goFunc(func() {
			defer tc.wg.Done()
			body, err := serve()
			switch {
			case err == nil:
				tc.reply(tmOkay(req.Event, body))
			case errors.Is(err, jobexec.ErrUnknownTask), errors.Is(err, jobexec.ErrUnknownJob):
				tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
			case ctx.Err() != nil:
			default:
				m.log.Job(logline.EventJob, sj.id, fmt.Sprintf("%s: %v", momproto.TMCommandName(req.Command), err))
				tc.reply(tmError(req.Event, momproto.TM_ESYSTEM))
			}
		})
	}
	from := int(req.FromTask)
	switch req.Command {
	case momproto.TM_INIT:
		nodes := make([]int, max(len(rj.vnodes), 1))
		for i := range nodes {
			nodes[i] = i
		}
		tc.reply(tmOkay(req.Event, &momproto.TMInitReply{Nodes: nodes, JobID: sj.id, Parent: -1, Last: 0}))
	case momproto.TM_SPAWN:
		sp := req.Body.(*momproto.TMSpawn)
		n, ok := node(sp.Node)
		if !ok {
			return
		}
		if len(sp.Argv) == 0 {
			tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
			return
		}
		background(func() (momproto.Body, error) {
			// The job-wide task id comes from the mother superior.
			rep, err := m.peerCall(ctx, sj, rj, 0, momproto.IM_GET_TID, from, &momproto.Ints{Values: []int{n}})
			if err != nil {
				return nil, err
			}
			tid := rep.Body.(*momproto.Ints).Values[0]
			env := append([]string{vnodeEnv(sp.Node)}, sp.Env...)
			spawn := &momproto.IMSpawnTask{ParentNode: sj.nodeID, TaskID: tid, GlobalID: "none", Argv: sp.Argv, Env: env}
			if n == sj.nodeID {
				msg := &momproto.IMMessage{IMHeader: momproto.IMHeader{JobID: sj.id, Cookie: sj.cookie,
					Command: momproto.IM_SPAWN_TASK, FromTask: from}, Body: spawn}
				if rep := m.imSpawn(ctx, tr, sj, nil, msg); rep.Command != momproto.IM_ALL_OKAY {
					return nil, fmt.Errorf("task %d did not start", tid)
				}
			} else if _, err := m.peerCall(ctx, sj, rj, n, momproto.IM_SPAWN_TASK, from, spawn); err != nil {
				return nil, err
			}
			return &momproto.Ints{Values: []int{tid}}, nil
		})
	case momproto.TM_OBIT, momproto.TM_SIGNAL:
		v := req.Body.(*momproto.Ints).Values
		n, ok := node(v[0])
		if !ok {
			return
		}
		background(func() (momproto.Body, error) {
			if n == sj.nodeID {
				if req.Command == momproto.TM_SIGNAL {
					return momproto.Empty{}, tr.SignalTask(sj.id, v[1], syscall.Signal(v[2]))
				}
				status, err := tr.WaitTask(ctx, sj.id, v[1])
				return &momproto.Ints{Values: []int{status}}, err
			}
			cmd, body := momproto.IM_OBIT_TASK, &momproto.Ints{Values: []int{n, v[1]}}
			if req.Command == momproto.TM_SIGNAL {
				cmd, body = momproto.IM_SIGNAL_TASK, &momproto.Ints{Values: []int{n, v[1], v[2]}}
			}
			if cmd == momproto.IM_OBIT_TASK {
				// The answer comes when the task ends: no $timeout.
				sl, err := m.peerLink(ctx, sj, rj, n)
				if err != nil {
					return nil, err
				}
				rep, err := m.imCall(ctx, rj, sl, cmd, m.newEvent(), from, body)
				if err != nil {
					return nil, err
				}
				if rep.Command == momproto.IM_ERROR {
					return nil, jobexec.ErrUnknownTask
				}
				return rep.Body, nil
			}
			if _, err := m.peerCall(ctx, sj, rj, n, cmd, from, body); err != nil {
				return nil, err
			}
			return momproto.Empty{}, nil
		})
	case momproto.TM_TASKS:
		n, ok := node(req.Body.(*momproto.Ints).Values[0])
		if !ok {
			return
		}
		background(func() (momproto.Body, error) {
			if n == sj.nodeID {
				ids, err := tr.Tasks(sj.id)
				return &momproto.TMTasksReply{Tasks: ids}, err
			}
			rep, err := m.peerCall(ctx, sj, rj, n, momproto.IM_GET_TASKS, from, &momproto.Ints{Values: []int{n}})
			if err != nil {
				return nil, err
			}
			var ids []int
			if b, ok := rep.Body.(*momproto.Ints); ok {
				ids = b.Values
			}
			return &momproto.TMTasksReply{Tasks: ids}, nil
		})
	case momproto.TM_RESOURCES:
		n, ok := node(req.Body.(*momproto.Ints).Values[0])
		if !ok {
			return
		}
		background(func() (momproto.Body, error) {
			if n == sj.nodeID {
				return &momproto.IMData{Data: []byte(m.nodeResources(ctx))}, nil
			}
			rep, err := m.peerCall(ctx, sj, rj, n, momproto.IM_GET_RESC, from, &momproto.Ints{Values: []int{n}})
			if err != nil {
				return nil, err
			}
			return rep.Body, nil
		})
	default:
		tc.reply(tmError(req.Event, momproto.TM_ENOTIMPLEMENTED))
	}
}

// tmResources serves TM_RESOURCES on the mother superior: this node's
// description, another node's through IM_GET_RESC.
func (m *Mom) tmResources(ctx context.Context, tc *tmConn, mj *msJob, req *momproto.TMRequest) {
	node, ok := mj.nodeOf(req.Body.(*momproto.Ints).Values[0])
	switch {
	case !ok:
		tc.reply(tmError(req.Event, momproto.TM_ENOTFOUND))
	case node == 0:
		tc.reply(tmOkay(req.Event, &momproto.IMData{Data: []byte(m.nodeResources(ctx))}))
	default:
		m.tmRelay(ctx, tc, mj, req, node, momproto.IM_GET_RESC, &momproto.Ints{Values: []int{node}},
			func(rep *momproto.IMMessage) momproto.Body { return rep.Body })
	}
}

// nodeResources describes this node for TM_RESOURCES and IM_GET_RESC:
// its host name and the resource items of its status, as "name=value"
// pairs separated by commas (the specification leaves the text open).
func (m *Mom) nodeResources(ctx context.Context) string {
	items := []string{"host=" + m.opt.Host}
	for _, name := range []string{"ncpus", "physmem", "totmem", "arch", "opsys"} {
		if v, rmerr := m.resource(ctx, name); rmerr == 0 && v != "" {
			items = append(items, name+"="+v)
		}
	}
	return strings.Join(items, ",")
}
