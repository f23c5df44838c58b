package link

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/logline"
	"gopbs/mom/jobexec"
	"gopbs/mom/momlog"
)

// batchConn is one TCP connection from the server to the batch port.
type batchConn struct {
	m    *Mom
	ctx  context.Context
	c    net.Conn
	peer netip.AddrPort
	w    *dis.Writer
}

func (bc *batchConn) reply(rep *batchreq.Reply) {
	rep.Encode(bc.w)
	if err := bc.w.Flush(); err != nil {
		bc.m.logErr("reply_send", err, "")
	}
}

func (bc *batchConn) errorReply(code int, msg string) {
	bc.reply(batchreq.ErrorReply(code, "", msg))
}

// serveBatchConn reads requests until the peer disconnects. Several
// requests may share a connection (launch, stage-out + delete).
func (m *Mom) serveBatchConn(ctx context.Context, c net.Conn) {
	peer, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	bc := &batchConn{m: m, ctx: ctx, c: c, peer: peer, w: dis.NewWriter(c)}
	r := dis.NewReader(bufio.NewReader(c))
	// Only a trusted host's privileged port may speak for the server: an
	// ordinary user on a trusted host must not pose as pbs_server (the
	// hole of CVE-2013-4319 in TORQUE 2.5.13, which checked the address
	// only).
	trusted := peer.Port() < 1024 && m.Trusted(peer.Addr())
	sock := connFD(c)
	defer m.dropUncommitted(bc)
	mux := m.batchMux()
	for {
		if m.conf().Timeout > 0 {
			c.SetReadDeadline(time.Now().Add(m.conf().Timeout))
		}
		req, err := batchreq.ReadRequest(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !isNetClosed(err) {
				m.log.Record(logline.EventDebug, momlog.ClassRequest, "dis_request_read", err.Error())
				bc.reply(batchreq.DecodeErrorReply(err))
			}
			return
		}
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		c.SetReadDeadline(time.Time{})
		if !trusted {
			m.log.Record(logline.EventDebug, momlog.ClassRequest, batchreq.RequestName(req.Type),
				"request not authorized from "+peer.String())
			bc.reply(batchreq.ErrorReply(batchreq.PBSE_BADHOST, "", "request not authorized"))
			return
		}
		m.log.Record(logline.EventDebug, momlog.ClassRequest, batchreq.RequestName(req.Type),
			fmt.Sprintf("Type %s request received from %s@%s, sock=%d", batchreq.RequestName(req.Type), req.User, peer.Addr(), sock))
		m.mu.Lock()
		m.lastBatch, m.lastBatchName = m.opt.Now(), batchreq.RequestName(req.Type)
		m.mu.Unlock()
		mux.ServeBatch(bc, req)
	}
}

func isNetClosed(err error) bool {
	var ne net.Error
	return errors.Is(err, net.ErrClosed) || (errors.As(err, &ne) && ne.Timeout())
}

func (m *Mom) batchMux() *batchreq.ServeMux[*batchConn] {
	mux := &batchreq.ServeMux[*batchConn]{}
	mux.HandleFunc(batchreq.PBS_BATCH_QueueJob, m.reqQueueJob)
	mux.HandleFunc(batchreq.PBS_BATCH_jobscript, m.reqJobScript)
	mux.HandleFunc(batchreq.PBS_BATCH_MvJobFile, m.reqMvJobFile)
	mux.HandleFunc(batchreq.PBS_BATCH_RdytoCommit, m.reqRdytoCommit)
	mux.HandleFunc(batchreq.PBS_BATCH_Commit, m.reqCommit)
	mux.HandleFunc(batchreq.PBS_BATCH_StatusJob, m.reqStatusJob)
	mux.HandleFunc(batchreq.PBS_BATCH_SignalJob, m.reqSignalJob)
	mux.HandleFunc(batchreq.PBS_BATCH_AsySignalJob, m.reqSignalJob)
	mux.HandleFunc(batchreq.PBS_BATCH_DeleteJob, m.reqDeleteJob)
	mux.HandleFunc(batchreq.PBS_BATCH_HoldJob, m.reqCheckpoint)
	mux.HandleFunc(batchreq.PBS_BATCH_CheckpointJob, m.reqCheckpoint)
	mux.HandleFunc(batchreq.PBS_BATCH_MessJob, m.reqMessJob)
	mux.HandleFunc(batchreq.PBS_BATCH_ModifyJob, m.reqModifyJob)
	mux.HandleFunc(batchreq.PBS_BATCH_AsyModifyJob, m.reqModifyJob)
	mux.HandleFunc(batchreq.PBS_BATCH_Rerun, m.reqRerun)
	mux.HandleFunc(batchreq.PBS_BATCH_ReturnFiles, m.reqReturnFiles)
	mux.HandleFunc(batchreq.PBS_BATCH_CopyFiles, m.reqCopyFiles)
	mux.HandleFunc(batchreq.PBS_BATCH_DelFiles, m.reqDelFiles)
	mux.NotFound = batchreq.HandlerFunc[*batchConn](func(bc *batchConn, req *batchreq.Request) {
		bc.errorReply(batchreq.PBSE_NOSUP, "")
	})
	return mux
}

