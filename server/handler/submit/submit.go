// Package submit serves the submission family: QueueJob, JobCred,
// JobScript, RdytoCommit and Commit (spec 02 §3.3, §6.1; spec 12 §4.3).
// A job is checked and completed at QueueJob and kept on the connection
// (Session) as pending until Commit enters it into the state in a
// state.Txn (CommitJob, which the event loop calls too). The queue
// admission checks, the defaults and the execution user are the
// server's (State).
package submit

import (
	"strconv"
	"strings"
	"time"
	"unique"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// State is what the family needs of the server. Every method but Lock,
// Log, Acct, FlushLogs and SchedNotify is called with the lock held.
type State interface {
	// Lock and Unlock guard a change of the state.
	Lock()
	Unlock()
	// Begin starts a transaction over the state.
	Begin() *state.Txn
	// Log and Acct return the server's log and accounting file;
	// FlushLogs writes the lines held back for a durable submission.
	Log() *pbslog.Logger
	Acct() *pbslog.Accounting
	FlushLogs()
	// Now returns the time; Name the server's name; Attrs its
	// attributes.
	Now() time.Time
	Name() string
	Attrs() state.Attrs
	// TakeJobNumber returns the next job number and, unless the job
	// comes from another server (incoming), uses it up.
	TakeJobNumber(incoming bool) int64
	// NextRank returns the queue rank of the next job committed.
	NextRank() int64
	// AdvresQueue returns the queue of the advance reservation a
	// submission names (qsub -W x=ADVRES:R123), or "".
	AdvresQueue(attrs batchreq.AttrList) string
	// Jobs returns the job table; Queue the queue of the name, or nil.
	Jobs() *state.Jobs
	Queue(name string) *state.Queue
	// ValidDepend reports whether a depend value is well formed;
	// SetDepend records the job's dependencies from its depend
	// attribute, reporting false if it is not well formed.
	ValidDepend(v string) bool
	SetDepend(j *state.Job) bool
	// RegisterDeps registers a job's dependencies with the jobs it
	// depends on (saved in tx) and reports whether they hold it and
	// whether one of them is a sync dependency.
	RegisterDeps(tx *state.Txn, j *state.Job) (holds, sync bool)
	// CountHop checks and counts the hop of a job moved here by
	// another server.
	CountHop(j *state.Job) *batchreq.Reply
	// CheckUserList checks the job's User_List against the owner;
	// ExecUser returns the user the job runs as before it has a host;
	// PrimaryGroup returns a user's primary group ("" if unknown).
	CheckUserList(j *state.Job) *batchreq.Reply
	ExecUser(j *state.Job) string
	PrimaryGroup(user string) string
	// ApplyDefaults gives the job the queue's and the server's
	// defaults; Admit checks its entry into queue q from host.
	ApplyDefaults(j *state.Job, q *state.Queue)
	Admit(j *state.Job, q *state.Queue, host string) *batchreq.Reply
	// Evaluate recomputes a job's state from its holds, execution time
	// and dependencies, in tx.
	Evaluate(tx *state.Txn, j *state.Job)
	// Route tries to move a job out of its route queue (in tx).
	Route(tx *state.Txn, j *state.Job)
	// SchedNotify asks the scheduler for a cycle (cmd: the reason).
	SchedNotify(cmd int)
}

// Session is the connection a submission comes on: it keeps the job
// being submitted between QueueJob and Commit. It is used with the lock
// held.
type Session interface {
	Pending() *state.Job
	SetPending(j *state.Job)
}

// QueueJob starts a submission (spec 02 §3.3, §6.1; spec 12 §4.3): the
// job checked, completed and kept on the connection (sess) as pending.
func QueueJob(st State, sess Session, w handler.ReplyWriter, who *handler.Asker, body *batchreq.QueueJob) {
	if body.JobID != "" && !who.Privileged {
		w.Reject(batchreq.PBSE_IVALREQ, batchreq.MsgJobNotFromClient)
		return
	}
	st.Lock()
	id, refusal := queueJob(st, sess, who, body)
	st.Unlock()
	if refusal != nil {
		w.Send(refusal)
		return
	}
	handler.SendReply(w, batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Queue, JobID: id})
}

