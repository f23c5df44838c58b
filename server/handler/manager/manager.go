// Package manager serves the Manager request (qmgr, pbsnodes, qenable,
// qstart...): creating, deleting, setting and unsetting the attributes
// of the server, queues and nodes (spec 02 §3.2, §10), with the checks of
// ACL values (acl.go). Manage is a function of the server's state as the
// family sees it (State), a reply writer, who asks and the request.
package manager

import (
	"slices"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/httplisten"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/schedulers"
	"gopbs/server/state"
)

// State is what the family needs of the server. Every method but Lock,
// Log and the callbacks returned is called with the lock held.
type State interface {
	// Lock and Unlock guard a change of the state.
	Lock()
	Unlock()
	// Begin starts a transaction over the state.
	Begin() *state.Txn
	// Log returns the server's log.
	Log() *pbslog.Logger
	// LogError writes a LOG_ERROR line of the function fn.
	LogError(fn, msg string)
	// Now returns the time.
	Now() time.Time
	// Attrs returns the server's attributes; SetAttrs replaces them.
	Attrs() state.Attrs
	SetAttrs(a state.Attrs)
	// SetNextJob sets the next job number.
	SetNextJob(n int64)
	// Jobs returns the job table.
	Jobs() *state.Jobs
	// Queues returns the queues in creation order; Queue finds one,
	// AddQueue and RemoveQueue change the list.
	Queues() []*state.Queue
	Queue(name string) *state.Queue
	AddQueue(q *state.Queue)
	RemoveQueue(q *state.Queue)
	// Nodes returns the nodes in creation order; Node finds one,
	// AddNode and RemoveNode change the list.
	Nodes() []*state.Node
	Node(name string) *state.Node
	AddNode(n *state.Node)
	RemoveNode(n *state.Node)
	// NextOrder returns the creation order number of the next queue or
	// node; AddQueue and AddNode use it up.
	NextOrder() int64
	// NodeCreated and NodesChanged start the rewrite of
	// server_priv/nodes after a change it shows; the wait returned is
	// called without the lock.
	NodeCreated(n *state.Node) func() error
	NodesChanged() func() error
	// HTTPAddressChanged reconciles the HTTP listener with the
	// http_address attribute once the lock is released.
	HTTPAddressChanged()
	// Managed tells the scheduler links of a Manager request served
	// (called after the reply, without the lock).
	Managed(b *batchreq.Manage)
	// QueuePartitionCheck and NodePartitionCheck refuse a change of a
	// queue's (new attributes na) or a node's partition or queue that
	// the partitions do not allow (old: the node's attributes before).
	QueuePartitionCheck(q *state.Queue, na state.Attrs) *batchreq.Reply
	NodePartitionCheck(old state.Attrs, n *state.Node) *batchreq.Reply
	// ManageSched applies a Manager request on sched objects to the
	// scheduler table; undo restores the table as it was.
	ManageSched(m *batchreq.Manage) (ch schedulers.Change, undo func())
}

// request is one Manager request being served.
type request struct {
	st  State
	who *handler.Asker
	log *pbslog.Logger
}

// validHTTPAddr reports whether v is an http_address value: empty or an
// address httplisten accepts.
func validHTTPAddr(v string) bool {
	if v == "" {
		return true
	}
	_, err := httplisten.ParseAddr(v)
	return err == nil
}

