package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// handleManager serves qmgr/pbsnodes/qenable... requests on the server,
// queues and nodes (spec 02 §3.2, §10).
func (s *Server) handleManager(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	switch body.Command {
	case batchreq.MGR_CMD_CREATE, batchreq.MGR_CMD_DELETE:
		if !c.perm.mgr {
			c.reject(batchreq.PBSE_PERM, "")
			return
		}
	case batchreq.MGR_CMD_SET, batchreq.MGR_CMD_UNSET:
		if !c.perm.mgr && !c.perm.oper {
			c.reject(batchreq.PBSE_PERM, "")
			return
		}
	default:
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	s.mu.Lock()
	var p *batchreq.Reply
	var ops []store.Op
	switch body.ObjType {
	case batchreq.MGR_OBJ_SERVER:
		p, ops = s.manageServer(c, body)
	case batchreq.MGR_OBJ_QUEUE:
		p, ops = s.manageQueue(c, body)
	case batchreq.MGR_OBJ_SCHED:
		p, ops = s.manageSched(c, body)
	case batchreq.MGR_OBJ_NODE:
		var nodesFile func() error
		if p, ops, nodesFile = s.manageNode(c, body); p == nil && nodesFile != nil {
			// Both the store and server_priv/nodes hold the change
			// before the reply.
			wait := s.store.Submit(ops...)
			s.mu.Unlock()
			err, ferr := wait(), nodesFile()
			switch {
			case err != nil:
				c.send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save node"))
			case ferr != nil:
				s.logError("mgr_node", ferr.Error())
				c.send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot write nodes file"))
			default:
				c.send(batchreq.NullReply())
			}
			return
		}
	default:
		p = batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "")
	}
	if p != nil {
		s.mu.Unlock()
		c.send(p)
		return
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
	s.run.schedManaged(body)
	s.schedObjectsChanged(body)
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
func (s *Server) applyAttrs(c *conn, defs *state.DefTable, cur state.Attrs, list batchreq.AttrList, unset bool,
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
		if !c.perm.writable(d.Perm) || d.Perm&(pbsattr.WriteAll|pbsattr.WriteServer) == 0 {
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
			if p := s.checkACL(a, v, old); p != nil {
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

func (s *Server) manageServer(c *conn, m *batchreq.Manage) (*batchreq.Reply, []store.Op) {
	if m.Command != batchreq.MGR_CMD_SET && m.Command != batchreq.MGR_CMD_UNSET {
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", ""), nil
	}
	unset := m.Command == batchreq.MGR_CMD_UNSET
	na, lines, p := s.applyAttrs(c, state.ServerDefs, s.attrs, m.Attrs, unset, func(idx int, a *batchreq.Attr) *batchreq.Reply {
		if idx == pbsattr.SrvDefaultQueue && !unset && a.Value != "" && s.queueByName[a.Value] == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", "")
		}
		if idx == pbsattr.SrvHTTPAddress && !unset && !validHTTPAddr(a.Value) {
			return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		return nil
	})
	if p != nil {
		return p, nil
	}
	verb := "set"
	if unset {
		verb = "unset"
	}
	s.log.Logf(logline.EventAdmin, logline.ClassServer, "PBS_Server", "attributes %s:  at request of %s", verb, c.requester())
	for _, l := range lines {
		s.log.Log(logline.EventAdmin, logline.ClassServer, "PBS_Server", l)
	}
	if v := na.Get(pbsattr.SrvNextJobNumber); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			s.nextJob = n
		}
		na.Set(pbsattr.SrvNextJobNumber, "")
	}
	if na.Get(pbsattr.SrvHTTPAddress) != s.attrs.Get(pbsattr.SrvHTTPAddress) {
		go s.reconcileHTTP(false) // once s.mu is released
	}
	s.attrs = na
	ev := int(s.serverLong(pbsattr.SrvLogEvents, pbslog.DefaultEvents))
	s.log.SetEvents(ev)
	return nil, []store.Op{state.SaveServer(s.attrs, s.nextJob)}
}

func (s *Server) manageQueue(c *conn, m *batchreq.Manage) (*batchreq.Reply, []store.Op) {
	name := m.ObjName
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	now := strconv.FormatInt(s.now().Unix(), 10)
	switch m.Command {
	case batchreq.MGR_CMD_CREATE:
		if len(name) > batchreq.PBS_MAXQUEUENAME {
			return batchreq.ErrorReply(batchreq.PBSE_QUENBIG, "", ""), nil
		}
		if name == "" || !isNameChar(name[0]) {
			return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", ""), nil
		}
		if s.queueByName[name] != nil {
			return batchreq.ErrorReply(batchreq.PBSE_QUEEXIST, "", ""), nil
		}
		q := &state.Queue{Name: name, Order: s.orderSeq}
		na, lines, p := s.applyAttrs(c, state.QueueDefs, nil, m.Attrs, false, s.queueCheck(q))
		if p == nil {
			p = s.queuePartitionCheck(q, na)
		}
		if p != nil {
			return p, nil
		}
		s.orderSeq++
		q.Attrs = na
		q.Attrs.Set(pbsattr.QueueMtime, now)
		s.queues = append(s.queues, q)
		s.queueByName[name] = q
		s.log.Logf(logline.EventAdmin, logline.ClassQueue, name, "created at request of %s", c.requester())
		for _, l := range lines {
			s.log.Log(logline.EventAdmin, logline.ClassQueue, name, l)
		}
		return nil, []store.Op{state.SaveQueue(q)}
	case batchreq.MGR_CMD_DELETE:
		q := s.queueByName[name]
		if q == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", ""), nil
		}
		if q.Total() > 0 || s.queueHasJobs(q) {
			return batchreq.ErrorReply(batchreq.PBSE_QUEBUSY, "", ""), nil
		}
		for i, x := range s.queues {
			if x == q {
				s.queues = append(s.queues[:i:i], s.queues[i+1:]...)
				break
			}
		}
		delete(s.queueByName, name)
		s.log.Logf(logline.EventAdmin, logline.ClassQueue, name, "deleted at request of %s", c.requester())
		return nil, []store.Op{store.Del(store.Queues, name)}
	}
	var qs []*state.Queue
	if name == "" {
		qs = s.queues
	} else if q := s.queueByName[name]; q != nil {
		qs = []*state.Queue{q}
	} else {
		return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", ""), nil
	}
	unset := m.Command == batchreq.MGR_CMD_UNSET
	verb := "set"
	if unset {
		verb = "unset"
	}
	var ops []store.Op
	for _, q := range qs {
		na, lines, p := s.applyAttrs(c, state.QueueDefs, q.Attrs, m.Attrs, unset, s.queueCheck(q))
		if p == nil {
			p = s.queuePartitionCheck(q, na)
		}
		if p != nil {
			return p, nil
		}
		old := q.Attrs
		q.Attrs = na
		if state.IsTrue(q.Attrs.Get(pbsattr.QueueEnabled)) && q.Attrs.Get(pbsattr.QueueType) == "" {
			q.Attrs = old
			return batchreq.ErrorReply(batchreq.PBSE_QUENOEN, "", ""), nil
		}
		q.Attrs.Set(pbsattr.QueueMtime, now)
		s.log.Logf(logline.EventAdmin, logline.ClassQueue, q.Name, "attributes %s:  at request of %s", verb, c.requester())
		for _, l := range lines {
			s.log.Log(logline.EventAdmin, logline.ClassQueue, q.Name, l)
		}
		ops = append(ops, state.SaveQueue(q))
	}
	return nil, ops
}

func (s *Server) queueHasJobs(q *state.Queue) bool {
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if j.Queue == q {
			return true
		}
	}
	return false
}

func isNameChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// queueCheck returns the per-attribute check of a queue: a route queue
// that would route to itself and attributes that do not fit the queue's
// type. (queue_type values are checked and spelled out by their value
// type, attr.TypeQueueType.)
func (s *Server) queueCheck(q *state.Queue) func(int, *batchreq.Attr) *batchreq.Reply {
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
// held; besides the reply or the store operations, it returns the wait
// for server_priv/nodes when the change is one the file shows.
func (s *Server) manageNode(c *conn, m *batchreq.Manage) (*batchreq.Reply, []store.Op, func() error) {
	name := m.ObjName
	switch m.Command {
	case batchreq.MGR_CMD_CREATE:
		if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
			return batchreq.ErrorReply(batchreq.PBSE_BADNDATVAL, "", ""), nil, nil
		}
		if len(name) > batchreq.PBS_MAXHOSTNAME {
			return batchreq.ErrorReply(batchreq.PBSE_NODENBIG, "", ""), nil, nil
		}
		if s.nodeByName[name] != nil {
			return batchreq.ErrorReply(batchreq.PBSE_NODEEXIST, "", ""), nil, nil
		}
		// A new node is "down,offline" until its MOM reports (TORQUE).
		n := &state.Node{Name: name, NP: 1, State: state.NodeStateUnreported, Order: s.orderSeq}
		if p, lines := s.applyNodeAttrs(c, n, m.Attrs); p != nil {
			return p, nil, nil
		} else if p := s.nodePartitionCheck(nil, n); p != nil {
			return p, nil, nil
		} else {
			for _, l := range lines {
				s.log.Log(logline.EventAdmin, logline.ClassNode, name, l)
			}
		}
		s.orderSeq++
		s.nodes = append(s.nodes, n)
		s.nodeByName[name] = n
		return nil, []store.Op{state.SaveNode(n)}, s.nodeCreated(n)
	case batchreq.MGR_CMD_DELETE:
		n := s.nodeByName[name]
		if n == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", ""), nil, nil
		}
		for i, x := range s.nodes {
			if x == n {
				s.nodes = append(s.nodes[:i:i], s.nodes[i+1:]...)
				break
			}
		}
		delete(s.nodeByName, name)
		s.log.Logf(logline.EventAdmin, logline.ClassNode, name, "deleted at request of %s", c.requester())
		return nil, []store.Op{store.Del(store.Nodes, name)}, s.nodesChanged()
	case batchreq.MGR_CMD_UNSET:
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", ""), nil, nil
	}
	var ns []*state.Node
	if name == "" || name == ":ALL" {
		ns = s.nodes
	} else if n := s.nodeByName[name]; n != nil {
		ns = []*state.Node{n}
	} else {
		return batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", ""), nil, nil
	}
	var ops []store.Op
	fileChanged := false
	for _, n := range ns {
		old := *n
		old.Attrs = n.Attrs.Clone()
		p, lines := s.applyNodeAttrs(c, n, m.Attrs)
		if p == nil {
			p = s.nodePartitionCheck(old.Attrs, n)
		}
		if p != nil {
			*n = old
			return p, nil, nil
		}
		s.log.Logf(logline.EventAdmin, logline.ClassNode, n.Name, "attributes set:  at request of %s", c.requester())
		for _, l := range lines {
			s.log.Log(logline.EventAdmin, logline.ClassNode, n.Name, l)
		}
		if n.NP != old.NP || n.Attrs.Get(pbsattr.NodeProperties) != old.Attrs.Get(pbsattr.NodeProperties) || n.TimeShared != old.TimeShared {
			fileChanged = true
		}
		ops = append(ops, state.SaveNode(n))
	}
	if fileChanged {
		return nil, ops, s.nodesChanged()
	}
	return nil, ops, nil
}

// applyNodeAttrs applies a node attribute list; it returns an error reply
// or the log lines.
func (s *Server) applyNodeAttrs(c *conn, n *state.Node, list batchreq.AttrList) (*batchreq.Reply, []string) {
	var lines []string
	for i := range list {
		a := &list[i]
		idx := state.NodeDefs.Find(a.Name)
		if idx < 0 {
			return batchreq.BadAttrReply(batchreq.PBSE_UNKNODEATR, a), nil
		}
		d := state.NodeDefs.Defs[idx]
		if !c.perm.writable(d.Perm) {
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
				s.log.Logf(logline.EventAdmin, logline.ClassNode, n.Name, "node %s state changed from %s to %s", n.Name, state.FormatNodeState(old), state.FormatNodeState(n.State))
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
					if !contains(cur, x) {
						cur = append(cur, x)
					}
				}
			case batchreq.DECR:
				var keep []string
				for _, x := range cur {
					if !contains(vals, x) {
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
