// Package status serves the status and select family: StatusServer,
// StatusQueue, StatusNode, StatusJob (spec 02 §3.9-§3.12), SelectJobs and
// SelStat (§3.14). Each handler is a function of the server's state as
// the family sees it (State), a reply writer (Writer), who asks and the
// decoded request. The family only reads the state.
package status

import (
	"slices"
	"strconv"
	"strings"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// State is what the family needs of the server. Every method but RLock
// is called with the read lock held.
type State interface {
	// RLock and RUnlock guard the reading of the state.
	RLock()
	RUnlock()
	// Name returns the server's name.
	Name() string
	// Attrs returns the server's attributes (not to be changed).
	Attrs() state.Attrs
	// ServerState returns the server's state word: "Active", "Idle",
	// "Scheduling" or "Terminating".
	ServerState() string
	// NextJob returns the next job number.
	NextJob() int64
	// NetCounter returns the request rates of the net_counter
	// attribute.
	NetCounter() string
	// Jobs returns the job table.
	Jobs() *state.Jobs
	// FindJob returns the job named as clients name it, or nil.
	FindJob(id string) *state.Job
	// Queues returns the queues in creation order; Queue finds one.
	Queues() []*state.Queue
	Queue(name string) *state.Queue
	// Nodes returns the nodes in creation order; Node finds one.
	Nodes() []*state.Node
	Node(name string) *state.Node
	// WithRemaining adds the computed Walltime.Remaining of a running
	// job to its full status view (the MOM link's clock).
	WithRemaining(view state.Attrs, j *state.Job) state.Attrs
}

// Writer is the family's reply writer: besides handler.ReplyWriter it
// sends replies already encoded (large job statuses are written straight
// into one buffer) and rejects a request naming the attribute at fault.
type Writer interface {
	handler.ReplyWriter
	SendRaw(b []byte)
	RejectAttr(code int, a *batchreq.Attr)
}

// List encodes a view as a status attribute list for who (isOwner: who
// owns the object). want, if not empty, selects attributes (in the
// requested order); the second result is the first wanted name that is
// unknown.
func List(defs *state.DefTable, view state.Attrs, who *handler.Asker, isOwner bool, want batchreq.AttrList) (batchreq.AttrList, *batchreq.Attr) {
	var out batchreq.AttrList
	emit := func(v state.AttrValue) {
		d := defs.Defs[v.Index]
		if v.Value == "" || !who.Readable(d.Perm, d.Flags, isOwner) {
			return
		}
		if d.Type == attr.TypeResourceList {
			if rd := state.Resources[v.Resource]; rd.Perm != 0 && !who.Readable(rd.Perm, rd.Flags, isOwner) {
				return
			}
		}
		out = append(out, handler.WireAttr(defs, v))
	}
	if len(want) == 0 {
		out = make(batchreq.AttrList, 0, len(view))
		for _, v := range view {
			emit(v)
		}
		return out, nil
	}
	for i := range want {
		w := &want[i]
		idx := defs.Find(w.Name)
		if idx < 0 {
			return nil, w
		}
		for _, v := range view.Resources(idx) {
			if w.HasResource && w.Resource != "" && !strings.EqualFold(v.Resource, w.Resource) {
				continue
			}
			emit(v)
		}
	}
	return out, nil
}

// appendStatusAttrs appends the DIS attribute list of a full status (no
// wanted-attribute list) directly, without building batchreq values: the
// path of large StatusJob replies.
func appendStatusAttrs(dst []byte, defs *state.DefTable, view state.Attrs, who *handler.Asker, isOwner bool) []byte {
	ok := func(v state.AttrValue) bool {
		d := &defs.Defs[v.Index]
		if v.Value == "" || !who.Readable(d.Perm, d.Flags, isOwner) {
			return false
		}
		if d.Type == attr.TypeResourceList {
			if rd := state.Resources[v.Resource]; rd.Perm != 0 && !who.Readable(rd.Perm, rd.Flags, isOwner) {
				return false
			}
		}
		return true
	}
	n := 0
	for _, v := range view {
		if ok(v) {
			n++
		}
	}
	dst = dis.AppendUint(dst, uint64(n))
	for _, v := range view {
		if !ok(v) {
			continue
		}
		a := handler.WireAttr(defs, v)
		size := len(a.Name) + len(a.Value) + 2
		if a.HasResource {
			size += len(a.Resource) + 1
		}
		dst = dis.AppendUint(dst, uint64(size))
		dst = dis.AppendString(dst, a.Name)
		if a.HasResource {
			dst = append(dst, "+1"...)
			dst = dis.AppendString(dst, a.Resource)
		} else {
			dst = append(dst, "+0"...)
		}
		dst = dis.AppendString(dst, a.Value)
		dst = append(dst, "+0"...)
	}
	return dst
}

func serverView(st State) state.Attrs {
	v := st.Attrs().Clone()
	v.Set(attr.SrvState, st.ServerState())
	v.Set(attr.SrvTotalJobs, strconv.Itoa(totalJobs(st.Jobs())))
	v.Set(attr.SrvStateCount, state.StateCount(st.Jobs().Count()))
	v.Set(attr.SrvPBSVersion, "2.5.13")
	v.Set(attr.SrvNextJobNumber, strconv.FormatInt(st.NextJob(), 10))
	v.Set(attr.SrvNetCounter, st.NetCounter())
	return v
}

func totalJobs(t *state.Jobs) int {
	n := 0
	for _, c := range t.Count() {
		n += c
	}
	return n
}

func queueView(q *state.Queue) state.Attrs {
	v := q.Attrs.Clone()
	v.Set(attr.QueueTotalJobs, strconv.Itoa(q.Total()))
	v.Set(attr.QueueStateCount, state.StateCount(q.Count))
	return v
}

func nodeView(n *state.Node) state.Attrs {
	v := n.Attrs.Clone()
	v.Set(attr.NodeStateAttr, state.FormatNodeState(n.State))
	v.Set(attr.NodeNP, strconv.Itoa(n.NP))
	if n.TimeShared {
		v.Set(attr.NodeNType, "time-shared")
	} else {
		v.Set(attr.NodeNType, "cluster")
	}
	if v.Get(attr.NodeGPUs) == "" {
		v.Set(attr.NodeGPUs, "0")
	}
	return v
}

// Server answers a StatusServer.
func Server(st State, w Writer, who *handler.Asker, b *batchreq.StatusReq) {
	st.RLock()
	list, bad := List(state.ServerDefs, serverView(st), who, true, b.Attrs)
	name := st.Name()
	st.RUnlock()
	if bad != nil {
		w.RejectAttr(batchreq.PBSE_NOATTR, bad)
		return
	}
	w.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status,
		Status: []batchreq.StatusObject{{ObjType: batchreq.MGR_OBJ_SERVER, Name: name, Attrs: list}}})
}