// Manage serves a Manager request (qmgr, pbsnodes, qenable...) on the
// server, queues and nodes (spec 02 §3.2, §10).
func Manage(st State, w handler.ReplyWriter, who *handler.Asker, body *batchreq.Manage) {
	switch body.Command {
	case batchreq.MGR_CMD_CREATE, batchreq.MGR_CMD_DELETE:
		if !who.Manager {
			w.Reject(batchreq.PBSE_PERM, "")
			return
		}
	case batchreq.MGR_CMD_SET, batchreq.MGR_CMD_UNSET:
		if !who.Manager && !who.Operator {
			w.Reject(batchreq.PBSE_PERM, "")
			return
		}
	default:
		w.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	r := &request{st: st, who: who, log: st.Log()}
	st.Lock()
	var p *batchreq.Reply
	tx := st.Begin()
	switch body.ObjType {
	case batchreq.MGR_OBJ_SERVER:
		p = r.manageServer(tx, body)
	case batchreq.MGR_OBJ_QUEUE:
		p = r.manageQueue(tx, body)
	case batchreq.MGR_OBJ_SCHED:
		p = r.manageSched(tx, body)
	case batchreq.MGR_OBJ_NODE:
		var nodesFile func() error
		if p, nodesFile = r.manageNode(tx, body); p == nil && nodesFile != nil {
			// Both the store and server_priv/nodes hold the change
			// before the reply.
			wait := tx.Commit()
			st.Unlock()
			err, ferr := wait(), nodesFile()
			switch {
			case err != nil:
				w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save node"))
			case ferr != nil:
				st.LogError("mgr_node", ferr.Error())
				w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot write nodes file"))
			default:
				w.Send(batchreq.NullReply())
			}
			return
		}
	default:
		p = batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "")
	}
	if p != nil {
		st.Unlock()
		w.Send(p)
		return
	}
	handler.CommitAndReply(st, w, tx, batchreq.NullReply())
	st.Managed(body)
}

// manageSched serves a Manager request on sched objects: the scheduler
// table's change, and the default scheduler's attributes that mirror
// the server's (scheduling, scheduler_iteration) set on the server.
func (r *request) manageSched(tx *state.Txn, m *batchreq.Manage) *batchreq.Reply {
	if !r.who.Manager {
		return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
	}
	ch, undo := r.st.ManageSched(m)
	if ch.Reply != nil {
		if ch.Reply.Code == batchreq.PBSE_SCHED_OP_DEFAULT {
			r.log.Log(logline.EventAdmin, logline.ClassServer, "PBS_Server", batchreq.ErrorText(batchreq.PBSE_SCHED_OP_DEFAULT))
		}
		return ch.Reply
	}
	tx.Put(ch.Ops...)
	if len(ch.Server) > 0 {
		cmd := batchreq.MGR_CMD_SET
		if ch.Unset {
			cmd = batchreq.MGR_CMD_UNSET
		}
		if p := r.manageServer(tx, &batchreq.Manage{Command: cmd, ObjType: batchreq.MGR_OBJ_SERVER, Attrs: ch.Server}); p != nil {
			undo() // the table's part
			return p
		}
	}
	r.log.Logf(logline.EventAdmin, logline.ClassServer, ch.Name, "sched %s at request of %s", strings.Join(ch.Log, ", "), r.who.Requester())
	return nil
}

// logValue renders a value for the "attributes set" log line: booleans
// as TRUE/FALSE, everything else as sent.
func logValue(t pbsattr.Type, v string) string {
	if t == pbsattr.TypeBool {
		if b, ok := state.ParseBool(v); ok {
			if b {
				return "TRUE"
			}
			return "FALSE"
		}
	}
	return v
}

func opSymbol(op int) string {
	switch op {
	case batchreq.INCR, batchreq.INCR_OLD:
		return "+"
	case batchreq.DECR:
		return "-"
	}
	return "="
}

