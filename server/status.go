package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/state"
)

// readable reports whether an attribute or resource with permissions ap
// and flags af may be read.
func (p perm) readable(ap pbsattr.Perm, af pbsattr.Flag, isOwner bool) bool {
	if af&pbsattr.FlagNoReport != 0 {
		return false
	}
	if af&pbsattr.FlagPrivRead != 0 && !isOwner && !p.oper && !p.mgr {
		return false
	}
	return p.canRead(ap)
}

// jobView returns the job's attributes including the computed ones, in
// reporting order.
func (s *Server) jobView(j *state.Job) state.Attrs { return s.jobViewInto(nil, j) }

// jobViewInto is jobView appending to a reusable buffer.
func (s *Server) jobViewInto(out state.Attrs, j *state.Job) state.Attrs {
	return s.jobViewOf(out, j, nil)
}

// jobViewOf is jobViewInto limited to the attributes whose index is set
// in wanted (nil: all): a status asking for a few attributes neither
// copies nor computes the others.
func (s *Server) jobViewOf(out state.Attrs, j *state.Job, wanted []bool) state.Attrs {
	want := func(idx int) bool { return wanted == nil || wanted[idx] }
	var synthBuf [8]state.AttrValue
	synth := synthBuf[:0]
	if want(pbsattr.JobState) {
		synth = append(synth, state.AttrValue{Index: pbsattr.JobState, Value: j.StateLetter()})
	}
	if j.Queue != nil && want(pbsattr.JobQueue) {
		synth = append(synth, state.AttrValue{Index: pbsattr.JobQueue, Value: j.Queue.Name})
	}
	if want(pbsattr.JobServer) {
		synth = append(synth, state.AttrValue{Index: pbsattr.JobServer, Value: s.name})
	}
	if h := j.Hold & (state.HoldUser | state.HoldOther | state.HoldSystem); (h != 0 || j.Hold == 0) && want(pbsattr.JobHoldTypes) {
		synth = append(synth, state.AttrValue{Index: pbsattr.JobHoldTypes, Value: state.FormatHold(h)})
	}
	if want(pbsattr.JobSubstate) {
		synth = append(synth, state.AttrValue{Index: pbsattr.JobSubstate, Value: strconv.Itoa(int(j.Substate))})
	}
	if j.Queue != nil {
		if want(pbsattr.JobQueueRank) {
			synth = append(synth, state.AttrValue{Index: pbsattr.JobQueueRank, Value: strconv.FormatInt(j.Rank, 10)})
		}
		if want(pbsattr.JobQueueType) {
			qt := "E"
			if j.Queue.IsRoute() {
				qt = "R"
			}
			synth = append(synth, state.AttrValue{Index: pbsattr.JobQueueType, Value: qt})
		}
	}
	out = out[:0]
	a, b := j.Attrs, synth
	for len(a) > 0 || len(b) > 0 {
		if len(a) > 0 && !want(a[0].Index) {
			a = a[1:] // a stored value not asked for
			continue
		}
		switch {
		case len(b) == 0 && wanted == nil:
			out = append(out, a...)
			a = nil
		case len(b) == 0:
			out = append(out, a[0])
			a = a[1:]
		case len(a) == 0:
			out = append(out, b...)
			b = nil
		case a[0].Index == b[0].Index:
			out = append(out, b[0]) // computed value wins
			a, b = a[1:], b[1:]
		case a[0].Index < b[0].Index || a[0].Index == b[0].Index && a[0].Resource < b[0].Resource:
			out = append(out, a[0])
			a = a[1:]
		default:
			out = append(out, b[0])
			b = b[1:]
		}
	}
	return out
}

