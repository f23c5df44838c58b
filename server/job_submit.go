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
		c.pending.conn = nil
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
	if qname == "" {
		qname = s.attrs.get(pbsattr.SrvDefaultQueue)
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
	j := &Job{seq: int64(seq), arrayIdx: -1, attrs: make(attrList, 0, jobAttrCap)}
	exec := q.isExec()
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
			d := j.attrs.get(pbsattr.JobDepend)
			if d != "" {
				d += ","
			}
			j.attrs.set(pbsattr.JobDepend, d+strings.ToLower(name)+":"+a.Value)
			continue
		}
		idx := jobDefs.find(name)
		if idx < 0 || idx == unknownJobAttr {
			if exec {
				unknown = true
			}
			key := name
			if a.HasResource {
				key += "\x1f" + a.Resource
			}
			j.attrs.setRes(unknownJobAttr, key, a.Value)
			continue
		}
		d := jobDefs.defs[idx]
		if d.perm&pbsattr.WriteUser == 0 && d.flags&pbsattr.FlagCreate == 0 && !c.perm.svr {
			return batchreq.BadAttrReply(batchreq.PBSE_ATTRRO, a)
		}
		if d.typ == pbsattr.TypeResourceList {
			rd, ok := resources[strings.ToLower(a.Resource)]
			if !ok {
				if exec {
					return batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
				}
				rd = rescDef{typ: pbsattr.TypeString}
			}
			v, ok := decodeValue(rd.typ, a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			j.attrs.setRes(idx, strings.ToLower(a.Resource), v)
			continue
		}
		if d.typ == pbsattr.TypeDepend {
			if _, ok := s.parseDepend(a.Value); !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			old := j.attrs.get(pbsattr.JobDepend)
			if old != "" && a.Value != "" {
				old += ","
			}
			j.attrs.set(pbsattr.JobDepend, old+a.Value)
			continue
		}
		if idx == pbsattr.JobVariableList {
			j.attrs.set(idx, a.Value) // kept as sent (escapes are the client's)
			continue
		}
		v, ok := d.decode(a.Value)
		if !ok {
			return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		j.attrs.set(idx, v)
	}
	if unknown {
		return batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", "detected presence of an unknown attribute")
	}
	if v := j.attrs.get(pbsattr.JobPriority); v != "" {
		if n, _ := strconv.Atoi(v); n < -1024 || n > 1024 {
			return batchreq.ErrorReply(batchreq.PBSE_BADATVAL, "", "invalid job priority")
		}
	}
	if deps, ok := s.parseDepend(j.attrs.get(pbsattr.JobDepend)); ok {
		s.setDeps(j, deps)
	} else {
		a := batchreq.Attr{Name: "depend"}
		return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, &a)
	}
	if h, ok := parseHold(j.attrs.get(pbsattr.JobHoldTypes)); ok {
		j.hold = h
	}
	j.attrs.set(pbsattr.JobHoldTypes, "")

	if incoming && !j.attrs.has(pbsattr.JobOwner) {
		return batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "no job owner specified")
	}
	host := c.host
	owner := c.req.User + "@" + host
	if !c.perm.svr || !j.attrs.has(pbsattr.JobOwner) {
		j.attrs.set(pbsattr.JobOwner, owner)
	}
	seqStr := strconv.FormatInt(int64(seq), 10)
	if r := j.attrs.get(pbsattr.JobArrayRequest); r != "" {
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
		j.array = &arrayInfo{request: r}
	}
	if v := j.attrs.get(pbsattr.JobID); v != "" {
		// qsub -J: the requested sequence part replaces the number
		if i := strings.IndexByte(v, '.'); i >= 0 {
			v = v[:i]
		}
		seqStr = v
	}
	j.id = s.formatJobID(seqStr, j.array != nil)
	if body.JobID != "" && c.perm.svr {
		j.id = body.JobID
	}
	if s.jobs[j.id] != nil {
		if j.attrs.has(pbsattr.JobID) {
			return batchreq.ErrorReply(batchreq.PBSE_JOBEXIST, "", "Job with id "+j.id+" already exists, cannot set job id\n")
		}
		return batchreq.ErrorReply(batchreq.PBSE_JOBEXIST, "", "")
	}
	now := strconv.FormatInt(s.now().Unix(), 10)
	if !j.attrs.has(pbsattr.JobName) {
		j.attrs.set(pbsattr.JobName, "none")
	}
	// Variable_List: PBS_O_QUEUE and (if absent) PBS_O_HOST at the front.
	vl := j.attrs.get(pbsattr.JobVariableList)
	front := "PBS_O_QUEUE=" + q.name
	if incoming {
		front = ""
	} else if !strings.Contains(","+vl, ",PBS_O_HOST=") {
		front += ",PBS_O_HOST=" + host
		if !j.attrs.has(pbsattr.JobSubmitHost) {
			j.attrs.set(pbsattr.JobSubmitHost, host)
		}
	}
	if vl != "" && front != "" {
		vl = front + "," + vl
	} else if front != "" {
		vl = front
	}
	j.attrs.set(pbsattr.JobVariableList, vl)
	oHost := envValue(vl, "PBS_O_HOST")
	workdir := envValue(vl, "PBS_O_WORKDIR")
	j.attrs.set(pbsattr.JobOutputPath, defaultPath(j.attrs.get(pbsattr.JobOutputPath), oHost, workdir, j.name(), ".o", seqStr))
	j.attrs.set(pbsattr.JobErrorPath, defaultPath(j.attrs.get(pbsattr.JobErrorPath), oHost, workdir, j.name(), ".e", seqStr))
	if !incoming || !j.attrs.has(pbsattr.JobCtime) {
		j.attrs.set(pbsattr.JobCtime, now)
	}
	j.attrs.set(pbsattr.JobMtime, now)
	j.attrs.set(pbsattr.JobQtime, now)
	if incoming {
		if p := countHop(j); p != nil {
			return p
		}
	} else {
		j.attrs.set(pbsattr.JobHopCount, "1")
	}
	// Like TORQUE, a queued job already names the user and group it will
	// run as (the scheduler's run limits and fair share read them).
	if p := s.checkUserList(j); p != nil {
		return p
	}
	if !j.attrs.has(pbsattr.JobEuser) {
		// the User_List entry without a host, else the owner; the
		// entry naming the execution host takes over at the run
		j.attrs.set(pbsattr.JobEuser, execUser(j, ""))
	}
	if !j.attrs.has(pbsattr.JobEgroup) && s.run != nil {
		if g := s.primaryGroup(j.attrs.get(pbsattr.JobEuser)); g != "" {
			j.attrs.set(pbsattr.JobEgroup, g)
		}
	}
	if j.attrs.has(pbsattr.JobInteractive) {
		j.attrs.set(pbsattr.JobRerunable, "False")
	}
	s.applyDefaults(j, q)
	if p := s.admit(j, q, host, false); p != nil {
		return p
	}
	j.state, j.substate = pbsattr.StateTransit, pbsattr.SubTransIn
	j.queue = q
	j.conn = c
	c.pending = j
	return batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, j.id)
}