// applyAttrs applies a Manager attribute list to a copy of an object's
// attributes. It returns the new list, the log lines, or an error reply.
func (r *request) applyAttrs(defs *state.DefTable, cur state.Attrs, list batchreq.AttrList, unset bool,
	check func(idx int, a *batchreq.Attr) *batchreq.Reply) (state.Attrs, []string, *batchreq.Reply) {
	na := cur.Clone()
	var lines []string
	verb := "set"
	if unset {
		verb = "unset"
	}
	for i := range list {
		a := &list[i]
		idx := defs.Find(a.Name)
		if idx < 0 {
			return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)
		}
		d := defs.Defs[idx]
		if !r.who.Writable(d.Perm) || d.Perm&(pbsattr.WriteAll|pbsattr.WriteServer) == 0 {
			return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_ATTRRO, a)
		}
		if check != nil {
			if p := check(idx, a); p != nil {
				return nil, nil, p
			}
		}
		full := a.Name
		if a.HasResource {
			full += "." + a.Resource
		}
		if unset {
			if d.Type == pbsattr.TypeResourceList && a.HasResource && a.Resource != "" {
				na.SetRes(idx, strings.ToLower(a.Resource), "")
			} else {
				na.Unset(idx)
			}
			lines = append(lines, "attributes "+verb+": "+full+" = ")
			continue
		}
		typ := d.Type
		res := ""
		if d.Type == pbsattr.TypeResourceList {
			rd, ok := state.Resources[strings.ToLower(a.Resource)]
			if !ok {
				return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
			}
			typ, res = rd.Type, strings.ToLower(a.Resource)
		}
		v, ok := state.DecodeValue(typ, a.Value)
		if !ok {
			return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		old := na.GetRes(idx, res)
		if state.IsList(typ) && a.Op != batchreq.DECR {
			if p := r.checkACL(a, v, old); p != nil {
				return nil, nil, p
			}
		}
		if a.Op == batchreq.INCR || a.Op == batchreq.INCR_OLD || a.Op == batchreq.DECR {
			if v, ok = state.CombineValue(typ, old, v, a.Op); !ok {
				return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
		}
		na.SetRes(idx, res, v)
		lines = append(lines, "attributes "+verb+": "+full+" "+opSymbol(a.Op)+" "+logValue(typ, a.Value))
	}
	return na, lines, nil
}

func (r *request) manageServer(tx *state.Txn, m *batchreq.Manage) *batchreq.Reply {
	if m.Command != batchreq.MGR_CMD_SET && m.Command != batchreq.MGR_CMD_UNSET {
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "")
	}
	unset := m.Command == batchreq.MGR_CMD_UNSET
	na, lines, p := r.applyAttrs(state.ServerDefs, r.st.Attrs(), m.Attrs, unset, func(idx int, a *batchreq.Attr) *batchreq.Reply {
		if idx == pbsattr.SrvDefaultQueue && !unset && a.Value != "" && r.st.Queue(a.Value) == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", "")
		}
		if idx == pbsattr.SrvHTTPAddress && !unset && !validHTTPAddr(a.Value) {
			return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		return nil
	})
	if p != nil {
		return p
	}
	verb := "set"
	if unset {
		verb = "unset"
	}
	r.log.Logf(logline.EventAdmin, logline.ClassServer, "PBS_Server", "attributes %s:  at request of %s", verb, r.who.Requester())
	for _, l := range lines {
		r.log.Log(logline.EventAdmin, logline.ClassServer, "PBS_Server", l)
	}
	if v := na.Get(pbsattr.SrvNextJobNumber); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			r.st.SetNextJob(n)
		}
		na.Set(pbsattr.SrvNextJobNumber, "")
	}
	httpChanged := na.Get(pbsattr.SrvHTTPAddress) != r.st.Attrs().Get(pbsattr.SrvHTTPAddress)
	r.st.SetAttrs(na)
	if httpChanged {
		r.st.HTTPAddressChanged()
	}
	ev := pbslog.DefaultEvents
	if v, err := strconv.ParseInt(na.Get(pbsattr.SrvLogEvents), 10, 64); err == nil {
		ev = int(v)
	}
	r.log.SetEvents(ev)
	tx.SaveServer()
	return nil
}

