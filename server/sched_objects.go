package server

import (
	"net"
	"os/user"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/link/sched"
	"gopbs/server/schedulers"
	"gopbs/server/state"
	"gopbs/server/store"
)

// schedObjects is the server's side of package schedulers.
type schedObjects struct{ s *Server }

// This file is the server's side of package schedulers (issue 18, seed
// 003): sched objects through the Manager request, their status, the
// partition rules of queues and nodes, and the slice of the cluster a
// scheduler's connection sees.

// newTable returns the sched objects of a server, with the records
// of the store.
func (o schedObjects) newTable() (*schedulers.Table, error) {
	s := o.s
	u := "root"
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	t := schedulers.NewTable(schedulers.Env{Home: s.cfg.Home, Host: s.name, User: u, DefaultPort: s.cfg.SchedPort})
	err := s.store.ForEach(store.Server, func(key string, b []byte) error {
		if !schedulers.IsRecordKey(key) {
			return nil
		}
		sc, err := schedulers.Decode(b)
		if err != nil {
			return err
		}
		t.Load(sc)
		return nil
	})
	return t, err
}

// mirror returns the default scheduler's attributes that are the
// server's. Called with s.mu held.
func (o schedObjects) mirror() schedulers.Mirror {
	s := o.s
	st := schedulers.StateIdle
	switch {
	case s.sched.Active():
		st = schedulers.StateScheduling
	case s.sched.Down():
		st = schedulers.StateDown
	}
	return schedulers.Mirror{
		Scheduling: s.serverFlag(pbsattr.SrvScheduling),
		Iteration:  s.serverLong(pbsattr.SrvSchedulerIteration, sched.DefaultIteration),
		State:      st,
	}
}

// portFree reports whether nothing listens on a loopback port, for the
// port of a new scheduler.
func portFree(p int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// changed is called after a Manager request has been
// answered: a change of a sched object reaches its process and cycles,
// and the default scheduler's scheduling set to true asks for a cycle as
// the server's does.
func (o schedObjects) changed(m *batchreq.Manage) {
	s := o.s
	if m.ObjType != batchreq.MGR_OBJ_SCHED {
		return
	}
	name := m.ObjName
	if name == "" {
		name = schedulers.DefaultName
	}
	if name == schedulers.DefaultName {
		s.sched.Managed(&batchreq.Manage{Command: m.Command, ObjType: batchreq.MGR_OBJ_SERVER, Attrs: m.Attrs})
		return
	}
	if s.schedRun != nil {
		s.schedRun.Changed(name)
	}
}

// handleStatus answers StatusSched (qmgr's list and print of sched
// objects).
func (o schedObjects) handleStatus(c *handler.Conn, req *batchreq.Request) {
	s := o.s
	body := req.Body.(*batchreq.StatusReq)
	s.mu.RLock()
	m := o.mirror()
	s.mu.RUnlock()
	objs, p := s.scheds.Status(body.ID, body.Attrs, m)
	if p != nil {
		c.Send(p)
		return
	}
	c.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs})
}

// handleHello binds a connection to the scheduler it names: from
// then on it sees that scheduler's slice. A connection the server opened
// to a scheduler may name only that one. The reply is the scheduler's
// own object.
func (o schedObjects) handleHello(c *handler.Conn, req *batchreq.Request) {
	s := o.s
	body := req.Body.(*batchreq.StatusReq)
	if !c.Asker.Manager && !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	if sl := connSlice(c); sl != nil && sl.Name != body.ID {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	s.mu.RLock()
	m := o.mirror()
	s.mu.RUnlock()
	objs, p := s.scheds.Status(body.ID, nil, m)
	if p != nil {
		c.Send(p)
		return
	}
	setConnSlice(c, s.scheds.Slice(body.ID))
	c.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs})
}

// schedRunner runs the non-default schedulers (Supervisor): told of
// every change of a sched object.
type schedRunner interface{ Changed(name string) }

// register registers the requests of sched objects.
func (o schedObjects) register() {
	s := o.s
	s.mux.HandleFunc(batchreq.PBS_BATCH_StatusSched, o.handleStatus)
	s.mux.HandleFunc(batchreq.PBS_BATCH_SchedHello, o.handleHello)
}

