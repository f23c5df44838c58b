package running

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/admit"
	"gopbs/server/handler"
	"gopbs/server/jobmail"
	"gopbs/server/link/mom"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// scriptChunk is the largest piece of a job script sent to a MOM in one
// JobScript request.
const scriptChunk = 65536

// sendToMom lists the job attributes QueueJob carries to the MOM, in
// definition order (spec 10 §6.2); session_id only with checkpoint_name.
var sendToMom = map[int]bool{
	pbsattr.JobName: true, pbsattr.JobOwner: true, pbsattr.JobQueue: true, pbsattr.JobServer: true, pbsattr.JobAccountName: true,
	pbsattr.JobCheckpoint: true, pbsattr.JobErrorPath: true, pbsattr.JobExecHost: true, pbsattr.JobExecGpus: true, pbsattr.JobInteractive: true,
	pbsattr.JobJoinPath: true, pbsattr.JobKeepFiles: true, pbsattr.JobOutputPath: true, pbsattr.JobResourceList: true,
	pbsattr.JobShellPathList: true, pbsattr.JobVariableList: true, pbsattr.JobEuser: true, pbsattr.JobEgroup: true, pbsattr.JobHashname: true,
	pbsattr.JobCookie: true, pbsattr.JobForwardX11: true, pbsattr.JobUmask: true, pbsattr.JobStartTime: true, pbsattr.JobCheckpointDir: true,
	pbsattr.JobCheckpointName: true, pbsattr.JobRestartName: true, pbsattr.JobFaultTolerant: true, pbsattr.JobJobtype: true,
	pbsattr.JobInterCmd: true, pbsattr.JobArguments: true,
}

// launch is what the server sends to a MOM to start a job, captured
// under the lock.
type launch struct {
	id      string
	host    string // mother superior
	attrs   batchreq.AttrList
	script  []byte
	stageIn *batchreq.CopyFiles // stage-in request sent first, or nil
	prefix  string              // file prefix (hashname)
	hasRun  bool                // the job ran before: returned output may wait in the spool
}

// launcher is the link's side of starting jobs: RunJob (from the
// scheduler or qrun), the job's run attributes, its sending to the
// mother superior and the outcome; at start-up, the jobs to run again on
// their hosts (recover.go).
type launcher struct{ l *Link }

// filePrefix returns the job's file prefix (hashname): the job id with
// an array index "[N]" written "-N" (spec 12 §1.2, capture 74).
func filePrefix(id string) string {
	if i := strings.IndexByte(id, '['); i >= 0 {
		if j := strings.IndexByte(id[i:], ']'); j > 0 {
			idx := id[i+1 : i+j]
			if idx == "" {
				return id[:i] + id[i+j+1:]
			}
			id = id[:i] + "-" + idx + id[i+j+1:]
		}
	}
	if len(id) > 61 {
		id = id[:61]
	}
	return id
}

// RunJob serves RunJob and AsyrunJob (spec 12 §10.2, spec 10 §6).
func (l *Link) RunJob(c *handler.Conn, req *batchreq.Request) { l.ln.runJob(c, req) }

func (ln launcher) runJob(c *handler.Conn, req *batchreq.Request) {
	l := ln.l
	h := l.host
	body := req.Body.(*batchreq.RunJob)
	async := req.Type == batchreq.PBS_BATCH_AsyrunJob
	// TORQUE's order (spec 02 §10): the common job checks, the job's
	// state, then the operator privilege RunJob needs.
	h.Lock()
	j := h.FindJob(body.JobID)
	if j == nil {
		h.Unlock()
		l.unknownJob(c, body.JobID, batchreq.MsgCannotLocateJob)
		return
	}
	oper := c.Asker.Operator || c.Asker.Manager
	switch {
	case !l.permitted(c, req, j):
		h.Unlock()
		c.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
		return
	case j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting || j.State == pbsattr.StateTransit:
		h.Unlock()
		c.Reject(batchreq.PBSE_BADSTATE, "job already running")
		return
	case j.State == pbsattr.StateComplete:
		h.Unlock()
		c.Reject(batchreq.PBSE_BADSTATE, "invalid state for job - COMPLETE")
		return
	case !oper:
		handler.LogUnauthorized(l.log, req.Type, j.ID, &c.Asker)
		h.Unlock()
		c.Reject(batchreq.PBSE_PERM, "")
		return
	case j.Array != nil:
		h.Unlock()
		c.Reject(batchreq.PBSE_IVALREQ, "cannot run an array template")
		return
	case j.Queue == nil || !j.Queue.IsExec():
		h.Unlock()
		c.Reject(batchreq.PBSE_IVALREQ, "job not in execution queue")
		return
	}
	execHost, bad := h.Place(c, j, body.Destination)
	if bad != nil {
		h.Unlock()
		c.Send(bad)
		return
	}
	l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Run at request of %s", c.Asker.Requester())
	tx := h.Begin()
	run, err := ln.prepareRun(tx, j, execHost)
	if err != nil {
		h.Unlock()
		c.Reject(batchreq.PBSE_SYSTEM, err.Error())
		return
	}
	wait := tx.Commit()
	h.Unlock()
	if err := wait(); err != nil {
		ln.abandonRun(j, "cannot save job")
		c.Reject(batchreq.PBSE_SYSTEM, "cannot save job")
		return
	}
	if async {
		c.Send(batchreq.NullReply())
	}
	p := ln.sendJob(run)
	started := ln.finishRun(j, p)
	if !async {
		c.Send(p)
	}
	if started {
		if c.Cycle != nil {
			c.Cycle.CountStart()
		}
		if !l.book.endingWith(run.host) {
			go l.pollJob(j.ID)
		}
	}
}