func (r *request) manageQueue(tx *state.Txn, m *batchreq.Manage) *batchreq.Reply {
	name := m.ObjName
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	now := strconv.FormatInt(r.st.Now().Unix(), 10)
	switch m.Command {
	case batchreq.MGR_CMD_CREATE:
		if len(name) > batchreq.PBS_MAXQUEUENAME {
			return batchreq.ErrorReply(batchreq.PBSE_QUENBIG, "", "")
		}
		if name == "" || !state.NameChar(name[0]) {
			return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "")
		}
		if r.st.Queue(name) != nil {
			return batchreq.ErrorReply(batchreq.PBSE_QUEEXIST, "", "")
		}
		q := &state.Queue{Name: name, Order: r.st.NextOrder()}
		na, lines, p := r.applyAttrs(state.QueueDefs, nil, m.Attrs, false, queueCheck(q))
		if p == nil {
			p = r.st.QueuePartitionCheck(q, na)
		}
		if p != nil {
			return p
		}
		q.Attrs = na
		q.Attrs.Set(pbsattr.QueueMtime, now)
		r.st.AddQueue(q)
		r.log.Logf(logline.EventAdmin, logline.ClassQueue, name, "created at request of %s", r.who.Requester())
		for _, l := range lines {
			r.log.Log(logline.EventAdmin, logline.ClassQueue, name, l)
		}
		tx.SaveQueue(q)
		return nil
	case batchreq.MGR_CMD_DELETE:
		q := r.st.Queue(name)
		if q == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", "")
		}
		if q.Total() > 0 || queueHasJobs(r.st.Jobs(), q) {
			return batchreq.ErrorReply(batchreq.PBSE_QUEBUSY, "", "")
		}
		if linked := queueNodes(r.st.Nodes(), name); len(linked) > 0 {
			// nodes that name the queue (their queue attribute, seed 003)
			// would run the jobs of a queue that no longer exists
			return batchreq.TextReply(batchreq.PBSE_QUEBUSY, QueueLinkedText(name, linked))
		}
		r.st.RemoveQueue(q)
		r.log.Logf(logline.EventAdmin, logline.ClassQueue, name, "deleted at request of %s", r.who.Requester())
		tx.DeleteQueue(name)
		return nil
	}
	var qs []*state.Queue
	if name == "" {
		qs = r.st.Queues()
	} else if q := r.st.Queue(name); q != nil {
		qs = []*state.Queue{q}
	} else {
		return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", "")
	}
	unset := m.Command == batchreq.MGR_CMD_UNSET
	verb := "set"
	if unset {
		verb = "unset"
	}
	for _, q := range qs {
		na, lines, p := r.applyAttrs(state.QueueDefs, q.Attrs, m.Attrs, unset, queueCheck(q))
		if p == nil {
			p = r.st.QueuePartitionCheck(q, na)
		}
		if p != nil {
			return p
		}
		old := q.Attrs
		q.Attrs = na
		if state.IsTrue(q.Attrs.Get(pbsattr.QueueEnabled)) && q.Attrs.Get(pbsattr.QueueType) == "" {
			q.Attrs = old
			return batchreq.ErrorReply(batchreq.PBSE_QUENOEN, "", "")
		}
		q.Attrs.Set(pbsattr.QueueMtime, now)
		r.log.Logf(logline.EventAdmin, logline.ClassQueue, q.Name, "attributes %s:  at request of %s", verb, r.who.Requester())
		for _, l := range lines {
			r.log.Log(logline.EventAdmin, logline.ClassQueue, q.Name, l)
		}
		tx.SaveQueue(q)
	}
	return nil
}

// queueNodes returns the names of the nodes linked to queue name through
// their queue attribute.
func queueNodes(nodes []*state.Node, name string) []string {
	var out []string
	for _, n := range nodes {
		if n.Attrs.Get(pbsattr.NodeQueue) == name {
			out = append(out, n.Name)
		}
	}
	return out
}

// QueueLinkedText is the text of the refusal to delete queue q while the
// nodes name it in their queue attribute (PBSE_QUEBUSY).
func QueueLinkedText(q string, nodes []string) string {
	return "Cannot delete busy queue: queue " + q + " is linked to node(s) " + strings.Join(nodes, ",") +
		" (unset their queue attribute first)"
}

func queueHasJobs(jobs *state.Jobs, q *state.Queue) bool {
	for j := jobs.First(); j != nil; j = j.Next() {
		if j.Queue == q {
			return true
		}
	}
	return false
}