// lookup returns the job with the given id.
func (m *Mom) lookup(id string) *job {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.jobs[id]
}

// dropUncommitted forgets jobs whose QueueJob arrived on bc but that were
// never made ready to commit: the launch was abandoned.
func (m *Mom) dropUncommitted(bc *batchConn) {
	m.mu.Lock()
	var drop []*job
	for id, j := range m.jobs {
		if j.conn == bc {
			j.conn = nil
			if j.stage == stageTransIn {
				delete(m.jobs, id)
				drop = append(drop, j)
			}
		}
	}
	m.mu.Unlock()
	for _, j := range drop {
		os.Remove(m.exec.ScriptPath(j.prefix))
	}
}

func (m *Mom) reqQueueJob(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.QueueJob)
	for i := range body.Attrs {
		a := &body.Attrs[i]
		if !queueJobAttrs[a.Name] {
			rep := batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)
			rep.AuxCode = i + 1
			bc.reply(rep)
			return
		}
	}
	if m.conf().NodeCheckOnJobStart && m.runHealthCheck(bc.ctx) {
		bc.errorReply(batchreq.PBSE_MOMREJECT, "")
		return
	}
	m.mu.Lock()
	if old, ok := m.jobs[body.JobID]; ok && old.stage >= stageRunning && old.stage <= stageSuspended {
		m.mu.Unlock()
		bc.errorReply(batchreq.PBSE_JOBEXIST, "job is running")
		return
	} else if ok {
		// An ended (or abandoned) instance with the same id: it is
		// purged now, before the new one has files or an engine
		// record, so that nothing done later for the old instance
		// reaches the new one.
		m.mu.Unlock()
		m.purge(old)
		m.mu.Lock()
	}
	j := &job{id: body.JobID, attrs: body.Attrs, spec: jobSpec(body.JobID, body.Attrs), stage: stageTransIn, conn: bc}
	j.prefix = j.spec.Prefix
	m.nextOrder++
	j.order = m.nextOrder
	m.jobs[j.id] = j
	m.mu.Unlock()
	bc.reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, j.id))
}

// launchJob returns the job a launch request names, which must be in the
// given stage.
func (m *Mom) launchJob(bc *batchConn, id string, want stage) *job {
	j := m.lookup(id)
	if j == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return nil
	}
	if j.stage != want {
		bc.errorReply(batchreq.PBSE_BADSTATE, "")
		return nil
	}
	return j
}

func (m *Mom) reqJobScript(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.JobFile)
	j := m.launchJob(bc, body.JobID, stageTransIn)
	if j == nil {
		return
	}
	flags := os.O_WRONLY | os.O_APPEND
	if body.Seq == 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	if err := writeFile(m.exec.ScriptPath(j.prefix), flags, 0o700, body.Data); err != nil {
		m.logErr("req_jobscript", err, "")
		bc.reply(batchreq.SystemErrorReply("pbs_mom", errnoOf(err), ""))
		return
	}
	bc.reply(batchreq.NullReply())
}