// jobGroups returns the groups a job runs under for the group ACL: the
// group_list entry, else the owner's primary group, plus (sloppy) every
// group the owner belongs to.
func jobGroups(j *Job, sloppy bool) []string {
	var out []string
	if l := parseArst(j.attrs.get(pbsattr.JobGroupList)); len(l) > 0 {
		g, _, _ := strings.Cut(l[0], "@")
		out = append(out, g)
	} else if u, err := user.Lookup(j.ownerUser()); err == nil {
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			out = append(out, g.Name)
		}
	}
	if sloppy {
		if u, err := user.Lookup(j.ownerUser()); err == nil {
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
	suffix := s.attrs.get(pbsattr.SrvDisplayJobServerSuffix) != "False"
	alias := s.attrs.get(pbsattr.SrvJobSuffixAlias)
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
func (s *Server) applyDefaults(j *Job, q *Queue) {
	applyCheckpointDefaults(j, q)
	fill := func(list []attrVal, limitsOnly bool) {
		for _, r := range list {
			if limitsOnly && !limitResources[r.res] {
				continue
			}
			if _, ok := j.attrs.lookupRes(pbsattr.JobResourceList, r.res); !ok {
				j.attrs.setRes(pbsattr.JobResourceList, r.res, r.val)
			}
		}
	}
	fill(q.attrs.resources(pbsattr.QueueResourcesDefault), false)
	fill(s.attrs.resources(pbsattr.SrvResourcesDefault), false)
	fill(q.attrs.resources(pbsattr.QueueResourcesMax), true)
	fill(s.attrs.resources(pbsattr.SrvResourcesMax), true)
	if n, ok := j.attrs.lookupRes(pbsattr.JobResourceList, "nodes"); ok {
		j.attrs.setRes(pbsattr.JobResourceList, "nodect", strconv.Itoa(nodeCount(n)))
		j.attrs.setRes(pbsattr.JobResourceList, "neednodes", n)
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

// admit runs the queue admission checks (spec 12 §4.3). manager moves skip
// the enabled and host checks.
func (s *Server) admit(j *Job, q *Queue, host string, mgrMove bool) *batchreq.Reply {
	return s.admitFrom(j, q, host, mgrMove, false)
}

// admitFrom is admit for a job coming from a route queue when routed is
// set (from_route_only queues accept it).
func (s *Server) admitFrom(j *Job, q *Queue, host string, mgrMove, routed bool) *batchreq.Reply {
	who := "user " + j.owner() + ", queue " + q.name
	if q.isExec() {
		for _, t := range parseArst(q.attrs.get(pbsattr.QueueDisallowedTypes)) {
			var code int
			var what string
			switch t {
			case "interactive":
				if j.attrs.has(pbsattr.JobInteractive) {
					code, what = batchreq.PBSE_NOINTERACTIVE, "interactive job is not allowed for queue: "
				}
			case "batch":
				if !j.attrs.has(pbsattr.JobInteractive) {
					code, what = batchreq.PBSE_NOBATCH, "batch job is not allowed for queue: "
				}
			case "rerunable":
				if isTrue(j.attrs.get(pbsattr.JobRerunable)) {
					code, what = batchreq.PBSE_NORERUNABLE, "rerunable job is not allowed for queue: "
				}
			case "nonrerunable":
				if !isTrue(j.attrs.get(pbsattr.JobRerunable)) {
					code, what = batchreq.PBSE_NONONRERUNABLE, "only rerunable jobs are allowed for queue: "
				}
			case "fault_tolerant":
				if isTrue(j.attrs.get(pbsattr.JobFaultTolerant)) {
					code, what = batchreq.PBSE_NOFAULTTOLERANT, "fault_tolerant jobs are not allowed for queue: "
				}
			case "fault_intolerant":
				if !isTrue(j.attrs.get(pbsattr.JobFaultTolerant)) {
					code, what = batchreq.PBSE_NOFAULTINTOLERANT, "only fault_tolerant jobs are allowed for queue: "
				}
			case "job_array":
				if j.array != nil {
					code, what = batchreq.PBSE_NOJOBARRAYS, "job arrays are not allowed for queue: "
				}
			}
			if code != 0 {
				return batchreq.ErrorReply(code, "", what+who)
			}
		}
	}
	if !mgrMove && !isTrue(q.attrs.get(pbsattr.QueueEnabled)) {
		return batchreq.ErrorReply(batchreq.PBSE_QUNOENB, "", "queue is disabled: "+who)
	}
	if max, ok := q.long(pbsattr.QueueMaxQueuable); ok {
		extra := 0
		if j.array != nil {
			if subs, _, ok := parseArrayRequest(j.array.request); ok {
				extra = len(subs) - 1
			}
		}
		if int64(q.active()+extra) >= max {
			return batchreq.ErrorReply(batchreq.PBSE_MAXQUED, "", "total number of jobs in queue exceeds the queue limit: "+who)
		}
	}
	if max, ok := q.long(pbsattr.QueueMaxUserQueuable); ok {
		if int64(q.users[j.ownerUser()]) >= max {
			return batchreq.ErrorReply(batchreq.PBSE_MAXUSERQUED, "", "total number of current user's jobs exceeds the queue limit: "+who)
		}
	}
	if isTrue(q.attrs.get(pbsattr.QueueFromRouteOnly)) && !mgrMove && !routed {
		return batchreq.ErrorReply(batchreq.PBSE_QACESS, "", "queue accepts only routed jobs, no direct submission: "+who)
	}
	if !mgrMove && isTrue(q.attrs.get(pbsattr.QueueACLHostEnable)) {
		ok := false
		for _, h := range parseArst(q.attrs.get(pbsattr.QueueACLHosts)) {
			if hostMatch(h, host) {
				ok = true
			}
		}
		if !ok {
			return batchreq.ErrorReply(batchreq.PBSE_BADHOST, "", "host ACL rejected the submitting host: "+who+", host "+host)
		}
	}
	userOK := !isTrue(q.attrs.get(pbsattr.QueueACLUserEnable)) || aclMatchUser(parseArst(q.attrs.get(pbsattr.QueueACLUsers)), j.owner())
	logicOr := isTrue(q.attrs.get(pbsattr.QueueACLLogicOr)) || s.flag(pbsattr.SrvACLLogicOr)
	if q.isExec() && isTrue(q.attrs.get(pbsattr.QueueACLGroupEnable)) {
		groupOK := false
		acl := parseArst(q.attrs.get(pbsattr.QueueACLGroups))
		for _, g := range jobGroups(j, isTrue(q.attrs.get(pbsattr.QueueACLGroupSloppy)) || s.flag(pbsattr.SrvACLGroupSloppy)) {
			if contains(acl, g) {
				groupOK = true
				break
			}
		}
		switch {
		case groupOK || logicOr && isTrue(q.attrs.get(pbsattr.QueueACLUserEnable)) && userOK:
		case logicOr && !userOK:
			return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "both user and group ACL rejected the submitting user: "+who)
		default:
			return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "group ACL is not satisfied: "+who)
		}
	} else if !userOK {
		return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "user ACL rejected the submitting user: "+who)
	}
	// resources_min / resources_max (queue, then server for max)
	for _, r := range q.attrs.resources(pbsattr.QueueResourcesMin) {
		jv, ok := j.attrs.lookupRes(pbsattr.JobResourceList, r.res)
		if !ok {
			continue
		}
		if c, ok := compareResource(resources[r.res].typ, jv, r.val); ok && c < 0 {
			return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "cannot satisfy queue min "+r.res+" requirement")
		}
	}
	for _, r := range j.attrs.resources(pbsattr.JobResourceList) {
		limit, ok := q.attrs.lookupRes(pbsattr.QueueResourcesMax, r.res)
		where := "queue"
		if !ok {
			if limit, ok = s.attrs.lookupRes(pbsattr.SrvResourcesMax, r.res); !ok {
				continue
			}
			where = "server"
		}
		if c, ok := compareResource(resources[r.res].typ, r.val, limit); ok && c > 0 {
			return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "cannot satisfy "+where+" max "+r.res+" requirement")
		}
	}
	// a node request the configured nodes can never satisfy (busy or
	// down nodes do not count against it)
	if q.isExec() && !s.feasible(j.attrs.getRes(pbsattr.JobResourceList, "nodes")) {
		return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", msgInfeasible)
	}
	return s.refuseCheckpoints(j, q)
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
	case j == nil || body.JobID != "" && body.JobID != j.id:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	case j.substate != pbsattr.SubTransIn:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	case c.req.User != j.ownerUser() && !c.perm.svr && !c.perm.oper && !c.perm.mgr:
		s.mu.Unlock()
		c.reject(batchreq.PBSE_PERM, "cannot receive job script")
		return
	}
	j.script = append(j.script, body.Data...)
	s.mu.Unlock()
	c.ok()
}