// queueCheck returns the per-attribute check of a queue: a route queue
// that would route to itself and attributes that do not fit the queue's
// type. (queue_type values are checked and spelled out by their value
// type, attr.TypeQueueType.)
func queueCheck(q *state.Queue) func(int, *batchreq.Attr) *batchreq.Reply {
	return func(idx int, a *batchreq.Attr) *batchreq.Reply {
		if idx == pbsattr.QueueRouteDestinations {
			for _, d := range state.ParseArst(a.Value) {
				if d == q.Name {
					return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
				}
			}
		}
		kind := state.QueueDefs.Defs[idx].Kind
		if kind == pbsattr.KindExecution && q.IsRoute() || kind == pbsattr.KindRoute && q.IsExec() {
			return batchreq.ErrorReply(batchreq.PBSE_ATTRTYPE, "", "Warning: type of queue "+q.Name+" incompatible with attribute "+a.Name)
		}
		return nil
	}
}

// manageNode serves the Manager requests on nodes. Called with the lock
// held; the change goes into tx and, besides the reply, it returns the
// wait for server_priv/nodes when the change is one the file shows.
func (r *request) manageNode(tx *state.Txn, m *batchreq.Manage) (*batchreq.Reply, func() error) {
	name := m.ObjName
	switch m.Command {
	case batchreq.MGR_CMD_CREATE:
		if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
			return batchreq.ErrorReply(batchreq.PBSE_BADNDATVAL, "", ""), nil
		}
		if len(name) > batchreq.PBS_MAXHOSTNAME {
			return batchreq.ErrorReply(batchreq.PBSE_NODENBIG, "", ""), nil
		}
		if r.st.Node(name) != nil {
			return batchreq.ErrorReply(batchreq.PBSE_NODEEXIST, "", ""), nil
		}
		// A new node is "down,offline" until its MOM reports (TORQUE).
		n := &state.Node{Name: name, NP: 1, State: state.NodeStateUnreported, Order: r.st.NextOrder()}
		if p, lines := r.applyNodeAttrs(n, m.Attrs); p != nil {
			return p, nil
		} else if p := r.st.NodePartitionCheck(nil, n); p != nil {
			return p, nil
		} else {
			for _, l := range lines {
				r.log.Log(logline.EventAdmin, logline.ClassNode, name, l)
			}
		}
		r.st.AddNode(n)
		tx.SaveNode(n)
		return nil, r.st.NodeCreated(n)
	case batchreq.MGR_CMD_DELETE:
		n := r.st.Node(name)
		if n == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", ""), nil
		}
		r.st.RemoveNode(n)
		r.log.Logf(logline.EventAdmin, logline.ClassNode, name, "deleted at request of %s", r.who.Requester())
		tx.DeleteNode(name)
		return nil, r.st.NodesChanged()
	case batchreq.MGR_CMD_UNSET:
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", ""), nil
	}
	var ns []*state.Node
	if name == "" || name == ":ALL" {
		ns = r.st.Nodes()
	} else if n := r.st.Node(name); n != nil {
		ns = []*state.Node{n}
	} else {
		return batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", ""), nil
	}
	fileChanged := false
	for _, n := range ns {
		old := *n
		old.Attrs = n.Attrs.Clone()
		p, lines := r.applyNodeAttrs(n, m.Attrs)
		if p == nil {
			p = r.st.NodePartitionCheck(old.Attrs, n)
		}
		if p != nil {
			*n = old
			return p, nil
		}
		r.log.Logf(logline.EventAdmin, logline.ClassNode, n.Name, "attributes set:  at request of %s", r.who.Requester())
		for _, l := range lines {
			r.log.Log(logline.EventAdmin, logline.ClassNode, n.Name, l)
		}
		if n.NP != old.NP || n.Attrs.Get(pbsattr.NodeProperties) != old.Attrs.Get(pbsattr.NodeProperties) || n.TimeShared != old.TimeShared {
			fileChanged = true
		}
		tx.SaveNode(n)
	}
	if fileChanged {
		return nil, r.st.NodesChanged()
	}
	return nil, nil
}