// queueJob checks and completes the job of a QueueJob and keeps it as the
// connection's pending job; it returns the job's id, or the reply that
// refuses it.
func queueJob(st State, sess Session, who *handler.Asker, body *batchreq.QueueJob) (id string, refusal *batchreq.Reply) {
	if sess.Pending() != nil {
		// A new submission replaces an uncommitted one.
		sess.SetPending(nil)
	}
	// A job moved here by another server keeps its id, attributes and
	// hop count (server/link/remote); it takes no job number.
	incoming := body.JobID != "" && who.Privileged
	seq := st.TakeJobNumber(incoming)
	qname := body.Destination
	if i := strings.IndexByte(qname, '@'); i >= 0 {
		qname = qname[:i]
	}
	if adv := st.AdvresQueue(body.Attrs); adv != "" {
		qname = adv // -W x=ADVRES:R123
	}
	if qname == "" {
		qname = st.Attrs().Get(pbsattr.SrvDefaultQueue)
		if qname == "" {
			return "", batchreq.ErrorReply(batchreq.PBSE_QUENODFLT, "", "")
		}
	}
	q := st.Queue(qname)
	if q == nil {
		st.Log().Log(logline.EventError, logline.ClassServer, "PBS_Server", "LOG_ERROR::req_quejob, requested queue not found")
		return "", batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", batchreq.MsgCannotLocateQue)
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
		if d.Perm&pbsattr.WriteUser == 0 && d.Flags&pbsattr.FlagCreate == 0 && !who.Privileged {
			return "", batchreq.BadAttrReply(batchreq.PBSE_ATTRRO, a)
		}
		if d.Type == pbsattr.TypeResourceList {
			rd, ok := state.Resources[strings.ToLower(a.Resource)]
			if !ok {
				if exec {
					return "", batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
				}
				rd = state.ResourceDef{Type: pbsattr.TypeString}
			}
			v, ok := state.DecodeValue(rd.Type, a.Value)
			if !ok {
				return "", batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			j.Attrs.SetRes(idx, strings.ToLower(a.Resource), v)
			continue
		}
		if d.Type == pbsattr.TypeDepend {
			if !st.ValidDepend(a.Value) {
				return "", batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
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
			return "", batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
		}
		j.Attrs.Set(idx, v)
	}
	if unknown {
		return "", batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", "detected presence of an unknown attribute")
	}
	if v := j.Attrs.Get(pbsattr.JobPriority); v != "" {
		if n, _ := strconv.Atoi(v); n < -1024 || n > 1024 {
			return "", batchreq.ErrorReply(batchreq.PBSE_BADATVAL, "", "invalid job priority")
		}
	}
	if !st.SetDepend(j) {
		a := batchreq.Attr{Name: "depend"}
		return "", batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, &a)
	}
	if h, ok := state.ParseHold(j.Attrs.Get(pbsattr.JobHoldTypes)); ok {
		j.Hold = h
	}
	j.Attrs.Set(pbsattr.JobHoldTypes, "")

	if incoming && !j.Attrs.Has(pbsattr.JobOwner) {
		return "", batchreq.ErrorReply(batchreq.PBSE_IVALREQ, "", "no job owner specified")
	}
	host := who.Host
	owner := who.User + "@" + host
	if !who.Privileged || !j.Attrs.Has(pbsattr.JobOwner) {
		j.Attrs.Set(pbsattr.JobOwner, owner)
	}
	seqStr := strconv.FormatInt(int64(seq), 10)
	if r := j.Attrs.Get(pbsattr.JobArrayRequest); r != "" {
		subs, _, ok := state.ParseArrayRequest(r)
		if !ok {
			a := batchreq.Attr{Name: "job_array_request"}
			return "", batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, &a)
		}
		if max := serverLong(st, pbsattr.SrvMaxJobArraySize); max > 0 && int64(len(subs)) > max {
			return "", batchreq.ErrorReply(batchreq.PBSE_BAD_ARRAY_REQ, "", "Requested array size too large, limit is "+strconv.FormatInt(max, 10))
		}
		_, slot, _ := state.ParseArrayRequest(r)
		if max := serverLong(st, pbsattr.SrvMaxSlotLimit); max > 0 && int64(slot) > max {
			return "", batchreq.ErrorReply(batchreq.PBSE_BAD_ARRAY_REQ, "", "Requested slot limit too large, limit is "+strconv.FormatInt(max, 10))
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
	j.ID = formatJobID(st, seqStr, j.Array != nil)
	if body.JobID != "" && who.Privileged {
		j.ID = body.JobID
	}
	if st.Jobs().Get(j.ID) != nil {
		if j.Attrs.Has(pbsattr.JobID) {
			return "", batchreq.ErrorReply(batchreq.PBSE_JOBEXIST, "", "Job with id "+j.ID+" already exists, cannot set job id\n")
		}
		return "", batchreq.ErrorReply(batchreq.PBSE_JOBEXIST, "", "")
	}
	now := strconv.FormatInt(st.Now().Unix(), 10)
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
	oHost := EnvValue(vl, "PBS_O_HOST")
	workdir := EnvValue(vl, "PBS_O_WORKDIR")
	j.Attrs.Set(pbsattr.JobOutputPath, defaultPath(j.Attrs.Get(pbsattr.JobOutputPath), oHost, workdir, j.Name(), ".o", seqStr))
	j.Attrs.Set(pbsattr.JobErrorPath, defaultPath(j.Attrs.Get(pbsattr.JobErrorPath), oHost, workdir, j.Name(), ".e", seqStr))
	if !incoming || !j.Attrs.Has(pbsattr.JobCtime) {
		j.Attrs.Set(pbsattr.JobCtime, now)
	}
	j.Attrs.Set(pbsattr.JobMtime, now)
	j.Attrs.Set(pbsattr.JobQtime, now)
	if incoming {
		if p := st.CountHop(j); p != nil {
			return "", p
		}
	} else {
		j.Attrs.Set(pbsattr.JobHopCount, "1")
	}
	// Like TORQUE, a queued job already names the user and group it will
	// run as (the scheduler's run limits and fair share read them).
	if p := st.CheckUserList(j); p != nil {
		return "", p
	}
	if !j.Attrs.Has(pbsattr.JobEuser) {
		// the User_List entry without a host, else the owner; the
		// entry naming the execution host takes over at the run
		j.Attrs.Set(pbsattr.JobEuser, st.ExecUser(j))
	}
	if !j.Attrs.Has(pbsattr.JobEgroup) {
		if g := st.PrimaryGroup(j.Attrs.Get(pbsattr.JobEuser)); g != "" {
			j.Attrs.Set(pbsattr.JobEgroup, g)
		}
	}
	if j.Attrs.Has(pbsattr.JobInteractive) {
		j.Attrs.Set(pbsattr.JobRerunable, "False")
	}
	st.ApplyDefaults(j, q)
	if p := st.Admit(j, q, host); p != nil {
		return "", p
	}
	j.State, j.Substate = pbsattr.StateTransit, pbsattr.SubTransIn
	j.Queue = q
	sess.SetPending(j)
	return j.ID, nil
}

// formatJobID builds a job id from its sequence part following
// display_job_server_suffix and job_suffix_alias (spec 12 §1.1).
func formatJobID(st State, seq string, array bool) string {
	if array {
		seq += "[]"
	}
	suffix := st.Attrs().Get(pbsattr.SrvDisplayJobServerSuffix) != "False"
	alias := st.Attrs().Get(pbsattr.SrvJobSuffixAlias)
	switch {
	case suffix && alias != "":
		return seq + "." + st.Name() + "." + alias
	case suffix:
		return seq + "." + st.Name()
	case alias != "":
		return seq + "." + alias
	}
	return seq
}

// jobAttrCap is the initial capacity of a submitted job's attribute list.
const jobAttrCap = 32

// EnvValue returns the value of NAME in a Variable_List string: items
// are separated by commas, a backslash escapes the byte after it (as
// splitEscaped reads them). Items without a backslash are looked at in
// place, without copying.
func EnvValue(vl, name string) string {
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
			item = state.SplitEscaped(item, ',')[0]
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

// JobCred accepts a JobCred of a submission in progress.
func JobCred(st State, sess Session, w handler.ReplyWriter) {
	st.Lock()
	ok := sess.Pending() != nil
	st.Unlock()
	if !ok {
		w.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	handler.SendReply(w, batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_NULL})
}

// JobScript receives (a part of) the script of the pending job.
func JobScript(st State, sess Session, w handler.ReplyWriter, who *handler.Asker, body *batchreq.JobFile) {
	st.Lock()
	j := sess.Pending()
	switch {
	case j == nil || body.JobID != "" && body.JobID != j.ID:
		st.Unlock()
		w.Reject(batchreq.PBSE_IVALREQ, "")
		return
	case j.Substate != pbsattr.SubTransIn:
		st.Unlock()
		w.Reject(batchreq.PBSE_IVALREQ, "")
		return
	case who.User != j.OwnerUser() && !who.Privileged && !who.Operator && !who.Manager:
		st.Unlock()
		w.Reject(batchreq.PBSE_PERM, "cannot receive job script")
		return
	}
	j.Script = append(j.Script, body.Data...)
	st.Unlock()
	handler.SendReply(w, batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_NULL})
}

// Pending returns the job the connection (sess) is submitting if its id
// is id and it has reached substate want. It is called with the lock
// held; when the job does not qualify it unlocks, rejects the request
// and returns nil.
func Pending(st State, sess Session, w handler.ReplyWriter, id string, want pbsattr.Substate) *state.Job {
	j := sess.Pending()
	code := 0
	switch {
	case j == nil || id != j.ID:
		code = batchreq.PBSE_UNKJOBID
	case j.Substate != want:
		code = batchreq.PBSE_IVALREQ
	}
	if code != 0 {
		st.Unlock()
		w.Reject(code, "")
		return nil
	}
	return j
}

// RdytoCommit lists the pending job (substate TRANSICM), not yet
// durable: CommitJob saves it.
func RdytoCommit(st State, sess Session, w handler.ReplyWriter, b *batchreq.JobID) {
	st.Lock()
	j := Pending(st, sess, w, b.ID, pbsattr.SubTransIn)
	if j == nil {
		return
	}
	q := j.Queue
	j.Queue = nil
	j.Substate = pbsattr.SubTransICM
	st.Jobs().Link(j)
	st.Jobs().Enqueue(j, q)
	st.Unlock()
	handler.SendReply(w, batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_RdytoCommit, JobID: j.ID})
}

// Commit queues the pending job and answers once it is durable (the
// event loop serves Commit itself, without waiting: netloop_linux.go).
func Commit(st State, sess Session, w handler.ReplyWriter, who *handler.Asker, b *batchreq.JobID) {
	st.Lock()
	j := Pending(st, sess, w, b.ID, pbsattr.SubTransICM)
	if j == nil {
		return
	}
	sess.SetPending(nil)
	tx := st.Begin()
	CommitJob(st, tx, j, who.Requester())
	wait := tx.Commit()
	st.Unlock()
	err := wait()
	st.FlushLogs()
	if err != nil {
		w.Reject(batchreq.PBSE_SYSTEM, "cannot save job")
		return
	}
	handler.SendReply(w, batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Commit, JobID: j.ID})
	st.SchedNotify(batchreq.SCH_SCHEDULE_NEW)
}