// statusList encodes a view as a status attribute list. want, if not
// empty, selects attributes (in the requested order); ok is false when a
// wanted name is unknown.
func statusList(defs *state.DefTable, view state.Attrs, p perm, isOwner bool, want batchreq.AttrList) (batchreq.AttrList, *batchreq.Attr) {
	var out batchreq.AttrList
	emit := func(v state.AttrValue) {
		d := defs.Defs[v.Index]
		if v.Value == "" || !p.readable(d.Perm, d.Flags, isOwner) {
			return
		}
		if d.Type == pbsattr.TypeResourceList {
			if rd := state.Resources[v.Resource]; rd.Perm != 0 && !p.readable(rd.Perm, rd.Flags, isOwner) {
				return
			}
		}
		out = append(out, wireAttr(defs, v))
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
func appendStatusAttrs(dst []byte, defs *state.DefTable, view state.Attrs, p perm, isOwner bool) []byte {
	ok := func(v state.AttrValue) bool {
		d := &defs.Defs[v.Index]
		if v.Value == "" || !p.readable(d.Perm, d.Flags, isOwner) {
			return false
		}
		if d.Type == pbsattr.TypeResourceList {
			if rd := state.Resources[v.Resource]; rd.Perm != 0 && !p.readable(rd.Perm, rd.Flags, isOwner) {
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
		a := wireAttr(defs, v)
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

func (s *Server) serverView() state.Attrs {
	v := s.attrs.Clone()
	srvState := "Active"
	if !s.serverFlag(pbsattr.SrvScheduling) {
		srvState = "Idle"
	} else if s.run.schedActive() {
		srvState = "Scheduling"
	}
	if s.shutting {
		srvState = "Terminating"
	}
	v.Set(pbsattr.SrvState, srvState)
	v.Set(pbsattr.SrvTotalJobs, strconv.Itoa(s.totalJobs()))
	v.Set(pbsattr.SrvStateCount, state.StateCount(s.jobs.Count()))
	v.Set(pbsattr.SrvPBSVersion, "2.5.13")
	v.Set(pbsattr.SrvNextJobNumber, strconv.FormatInt(s.nextJob, 10))
	v.Set(pbsattr.SrvNetCounter, s.rate.String(s.now()))
	return v
}

func (s *Server) totalJobs() int {
	n := 0
	for _, c := range s.jobs.Count() {
		n += c
	}
	return n
}

func (s *Server) queueView(q *state.Queue) state.Attrs {
	v := q.Attrs.Clone()
	v.Set(pbsattr.QueueTotalJobs, strconv.Itoa(q.Total()))
	v.Set(pbsattr.QueueStateCount, state.StateCount(q.Count))
	return v
}

func (s *Server) nodeView(n *state.Node) state.Attrs {
	v := n.Attrs.Clone()
	v.Set(pbsattr.NodeStateAttr, state.FormatNodeState(n.State))
	v.Set(pbsattr.NodeNP, strconv.Itoa(n.NP))
	if n.TimeShared {
		v.Set(pbsattr.NodeNType, "time-shared")
	} else {
		v.Set(pbsattr.NodeNType, "cluster")
	}
	if v.Get(pbsattr.NodeGPUs) == "" {
		v.Set(pbsattr.NodeGPUs, "0")
	}
	return v
}

func (s *Server) handleStatusSvr(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.StatusReq)
	s.mu.RLock()
	list, bad := statusList(state.ServerDefs, s.serverView(), c.perm, true, body.Attrs)
	s.mu.RUnlock()
	if bad != nil {
		c.rejectAttr(batchreq.PBSE_NOATTR, bad)
		return
	}
	c.send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status,
		Status: []batchreq.StatusObject{{ObjType: batchreq.MGR_OBJ_SERVER, Name: s.name, Attrs: list}}})
}

func (s *Server) handleStatusQue(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.StatusReq)
	s.mu.RLock()
	var qs []*state.Queue
	name := body.ID
	if name == "" || name[0] == '@' {
		qs = s.queues
	} else {
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		q := s.queueByName[name]
		if q == nil {
			s.mu.RUnlock()
			c.reject(batchreq.PBSE_UNKQUE, batchreq.MsgCannotLocateQue)
			return
		}
		qs = []*state.Queue{q}
	}
	objs := make([]batchreq.StatusObject, 0, len(qs))
	for _, q := range qs {
		if !c.seesQueue(q) {
			continue
		}
		list, bad := statusList(state.QueueDefs, s.queueView(q), c.perm, true, body.Attrs)
		if bad != nil {
			s.mu.RUnlock()
			c.rejectAttr(batchreq.PBSE_NOATTR, bad)
			return
		}
		objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_QUEUE, Name: q.Name, Attrs: list})
	}
	s.mu.RUnlock()
	c.send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs})
}

func (s *Server) handleStatusNode(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.StatusReq)
	s.mu.RLock()
	var ns []*state.Node
	switch id := body.ID; {
	case id == "" || id == ":ALL" || id[0] == '@':
		ns = s.nodes
	case id[0] == ':':
		prop := id[1:]
		for _, n := range s.nodes {
			if n.Name == prop || contains(state.ParseArst(n.Attrs.Get(pbsattr.NodeProperties)), prop) {
				ns = append(ns, n)
			}
		}
	default:
		n := s.nodeByName[id]
		if n == nil {
			s.mu.RUnlock()
			c.reject(batchreq.PBSE_UNKNODE, "cannot locate specified node")
			return
		}
		ns = []*state.Node{n}
	}
	if len(s.nodes) == 0 {
		s.mu.RUnlock()
		c.reject(batchreq.PBSE_NONODES, "node list is empty - check 'server_priv/nodes' file")
		return
	}
	objs := make([]batchreq.StatusObject, 0, len(ns))
	for _, n := range ns {
		if !c.seesNode(n) {
			continue
		}
		list, bad := statusList(state.NodeDefs, s.nodeView(n), c.perm, true, body.Attrs)
		if bad != nil {
			s.mu.RUnlock()
			c.rejectAttr(batchreq.PBSE_UNKNODEATR, bad)
			return
		}
		objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_NODE, Name: n.Name, Attrs: list})
	}
	s.mu.RUnlock()
	c.send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// canSee reports whether the requester may see a job at all.