// pendingJob returns the job the connection is submitting if its id is id
// and it has reached substate want. It is called with s.mu held; when the
// job does not qualify it unlocks s.mu, rejects the request and returns nil.
func (s *Server) pendingJob(c *conn, id string, want pbsattr.Substate) *Job {
	j := c.pending
	code := 0
	switch {
	case j == nil || id != j.id:
		code = batchreq.PBSE_UNKJOBID
	case j.substate != want:
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
	q := j.queue
	j.queue = nil
	j.substate = pbsattr.SubTransICM
	s.linkJob(j)
	s.enqueue(j, q)
	s.mu.Unlock()
	c.send(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, j.id))
}

func (s *Server) handleCommit(c *conn, req *batchreq.Request) {
	s.mu.Lock()
	j := s.pendingJob(c, req.Body.(*batchreq.JobID).ID, pbsattr.SubTransICM)
	if j == nil {
		return
	}
	c.pending = nil
	j.conn = nil
	ops := s.commitJob(j, c.requester())
	wait := s.store.Submit(ops...)
	s.mu.Unlock()
	err := wait()
	s.flushLogs()
	if err != nil {
		c.reject(batchreq.PBSE_SYSTEM, "cannot save job")
		return
	}
	c.send(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, j.id))
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
func (s *Server) commitJob(j *Job, requester string) []store.Op {
	q := j.queue
	script := j.script
	j.script = nil
	s.rankCounter++
	j.rank = s.rankCounter
	hold := j.hold
	logState := pbsattr.StateQueued
	switch {
	case j.array != nil:
	case j.hold != 0:
		logState = pbsattr.StateHeld
	case execTime(j) > s.now().Unix():
		logState = pbsattr.StateWaiting
	}
	// The lines are held until the job is durable (flushLogs), then
	// written with the other submissions of the store round.
	s.log.LogfLater(logline.EventDebug2, logline.ClassJob, j.id, "enqueuing into %s, state %d hop %s", q.name, logState, hopCount(j))
	s.log.LogfLater(logline.EventJob, logline.ClassJob, j.id, "Job Queued at request of %s, owner = %s, job name = %s, queue = %s",
		requester, j.owner(), j.name(), q.name)
	s.acct.RecordLater(pbslog.AcctQueue, j.id, "queue="+q.name)
	var ops []store.Op
	if j.array != nil {
		j.hold = 0
		s.setState(j, pbsattr.StateQueued, pbsattr.SubArrayTemplate)
		s.evaluate(j)
	} else {
		if q.isExec() {
			for _, p := range s.registerDeps(j) {
				ops = append(ops, s.saveJobOp(p))
			}
			if dependHolds(s, j) {
				j.hold |= holdSystem
				j.substate = pbsattr.SubDepnHold
				for _, e := range s.jobDeps(j) {
					if e.typ == "syncwith" || e.typ == "synccount" {
						j.substate = pbsattr.SubSyncHold
					}
				}
			}
		}
		s.setState(j, pbsattr.StateQueued, j.substate)
		s.evaluate(j)
	}
	compactAttrs(j)
	ops = append(ops, s.saveJobOp(j), store.Put(store.Script, j.id, script), s.saveServerOp())
	if j.array != nil {
		ops = append(ops, s.cloneArray(j, hold)...)
	}
	if q.isRoute() {
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
func compactAttrs(j *Job) {
	l := make(attrList, len(j.attrs))
	copy(l, j.attrs)
	for i := range l {
		switch v := &l[i]; {
		case v.idx == pbsattr.JobOutputPath || v.idx == pbsattr.JobErrorPath || len(v.val) > maxInterned:
		default:
			v.val = unique.Make(v.val).Value()
			if v.res != "" {
				v.res = unique.Make(v.res).Value()
			}
		}
	}
	j.attrs = l
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
func (s *Server) cloneArray(t *Job, hold int) []store.Op {
	idxs, slot, _ := parseArrayRequest(t.array.request)
	if slot == 0 {
		slot = int(s.serverLong(pbsattr.SrvMaxSlotLimit, 0))
	}
	seq := jobIDSeq(t.id)
	suffix := strings.TrimPrefix(t.id, seq+"[]")
	var ops []store.Op
	for n, i := range idxs {
		is := strconv.Itoa(i)
		j := &Job{seq: t.seq, arrayIdx: i, parent: t, attrs: t.attrs.clone(), hold: hold | holdArray}
		if slot > 0 && n >= slot && s.attrs.get(pbsattr.SrvMoabArrayCompatible) != "False" {
			j.hold |= holdSlot
		}
		j.id = seq + "[" + is + "]" + suffix
		j.attrs.set(pbsattr.JobName, t.name()+"-"+is)
		j.attrs.set(pbsattr.JobOutputPath, t.attrs.get(pbsattr.JobOutputPath)+"-"+is)
		j.attrs.set(pbsattr.JobErrorPath, t.attrs.get(pbsattr.JobErrorPath)+"-"+is)
		j.attrs.set(pbsattr.JobArrayID, is)
		j.attrs.set(pbsattr.JobSubmitArgs, t.attrs.get(pbsattr.JobSubmitArgs))
		j.attrs.set(pbsattr.JobVariableList, "PBS_ARRAYID="+is+","+t.attrs.get(pbsattr.JobVariableList))
		j.rank = t.rank
		j.state = pbsattr.StateQueued
		s.linkJob(j)
		s.enqueue(j, t.queue)
		s.log.Logf(logline.EventDebug2, logline.ClassJob, j.id, "enqueuing into %s, state %d hop 1", t.queue.name, pbsattr.StateHeld)
		s.evaluate(j)
		t.array.subjobs = append(t.array.subjobs, j)
		t.array.size++
		ops = append(ops, s.saveJobOp(j))
	}
	return ops
}