func (m *Mom) reqMvJobFile(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.JobFile)
	j := m.lookup(body.JobID)
	if j == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	suffix := map[int]string{batchreq.StdOut: ".OU", batchreq.StdErr: ".ER", batchreq.Chkpt: ".CK"}[body.FileType]
	if suffix == "" {
		bc.errorReply(batchreq.PBSE_IVALREQ, "")
		return
	}
	name := filepath.Join(m.opt.Home, "spool", j.prefix+suffix)
	flags := os.O_WRONLY | os.O_APPEND
	if body.Seq == 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	if err := writeFile(name, flags, 0o600, body.Data); err != nil {
		bc.reply(batchreq.SystemErrorReply("pbs_mom", errnoOf(err), ""))
		return
	}
	m.mu.Lock()
	user, group := j.spec.User, j.spec.Group
	m.mu.Unlock()
	if cred, err := jobexec.LookupUser(user, group); err == nil {
		os.Chown(name, int(cred.UID), int(cred.GID))
	}
	bc.reply(batchreq.NullReply())
}

// writeFile writes data to name, never through a symbolic link: spool
// files live in a world-writable directory and MOM writes them as root.
func writeFile(name string, flags int, mode os.FileMode, data []byte) error {
	f, err := os.OpenFile(name, flags|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// errnoOf returns the system error number err carries, else 0.
func errnoOf(err error) int {
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return 0
}

func (m *Mom) reqRdytoCommit(bc *batchConn, req *batchreq.Request) {
	id := req.Body.(*batchreq.JobID).ID
	j := m.launchJob(bc, id, stageTransIn)
	if j == nil {
		return
	}
	m.mu.Lock()
	j.stage = stageTransCM
	m.mu.Unlock()
	if err := m.saveJob(j); err != nil {
		m.logErr("req_rdytocommit", err, "cannot save job")
	}
	bc.reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, id))
}

func (m *Mom) reqCommit(bc *batchConn, req *batchreq.Request) {
	id := req.Body.(*batchreq.JobID).ID
	j := m.launchJob(bc, id, stageTransCM)
	if j == nil {
		return
	}
	m.mu.Lock()
	j.stage = stageRunning
	j.conn = nil
	j.server = bc.peer.Addr()
	j.serverPort = serverPortOf(j.attrs, m.opt.ServerPort)
	spec := j.spec
	m.mu.Unlock()

	type result struct {
		sid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Multi-node jobs: join the sisters first (im_ms.go).
		if err := m.prepareStart(context.Background(), j, &spec); err != nil {
			m.JobExited(jobexec.Exit{JobID: id, Status: jobexec.JOB_EXEC_RETRY, StartFailed: true, Message: err.Error()})
			done <- result{0, &jobexec.StartError{Status: jobexec.JOB_EXEC_RETRY, Msg: err.Error()}}
			return
		}
		sid, err := m.exec.Start(context.Background(), &spec)
		done <- result{sid, err}
	}()
	block := m.conf().JobStartBlockTime
	if block <= 0 {
		block = 5 * time.Second
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(block):
		// The start goes on in the background; its outcome reaches the
		// server through the status poll or the obit.
		go func() {
			r := <-done
			m.started(j, r.sid, r.err)
		}()
		bc.reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, id))
		return
	}
	m.started(j, res.sid, res.err)
	if res.err != nil {
		bc.reply(batchreq.TextReply(0, batchreq.MsgStartFailed(m.opt.Host)))
		return
	}
	bc.reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, id))
}

func (m *Mom) started(j *job, sid int, err error) {
	if err != nil {
		m.log.Job(logline.EventJob, j.id, "job start failed: "+err.Error())
		return
	}
	m.mu.Lock()
	if j.sid == 0 {
		j.sid = sid
	}
	m.mu.Unlock()
	if err := m.saveJob(j); err != nil {
		m.logErr("req_commit", err, "cannot save job")
	}
}

func (m *Mom) reqStatusJob(bc *batchConn, req *batchreq.Request) {
	id := req.Body.(*batchreq.StatusReq).ID
	m.mu.Lock()
	var list []*job
	if id == "" {
		for _, j := range m.jobs {
			list = append(list, j)
		}
	} else if j, ok := m.jobs[id]; ok {
		list = append(list, j)
	} else {
		m.mu.Unlock()
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	m.mu.Unlock()
	rep := &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{}}
	for _, j := range list {
		if attrs, ok := m.jobStatus(j); ok {
			rep.Status = append(rep.Status, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_JOB, Name: j.id, Attrs: attrs})
		}
	}
	bc.reply(rep)
}