func (s *Server) canSee(c *conn, j *state.Job) bool {
	if c.slice != nil && !c.seesQueue(j.Queue) {
		return false // not in the scheduler's slice
	}
	if c.perm.oper || c.perm.mgr || s.serverFlag(pbsattr.SrvQueryOtherJobs) {
		return true
	}
	return j.OwnerUser() == c.req.User
}

func (s *Server) isOwner(c *conn, j *state.Job) bool {
	return j.OwnerUser() == c.req.User
}

// jobStatus encodes one job for the requester.
func (s *Server) jobStatus(c *conn, j *state.Job, want batchreq.AttrList) (batchreq.StatusObject, *batchreq.Attr) {
	return s.jobStatusOf(c, j, want, nil, nil)
}

// wantedJobAttrs returns the attribute indexes a status list names (nil
// for an empty list) and the first name no job attribute has.
func wantedJobAttrs(want batchreq.AttrList) ([]bool, *batchreq.Attr) {
	if len(want) == 0 {
		return nil, nil
	}
	wanted := make([]bool, len(state.JobDefs.Defs))
	for i := range want {
		idx := state.JobDefs.Find(want[i].Name)
		if idx < 0 {
			return nil, &want[i]
		}
		wanted[idx] = true
	}
	return wanted, nil
}

// jobStatusOf is jobStatus building the view of the wanted attributes
// only (wanted from wantedJobAttrs; nil: computed here) into buf.
func (s *Server) jobStatusOf(c *conn, j *state.Job, want batchreq.AttrList, wanted []bool, buf *state.Attrs) (batchreq.StatusObject, *batchreq.Attr) {
	if wanted == nil && len(want) > 0 {
		var bad *batchreq.Attr
		if wanted, bad = wantedJobAttrs(want); bad != nil {
			return batchreq.StatusObject{}, bad
		}
	}
	var view state.Attrs
	if buf != nil {
		view = *buf
	}
	view = clientView(s.jobViewOf(view, j, wanted))
	if buf != nil {
		*buf = view
	}
	if len(want) == 0 {
		view = s.withRemaining(view, j) // run_status.go
	}
	list, bad := statusList(state.JobDefs, view, c.perm, s.isOwner(c, j), want)
	return batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_JOB, Name: j.ID, Attrs: list}, bad
}

func (s *Server) handleStatusJob(c *conn, req *batchreq.Request) {
	s.mu.RLock()
	p, raw := s.statusJobs(c, req)
	s.mu.RUnlock()
	if raw != nil {
		c.sendRaw(raw)
		return
	}
	c.send(p)
}

// statusJobs answers a StatusJob: either a reply, or (for a full status)
// the encoded reply bytes.
func (s *Server) statusJobs(c *conn, req *batchreq.Request) (*batchreq.Reply, []byte) {
	body := req.Body.(*batchreq.StatusReq)
	ext := strings.ToLower(req.Extension)
	summarize := strings.HasPrefix(ext, "summarize_arrays")
	execOnly := strings.Contains(ext, "exec_queue_only")
	id := body.ID
	var jobs []*state.Job
	single := false
	switch {
	case id == "" || id[0] == '@' || summarize && strings.Contains(id, "[]"):
		for j := s.jobs.First(); j != nil; j = j.Next() {
			jobs = append(jobs, j)
		}
	case id[0] >= '0' && id[0] <= '9':
		j := s.findJob(id)
		if j == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", ""), nil
		}
		if j.Array != nil && !summarize {
			jobs = append(jobs, j.Array.Subjobs...)
		} else {
			jobs = []*state.Job{j}
			single = true
		}
	default:
		name := id
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		q := s.queueByName[name]
		if q == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", batchreq.MsgCannotLocateQue), nil
		}
		for j := s.jobs.First(); j != nil; j = j.Next() {
			if j.Queue == q {
				jobs = append(jobs, j)
			}
		}
	}
	if strings.HasPrefix(ext, "truncated") {
		jobs = s.truncate(jobs)
	}
	var delta int64 = -1
	if i := strings.Index(req.Extension, "DELTA:"); i >= 0 {
		v := req.Extension[i+len("DELTA:"):]
		if k := strings.IndexAny(v, " ,"); k >= 0 {
			v = v[:k]
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			delta = n
		}
	}
	if len(body.Attrs) == 0 {
		return nil, s.appendJobStatuses(c, jobs, single, summarize, execOnly, delta)
	}
	// The wanted attributes are looked up once; an unknown one is
	// refused at the first job listed, as before.
	wanted, bad := wantedJobAttrs(body.Attrs)
	var view state.Attrs
	objs := make([]batchreq.StatusObject, 0, len(jobs))
	for _, j := range jobs {
		if !s.jobListed(c, j, single, summarize, execOnly) {
			continue
		}
		if bad != nil {
			return batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", ""), nil
		}
		o, bad := s.jobStatusOf(c, j, body.Attrs, wanted, &view)
		if bad != nil {
			return batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", ""), nil
		}
		objs = append(objs, o)
	}
	return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs}, nil
}

