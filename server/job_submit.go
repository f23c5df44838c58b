package server

import (
	"os/user"
	"strconv"
	"strings"
	"unique"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
)

// maxJobNumber is where next_job_number wraps to 0.
const maxJobNumber = 99999999

// handleQueueJob starts a submission (spec 02 §3.3, §6.1; spec 12 §4.3).
func (s *Server) handleQueueJob(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.QueueJob)
	if body.JobID != "" && !c.perm.svr {
		c.reject(batchreq.PBSE_IVALREQ, batchreq.MsgJobNotFromClient)
		return
	}
	s.mu.Lock()
	p := s.queueJob(c, body)
	s.mu.Unlock()
	c.send(p)
}

func (s *Server) queueJob(c *conn, body *batchreq.QueueJob) *batchreq.Reply {
	if c.pending != nil {
		// A new submission replaces an uncommitted one.
		c.pending = nil
	}
	// A job moved here by another server keeps its id, attributes and
	// hop count (remote.go); it takes no job number.
	incoming := body.JobID != "" && c.perm.svr
	seq := s.nextJob
	if !incoming {
		s.nextJob++
		if s.nextJob > maxJobNumber {
			s.nextJob = 0
		}
	}
	qname := body.Destination
	if i := strings.IndexByte(qname, '@'); i >= 0 {
		qname = qname[:i]
	}
	if adv := s.advresQueue(body.Attrs); adv != "" {
		qname = adv // -W x=ADVRES:R123 (reservations.go)
	}
	if qname == "" {
		qname = s.attrs.Get(pbsattr.SrvDefaultQueue)
		if qname == "" {
			return batchreq.ErrorReply(batchreq.PBSE_QUENODFLT, "", "")
		}
	}
	q := s.queueByName[qname]
	if q == nil {
		s.log.Log(logline.EventError, logline.ClassServer, "PBS_Server", "LOG_ERROR::req_quejob, requested queue not found")
		return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", batchreq.MsgCannotLocateQue)
	}
	// A submitted job ends up with about 30 attribute values; room for
	// them up front saves the growth copies.
	j := &state.Job{Seq: int64(seq), ArrayIndex: -1, Attrs: make(state.Attrs, 0, jobAttrCap)}
	exec := q.IsExec()
	unknown := false
	for i := range body.Attrs {
		a := &body.Attrs[i]
		name := a.Name
		switch strings.ToLower(name) {
		case "synccount", "syncwith":
			// Seed 001: sync sets are requested with -W synccount=N and
			// -W syncwith=<master>; they become depend entries.
			if a.Value == "" {
				continue
			}
			d := j.Attrs.Get(pbsattr.JobDepend)
			if d != "" {
				d += ","
			}
			// a ':' in the value ("id@host:port") is escaped as depend
			// arguments are
			j.Attrs.Set(pbsattr.JobDepend, d+strings.ToLower(name)+":"+strings.ReplaceAll(a.Value, ":", "\\:"))
			continue
		}
		idx := state.JobDefs.Find(name)
		if idx < 0 || idx == state.UnknownJobAttr {
			if exec {
				unknown = true
			}
			key := name
			if a.HasResource {
				key += "\x1f" + a.Resource
			}
			j.Attrs.SetRes(state.UnknownJobAttr, key, a.Value)
			continue
		}
		d := state.JobDefs.Defs[idx]
		if d.Perm&pbsattr.WriteUser == 0 && d.Flags&pbsattr.FlagCreate == 0 && !c.perm.svr {
			return batchreq.BadAttrReply(batchreq.PBSE_ATTRRO, a)
		}
		if d.Type == pbsattr.TypeResourceList {
			rd, ok := state.Resources[strings.ToLower(a.Resource)]
			if !ok {
				if exec {
					return batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
				}
				rd = state.ResourceDef{Type: pbsattr.TypeString}
			}
			v, ok := state.DecodeValue(rd.Type, a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			j.Attrs.SetRes(idx, strings.ToLower(a.Resource), v)
			continue
		}
		if d.Type == pbsattr.TypeDepend {
			if _, ok := s.parseDepend(a.Value); !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			old := j.Attrs.Get(pbsattr.JobDepend)
			if old != "" && a.Value != "" {
				old += ","
			}
			j.Attrs.Set(pbsattr.JobDepend, old+a.Value)
			continue
		}
		if idx == pbsattr.JobVariableList {
			j.Attrs.Set(idx, a.Value) // kept as sent (escapes are the client's)
			continue
		}
		v, ok := d.Decode(a.Value)
		if !ok {
			return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		j.Attrs.Set(idx, v)
	}
	if unknown {
		return batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", "detected presence of an unknown attribute")
	}
	if v := j.Attrs.Get(pbsattr.JobPriority); v != "" {
		if n, _ := strconv.Atoi(v); n < -1024 || n > 1024 {
			return batchreq.ErrorReply(batchreq.PBSE_BADATVAL, "", "invalid job priority")
		}
	}
	if deps, ok := s.parseDepend(j.Attrs.Get(pbsattr.JobDepend)); ok {
		s.setDeps(j, deps)
	} else {
		a := batchreq.Attr{Name: "depend"}
		return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, &a)
	}
	if h, ok := state.ParseHold(j.Attrs.Get(pbsattr.JobHoldTypes)); ok {
		j.Hold = h
	}
	j.Attrs.Set(pbsattr.JobHoldTypes, "")

	if incoming && !j.Attrs.Has(pbsattr.JobOwner) {
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "no job owner specified")
	}
	host := c.host
	owner := c.req.User + "@" + host
	if !c.perm.svr || !j.Attrs.Has(pbsattr.JobOwner) {
		j.Attrs.Set(pbsattr.JobOwner, owner)
	}
	seqStr := strconv.FormatInt(int64(seq), 10)
	if r := j.Attrs.Get(pbsattr.JobArrayRequest); r != "" {
		subs, _, ok := parseArrayRequest(r)
		if !ok {
			a := batchreq.Attr{Name: "job_array_request"}
			return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, &a)
		}
		if max := s.serverLong(pbsattr.SrvMaxJobArraySize, 0); max > 0 && int64(len(subs)) > max {
			return batchreq.ErrorReply(batchreq.PBSE_BAD_ARRAY_REQ, "", "Requested array size too large, limit is "+strconv.FormatInt(max, 10))
		}
		_, slot, _ := parseArrayRequest(r)
		if max := s.serverLong(pbsattr.SrvMaxSlotLimit, 0); max > 0 && int64(slot) > max {
			return batchreq.ErrorReply(batchreq.PBSE_BAD_ARRAY_REQ, "", "Requested slot limit too large, limit is "+strconv.FormatInt(max, 10))
		}
		j.Array = &state.ArrayInfo{Request: r}
	}
	if v := j.Attrs.Get(pbsattr.JobID); v != "" {
		// qsub -J: the requested sequence part replaces the number
		if i := strings.IndexByte(v, '.'); i >= 0 {
			v = v[:i]
		}
		seqStr = v
	}
	j.ID = s.formatJobID(seqStr, j.Array != nil)
	if body.JobID != "" && c.perm.svr {
		j.ID = body.JobID
	}
	if s.jobs.Get(j.ID) != nil {
		if j.Attrs.Has(pbsattr.JobID) {
			return batchreq.ErrorReply(batchreq.PBSE_JOBEXIST, "", "Job with id "+j.ID+" already exists, cannot set job id\n")
		}
		return batchreq.ErrorReply(batchreq.PBSE_JOBEXIST, "", "")
	}
	now := strconv.FormatInt(s.now().Unix(), 10)
	if !j.Attrs.Has(pbsattr.JobName) {
		j.Attrs.Set(pbsattr.JobName, "none")
	}
	// Variable_List: PBS_O_QUEUE and (if absent) PBS_O_HOST at the front.
	vl := j.Attrs.Get(pbsattr.JobVariableList)
	front := "PBS_O_QUEUE=" + q.Name
	if incoming {
		front = ""
	} else if !strings.Contains(","+vl, ",PBS_O_HOST=") {
		front += ",PBS_O_HOST=" + host
		if !j.Attrs.Has(pbsattr.JobSubmitHost) {
			j.Attrs.Set(pbsattr.JobSubmitHost, host)
		}
	}
	if vl != "" && front != "" {
		vl = front + "," + vl
	} else if front != "" {
		vl = front
	}
	j.Attrs.Set(pbsattr.JobVariableList, vl)
	oHost := envValue(vl, "PBS_O_HOST")
	workdir := envValue(vl, "PBS_O_WORKDIR")
	j.Attrs.Set(pbsattr.JobOutputPath, defaultPath(j.Attrs.Get(pbsattr.JobOutputPath), oHost, workdir, j.Name(), ".o", seqStr))
	j.Attrs.Set(pbsattr.JobErrorPath, defaultPath(j.Attrs.Get(pbsattr.JobErrorPath), oHost, workdir, j.Name(), ".e", seqStr))
	if !incoming || !j.Attrs.Has(pbsattr.JobCtime) {
		j.Attrs.Set(pbsattr.JobCtime, now)
	}
	j.Attrs.Set(pbsattr.JobMtime, now)
	j.Attrs.Set(pbsattr.JobQtime, now)
	if incoming {
		if p := countHop(j); p != nil {
			return p
		}
	} else {
		j.Attrs.Set(pbsattr.JobHopCount, "1")
	}
	// Like TORQUE, a queued job already names the user and group it will
	// run as (the scheduler's run limits and fair share read them).
	if p := s.checkUserList(j); p != nil {
		return p
	}
	if !j.Attrs.Has(pbsattr.JobEuser) {
		// the User_List entry without a host, else the owner; the
		// entry naming the execution host takes over at the run
		j.Attrs.Set(pbsattr.JobEuser, execUser(j, ""))
	}
	if !j.Attrs.Has(pbsattr.JobEgroup) && s.run != nil {
		if g := s.primaryGroup(j.Attrs.Get(pbsattr.JobEuser)); g != "" {
			j.Attrs.Set(pbsattr.JobEgroup, g)
		}
	}
	if j.Attrs.Has(pbsattr.JobInteractive) {
		j.Attrs.Set(pbsattr.JobRerunable, "False")
	}
	s.applyDefaults(j, q)
	if p := s.admit(j, q, host, false); p != nil {
		return p
	}
	j.State, j.Substate = pbsattr.StateTransit, pbsattr.SubTransIn
	j.Queue = q
	c.pending = j
	return batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, j.ID)
}