// Queue answers a StatusQueue.
func Queue(st State, w Writer, who *handler.Asker, b *batchreq.StatusReq) {
	st.RLock()
	var qs []*state.Queue
	name := b.ID
	if name == "" || name[0] == '@' {
		qs = st.Queues()
	} else {
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		q := st.Queue(name)
		if q == nil {
			st.RUnlock()
			w.Reject(batchreq.PBSE_UNKQUE, batchreq.MsgCannotLocateQue)
			return
		}
		qs = []*state.Queue{q}
	}
	objs := make([]batchreq.StatusObject, 0, len(qs))
	for _, q := range qs {
		if !who.SeesQueue(q) {
			continue
		}
		list, bad := List(state.QueueDefs, queueView(q), who, true, b.Attrs)
		if bad != nil {
			st.RUnlock()
			w.RejectAttr(batchreq.PBSE_NOATTR, bad)
			return
		}
		objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_QUEUE, Name: q.Name, Attrs: list})
	}
	st.RUnlock()
	w.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs})
}

// Node answers a StatusNode.
func Node(st State, w Writer, who *handler.Asker, b *batchreq.StatusReq) {
	st.RLock()
	var ns []*state.Node
	all := st.Nodes()
	switch id := b.ID; {
	case id == "" || id == ":ALL" || id[0] == '@':
		ns = all
	case id[0] == ':':
		prop := id[1:]
		for _, n := range all {
			if n.Name == prop || slices.Contains(state.ParseArst(n.Attrs.Get(attr.NodeProperties)), prop) {
				ns = append(ns, n)
			}
		}
	default:
		n := st.Node(id)
		if n == nil {
			st.RUnlock()
			w.Reject(batchreq.PBSE_UNKNODE, "cannot locate specified node")
			return
		}
		ns = []*state.Node{n}
	}
	if len(all) == 0 {
		st.RUnlock()
		w.Reject(batchreq.PBSE_NONODES, "node list is empty - check 'server_priv/nodes' file")
		return
	}
	objs := make([]batchreq.StatusObject, 0, len(ns))
	for _, n := range ns {
		if !who.SeesNode(n) {
			continue
		}
		list, bad := List(state.NodeDefs, nodeView(n), who, true, b.Attrs)
		if bad != nil {
			st.RUnlock()
			w.RejectAttr(batchreq.PBSE_UNKNODEATR, bad)
			return
		}
		objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_NODE, Name: n.Name, Attrs: list})
	}
	st.RUnlock()
	w.Send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs})
}