// jobStatus returns the attributes MOM reports for a running job it is
// mother superior of: session_id the first time (for an interactive job
// also its terminal as Output_Path/Error_Path), then resources_used.
func (m *Mom) jobStatus(j *job) (batchreq.AttrList, bool) {
	m.mu.Lock()
	running := j.stage == stageRunning || j.stage == stageSuspended
	sidSent, termSent := j.sidSent, j.termSent
	m.mu.Unlock()
	if !running {
		return nil, false
	}
	st, err := m.exec.Status(j.id)
	if err != nil || st.State == jobexec.StateExited {
		return nil, false
	}
	if st.SessionID == 0 {
		return batchreq.AttrList{}, true // still starting
	}
	// resources_used once the usage was sampled (a poll cycle ran since
	// the start), then the "send once" session_id until reported — so the
	// first poll right after a launch carries session_id only, as in
	// capture 35, unless a poll cycle came in between (capture 86).
	var attrs batchreq.AttrList
	if u := st.Usage; u.Mem > 0 || u.VMem > 0 || u.CPUTime > 0 {
		attrs = usageAttrs(m.withSisterUsage(j.id, u)) // multi-node: plus the sisters' (im_ms.go)
	}
	attrs = append(attrs, checkpointAttrs(st.CheckpointName, st.CheckpointTime)...)
	if st.Terminal != "" && !termSent {
		// "Send once" attributes, in attribute-table order (spec 10 §7).
		m.mu.Lock()
		j.termSent = true
		m.mu.Unlock()
		pty := m.opt.Host + ":" + st.Terminal
		attrs = append(attrs, batchreq.NewAttr("Error_Path", pty), batchreq.NewAttr("Output_Path", pty))
	}
	if !sidSent {
		m.mu.Lock()
		j.sidSent, j.sid = true, st.SessionID
		m.mu.Unlock()
		attrs = append(attrs, batchreq.NewAttr("session_id", fmt.Sprint(st.SessionID)))
	}
	if attrs == nil {
		attrs = batchreq.AttrList{}
	}
	return attrs, true
}

func (m *Mom) reqSignalJob(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.SignalJob)
	j := m.lookup(body.JobID)
	if j == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	rerun := req.HasExtension && strings.HasPrefix(req.Extension, "rerun")
	m.signalSisters(body.JobID, body.Signal) // a multi-node job's remote tasks first (im_ms.go)
	err := m.exec.Signal(bc.ctx, body.JobID, body.Signal, rerun)
	switch {
	case err == nil:
	case errors.Is(err, jobexec.ErrUnknownJob):
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	case errors.Is(err, jobexec.ErrBadState):
		bc.errorReply(batchreq.PBSE_BADSTATE, "")
		return
	case errors.Is(err, jobexec.ErrUnknownSignal):
		bc.errorReply(batchreq.PBSE_UNKSIG, "")
		return
	default:
		bc.reply(batchreq.SystemErrorReply("pbs_mom", errnoOf(err), ""))
		return
	}
	m.mu.Lock()
	switch strings.ToLower(body.Signal) {
	case "suspend":
		j.stage = stageSuspended
	case "resume":
		j.stage = stageRunning
	}
	if rerun {
		j.rerun = true
	}
	m.mu.Unlock()
	bc.reply(batchreq.NullReply())
}

func (m *Mom) reqDeleteJob(bc *batchConn, req *batchreq.Request) {
	id := req.Body.(*batchreq.Manage).ObjName
	m.mu.Lock()
	j, ok := m.jobs[id]
	if ok {
		delete(m.jobs, id)
	}
	m.mu.Unlock()
	if !ok {
		bc.reply(batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, m.opt.Host, "cannot locate job to delete"))
		return
	}
	m.purge(j)
	bc.reply(batchreq.NullReply())
}

// purge removes a job's files and forgets it in the engine. It targets
// the instance j: once another job with the same id has taken its place
// (a server that reuses ids), the engine record, the files and the
// sister links are the newer job's and are left alone.
func (m *Mom) purge(j *job) {
	m.mu.Lock()
	cur := m.jobs[j.id]
	superseded := j.purged || (cur != nil && cur != j)
	j.purged = true
	m.mu.Unlock()
	if superseded {
		return
	}
	m.forgetMS(j.id)
	if err := m.exec.Purge(j.id); err != nil {
		os.Remove(m.exec.ScriptPath(j.prefix))
	}
	os.Remove(m.jobFilePath(j.prefix))
	m.mu.Lock()
	if m.jobs[j.id] == j {
		delete(m.jobs, j.id)
	}
	m.mu.Unlock()
}