// jobGroups returns the groups a job runs under for the group ACL: the
// group_list entry, else the owner's primary group, plus (sloppy) every
// group the owner belongs to.
func jobGroups(j *state.Job, sloppy bool) []string {
	var out []string
	if l := state.ParseArst(j.Attrs.Get(pbsattr.JobGroupList)); len(l) > 0 {
		g, _, _ := strings.Cut(l[0], "@")
		out = append(out, g)
	} else if u, err := user.Lookup(j.OwnerUser()); err == nil {
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			out = append(out, g.Name)
		}
	}
	if sloppy {
		if u, err := user.Lookup(j.OwnerUser()); err == nil {
			if ids, err := u.GroupIds(); err == nil {
				for _, id := range ids {
					if g, err := user.LookupGroupId(id); err == nil {
						out = append(out, g.Name)
					}
				}
			}
		}
	}
	return out
}

// formatJobID builds a job id from its sequence part following
// display_job_server_suffix and job_suffix_alias (spec 12 §1.1).
func (s *Server) formatJobID(seq string, array bool) string {
	if array {
		seq += "[]"
	}
	suffix := s.attrs.Get(pbsattr.SrvDisplayJobServerSuffix) != "False"
	alias := s.attrs.Get(pbsattr.SrvJobSuffixAlias)
	switch {
	case suffix && alias != "":
		return seq + "." + s.name + "." + alias
	case suffix:
		return seq + "." + s.name
	case alias != "":
		return seq + "." + alias
	}
	return seq
}