// queuePartitionCheck applies the partition rules to a queue change: q
// is the queue as it was, na its new attributes. Called with s.mu held.
func (o schedObjects) queuePartitionCheck(q *state.Queue, na state.Attrs) *batchreq.Reply {
	s := o.s
	isRoute := func(t string) bool { return len(t) > 0 && (t[0] == 'r' || t[0] == 'R') }
	u := schedulers.QueueUpdate{Name: q.Name,
		OldPart: q.Attrs.Get(pbsattr.QueuePartition), NewPart: na.Get(pbsattr.QueuePartition),
		OldRoute: isRoute(q.Attrs.Get(pbsattr.QueueType)), NewRoute: isRoute(na.Get(pbsattr.QueueType))}
	if u.OldPart == u.NewPart && u.OldRoute == u.NewRoute {
		return nil
	}
	for _, n := range s.nodes {
		if n.Attrs.Get(pbsattr.NodeQueue) == q.Name {
			u.NodeParts = append(u.NodeParts, n.Attrs.Get(pbsattr.NodePartition))
		}
	}
	return schedulers.CheckQueue(u)
}

// nodePartitionCheck applies the partition rules to a node change: old
// is the node as it was, n as it is now. Called with s.mu held.
func (o schedObjects) nodePartitionCheck(old state.Attrs, n *state.Node) *batchreq.Reply {
	s := o.s
	u := schedulers.NodeUpdate{
		OldPart: old.Get(pbsattr.NodePartition), NewPart: n.Attrs.Get(pbsattr.NodePartition),
		OldQueue: old.Get(pbsattr.NodeQueue), NewQueue: n.Attrs.Get(pbsattr.NodeQueue),
		QueuePart: func(name string) (string, bool) {
			q := s.queueByName[name]
			if q == nil {
				return "", false
			}
			return q.Attrs.Get(pbsattr.QueuePartition), true
		},
	}
	if u.OldPart == u.NewPart && u.OldQueue == u.NewQueue {
		return nil
	}
	return schedulers.CheckNode(u)
}

// setConnSlice gives a connection the slice sl (nil: none, it sees
// everything).
func setConnSlice(c *handler.Conn, sl *schedulers.Slice) {
	c.Asker.Slice = nil
	if sl != nil {
		c.Asker.Slice = sl // not a nil *schedulers.Slice in the interface
	}
}

// connSlice returns what a scheduler's connection sees (nil: every
// other connection, which sees everything).
func connSlice(c *handler.Conn) *schedulers.Slice {
	sl, _ := c.Asker.Slice.(*schedulers.Slice)
	return sl
}

// sliceRefusesRun returns the refusal of a RunJob from a scheduler's
// connection for a job or a destination outside its slice, or nil.
// Called with s.mu held.
func (o schedObjects) sliceRefusesRun(c *handler.Conn, j *state.Job, dest string) *batchreq.Reply {
	s := o.s
	sl := connSlice(c)
	if sl == nil {
		return nil
	}
	if !c.Asker.SeesQueue(j.Queue) {
		return batchreq.TextReply(batchreq.PBSE_PERM, "job "+j.ID+" is not in a partition of scheduler "+sl.Name)
	}
	for _, elem := range strings.Split(dest, "+") {
		h, _, _ := strings.Cut(elem, ":")
		h, _, _ = strings.Cut(h, "/")
		if n := s.nodeByName[h]; n != nil && !c.Asker.SeesNode(n) {
			return batchreq.TextReply(batchreq.PBSE_PERM, "node "+h+" is not in a partition of scheduler "+sl.Name)
		}
	}
	return nil
}

// runsOn returns the nodes a RunJob may allocate to job j: those of the
// connection's slice, and of them those linked to no queue or to the
// job's (a node's queue attribute). Called with s.mu held.
func runsOn(c *handler.Conn, j *state.Job) func(*state.Node) bool {
	return func(n *state.Node) bool {
		if q := n.Attrs.Get(pbsattr.NodeQueue); q != "" && (j.Queue == nil || j.Queue.Name != q) {
			return false
		}
		return c.Asker.SeesNode(n)
	}
}