// reqCheckpoint serves HoldJob (checkpoint the job, then end it: qhold
// of a running job, the server's shutdown) and CheckpointJob (qchkpt: the
// job goes on) with the site's $checkpoint_script. Without one the
// request is refused with PBSE_NOSUP, as TORQUE's MOM without BLCR.
func (m *Mom) reqCheckpoint(bc *batchConn, req *batchreq.Request) {
	id := req.Body.(*batchreq.Manage).ObjName
	if m.lookup(id) == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	ck, ok := m.opt.Exec.(Checkpointer)
	if !ok || m.conf().CheckpointScript == "" {
		bc.errorReply(batchreq.PBSE_NOSUP, "")
		return
	}
	err := ck.Checkpoint(m.ctx, id, req.Type == batchreq.PBS_BATCH_HoldJob)
	switch {
	case err == nil:
		bc.reply(batchreq.NullReply())
	case errors.Is(err, jobexec.ErrUnknownJob):
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
	case errors.Is(err, jobexec.ErrNoCheckpoint):
		bc.errorReply(batchreq.PBSE_NOSUP, "")
	case errors.Is(err, jobexec.ErrNotCheckpointable):
		bc.errorReply(batchreq.PBSE_IVALREQ, "job is not checkpointable")
	case errors.Is(err, jobexec.ErrBadState), errors.Is(err, jobexec.ErrCheckpointBusy):
		bc.errorReply(batchreq.PBSE_BADSTATE, err.Error())
	default:
		bc.errorReply(batchreq.PBSE_SYSTEM, err.Error())
	}
}

func (m *Mom) reqMessJob(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.MessJob)
	j := m.lookup(body.JobID)
	if j == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	opt := body.FileOpt
	if opt == 0 {
		opt = batchreq.MSG_OUT
	}
	var failed error
	for _, f := range []struct {
		bit    int
		suffix string
	}{{batchreq.MSG_OUT, ".OU"}, {batchreq.MSG_ERR, ".ER"}} {
		if opt&f.bit == 0 {
			continue
		}
		name := filepath.Join(m.opt.Home, "spool", j.prefix+f.suffix)
		if err := writeFile(name, os.O_WRONLY|os.O_APPEND, 0, []byte(body.Message+"\n")); err != nil {
			failed = err
		}
	}
	if failed != nil {
		bc.reply(batchreq.SystemErrorReply("pbs_mom", errnoOf(failed), ""))
		return
	}
	bc.reply(batchreq.NullReply())
}

func (m *Mom) reqModifyJob(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	if m.lookup(body.ObjName) == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	// The running job's limits first: a bad value changes nothing.
	if mod, ok := m.exec.(Modifier); ok {
		var rs []jobexec.Resource
		for _, a := range body.Attrs {
			if a.Name == "Resource_List" && a.HasResource {
				rs = append(rs, jobexec.Resource{Name: a.Resource, Value: a.Value})
			}
		}
		if err := mod.Modify(body.ObjName, rs); err != nil && !errors.Is(err, jobexec.ErrUnknownJob) {
			bc.reply(batchreq.ErrorReply(batchreq.PBSE_BADATVAL, "", ""))
			return
		}
	}
	m.mu.Lock()
	j, ok := m.jobs[body.ObjName]
	if !ok {
		m.mu.Unlock()
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	for _, a := range body.Attrs {
		replaced := false
		for i := range j.attrs {
			b := &j.attrs[i]
			if b.Name == a.Name && b.HasResource == a.HasResource && b.Resource == a.Resource {
				b.Value, b.Size, replaced = a.Value, 0, true
			}
		}
		if !replaced {
			a.Size = 0
			j.attrs = append(j.attrs, a)
		}
	}
	j.spec = jobSpec(j.id, j.attrs)
	j.spec.Prefix = j.prefix
	m.mu.Unlock()
	if err := m.saveJob(j); err != nil { // the new limits survive a restart
		m.logErr("req_modifyjob", err, "cannot save job")
	}
	bc.reply(batchreq.NullReply())
}

// connFD returns the descriptor number of a TCP connection, which TORQUE's
// request log lines show as "sock=", or -1.
func connFD(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}