// jobAttrCap is the initial capacity of a submitted job's attribute list.
const jobAttrCap = 32

// envValue returns the value of NAME in a Variable_List string: items
// are separated by commas, a backslash escapes the byte after it (as
// splitEscaped reads them). Items without a backslash are looked at in
// place, without copying.
func envValue(vl, name string) string {
	for start := 0; start <= len(vl); {
		end, escaped := start, false
		for end < len(vl) && vl[end] != ',' {
			if vl[end] == '\\' && end+1 < len(vl) {
				escaped = true
				end++
			}
			end++
		}
		item := vl[start:end]
		if escaped {
			item = splitEscaped(item, ',')[0]
		}
		if k, v, ok := strings.Cut(item, "="); ok && k == name {
			return v
		}
		start = end + 1
	}
	return ""
}

// defaultPath completes Output_Path/Error_Path (spec 12 §1.4).
func defaultPath(v, host, workdir, name, suffix, seq string) string {
	file := name + suffix + seq
	dir := workdir
	if dir != "" {
		dir += "/"
	}
	switch {
	case v == "":
		return host + ":" + dir + file
	case strings.HasSuffix(v, ":"):
		return v + dir + file
	case strings.HasSuffix(v, "/"):
		return v + file
	}
	return v
}

// applyDefaults fills unset resources in seed 001's order (Resource
// Limits): the queue's resources_default, the server's resources_default,
// then, for the limits a MOM enforces (limitResources), the queue's
// resources_max and the server's resources_max; it derives
// nodect/neednodes from nodes. TORQUE 2.5.13 stopped after the server's
// resources_default (README, deliberate differences).
func (s *Server) applyDefaults(j *state.Job, q *state.Queue) {
	applyCheckpointDefaults(j, q)
	fill := func(list []state.AttrValue, limitsOnly bool) {
		for _, r := range list {
			if limitsOnly && !limitResources[r.Resource] {
				continue
			}
			if _, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, r.Resource); !ok {
				j.Attrs.SetRes(pbsattr.JobResourceList, r.Resource, r.Value)
			}
		}
	}
	fill(q.Attrs.Resources(pbsattr.QueueResourcesDefault), false)
	fill(s.attrs.Resources(pbsattr.SrvResourcesDefault), false)
	fill(q.Attrs.Resources(pbsattr.QueueResourcesMax), true)
	fill(s.attrs.Resources(pbsattr.SrvResourcesMax), true)
	if n, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, "nodes"); ok {
		j.Attrs.SetRes(pbsattr.JobResourceList, "nodect", strconv.Itoa(nodeCount(n)))
		j.Attrs.SetRes(pbsattr.JobResourceList, "neednodes", n)
	}
}