// CommitJob turns a received job into a queued one in tx. Its log lines
// and accounting record are held: the caller calls State.FlushLogs once
// the transaction is durable.
func CommitJob(st State, tx *state.Txn, j *state.Job, requester string) {
	q := j.Queue
	script := j.Script
	j.Script = nil
	j.Rank = st.NextRank()
	hold := j.Hold
	logState := pbsattr.StateQueued
	switch {
	case j.Array != nil:
	case j.Hold != 0:
		logState = pbsattr.StateHeld
	case state.ExecTime(j) > st.Now().Unix():
		logState = pbsattr.StateWaiting
	}
	// The lines are held until the job is durable (State.FlushLogs), then
	// written with the other submissions of the store round.
	log := st.Log()
	log.LogfLater(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop %s", q.Name, logState, hopCount(j))
	log.LogfLater(logline.EventJob, logline.ClassJob, j.ID, "Job Queued at request of %s, owner = %s, job name = %s, queue = %s",
		requester, j.Owner(), j.Name(), q.Name)
	st.Acct().RecordLater(pbslog.AcctQueue, j.ID, "queue="+q.Name)
	if j.Array != nil {
		j.Hold = 0
		tx.SetState(j, pbsattr.StateQueued, pbsattr.SubArrayTemplate)
		st.Evaluate(tx, j)
	} else {
		if q.IsExec() {
			if holds, sync := st.RegisterDeps(tx, j); holds {
				j.Hold |= state.HoldSystem
				j.Substate = pbsattr.SubDepnHold
				if sync {
					j.Substate = pbsattr.SubSyncHold
				}
			}
		}
		tx.SetState(j, pbsattr.StateQueued, j.Substate)
		st.Evaluate(tx, j)
	}
	compactAttrs(j)
	tx.SaveScript(j.ID, script)
	tx.SaveServer()
	if j.Array != nil {
		cloneArray(st, tx, j, hold)
	}
	if q.IsRoute() {
		st.Route(tx, j)
	}
}

// hopCount returns a job's hop count as logged ("1" if unset).
func hopCount(j *state.Job) string {
	if h := j.Attrs.Get(pbsattr.JobHopCount); h != "" {
		return h
	}
	return "1"
}

// serverLong returns a numeric server attribute, 0 if unset or not a
// number.
func serverLong(st State, idx int) int64 {
	n, err := strconv.ParseInt(st.Attrs().Get(idx), 10, 64)
	if err != nil {
		return 0
	}
	return n
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

// cloneArray creates the sub-jobs of an array template, in tx.
func cloneArray(st State, tx *state.Txn, t *state.Job, hold int) {
	idxs, slot, _ := state.ParseArrayRequest(t.Array.Request)
	if slot == 0 {
		slot = int(serverLong(st, pbsattr.SrvMaxSlotLimit))
	}
	seq := state.JobIDSeq(t.ID)
	suffix := strings.TrimPrefix(t.ID, seq+"[]")
	for n, i := range idxs {
		is := strconv.Itoa(i)
		j := &state.Job{Seq: t.Seq, ArrayIndex: i, Parent: t, Attrs: t.Attrs.Clone(), Hold: hold | state.HoldArray}
		if slot > 0 && n >= slot && st.Attrs().Get(pbsattr.SrvMoabArrayCompatible) != "False" {
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
		tx.Add(j, t.Queue)
		st.Log().Logf(logline.EventDebug2, logline.ClassJob, j.ID, "enqueuing into %s, state %d hop 1", t.Queue.Name, pbsattr.StateHeld)
		st.Evaluate(tx, j)
		t.Array.Subjobs = append(t.Array.Subjobs, j)
		t.Array.Size++
	}
}