// prepareRun records the allocation on the job (exec_host, euser,
// egroup, hashname, start_time, start_count), puts it in RUNNING/PRERUN
// in tx and returns the launch. Called with the lock held.
func (ln launcher) prepareRun(tx *state.Txn, j *state.Job, execHost string) (*launch, error) {
	l := ln.l
	h := l.host
	script, err := h.Script(j)
	if err != nil {
		return nil, fmt.Errorf("cannot read job script: %w", err)
	}
	now := strconv.FormatInt(h.Now().Unix(), 10)
	j.Attrs.Set(pbsattr.JobExecHost, execHost)
	if !j.Attrs.Has(pbsattr.JobEuser) {
		j.Attrs.Set(pbsattr.JobEuser, j.OwnerUser())
	}
	if j.Attrs.Get(pbsattr.JobUserList) != "" {
		// seed 001, Job Initiation: the entry naming the execution
		// host, else the one without a host, else the owner
		if u := admit.ExecUser(j, state.MotherSuperior(execHost)); u != j.Attrs.Get(pbsattr.JobEuser) {
			j.Attrs.Set(pbsattr.JobEuser, u)
			j.Attrs.Set(pbsattr.JobEgroup, "")
		}
	}
	euser := j.Attrs.Get(pbsattr.JobEuser)
	if !j.Attrs.Has(pbsattr.JobEgroup) {
		j.Attrs.Set(pbsattr.JobEgroup, h.GroupOf(euser))
	}
	if !j.Attrs.Has(pbsattr.JobHashname) {
		j.Attrs.Set(pbsattr.JobHashname, filePrefix(j.ID))
	}
	if !j.Attrs.Has(pbsattr.JobServer) {
		j.Attrs.Set(pbsattr.JobServer, l.cfg.Name)
	}
	if !j.Attrs.Has(pbsattr.JobRestartName) {
		j.Attrs.Set(pbsattr.JobStartTime, now)
	}
	n, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobStartCount))
	j.Attrs.Set(pbsattr.JobStartCount, strconv.Itoa(n+1))
	tx.SetState(j, pbsattr.StateRunning, pbsattr.SubPreRun)
	h.Touch(j)
	h.RefreshNodeJobs()
	run := &launch{id: j.ID, host: state.MotherSuperior(execHost), script: script, attrs: ln.momAttrs(j),
		prefix: j.Attrs.Get(pbsattr.JobHashname), hasRun: n > 0}
	if pairs := stagePairs(j.Attrs.Get(pbsattr.JobStagein)); len(pairs) > 0 {
		run.stageIn = stageFiles(j, batchreq.STAGE_DIR_IN, pairs)
	}
	return run, nil
}

