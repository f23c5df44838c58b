package server

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/admit"
	"gopbs/server/handler"
	"gopbs/server/link/mom"
	"gopbs/server/pbslog"
	"gopbs/server/state"
	"gopbs/server/store"
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

// fileprefix returns the job's file prefix (hashname): the job id with
// an array index "[N]" written "-N" (spec 12 §1.2, capture 74).
// launcher is the MOM link's side of starting jobs: RunJob (from the
// scheduler or qrun), the choice of the nodes' VPs (run_alloc.go), the
// job's run attributes, its sending to the mother superior and the
// outcome; at start-up, the jobs to resume or run again on their hosts
// (run_link.go). It uses the runLink's connections and bookkeeping.
type launcher struct {
	s  *Server
	rl *runLink
}

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

// lookupPrimaryGroup returns the primary group name of a user, or "".
func lookupPrimaryGroup(name string) string {
	u, err := user.Lookup(name)
	if err != nil {
		return ""
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return ""
	}
	return g.Name
}

func (s *Server) registerRunHandlers() {
	m := &s.mux
	m.HandleFunc(batchreq.PBS_BATCH_RunJob, s.launch.handleRunJob)
	m.HandleFunc(batchreq.PBS_BATCH_AsyrunJob, s.launch.handleRunJob)
	m.HandleFunc(batchreq.PBS_BATCH_JobObit, s.run.handleJobObit)
	m.HandleFunc(batchreq.PBS_BATCH_SignalJob, s.run.handleSignalJob)
	m.HandleFunc(batchreq.PBS_BATCH_MessJob, s.run.handleMessJob)
	m.HandleFunc(batchreq.PBS_BATCH_Rerun, s.run.handleRerunJob)
	m.HandleFunc(batchreq.PBS_BATCH_CheckpointJob, s.run.handleCheckpointJob)
	m.HandleFunc(batchreq.PBS_BATCH_Rescq, s.run.handleRescQuery)
	m.HandleFunc(batchreq.PBS_BATCH_MvJobFile, s.run.handleMvJobFile)
}

// handleRunJob serves RunJob and AsyrunJob (spec 12 §10.2, spec 10 §6).
func (ln *launcher) handleRunJob(c *handler.Conn, req *batchreq.Request) {
	s := ln.s
	body := req.Body.(*batchreq.RunJob)
	async := req.Type == batchreq.PBS_BATCH_AsyrunJob
	// TORQUE's order (spec 02 §10): the common job checks, the job's
	// state, then the operator privilege RunJob needs.
	s.mu.Lock()
	j := s.findJob(body.JobID)
	if j == nil {
		s.mu.Unlock()
		s.unknownJob(c, body.JobID, batchreq.MsgCannotLocateJob)
		return
	}
	oper := c.Asker.Operator || c.Asker.Manager
	switch {
	case !s.permitted(c, j):
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
		return
	case j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting || j.State == pbsattr.StateTransit:
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_BADSTATE, "job already running")
		return
	case j.State == pbsattr.StateComplete:
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_BADSTATE, "invalid state for job - COMPLETE")
		return
	case !oper:
		s.unauthorized(c, j)
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_PERM, "")
		return
	case j.Array != nil:
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_IVALREQ, "cannot run an array template")
		return
	case j.Queue == nil || !j.Queue.IsExec():
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_IVALREQ, "job not in execution queue")
		return
	}
	if bad := s.sliceRefusesRun(c, j, body.Destination); bad != nil {
		s.mu.Unlock()
		c.Send(bad)
		return
	}
	slots, bad := s.allocateIn(j, body.Destination, reservationFilter(s.resv, j, body.Destination, s.runsOn(c, j)))
	if bad == nil {
		bad = reservedRun(s.resv, j, slots)
	}
	if bad != nil {
		s.mu.Unlock()
		c.Send(bad)
		return
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Run at request of %s", c.Asker.Requester())
	l, err := ln.prepareRun(j, slots)
	if err != nil {
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_SYSTEM, err.Error())
		return
	}
	wait := s.store.Submit(state.SaveJob(j))
	s.mu.Unlock()
	if err := wait(); err != nil {
		ln.abandonRun(j, "cannot save job")
		c.Reject(batchreq.PBSE_SYSTEM, "cannot save job")
		return
	}
	if async {
		c.OK()
	}
	p := ln.sendJob(l)
	started := ln.finishRun(j, p)
	if !async {
		c.Send(p)
	}
	if started {
		if c.Cycle != nil {
			c.Cycle.CountStart()
		}
		if !s.run.endingWith(l.host) {
			go s.run.pollJob(j.ID)
		}
	}
}