// applyNodeAttrs applies a node attribute list; it returns an error reply
// or the log lines.
func (r *request) applyNodeAttrs(n *state.Node, list batchreq.AttrList) (*batchreq.Reply, []string) {
	var lines []string
	for i := range list {
		a := &list[i]
		idx := state.NodeDefs.Find(a.Name)
		if idx < 0 {
			return batchreq.BadAttrReply(batchreq.PBSE_UNKNODEATR, a), nil
		}
		d := state.NodeDefs.Defs[idx]
		if !r.who.Writable(d.Perm) {
			return batchreq.BadAttrReply(batchreq.PBSE_ATTRRO, a), nil
		}
		line := "attributes set: " + a.Name + " " + opSymbol(a.Op) + " " + a.Value
		switch idx {
		case pbsattr.NodeStateAttr:
			bits := 0
			free := false
			for _, w := range strings.Split(a.Value, ",") {
				w = strings.TrimSpace(w)
				st, err := pbsattr.ParseNodeState(w)
				switch {
				case w == "free":
					free = true
				case w != "" && err == nil:
					bits |= state.NodeStateFromAttr(st)
				default:
					return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
				}
			}
			if free && bits != 0 {
				return batchreq.BadAttrReply(batchreq.PBSE_MUTUALEX, a), nil
			}
			old := n.State
			switch a.Op {
			case batchreq.INCR, batchreq.INCR_OLD:
				n.State |= bits
			case batchreq.DECR:
				n.State &^= bits
			default:
				n.State = n.State&^(state.NodeStateOffline|state.NodeStateDown|state.NodeStateReserve) | bits
			}
			if n.State&state.NodeStateOffline == 0 && (a.Op == batchreq.DECR && bits&state.NodeStateOffline != 0 || a.Op == batchreq.SET) {
				// An operator who clears offline (pbsnodes -c) clears
				// the offline of a node that has not reported too.
				n.State &^= state.NodeStateNotReported
			}
			if old != n.State {
				r.log.Logf(logline.EventAdmin, logline.ClassNode, n.Name, "node %s state changed from %s to %s", n.Name, state.FormatNodeState(old), state.FormatNodeState(n.State))
			}
		case pbsattr.NodeNP:
			v, err := strconv.Atoi(a.Value)
			if err != nil || v <= 0 {
				return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
			}
			switch a.Op {
			case batchreq.INCR, batchreq.INCR_OLD:
				n.NP += v
			case batchreq.DECR:
				if n.NP-v <= 0 {
					return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
				}
				n.NP -= v
			default:
				n.NP = v
			}
		case pbsattr.NodeNType:
			switch a.Value {
			case "cluster":
				n.TimeShared = false
			case "time-shared":
				n.TimeShared = true
			default:
				return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
			}
		case pbsattr.NodeProperties:
			cur := state.ParseArst(n.Attrs.Get(pbsattr.NodeProperties))
			vals := state.ParseArst(a.Value)
			switch a.Op {
			case batchreq.INCR, batchreq.INCR_OLD:
				for _, x := range vals {
					if !slices.Contains(cur, x) {
						cur = append(cur, x)
					}
				}
			case batchreq.DECR:
				var keep []string
				for _, x := range cur {
					if !slices.Contains(vals, x) {
						keep = append(keep, x)
					}
				}
				cur = keep
			default:
				cur = vals
			}
			n.Attrs.Set(pbsattr.NodeProperties, state.EncodeArst(cur))
		case pbsattr.NodeGPUs:
			if _, err := strconv.Atoi(a.Value); err != nil {
				return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
			}
			n.Attrs.Set(idx, a.Value)
		default:
			n.Attrs.Set(idx, a.Value)
		}
		lines = append(lines, line)
	}
	return nil, lines
}