// momAttrs builds the QueueJob attribute list for the MOM (spec 10 §6.2):
// values that came from defaults travel with op DFLT.
func (ln launcher) momAttrs(j *state.Job) batchreq.AttrList {
	l := ln.l
	defaults := map[string]string{}
	if q := j.Queue; q != nil {
		for _, r := range q.Attrs.Resources(pbsattr.QueueResourcesDefault) {
			defaults[r.Resource] = r.Value
		}
	}
	srv := l.host.Attrs()
	for _, r := range srv.Resources(pbsattr.SrvResourcesDefault) {
		if _, ok := defaults[r.Resource]; !ok {
			defaults[r.Resource] = r.Value
		}
	}
	args := j.Attrs.Get(pbsattr.JobSubmitArgs)
	var out batchreq.AttrList
	for _, v := range state.JobView(nil, j, l.cfg.Name, nil) {
		if !sendToMom[v.Index] && !(v.Index == pbsattr.JobSessionID && j.Attrs.Has(pbsattr.JobCheckpointName)) {
			continue
		}
		if v.Index == pbsattr.JobResourceList && v.Resource == "nodect" {
			continue
		}
		a := handler.WireAttr(state.JobDefs, v)
		switch {
		case j.Parent != nil:
			// array sub-jobs are clones: no value carries the default
			// flag (capture 74)
		case v.Index == pbsattr.JobEgroup:
			a.Op = batchreq.DFLT
		case v.Index == pbsattr.JobResourceList:
			if d, ok := defaults[v.Resource]; ok && d == v.Value && !strings.Contains(args, v.Resource+"=") {
				a.Op = batchreq.DFLT
			}
		}
		out = append(out, a)
	}
	return out
}

// sendJob sends a job to its mother superior on one connection:
// QueueJob, JobScript chunks, RdytoCommit, Commit (spec 10 §6.1). It
// returns the reply for the RunJob requester.
func (ln launcher) sendJob(run *launch) *batchreq.Reply {
	l := ln.l
	if run.stageIn != nil {
		// stage-in first, on its own connection (capture 94)
		p, err := l.MomRequest(run.host, batchreq.PBS_BATCH_CopyFiles, run.stageIn, "")
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
		}
		if p.Code != 0 {
			l.book.stageFailure(run.id, p.Text)
			return p
		}
	}
	var m *mom.Conn
	var err error
	// at most two connection attempts, 2 s apart (spec 10 §6.1)
	for attempt := 0; attempt < 2; attempt++ {
		if attempt > 0 {
			time.Sleep(l.RetryDelay)
		}
		if m, err = l.dialMom(run.host); err == nil {
			break
		}
	}
	if err != nil {
		// the MOM cannot be reached: its node is down (spec 10 §6.5)
		l.logError("send_job", err.Error())
		l.host.Lock()
		l.host.MarkNodeDown(run.host)
		l.host.Unlock()
		return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
	}
	defer m.Close()
	p, err := m.Call(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: run.id, Destination: run.host, Attrs: run.attrs}, "")
	if err != nil {
		return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
	}
	if p.Code == batchreq.PBSE_JOBEXIST {
		l.log.Log(logline.EventJob, logline.ClassJob, run.id, "MOM reports job already running")
		return batchreq.NullReply()
	}
	if p.Code != 0 {
		return p
	}
	for seq, off := 0, 0; off < len(run.script); seq++ {
		end := min(off+scriptChunk, len(run.script))
		p, err = m.Call(batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{Seq: seq, FileType: batchreq.JScript, JobID: run.id, Data: run.script[off:end]}, "")
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
		}
		if p.Code != 0 {
			return p
		}
		off = end
	}
	// A rerun job's returned output goes to a MOM on another host.
	spool := run.hasRun && !l.onServerHost(run.host)
	if spool {
		if p := l.sendSpool(m, run); p != nil {
			return p
		}
	}
	for _, typ := range []int{batchreq.PBS_BATCH_RdytoCommit, batchreq.PBS_BATCH_Commit} {
		p, err = m.Call(typ, &batchreq.JobID{ID: run.id}, "")
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
		}
		if p.Code != 0 {
			return p
		}
	}
	if spool {
		l.removeSpool(run.prefix)
	}
	return batchreq.NullReply()
}