// limitResources are the usage limits a MOM enforces (spec 11 §7, §9):
// the resources whose resources_max is also their default. A maximum of
// anything else (nodes, ncpus, ...) is no amount to give every job.
var limitResources = map[string]bool{
	"cput": true, "pcput": true, "walltime": true, "mem": true, "pmem": true,
	"vmem": true, "pvmem": true, "file": true,
}

// nodeCount returns the number of nodes of a node specification.
func nodeCount(spec string) int {
	if i := strings.IndexByte(spec, '#'); i >= 0 {
		spec = spec[:i]
	}
	total := 0
	for _, el := range strings.Split(spec, "+") {
		first, _, _ := strings.Cut(el, ":")
		if n, err := strconv.Atoi(first); err == nil && n > 0 {
			total += n
		} else {
			total++
		}
	}
	return total
}

func (s *Server) handleJobCred(c *conn, req *batchreq.Request) {
	s.mu.Lock()
	ok := c.pending != nil
	s.mu.Unlock()
	if !ok {
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	c.ok()
}

func (s *Server) handleJobScript(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.JobFile)
	s.mu.Lock()
	j := c.pending
	switch {
	case j == nil || body.JobID != "" && body.JobID != j.ID:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	case j.Substate != pbsattr.SubTransIn:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	case c.req.User != j.OwnerUser() && !c.perm.svr && !c.perm.oper && !c.perm.mgr:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_PERM, "cannot receive job script")
		return
	}
	j.Script = append(j.Script, body.Data...)
	s.mu.Unlock()
	c.ok()
}

