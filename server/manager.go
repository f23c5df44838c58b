package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
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
}

// logValue renders a value for the "attributes set" log line: booleans
// as TRUE/FALSE, everything else as sent.
func logValue(t pbsattr.Type, v string) string {
	if t == pbsattr.TypeBool {
		if b, ok := parseBool(v); ok {
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
func (s *Server) applyAttrs(c *conn, defs *defTable, cur attrList, list batchreq.AttrList, unset bool,
	check func(idx int, a *batchreq.Attr) *batchreq.Reply) (attrList, []string, *batchreq.Reply) {
	na := cur.clone()
	var lines []string
	verb := "set"
	if unset {
		verb = "unset"
	}
	for i := range list {
		a := &list[i]
		idx := defs.find(a.Name)
		if idx < 0 {
			return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)
		}
		d := defs.defs[idx]
		if !c.perm.writable(d.perm) || d.perm&(pbsattr.WriteAll|pbsattr.WriteServer) == 0 {
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
			if d.typ == pbsattr.TypeResourceList && a.HasResource && a.Resource != "" {
				na.setRes(idx, strings.ToLower(a.Resource), "")
			} else {
				na.unset(idx)
			}
			lines = append(lines, "attributes "+verb+": "+full+" = ")
			continue
		}
		typ := d.typ
		res := ""
		if d.typ == pbsattr.TypeResourceList {
			rd, ok := resources[strings.ToLower(a.Resource)]
			if !ok {
				return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
			}
			typ, res = rd.typ, strings.ToLower(a.Resource)
		}
		v, ok := decodeValue(typ, a.Value)
		if !ok {
			return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		old := na.getRes(idx, res)
		if isList(typ) && a.Op != batchreq.DECR {
			if p := s.checkACL(a, v, old); p != nil {
				return nil, nil, p
			}
		}
		if a.Op == batchreq.INCR || a.Op == batchreq.INCR_OLD || a.Op == batchreq.DECR {
			if v, ok = combineValue(typ, old, v, a.Op); !ok {
				return nil, nil, batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
		}
		na.setRes(idx, res, v)
		lines = append(lines, "attributes "+verb+": "+full+" "+opSymbol(a.Op)+" "+logValue(typ, a.Value))
	}
	return na, lines, nil
}

func (s *Server) manageServer(c *conn, m *batchreq.Manage) (*batchreq.Reply, []store.Op) {
	if m.Command != batchreq.MGR_CMD_SET && m.Command != batchreq.MGR_CMD_UNSET {
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", ""), nil
	}
	unset := m.Command == batchreq.MGR_CMD_UNSET
	na, lines, p := s.applyAttrs(c, serverDefs, s.attrs, m.Attrs, unset, func(idx int, a *batchreq.Attr) *batchreq.Reply {
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
	if v := na.get(pbsattr.SrvNextJobNumber); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			s.nextJob = n
		}
		na.set(pbsattr.SrvNextJobNumber, "")
	}
	if na.get(pbsattr.SrvHTTPAddress) != s.attrs.get(pbsattr.SrvHTTPAddress) {
		go s.reconcileHTTP(false) // once s.mu is released
	}
	s.attrs = na
	ev := int(s.serverLong(pbsattr.SrvLogEvents, pbslog.DefaultEvents))
	s.log.SetEvents(ev)
	return nil, []store.Op{s.saveServerOp()}
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
		q := &Queue{name: name, order: s.orderSeq}
		na, lines, p := s.applyAttrs(c, queueDefs, nil, m.Attrs, false, s.queueCheck(q))
		if p != nil {
			return p, nil
		}
		s.orderSeq++
		q.attrs = na
		q.attrs.set(pbsattr.QueueMtime, now)
		s.queues = append(s.queues, q)
		s.queueByName[name] = q
		s.log.Logf(logline.EventAdmin, logline.ClassQueue, name, "created at request of %s", c.requester())
		for _, l := range lines {
			s.log.Log(logline.EventAdmin, logline.ClassQueue, name, l)
		}
		return nil, []store.Op{store.Put(store.Queues, name, encodeQueue(q))}
	case batchreq.MGR_CMD_DELETE:
		q := s.queueByName[name]
		if q == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", ""), nil
		}
		if q.total() > 0 || s.queueHasJobs(q) {
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
	var qs []*Queue
	if name == "" {
		qs = s.queues
	} else if q := s.queueByName[name]; q != nil {
		qs = []*Queue{q}
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
		na, lines, p := s.applyAttrs(c, queueDefs, q.attrs, m.Attrs, unset, s.queueCheck(q))
		if p != nil {
			return p, nil
		}
		old := q.attrs
		q.attrs = na
		if isTrue(q.attrs.get(pbsattr.QueueEnabled)) && q.attrs.get(pbsattr.QueueType) == "" {
			q.attrs = old
			return batchreq.ErrorReply(batchreq.PBSE_QUENOEN, "", ""), nil
		}
		q.attrs.set(pbsattr.QueueMtime, now)
		s.log.Logf(logline.EventAdmin, logline.ClassQueue, q.name, "attributes %s:  at request of %s", verb, c.requester())
		for _, l := range lines {
			s.log.Log(logline.EventAdmin, logline.ClassQueue, q.name, l)
		}
		ops = append(ops, store.Put(store.Queues, q.name, encodeQueue(q)))
	}
	return nil, ops
}

func (s *Server) queueHasJobs(q *Queue) bool {
	for j := s.head; j != nil; j = j.next {
		if j.queue == q {
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
func (s *Server) queueCheck(q *Queue) func(int, *batchreq.Attr) *batchreq.Reply {
	return func(idx int, a *batchreq.Attr) *batchreq.Reply {
		if idx == pbsattr.QueueRouteDestinations {
			for _, d := range parseArst(a.Value) {
				if d == q.name {
					return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
				}
			}
		}
		kind := queueDefs.defs[idx].kind
		if kind == pbsattr.KindExecution && q.isRoute() || kind == pbsattr.KindRoute && q.isExec() {
			return batchreq.ErrorReply(batchreq.PBSE_ATTRTYPE, "", "Warning: type of queue "+q.name+" incompatible with attribute "+a.Name)
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
		n := &Node{name: name, np: 1, state: nsUnreported, order: s.orderSeq}
		if p, lines := s.applyNodeAttrs(c, n, m.Attrs); p != nil {
			return p, nil, nil
		} else {
			for _, l := range lines {
				s.log.Log(logline.EventAdmin, logline.ClassNode, name, l)
			}
		}
		s.orderSeq++
		s.nodes = append(s.nodes, n)
		s.nodeByName[name] = n
		return nil, []store.Op{store.Put(store.Nodes, name, encodeNode(n))}, s.nodeCreated(n)
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
	var ns []*Node
	if name == "" || name == ":ALL" {
		ns = s.nodes
	} else if n := s.nodeByName[name]; n != nil {
		ns = []*Node{n}
	} else {
		return batchreq.ErrorReply(batchreq.PBSE_UNKNODE, "", ""), nil, nil
	}
	var ops []store.Op
	fileChanged := false
	for _, n := range ns {
		old := *n
		p, lines := s.applyNodeAttrs(c, n, m.Attrs)
		if p != nil {
			*n = old
			return p, nil, nil
		}
		s.log.Logf(logline.EventAdmin, logline.ClassNode, n.name, "attributes set:  at request of %s", c.requester())
		for _, l := range lines {
			s.log.Log(logline.EventAdmin, logline.ClassNode, n.name, l)
		}
		if n.np != old.np || n.attrs.get(pbsattr.NodeProperties) != old.attrs.get(pbsattr.NodeProperties) || n.timeShared != old.timeShared {
			fileChanged = true
		}
		ops = append(ops, store.Put(store.Nodes, n.name, encodeNode(n)))
	}
	if fileChanged {
		return nil, ops, s.nodesChanged()
	}
	return nil, ops, nil
}

// applyNodeAttrs applies a node attribute list; it returns an error reply
// or the log lines.
func (s *Server) applyNodeAttrs(c *conn, n *Node, list batchreq.AttrList) (*batchreq.Reply, []string) {
	var lines []string
	for i := range list {
		a := &list[i]
		idx := nodeDefs.find(a.Name)
		if idx < 0 {
			return batchreq.BadAttrReply(batchreq.PBSE_UNKNODEATR, a), nil
		}
		d := nodeDefs.defs[idx]
		if !c.perm.writable(d.perm) {
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
					bits |= nodeStateFromAttr(st)
				default:
					return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
				}
			}
			if free && bits != 0 {
				return batchreq.BadAttrReply(batchreq.PBSE_MUTUALEX, a), nil
			}
			old := n.state
			switch a.Op {
			case batchreq.INCR, batchreq.INCR_OLD:
				n.state |= bits
			case batchreq.DECR:
				n.state &^= bits
			default:
				n.state = n.state&^(nsOffline|nsDown|nsReserve) | bits
			}
			if n.state&nsOffline == 0 && (a.Op == batchreq.DECR && bits&nsOffline != 0 || a.Op == batchreq.SET) {
				// An operator who clears offline (pbsnodes -c) clears
				// the offline of a node that has not reported too.
				n.state &^= nsNotReported
			}
			if old != n.state {
				s.log.Logf(logline.EventAdmin, logline.ClassNode, n.name, "node %s state changed from %s to %s", n.name, formatNodeState(old), formatNodeState(n.state))
			}
		case pbsattr.NodeNP:
			v, err := strconv.Atoi(a.Value)
			if err != nil || v <= 0 {
				return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
			}
			switch a.Op {
			case batchreq.INCR, batchreq.INCR_OLD:
				n.np += v
			case batchreq.DECR:
				if n.np-v <= 0 {
					return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
				}
				n.np -= v
			default:
				n.np = v
			}
		case pbsattr.NodeNType:
			switch a.Value {
			case "cluster":
				n.timeShared = false
			case "time-shared":
				n.timeShared = true
			default:
				return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
			}
		case pbsattr.NodeProperties:
			cur := parseArst(n.attrs.get(pbsattr.NodeProperties))
			vals := parseArst(a.Value)
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
			n.attrs.set(pbsattr.NodeProperties, encodeArst(cur))
		case pbsattr.NodeGPUs:
			if _, err := strconv.Atoi(a.Value); err != nil {
				return batchreq.BadAttrReply(batchreq.PBSE_BADNDATVAL, a), nil
			}
			n.attrs.set(idx, a.Value)
		default:
			n.attrs.set(idx, a.Value)
		}
		lines = append(lines, line)
	}
	return nil, lines
}