// finishRun completes a launch: on success the job is RUNNING and the S
// record written; on failure its nodes are freed and it is requeued. It
// reports whether the job started and turns p into the RunJob reply.
func (ln launcher) finishRun(j *state.Job, p *batchreq.Reply) bool {
	l := ln.l
	h := l.host
	h.Lock()
	if h.Jobs().Get(j.ID) != j || j.State != pbsattr.StateRunning {
		h.Unlock()
		return p.Code == 0
	}
	tx := h.Begin()
	if p.Code != 0 {
		text, stageFail := l.book.takeStageFailure(j.ID)
		var m *jobmail.Mail
		if stageFail {
			// seed 001 (File Staging): the files already staged in
			// are gone (the MOM deletes them), the job waits and
			// its owner is told.
			j.Attrs.Set(pbsattr.JobExecutionTime, strconv.FormatInt(h.Now().Unix()+stageInRetry, 10))
			l.log.Log(logline.EventJob, logline.ClassJob, j.ID, "File stage in failed: "+firstLineOf(text))
			m = l.mailJob(j, 's', true, text)
		}
		l.requeue(tx, j)
		wait := tx.Commit()
		h.Unlock()
		wait()
		if m != nil {
			go l.mail.Send(j.ID, m)
		}
		return false
	}
	if j.Substate == pbsattr.SubPreRun {
		j.Substate = pbsattr.SubRunning
	}
	*p = *batchreq.NullReply()
	m := l.mailJob(j, 'b', false, "")
	if j.Attrs.Get(pbsattr.JobCheckpointName) != "" {
		l.acct.Record(pbslog.AcctRestart, j.ID, "Restart from checkpoint")
	} else {
		l.acct.Record(pbslog.AcctStart, j.ID, AcctJobText(j))
	}
	// The start releases a sync set's next member and the after: and
	// afterstartarray children; both may change j's own dependencies,
	// so j is encoded after them (at Commit).
	tx.SaveJob(j)
	h.Started(tx, j)
	wait := tx.Commit()
	h.Unlock()
	wait()
	go l.mail.Send(j.ID, m)
	return true
}

// stageInRetry is how long a job whose stage-in failed waits (state W)
// before it is eligible again.
const stageInRetry = 300

// firstLineOf returns the first line of s.
func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// abandonRun requeues a job whose launch could not even be recorded.
// The requeue is not saved: the store has just failed, and a restart
// requeues a job left in PRERUN anyway (Recover).
func (ln launcher) abandonRun(j *state.Job, why string) {
	l := ln.l
	h := l.host
	h.Lock()
	defer h.Unlock()
	if h.Jobs().Get(j.ID) == j && j.State == pbsattr.StateRunning {
		l.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "run abandoned: %s", why)
		l.requeue(h.Begin(), j)
	}
}

// Requeue frees a running job's nodes and puts it back to QUEUED, HELD
// or WAITING in tx, forgetting where it ran. Called with the lock held.
func (l *Link) Requeue(tx *state.Txn, j *state.Job) { l.requeue(tx, j) }

func (l *Link) requeue(tx *state.Txn, j *state.Job) {
	l.book.forget(j.ID)
	l.host.Requeue(tx, j)
	l.host.RefreshNodeJobs()
}

// AcctJobText is the common part of the S and E accounting records
// (spec 12 §14.3); every pair is followed by a blank.
func AcctJobText(j *state.Job) string {
	var b strings.Builder
	pair := func(k, v string) { b.WriteString(k + "=" + v + " ") }
	pair("user", j.Attrs.Get(pbsattr.JobEuser))
	pair("group", j.Attrs.Get(pbsattr.JobEgroup))
	if a := j.Attrs.Get(pbsattr.JobAccountName); a != "" {
		pair("account", a)
	}
	pair("jobname", j.Name())
	if j.Queue != nil {
		pair("queue", j.Queue.Name)
	}
	pair("ctime", j.Attrs.Get(pbsattr.JobCtime))
	pair("qtime", j.Attrs.Get(pbsattr.JobQtime))
	pair("etime", j.Attrs.Get(pbsattr.JobEtime))
	pair("start", j.Attrs.Get(pbsattr.JobStartTime))
	pair("owner", j.Owner())
	if h := j.Attrs.Get(pbsattr.JobExecHost); h != "" {
		pair("exec_host", h)
	}
	for _, r := range j.Attrs.Resources(pbsattr.JobResourceList) {
		pair("Resource_List."+r.Resource, r.Value)
	}
	return b.String()
}

// mailJob composes the mail of a job event (jobmail.Mailer.Compose)
// under the server's attributes. Called with the lock held.
func (l *Link) mailJob(j *state.Job, point byte, forced bool, detail string) *jobmail.Mail {
	return l.mail.Compose(l.host.Attrs(), j, point, forced, detail)
}

// unknownJob logs and refuses a request naming no job here.
func (l *Link) unknownJob(c *handler.Conn, id, msg string) {
	l.log.Log(logline.EventDebug, logline.ClassJob, id, "Unknown Job Id")
	c.Reject(batchreq.PBSE_UNKJOBID, msg)
}

// permitted reports whether the requester may act on the job (owner,
// operator or manager); otherwise it logs the security line.
func (l *Link) permitted(c *handler.Conn, req *batchreq.Request, j *state.Job) bool {
	if c.Asker.Operator || c.Asker.Manager || j.OwnerUser() == c.Asker.User {
		return true
	}
	handler.LogUnauthorized(l.log, req.Type, j.ID, &c.Asker)
	return false
}