// pendingJob returns the job the connection is submitting if its id is id
// and it has reached substate want. It is called with s.mu held; when the
// job does not qualify it unlocks s.mu, rejects the request and returns nil.
func (s *Server) pendingJob(c *conn, id string, want pbsattr.Substate) *state.Job {
	j := c.pending
	code := 0
	switch {
	case j == nil || id != j.ID:
		code = batchreq.PBSE_UNKJOBID
	case j.Substate != want:
		code = batchreq.PBSE_IVALREQ
	}
	if code != 0 {
		s.mu.Unlock()
		c.reject(code, "")
		return nil
	}
	return j
}

func (s *Server) handleRdytoCommit(c *conn, req *batchreq.Request) {
	s.mu.Lock()
	j := s.pendingJob(c, req.Body.(*batchreq.JobID).ID, pbsattr.SubTransIn)
	if j == nil {
		return
	}
	q := j.Queue
	j.Queue = nil
	j.Substate = pbsattr.SubTransICM
	s.jobs.Link(j)
	s.jobs.Enqueue(j, q)
	s.mu.Unlock()
	c.send(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, j.ID))
}

func (s *Server) handleCommit(c *conn, req *batchreq.Request) {
	s.mu.Lock()
	j := s.pendingJob(c, req.Body.(*batchreq.JobID).ID, pbsattr.SubTransICM)
	if j == nil {
		return
	}
	c.pending = nil
	ops := s.commitJob(j, c.requester())
	wait := s.store.Submit(ops...)
	s.mu.Unlock()
	err := wait()
	s.flushLogs()
	if err != nil {
		c.reject(batchreq.PBSE_SYSTEM, "cannot save job")
		return
	}
	c.send(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, j.ID))
	s.run.schedNotify(batchreq.SCH_SCHEDULE_NEW)
}

// flushLogs writes the log lines and accounting records held by
// commitJob.
func (s *Server) flushLogs() {
	s.log.Flush()
	s.acct.Flush()
}