// prepareRun records the allocation on the job (exec_host, euser,
// egroup, hashname, start_time, start_count), puts it in RUNNING/PRERUN
// and returns the launch. Called with s.mu held.
func (ln *launcher) prepareRun(j *state.Job, slots []vpSlot) (*launch, error) {
	s := ln.s
	script, err := s.store.Get(store.Script, state.ScriptKey(j))
	if err != nil {
		return nil, fmt.Errorf("cannot read job script: %w", err)
	}
	now := strconv.FormatInt(s.now().Unix(), 10)
	execHost := formatExecHost(slots)
	j.Attrs.Set(pbsattr.JobExecHost, execHost)
	if !j.Attrs.Has(pbsattr.JobEuser) {
		j.Attrs.Set(pbsattr.JobEuser, j.OwnerUser())
	}
	if j.Attrs.Get(pbsattr.JobUserList) != "" {
		// seed 001, Job Initiation: the entry naming the execution
		// host, else the one without a host, else the owner
		if u := admit.ExecUser(j, motherSuperior(execHost)); u != j.Attrs.Get(pbsattr.JobEuser) {
			j.Attrs.Set(pbsattr.JobEuser, u)
			j.Attrs.Set(pbsattr.JobEgroup, "")
		}
	}
	euser := j.Attrs.Get(pbsattr.JobEuser)
	if !j.Attrs.Has(pbsattr.JobEgroup) {
		j.Attrs.Set(pbsattr.JobEgroup, s.run.groupOf(euser))
	}
	if !j.Attrs.Has(pbsattr.JobHashname) {
		j.Attrs.Set(pbsattr.JobHashname, filePrefix(j.ID))
	}
	if !j.Attrs.Has(pbsattr.JobServer) {
		j.Attrs.Set(pbsattr.JobServer, s.name)
	}
	if !j.Attrs.Has(pbsattr.JobRestartName) {
		j.Attrs.Set(pbsattr.JobStartTime, now)
	}
	n, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobStartCount))
	j.Attrs.Set(pbsattr.JobStartCount, strconv.Itoa(n+1))
	s.jobs.SetState(j, pbsattr.StateRunning, pbsattr.SubPreRun)
	s.life.Touch(j)
	s.refreshNodeJobs()
	l := &launch{id: j.ID, host: motherSuperior(execHost), script: script, attrs: ln.momAttrs(j),
		prefix: j.Attrs.Get(pbsattr.JobHashname), hasRun: n > 0}
	if pairs := stagePairs(j.Attrs.Get(pbsattr.JobStagein)); len(pairs) > 0 {
		l.stageIn = stageFiles(j, batchreq.STAGE_DIR_IN, pairs)
	}
	return l, nil
}

// momAttrs builds the QueueJob attribute list for the MOM (spec 10 §6.2):
// values that came from defaults travel with op DFLT.
func (ln *launcher) momAttrs(j *state.Job) batchreq.AttrList {
	s := ln.s
	defaults := map[string]string{}
	if q := j.Queue; q != nil {
		for _, r := range q.Attrs.Resources(pbsattr.QueueResourcesDefault) {
			defaults[r.Resource] = r.Value
		}
	}
	for _, r := range s.attrs.Resources(pbsattr.SrvResourcesDefault) {
		if _, ok := defaults[r.Resource]; !ok {
			defaults[r.Resource] = r.Value
		}
	}
	args := j.Attrs.Get(pbsattr.JobSubmitArgs)
	var out batchreq.AttrList
	for _, v := range state.JobView(nil, j, s.name, nil) {
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
func (ln *launcher) sendJob(l *launch) *batchreq.Reply {
	rl := ln.rl
	if l.stageIn != nil {
		// stage-in first, on its own connection (capture 94)
		p, err := rl.momRequest(l.host, batchreq.PBS_BATCH_CopyFiles, l.stageIn, "")
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
		}
		if p.Code != 0 {
			rl.mu.Lock()
			rl.stageFailed[l.id] = p.Text
			rl.mu.Unlock()
			return p
		}
	}
	var m *mom.Conn
	var err error
	// at most two connection attempts, 2 s apart (spec 10 §6.1)
	for attempt := 0; attempt < 2; attempt++ {
		if attempt > 0 {
			time.Sleep(rl.retryDelay)
		}
		if m, err = rl.dialMom(l.host); err == nil {
			break
		}
	}
	if err != nil {
		// the MOM cannot be reached: its node is down (spec 10 §6.5)
		rl.s.logError("send_job", err.Error())
		isNodes{rl.s}.SetState(l.host, func(st int) int { return st | state.NodeStateDown })
		return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
	}
	defer m.Close()
	p, err := m.Call(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: l.id, Destination: l.host, Attrs: l.attrs}, "")
	if err != nil {
		return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
	}
	if p.Code == batchreq.PBSE_JOBEXIST {
		rl.s.log.Log(logline.EventJob, logline.ClassJob, l.id, "MOM reports job already running")
		return batchreq.NullReply()
	}
	if p.Code != 0 {
		return p
	}
	for seq, off := 0, 0; off < len(l.script); seq++ {
		end := min(off+scriptChunk, len(l.script))
		p, err = m.Call(batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{Seq: seq, FileType: batchreq.JScript, JobID: l.id, Data: l.script[off:end]}, "")
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
		}
		if p.Code != 0 {
			return p
		}
		off = end
	}
	// A rerun job's returned output goes to a MOM on another host.
	spool := l.hasRun && !rl.onServerHost(l.host)
	if spool {
		if p := rl.sendSpool(m, l); p != nil {
			return p
		}
	}
	for _, typ := range []int{batchreq.PBS_BATCH_RdytoCommit, batchreq.PBS_BATCH_Commit} {
		p, err = m.Call(typ, &batchreq.JobID{ID: l.id}, "")
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
		}
		if p.Code != 0 {
			return p
		}
	}
	if spool {
		rl.removeSpool(l.prefix)
	}
	return batchreq.NullReply()
}