// jobFilter reports whether a job of a multi-job status is listed.
func (s *Server) jobListed(c *conn, j *state.Job, single, summarize, execOnly bool) bool {
	if !single {
		if summarize && j.Parent != nil || !summarize && j.Array != nil {
			return false
		}
		if execOnly && (j.Queue == nil || !j.Queue.IsExec()) {
			return false
		}
	}
	return s.canSee(c, j)
}

// appendJobStatuses encodes a whole Status reply for jobs.
// truncate keeps at most max_report queued jobs of each queue
// (StatusJob extension "truncated").
func (s *Server) truncate(jobs []*state.Job) []*state.Job {
	seen := map[*state.Queue]int64{}
	out := jobs[:0:0]
	for _, j := range jobs {
		if j.State == pbsattr.StateQueued && j.Queue != nil {
			if max, ok := j.Queue.Long(pbsattr.QueueMaxReport); ok {
				if seen[j.Queue] >= max {
					continue
				}
				seen[j.Queue]++
			}
		}
		out = append(out, j)
	}
	return out
}

// clientView adjusts a job view for clients: the interactive attribute
// holds qsub's port for the MOM but is reported as True (spec 04 §3).
func clientView(view state.Attrs) state.Attrs {
	for i := range view {
		if view[i].Index == pbsattr.JobInteractive && view[i].Value != "" {
			view[i].Value = "True"
		}
	}
	return view
}

// deltaView reduces a job not modified since the DELTA time to Job_Name
// and resources_used.
func deltaView(j *state.Job, view state.Attrs, since int64) state.Attrs {
	if since < 0 {
		return view
	}
	if mt, _ := strconv.ParseInt(j.Attrs.Get(pbsattr.JobMtime), 10, 64); mt >= since {
		return view
	}
	out := view[:0]
	for _, v := range view {
		if v.Index == pbsattr.JobName || v.Index == pbsattr.JobResourcesUsed {
			out = append(out, v)
		}
	}
	return out
}

func (s *Server) appendJobStatuses(c *conn, jobs []*state.Job, single, summarize, execOnly bool, delta int64) []byte {
	listed := jobs[:0:0]
	for _, j := range jobs {
		if s.jobListed(c, j, single, summarize, execOnly) {
			listed = append(listed, j)
		}
	}
	return s.encodeJobStatuses(c, listed, delta)
}

// encodeJobStatuses encodes a Status reply of the full status of jobs
// (each seen by the requester; delta as for deltaView), the same bytes
// as a batchreq.Reply of their jobStatus objects, but without building
// those objects: the reply is written straight into one buffer.
func (s *Server) encodeJobStatuses(c *conn, jobs []*state.Job, delta int64) []byte {
	out := make([]byte, 0, 32+len(jobs)*1100)
	out = append(out, "+2+1+0+0+6"...) // protocol 2 version 1, code 0, aux 0, BATCH_REPLY_CHOICE_Status
	out = dis.AppendUint(out, uint64(len(jobs)))
	var view state.Attrs
	for _, j := range jobs {
		// Walltime.Remaining: run_status.go
		view = s.withRemaining(deltaView(j, clientView(s.jobViewInto(view, j)), delta), j)
		out = append(out, '+', '2') // MGR_OBJ_JOB
		out = dis.AppendString(out, j.ID)
		out = appendStatusAttrs(out, state.JobDefs, view, c.perm, s.isOwner(c, j))
	}
	return out
}