// commitJob turns a received job into a queued one and returns the store
// operations that make it durable. Its log lines and accounting record
// are held: the caller calls flushLogs once the operations are durable.
func (s *Server) commitJob(j *state.Job, requester string) []store.Op {
	q := j.Queue
	script := j.Script
	j.Script = nil
	s.rankCounter++
	j.Rank = s.rankCounter
	hold := j.Hold
	logState := pbsattr.StateQueued
	switch {
	case j.Array != nil:
	case j.Hold != 0:
		logState = pbsattr.StateHeld
	case state.ExecTime(j) > s.now().Unix():
		logState = pbsattr.StateWaiting
	}
	// The lines are held until the job is durable (flushLogs), then
	// written with the other submissions of the store round.
	s.log.LogfLater(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop %s", q.Name, logState, hopCount(j))
	s.log.LogfLater(logline.EventJob, logline.ClassJob, j.ID, "Job Queued at request of %s, owner = %s, job name = %s, queue = %s",
		requester, j.Owner(), j.Name(), q.Name)
	s.acct.RecordLater(pbslog.AcctQueue, j.ID, "queue="+q.Name)
	var ops []store.Op
	if j.Array != nil {
		j.Hold = 0
		s.jobs.SetState(j, pbsattr.StateQueued, pbsattr.SubArrayTemplate)
		s.evaluate(j)
	} else {
		if q.IsExec() {
			for _, p := range s.registerDeps(j) {
				ops = append(ops, state.SaveJob(p))
			}
			if dependHolds(s, j) {
				j.Hold |= state.HoldSystem
				j.Substate = pbsattr.SubDepnHold
				for _, e := range s.jobDeps(j) {
					if e.typ == "syncwith" || e.typ == "synccount" {
						j.Substate = pbsattr.SubSyncHold
					}
				}
			}
		}
		s.jobs.SetState(j, pbsattr.StateQueued, j.Substate)
		s.evaluate(j)
	}
	compactAttrs(j)
	ops = append(ops, state.SaveJob(j), store.Put(store.Script, j.ID, script), state.SaveServer(s.attrs, s.nextJob))
	if j.Array != nil {
		ops = append(ops, s.cloneArray(j, hold)...)
	}
	if q.IsRoute() {
		ops = append(ops, s.routeJob(j, s.now().Unix())...)
	}
	return ops
}

// maxInterned is the length up to which compactAttrs shares a value.
const maxInterned = 512

// compactAttrs prepares a job that is about to stay queued, perhaps for
// long and among a million others: its attribute list is copied into an
// array of exactly its length (it was built with room to spare), and the
// values that many jobs have in common (owner, Variable_List, job name,
// the flags qsub always sends, ...) are replaced by one shared copy
// (package unique), so that the queue holds each only once. Output_Path
// and Error_Path, which contain the job number, are left alone.
func compactAttrs(j *state.Job) {
	l := make(state.Attrs, len(j.Attrs))
	copy(l, j.Attrs)
	for i := range l {
		switch v := &l[i]; {
		case v.Index == pbsattr.JobOutputPath || v.Index == pbsattr.JobErrorPath || len(v.Value) > maxInterned:
		default:
			v.Value = unique.Make(v.Value).Value()
			if v.Resource != "" {
				v.Resource = unique.Make(v.Resource).Value()
			}
		}
	}
	j.Attrs = l
}

// parseArrayRequest parses a job_array_request: indexes in request order
// and the slot limit (0 if none).
func parseArrayRequest(r string) ([]int, int, bool) {
	limit := 0
	if i := strings.IndexByte(r, '%'); i >= 0 {
		n, err := strconv.Atoi(r[i+1:])
		if err != nil || n <= 0 {
			return nil, 0, false
		}
		limit, r = n, r[:i]
	}
	seen := map[int]bool{}
	var out []int
	for _, tok := range strings.Split(r, ",") {
		lo, hi, isRange := strings.Cut(tok, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 99999 {
			return nil, 0, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 99999 {
				return nil, 0, false
			}
		}
		for k := a; k <= b; k++ {
			if seen[k] {
				return nil, 0, false
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, limit, len(out) > 0
}

// cloneArray creates the sub-jobs of an array template.
func (s *Server) cloneArray(t *state.Job, hold int) []store.Op {
	idxs, slot, _ := parseArrayRequest(t.Array.Request)
	if slot == 0 {
		slot = int(s.serverLong(pbsattr.SrvMaxSlotLimit, 0))
	}
	seq := jobIDSeq(t.ID)
	suffix := strings.TrimPrefix(t.ID, seq+"[]")
	var ops []store.Op
	for n, i := range idxs {
		is := strconv.Itoa(i)
		j := &state.Job{Seq: t.Seq, ArrayIndex: i, Parent: t, Attrs: t.Attrs.Clone(), Hold: hold | state.HoldArray}
		if slot > 0 && n >= slot && s.attrs.Get(pbsattr.SrvMoabArrayCompatible) != "False" {
			j.Hold |= state.HoldSlotLimit
		}
		j.ID = seq + "[" + is + "]" + suffix
		j.Attrs.Set(pbsattr.JobName, t.Name()+"-"+is)
		j.Attrs.Set(pbsattr.JobOutputPath, t.Attrs.Get(pbsattr.JobOutputPath)+"-"+is)
		j.Attrs.Set(pbsattr.JobErrorPath, t.Attrs.Get(pbsattr.JobErrorPath)+"-"+is)
		j.Attrs.Set(pbsattr.JobArrayID, is)
		j.Attrs.Set(pbsattr.JobSubmitArgs, t.Attrs.Get(pbsattr.JobSubmitArgs))
		j.Attrs.Set(pbsattr.JobVariableList, "PBS_ARRAYID="+is+","+t.Attrs.Get(pbsattr.JobVariableList))
		j.Rank = t.Rank
		j.State = pbsattr.StateQueued
		s.jobs.Link(j)
		s.jobs.Enqueue(j, t.Queue)
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop 1", t.Queue.Name, pbsattr.StateHeld)
		s.evaluate(j)
		t.Array.Subjobs = append(t.Array.Subjobs, j)
		t.Array.Size++
		ops = append(ops, state.SaveJob(j))
	}
	return ops
}