// finishRun completes a launch: on success the job is RUNNING and the S
// record written; on failure its nodes are freed and it is requeued. It
// reports whether the job started and turns p into the RunJob reply.
func (ln *launcher) finishRun(j *state.Job, p *batchreq.Reply) bool {
	s := ln.s
	s.mu.Lock()
	if s.jobs.Get(j.ID) != j || j.State != pbsattr.StateRunning {
		s.mu.Unlock()
		return p.Code == 0
	}
	if p.Code != 0 {
		text, stageFail := ln.takeStageFailure(j.ID)
		var m *mail
		if stageFail {
			// seed 001 (File Staging): the files already staged in
			// are gone (the MOM deletes them), the job waits and
			// its owner is told.
			j.Attrs.Set(pbsattr.JobExecutionTime, strconv.FormatInt(s.now().Unix()+stageInRetry, 10))
			s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "File stage in failed: "+firstLineOf(text))
			m = s.mailJob(j, 's', true, text)
		}
		ln.requeue(j)
		wait := s.store.Submit(state.SaveJob(j))
		s.mu.Unlock()
		wait()
		if m != nil {
			go s.sendMail(j.ID, m)
		}
		return false
	}
	if j.Substate == pbsattr.SubPreRun {
		j.Substate = pbsattr.SubRunning
	}
	*p = *batchreq.NullReply()
	m := s.mailJob(j, 'b', false, "")
	if j.Attrs.Get(pbsattr.JobCheckpointName) != "" {
		s.acct.Record(pbslog.AcctRestart, j.ID, "Restart from checkpoint")
	} else {
		s.acct.Record(pbslog.AcctStart, j.ID, acctJobText(j))
	}
	// The start releases a sync set's next member and the after: and
	// afterstartarray children (lifecycle.Life.Started); both may change
	// j's own dependencies, which the transaction encodes at its end.
	tx := s.db.Begin()
	s.life.Started(tx, j)
	wait := tx.Commit()
	s.mu.Unlock()
	wait()
	go s.sendMail(j.ID, m)
	return true
}

// stageInRetry is how long a job whose stage-in failed waits (state W)
// before it is eligible again.
const stageInRetry = 300

// takeStageFailure returns and forgets the reply text of the job's failed
// stage-in, if its launch had one.
func (ln *launcher) takeStageFailure(id string) (string, bool) {
	rl := ln.rl
	rl.mu.Lock()
	defer rl.mu.Unlock()
	text, ok := rl.stageFailed[id]
	delete(rl.stageFailed, id)
	return text, ok
}

// firstLineOf returns the first line of s.
func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// abandonRun requeues a job whose launch could not even be recorded.
func (ln *launcher) abandonRun(j *state.Job, why string) {
	s := ln.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs.Get(j.ID) == j && j.State == pbsattr.StateRunning {
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "run abandoned: %s", why)
		ln.requeue(j)
	}
}

// requeue frees a job's nodes and puts it back to QUEUED/HELD. Called
// with s.mu held.
func (ln *launcher) requeue(j *state.Job) {
	s := ln.s
	s.run.forget(j.ID)
	s.requeueState(j)
	s.refreshNodeJobs()
}

// requeueState forgets where a running job runs (execution host, session)
// and puts it back to QUEUED, HELD or WAITING. Called with s.mu held.
func (s *Server) requeueState(j *state.Job) {
	j.Attrs.Set(pbsattr.JobExecHost, "")
	if !j.Attrs.Has(pbsattr.JobCheckpointName) {
		// kept for a restart: the MOM's restart program gets it
		j.Attrs.Set(pbsattr.JobSessionID, "")
	}
	j.Attrs.Set(pbsattr.JobExecGpus, "")
	s.jobs.SetState(j, pbsattr.StateQueued, pbsattr.SubQueued)
	s.evaluate(j)
	s.life.Touch(j)
}

// acctJobText is the common part of the S and E accounting records
// (spec 12 §14.3); every pair is followed by a blank.
func acctJobText(j *state.Job) string {
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
