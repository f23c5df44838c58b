package server

import (
	"time"

	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/handler/manager"
	"gopbs/server/nodesfile"
	"gopbs/server/pbslog"
	"gopbs/server/schedulers"
	"gopbs/server/state"
)

// managerState is the server as the Manager handler (package manager)
// sees it.
type managerState struct{ s *Server }

func (v managerState) Lock()                          { v.s.mu.Lock() }
func (v managerState) Unlock()                        { v.s.mu.Unlock() }
func (v managerState) Begin() *state.Txn              { return v.s.db.Begin() }
func (v managerState) Log() *pbslog.Logger            { return v.s.log }
func (v managerState) LogError(fn, msg string)        { v.s.logError(fn, msg) }
func (v managerState) Now() time.Time                 { return v.s.now() }
func (v managerState) Attrs() state.Attrs             { return v.s.attrs }
func (v managerState) SetAttrs(a state.Attrs)         { v.s.attrs = a }
func (v managerState) SetNextJob(n int64)             { v.s.nextJob = n }
func (v managerState) Jobs() *state.Jobs              { return &v.s.jobs }
func (v managerState) Queues() []*state.Queue         { return v.s.queues }
func (v managerState) Queue(name string) *state.Queue { return v.s.queueByName[name] }
func (v managerState) Nodes() []*state.Node           { return v.s.nodes }
func (v managerState) Node(name string) *state.Node   { return v.s.nodeByName[name] }
func (v managerState) NextOrder() int64               { return v.s.order.Peek() }
func (v managerState) NodesChanged() func() error {
	return v.s.nodesFile.Replace(nodesfile.Lines(v.s.nodes))
}
func (v managerState) HTTPAddressChanged() { go v.s.mon.reconcile(false) } // once the lock is released
func (v managerState) Managed(b *batchreq.Manage) {
	v.s.sched.Managed(b)
	schedObjects(v).changed(b)
}

func (v managerState) QueuePartitionCheck(q *state.Queue, na state.Attrs) *batchreq.Reply {
	return schedObjects(v).queuePartitionCheck(q, na)
}

func (v managerState) NodePartitionCheck(old state.Attrs, n *state.Node) *batchreq.Reply {
	return schedObjects(v).nodePartitionCheck(old, n)
}

func (v managerState) ManageSched(m *batchreq.Manage) (schedulers.Change, func()) {
	old := v.s.scheds.Get(schedulers.DefaultName)
	return v.s.scheds.Manage(m, portFree), func() { v.s.scheds.Load(old) }
}

// NodeCreated records the node just appended to the node table in
// server_priv/nodes (package nodesfile); NodesChanged records any other
// change of the table. Both return the wait for the file to be on disk.
func (v managerState) NodeCreated(n *state.Node) func() error {
	return v.s.nodesFile.Add(func() []string { return nodesfile.Lines(v.s.nodes) }, nodesfile.Line(n))
}

func (v managerState) AddQueue(q *state.Queue) {
	v.s.order.Next()
	v.s.queues = append(v.s.queues, q)
	v.s.queueByName[q.Name] = q
}

func (v managerState) RemoveQueue(q *state.Queue) {
	v.s.queues = removeFirst(v.s.queues, q)
	delete(v.s.queueByName, q.Name)
}

func (v managerState) AddNode(n *state.Node) {
	v.s.order.Next()
	v.s.nodes = append(v.s.nodes, n)
	v.s.nodeByName[n.Name] = n
}

func (v managerState) RemoveNode(n *state.Node) {
	v.s.nodes = removeFirst(v.s.nodes, n)
	delete(v.s.nodeByName, n.Name)
}

// removeFirst returns list without its first x, in a new array (the old
// one may be walked by a status reply being encoded).
func removeFirst[T comparable](list []T, x T) []T {
	for i, y := range list {
		if y == x {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// register registers the Manager request.
func (st managerState) register() {
	s := st.s
	s.mux.HandleFunc(batchreq.PBS_BATCH_Manager, func(c *handler.Conn, req *batchreq.Request) {
		who := c.Asker
		manager.Manage(st, c.Writer, &who, req.Body.(*batchreq.Manage))
	})
}
