package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
)

// fakeMom is a test MOM on loopback: it accepts the server's TCP
// connections, records every request and answers as pbs_mom does.
type fakeMom struct {
	t  *testing.T
	ln net.Listener

	mu      sync.Mutex
	reqs    []*batchreq.Request
	conns   int             // connections accepted
	streams []*bytes.Buffer // bytes received, per connection
	// reject, if set, gives the reply code for a request type.
	reject map[int]int
	got    chan *batchreq.Request
	// gating, if set, holds the end-of-job connections (first request
	// CopyFiles or DeleteJob) of a job until release is called for it.
	gating bool
	gates  map[string]chan struct{}
	closed int // connections finished
}

// idle reports whether every accepted connection has been closed.
func (m *fakeMom) idle() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed == len(m.streams)
}

// gate returns the channel closed when job id's end may proceed.
func (m *fakeMom) gate(id string) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gates == nil {
		m.gates = map[string]chan struct{}{}
	}
	g := m.gates[id]
	if g == nil {
		g = make(chan struct{})
		m.gates[id] = g
	}
	return g
}

// connCount returns the number of connections accepted so far.
func (m *fakeMom) connCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.streams)
}

// release lets job id's end-of-job connection proceed.
func (m *fakeMom) release(id string) { close(m.gate(id)) }

// seen reports whether a request of type typ for job id arrived.
func (m *fakeMom) seen(typ int, id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.reqs {
		if r.Type == typ && r.ObjectID() == id {
			return true
		}
	}
	return false
}

func newFakeMom(t *testing.T) *fakeMom {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMom{t: t, ln: ln, reject: map[int]int{}, got: make(chan *batchreq.Request, 100)}
	t.Cleanup(func() { ln.Close() })
	go m.accept()
	return m
}

func (m *fakeMom) accept() {
	for {
		nc, err := m.ln.Accept()
		if err != nil {
			return
		}
		m.mu.Lock()
		m.conns++
		m.mu.Unlock()
		go m.serve(nc)
	}
}

func (m *fakeMom) serve(nc net.Conn) {
	defer func() {
		nc.Close()
		m.mu.Lock()
		m.closed++
		m.mu.Unlock()
	}()
	buf := &lockedBuffer{}
	m.mu.Lock()
	m.streams = append(m.streams, &buf.b)
	m.mu.Unlock()
	buf.mu = &m.mu
	r := dis.NewReader(io.TeeReader(nc, buf))
	for first := true; ; first = false {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		req, err := batchreq.ReadRequest(r)
		if err != nil {
			return
		}
		m.mu.Lock()
		gating := m.gating
		m.mu.Unlock()
		if first && gating && (req.Type == batchreq.PBS_BATCH_CopyFiles || req.Type == batchreq.PBS_BATCH_DeleteJob) {
			<-m.gate(req.ObjectID())
			nc.SetDeadline(time.Now().Add(10 * time.Second))
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		code := m.reject[req.Type]
		m.mu.Unlock()
		m.got <- req
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		var p *batchreq.Reply
		switch {
		case code != 0:
			p = batchreq.ErrorReply(code, "", "")
		case req.Type == batchreq.PBS_BATCH_QueueJob:
			p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, req.Body.(*batchreq.QueueJob).JobID)
		case req.Type == batchreq.PBS_BATCH_RdytoCommit:
			p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, req.Body.(*batchreq.JobID).ID)
		case req.Type == batchreq.PBS_BATCH_Commit:
			p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, req.Body.(*batchreq.JobID).ID)
		case req.Type == batchreq.PBS_BATCH_StatusJob:
			id := req.Body.(*batchreq.StatusReq).ID
			p = &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{{
				ObjType: batchreq.MGR_OBJ_JOB, Name: id, Attrs: batchreq.AttrList{batchreq.NewAttr("session_id", "16978")}}}}
		default:
			p = batchreq.NullReply()
		}
		nc.Write(p.Append(nil))
	}
}

// lockedBuffer is a buffer written under the fake MOM's lock.
type lockedBuffer struct {
	mu *sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// stream returns a copy of the bytes received on connection i.
func (m *fakeMom) stream(i int) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.streams) {
		return nil
	}
	return append([]byte(nil), m.streams[i].Bytes()...)
}

// next waits for the next request of type typ (skipping others).
func (m *fakeMom) next(typ int) *batchreq.Request {
	m.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-m.got:
			if r.Type == typ {
				return r
			}
		case <-deadline:
			m.t.Fatalf("MOM did not receive %s", batchreq.RequestName(typ))
			return nil
		}
	}
}

// runServer starts a server named "vm" whose node "vm" is the fake MOM
// and whose scheduler port is schedPort (0: none listening).
func runServer(t *testing.T, mom *fakeMom, schedPort int) *Server {
	t.Helper()
	return runServerWith(t, mom, schedPort, nil)
}

// runServerWith is runServer with a hook run before the server starts
// serving.
func runServerWith(t *testing.T, mom *fakeMom, schedPort int, setup func(*Server)) *Server {
	t.Helper()
	return runServerAt(t, t.TempDir(), InitCreate, mom, schedPort, setup)
}

// runServerAt is runServerWith in a given home with a given start type.
func runServerAt(t *testing.T, home, init string, mom *fakeMom, schedPort int, setup func(*Server)) *Server {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for reserved source ports")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if schedPort == 0 {
		schedPort = 1 // nothing listens there
	}
	s, err := New(Config{Home: home, ServerName: "vm", InitType: init, Listener: ln,
		SchedHost: "127.0.0.1", SchedPort: schedPort,
		AuthWait: 200 * time.Millisecond, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.run.resolve = func(host string) []netip.Addr {
		if host == "vm" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		}
		return resolveAddr(host)
	}
	if mom != nil {
		s.run.dialer = func(ctx context.Context, host string) (net.Conn, error) {
			if host != "vm" && host != "vm2" {
				return nil, errors.New("unknown MOM host " + host)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", mom.ln.Addr().String())
		}
	}
	s.run.mailProgram = "true" // never send real mail from tests
	if setup != nil {
		setup(s)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	return s
}

// submit queues a job as root through the privileged client c.
func submit(t *testing.T, c *client, name string, attrs ...batchreq.Attr) string {
	t.Helper()
	list := append(batchreq.AttrList{attr("Job_Name", name), attr("Checkpoint", "u"), attr("Join_Path", "n"),
		attr("Keep_Files", "n"), attr("Rerunable", "True"),
		attr("Variable_List", "PBS_O_HOME=/root,PBS_O_WORKDIR=/root")}, attrs...)
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list}))
	if p.Code != 0 {
		t.Fatalf("QueueJob: %d %s", p.Code, p.Text)
	}
	id := p.JobID
	steps := []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte("#!/bin/sh\nsleep 100\n")}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	}
	for _, r := range steps {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("%s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
	}
	return id
}

// jobAttr returns one attribute of a job's status ("" if absent or the
// job is unknown).
func jobAttr(t *testing.T, c *client, id, name string) string {
	t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
	if p.Code != 0 || len(p.Status) == 0 {
		return ""
	}
	for _, a := range p.Status[0].Attrs {
		full := a.Name
		if a.HasResource {
			full += "." + a.Resource
		}
		if full == name {
			return a.Value
		}
	}
	return ""
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func readAccounting(t *testing.T, s *Server) string {
	t.Helper()
	b, err := os.ReadFile(s.acct.Path())
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return string(b)
}

func TestRunJobLaunchAndObit(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "lifecycle")

	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
	if p.Code != 0 {
		t.Fatalf("RunJob: %d %s", p.Code, p.Text)
	}
	q := mom.next(batchreq.PBS_BATCH_QueueJob)
	body := q.Body.(*batchreq.QueueJob)
	if q.User != "PBS_Server" || body.JobID != id || body.Destination != "vm" {
		t.Fatalf("QueueJob header/body: user %q id %q dest %q", q.User, body.JobID, body.Destination)
	}
	var names []string
	ops := map[string]int{}
	for _, a := range body.Attrs {
		n := a.Name
		if a.HasResource {
			n += "." + a.Resource
		}
		names = append(names, n)
		ops[n] = a.Op
	}
	want := "Job_Name,Job_Owner,queue,server,Checkpoint,Error_Path,exec_host,Join_Path,Keep_Files,Output_Path," +
		"Resource_List.neednodes,Resource_List.nodes,Resource_List.walltime,Variable_List,euser,egroup,hashname,start_time"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("QueueJob attributes\n got %s\nwant %s", got, want)
	}
	if ops["Resource_List.nodes"] != batchreq.DFLT || ops["Resource_List.walltime"] != batchreq.DFLT || ops["Job_Name"] != batchreq.SET {
		t.Errorf("ops: %v", ops)
	}
	js := mom.next(batchreq.PBS_BATCH_jobscript).Body.(*batchreq.JobFile)
	if string(js.Data) != "#!/bin/sh\nsleep 100\n" || js.JobID != id {
		t.Errorf("script chunk %+v", js)
	}
	mom.next(batchreq.PBS_BATCH_RdytoCommit)
	mom.next(batchreq.PBS_BATCH_Commit)
	mom.next(batchreq.PBS_BATCH_StatusJob) // the poll right after the launch

	if st := jobAttr(t, c, id, "job_state"); st != "R" {
		t.Fatalf("job_state %q", st)
	}
	if eh := jobAttr(t, c, id, "exec_host"); eh != "vm/0" {
		t.Fatalf("exec_host %q", eh)
	}
	// full status: Walltime.Remaining follows start_time
	full := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
	var order []string
	for _, a := range full.Status[0].Attrs {
		order = append(order, a.Name)
		if a.Name == "Walltime" && (a.Resource != "Remaining" || a.Value != "3600" && a.Value != "3599") {
			t.Errorf("Walltime.Remaining %q %q", a.Resource, a.Value)
		}
	}
	if got := strings.Join(order, ","); !strings.Contains(got, ",start_time,Walltime,start_count,") {
		t.Errorf("full status order %s", got)
	}
	waitFor(t, "session_id", func() bool { return jobAttr(t, c, id, "session_id") == "16978" })
	if acct := readAccounting(t, s); !strings.Contains(acct, ";S;"+id+";user=root ") ||
		!strings.Contains(acct, "exec_host=vm/0 Resource_List.neednodes=1 Resource_List.nodect=1 Resource_List.nodes=1 Resource_List.walltime=01:00:00 \n") {
		t.Errorf("accounting:\n%s", acct)
	}
	// node shows the job
	np := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "vm"}))
	if np.Code != 0 || len(np.Status) != 1 {
		t.Fatalf("status node: %d", np.Code)
	}
	for _, a := range np.Status[0].Attrs {
		if a.Name == "jobs" && a.Value != "0/"+id {
			t.Errorf("node jobs %q", a.Value)
		}
	}

	svAssigned := func() string {
		p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{}))
		for _, a := range p.Status[0].Attrs {
			if a.Name == "resources_assigned" && a.Resource == "nodect" {
				return a.Value
			}
		}
		return ""
	}
	if got := svAssigned(); got != "1" {
		t.Errorf("resources_assigned.nodect while running %q", got)
	}
	// The MOM reports the end of the job.
	momc := privConn(t, s)
	obit := batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: 0, Attrs: batchreq.AttrList{
		batchreq.NewResourceAttr("resources_used", "cput", "00:00:00"),
		batchreq.NewResourceAttr("resources_used", "walltime", "00:00:05"),
	}})
	if p := momc.do(obit); p.Code != 0 {
		t.Fatalf("JobObit: %d %s", p.Code, p.Text)
	}
	cf := mom.next(batchreq.PBS_BATCH_CopyFiles).Body.(*batchreq.CopyFiles)
	if cf.JobID != id || cf.Owner != "root" || cf.ExecUser != "root" || cf.Direction != batchreq.STAGE_DIR_OUT || len(cf.Pairs) != 2 ||
		cf.Pairs[0].Local != id+".OU" || cf.Pairs[0].Remote != "vm:/root/lifecycle.o"+strings.Split(id, ".")[0] ||
		cf.Pairs[1].Local != id+".ER" {
		t.Errorf("CopyFiles %+v", cf)
	}
	del := mom.next(batchreq.PBS_BATCH_DeleteJob).Body.(*batchreq.Manage)
	if del.ObjName != id || del.Command != batchreq.MGR_CMD_DELETE {
		t.Errorf("DeleteJob %+v", del)
	}
	waitFor(t, "job purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
	if got := svAssigned(); got != "0" {
		t.Errorf("resources_assigned.nodect after the job %q", got)
	}
	acct := readAccounting(t, s)
	if !strings.Contains(acct, ";E;"+id+";user=root ") || !strings.Contains(acct, " session=16978 end=") || !strings.Contains(acct, "Exit_status=0 resources_used.cput=00:00:00 resources_used.walltime=00:00:05\n") {
		t.Errorf("accounting:\n%s", acct)
	}
	// A second obit for the purged job is refused (CLEANEDOUT: the
	// server started with -t create).
	if p := privConn(t, s).do(obit); p.Code != batchreq.PBSE_CLEANEDOUT {
		t.Errorf("late obit: %d", p.Code)
	}
}

func TestRunJobErrors(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	run := func(id, dest string) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id, Destination: dest}))
	}
	if p := run("99.vm", ""); p.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("unknown job: %d", p.Code)
	}
	// (a job asking for ppn=3 of np=2 is refused at submission:
	// TestInfeasibleNodeRequest; a RunJob destination is not checked then)
	id := submit(t, c, "big")
	if p := run(id, "vm:ppn=3"); p.Code != batchreq.PBSE_RESCUNAV {
		t.Errorf("ppn=3 on np=2: %d %s", p.Code, p.Text)
	}
	if st := jobAttr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("state after failed run %q", st)
	}
	// MOM refuses the job: it is requeued and the nodes are free again.
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_QueueJob] = batchreq.PBSE_MOMREJECT
	mom.mu.Unlock()
	id2 := submit(t, c, "small")
	if p := run(id2, ""); p.Code != batchreq.PBSE_MOMREJECT {
		t.Errorf("MOM reject: %d", p.Code)
	}
	if st, eh := jobAttr(t, c, id2, "job_state"), jobAttr(t, c, id2, "exec_host"); st != "Q" || eh != "" {
		t.Errorf("after MOM reject: state %q exec_host %q", st, eh)
	}
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_QueueJob)
	mom.mu.Unlock()
	// Two jobs fill the two VPs of vm; a third cannot run.
	if p := run(id2, ""); p.Code != 0 {
		t.Fatalf("run: %d", p.Code)
	}
	id3 := submit(t, c, "third")
	if p := run(id3, "vm"); p.Code != 0 {
		t.Fatalf("run with destination: %d %s", p.Code, p.Text)
	}
	if eh := jobAttr(t, c, id3, "exec_host"); eh != "vm/1" {
		t.Errorf("second job exec_host %q", eh)
	}
	if p := run(id2, ""); p.Code != batchreq.PBSE_BADSTATE || !strings.HasSuffix(p.Text, "MSG=job already running") {
		t.Errorf("run running job: %d %q", p.Code, p.Text)
	}
	id4 := submit(t, c, "fourth")
	if p := run(id4, ""); p.Code != batchreq.PBSE_RESCUNAV {
		t.Errorf("full node: %d", p.Code)
	}
	np := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "vm"}))
	for _, a := range np.Status[0].Attrs {
		switch a.Name {
		case "state":
			if a.Value != "job-exclusive" {
				t.Errorf("node state %q", a.Value)
			}
		case "jobs":
			if a.Value != "0/"+id2+", 1/"+id3 {
				t.Errorf("node jobs %q", a.Value)
			}
		}
	}
}

func TestDeleteSignalRerunRunningJob(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "sig")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)

	// qsig is relayed unchanged.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: "SIGUSR1"})); p.Code != 0 {
		t.Fatalf("SignalJob: %d", p.Code)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != "SIGUSR1" || sj.JobID != id {
		t.Errorf("relayed %+v", sj)
	}
	// MOM errors come back to the client.
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_SignalJob] = batchreq.PBSE_UNKSIG
	mom.mu.Unlock()
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: "SIGFOO"})); p.Code != batchreq.PBSE_UNKSIG {
		t.Errorf("bad signal: %d", p.Code)
	}
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_SignalJob)
	mom.mu.Unlock()
	// suspend and resume: qstat shows S, the node is free meanwhile
	for _, sig := range []string{"suspend", "resume"} {
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: sig})); p.Code != 0 {
			t.Fatalf("%s: %d", sig, p.Code)
		}
		mom.next(batchreq.PBS_BATCH_SignalJob)
		want, jobs := "S", ""
		if sig == "resume" {
			want, jobs = "R", "0/"+id
		}
		if st := jobAttr(t, c, id, "job_state"); st != want {
			t.Errorf("after %s: job_state %q", sig, st)
		}
		if got := nodeAttr(t, c, "jobs"); got != jobs {
			t.Errorf("after %s: node jobs %q", sig, got)
		}
	}
	// qmsg
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_MessJob, "root", &batchreq.MessJob{JobID: id, FileOpt: 1, Message: "hi"})); p.Code != 0 {
		t.Fatalf("MessJob: %d", p.Code)
	}
	if mj := mom.next(batchreq.PBS_BATCH_MessJob).Body.(*batchreq.MessJob); mj.Message != "hi" {
		t.Errorf("relayed %+v", mj)
	}
	// qchkpt of a non-checkpointable job
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_CheckpointJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})); p.Code != batchreq.PBSE_IVALREQ {
		t.Errorf("qchkpt: %d", p.Code)
	}
	// qrerun: SIGKILL with extension rerun; the obit requeues the job.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "root", &batchreq.JobID{ID: id})); p.Code != 0 {
		t.Fatalf("Rerun: %d", p.Code)
	}
	rr := mom.next(batchreq.PBS_BATCH_SignalJob)
	if rr.Body.(*batchreq.SignalJob).Signal != "SIGKILL" || rr.Extension != "rerun" {
		t.Errorf("rerun signal %+v ext %q", rr.Body, rr.Extension)
	}
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_DeleteJob)
	waitFor(t, "requeue", func() bool { return jobAttr(t, c, id, "job_state") == "Q" })
	if eh := jobAttr(t, c, id, "exec_host"); eh != "" {
		t.Errorf("exec_host after rerun %q", eh)
	}
	if acct := readAccounting(t, s); !strings.Contains(acct, ";R;"+id+";\n") {
		t.Errorf("no R record:\n%s", acct)
	}

	// Run again, then qdel: SIGTERM, and SIGKILL after deldelay.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob again: %d", p.Code)
	}
	if sc := jobAttr(t, c, id, "start_count"); sc != "2" {
		t.Errorf("start_count %q", sc)
	}
	d := batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})
	d.SetExtension("deldelay=1")
	if p := c.do(d); p.Code != 0 {
		t.Fatalf("DeleteJob: %d", p.Code)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != "SIGTERM" {
		t.Errorf("delete signal %q", sj.Signal)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != "SIGKILL" {
		t.Errorf("second delete signal %q", sj.Signal)
	}
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: 271})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	waitFor(t, "purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
	acct := readAccounting(t, s)
	if !strings.Contains(acct, ";D;"+id+";requestor=root@vm") || !strings.Contains(acct, "Exit_status=271\n") {
		t.Errorf("accounting:\n%s", acct)
	}
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	var all string
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		all += string(b)
	}
	for _, want := range []string{";Job sent signal SIGTERM on delete", ";Job sent signal SIGKILL on delete", ";Job Rerun at request of root@vm", ";Exit_status=271"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestObitStartFailureRequeues(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "retry")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)
	// JOB_EXEC_RETRY: the MOM drops its copy and the job is queued again
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: -3})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_DeleteJob)
	waitFor(t, "requeue", func() bool { return jobAttr(t, c, id, "job_state") == "Q" })
	if got := nodeAttr(t, c, "jobs"); got != "" {
		t.Errorf("node still lists %q", got)
	}
	// a second obit for a job that is no longer running
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != batchreq.PBSE_BADSTATE {
		t.Errorf("obit of a queued job: %d", p.Code)
	}
	// an obit from an unprivileged connection is refused
	u := dialUser(t, s.Addr())
	if p := u.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code == 0 {
		t.Errorf("unprivileged obit accepted")
	}
	for _, tc := range []struct {
		exit      int
		rerunable bool
		want      bool
	}{{0, true, false}, {-1, true, false}, {-3, false, true}, {-4, true, true}, {-4, false, false}, {-5, false, true}, {-10, true, false}, {271, true, false}} {
		if got := requeueOnExit(tc.exit, tc.rerunable); got != tc.want {
			t.Errorf("requeueOnExit(%d, %v) = %v", tc.exit, tc.rerunable, got)
		}
	}
}

func TestRelayModifyAndHoldOfRunningJob(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "relay")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)
	modify := func(a batchreq.Attr) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
			Attrs: batchreq.AttrList{a}}))
	}
	// a resource change is relayed; the MOM's error is the reply
	if p := modify(rattr("Resource_List", "walltime", "02:00:00")); p.Code != 0 {
		t.Fatalf("qalter walltime: %d", p.Code)
	}
	if m := mom.next(batchreq.PBS_BATCH_ModifyJob).Body.(*batchreq.Manage); m.ObjName != id || len(m.Attrs) != 1 || m.Attrs[0].Value != "02:00:00" {
		t.Errorf("relayed %+v", m)
	}
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_ModifyJob] = batchreq.PBSE_BADATVAL
	mom.mu.Unlock()
	if p := modify(rattr("Resource_List", "walltime", "03:00:00")); p.Code != batchreq.PBSE_BADATVAL {
		t.Errorf("MOM error not returned: %d", p.Code)
	}
	// other attributes stay on the server
	if p := modify(attr("Checkpoint", "enabled")); p.Code != 0 {
		t.Fatalf("qalter -c: %d", p.Code)
	}
	// hold of a running checkpointable job goes to the MOM; without
	// checkpoint support (PBSE_NOSUP) the hold is only recorded (seed
	// 001; TORQUE dropped it) and the job runs on
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_HoldJob] = batchreq.PBSE_NOSUP
	mom.mu.Unlock()
	hold := batchreq.NewRequest(batchreq.PBS_BATCH_HoldJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{attr("Hold_Types", "u")}})
	if p := c.do(hold); p.Code != 0 {
		t.Fatalf("qhold: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_HoldJob)
	if h, st := jobAttr(t, c, id, "Hold_Types"), jobAttr(t, c, id, "job_state"); h != "u" || st != "R" {
		t.Errorf("after NOSUP: Hold_Types %q state %q", h, st)
	}
	// with checkpoint support the job ends checkpointed and comes back held
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_HoldJob)
	mom.mu.Unlock()
	if p := c.do(hold); p.Code != 0 {
		t.Fatalf("qhold: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_HoldJob)
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	waitFor(t, "held", func() bool { return jobAttr(t, c, id, "job_state") == "H" })
	if acct := readAccounting(t, s); !strings.Contains(acct, ";C;"+id+";Checkpointed and held\n") {
		t.Errorf("no C record:\n%s", acct)
	}
}

func TestObitFromOtherHostAndUnreachableMom(t *testing.T) {
	s := runServerWith(t, nil, 0, func(s *Server) {
		s.run.resolve = func(string) []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.1")} }
		s.run.dialer = func(context.Context, string) (net.Conn, error) { return nil, errors.New("connection refused") }
		s.run.retryDelay = 10 * time.Millisecond
	})
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "nomom")
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
	if p.Code != batchreq.PBSE_MOMREJECT || !strings.HasSuffix(p.Text, "connection to mom timed out") {
		t.Errorf("RunJob: %d %q", p.Code, p.Text)
	}
	if st := nodeAttr(t, c, "state"); st != "down" {
		t.Errorf("node %q", st)
	}
	if st := jobAttr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("job %q", st)
	}
	// a job that is not running elsewhere is still refused from a host
	// that is not its mother superior
	s.mu.Lock()
	j := s.findJob(id)
	j.attrs.set(pbsattr.JobExecHost, "vm/0")
	s.setState(j, pbsattr.StateRunning, pbsattr.SubRunning)
	s.mu.Unlock()
	if p := privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != batchreq.PBSE_CLEANEDOUT {
		t.Errorf("obit from a stranger: %d", p.Code)
	}
	// qrerun needs the MOM, qrerun -f requeues without it
	rerun := batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "root", &batchreq.JobID{ID: id})
	if p := c.do(rerun); p.Code != batchreq.PBSE_NORELYMOM {
		t.Errorf("qrerun with the node down: %d", p.Code)
	}
	rerun.SetExtension("force")
	if p := c.do(rerun); p.Code != 0 {
		t.Fatalf("qrerun -f: %d", p.Code)
	}
	if st, eh := jobAttr(t, c, id, "job_state"), jobAttr(t, c, id, "exec_host"); st != "Q" || eh != "" {
		t.Errorf("after qrerun -f: %q %q", st, eh)
	}
}

func TestWarmRestartKeepsRunningJob(t *testing.T) {
	mom := newFakeMom(t)
	home := t.TempDir()
	s := runServerAt(t, home, InitCreate, mom, 0, nil)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "survivor")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_StatusJob)
	waitFor(t, "session id", func() bool { return jobAttr(t, c, id, "session_id") != "" })
	c.nc.Close()
	s.Shutdown("Quick")
	<-s.Done()

	s = runServerAt(t, home, InitWarm, mom, 0, nil)
	momsReported(s)
	c = privConn(t, s)
	if st, eh := jobAttr(t, c, id, "job_state"), jobAttr(t, c, id, "exec_host"); st != "R" || eh != "vm/0" {
		t.Fatalf("after restart: state %q exec_host %q", st, eh)
	}
	if got := nodeAttr(t, c, "jobs"); got != "0/"+id {
		t.Errorf("node jobs after restart %q", got)
	}
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit after restart: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_DeleteJob)
	waitFor(t, "purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
}

func TestJobMail(t *testing.T) {
	mom := newFakeMom(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "mail.txt")
	script := filepath.Join(dir, "fakemail")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"ARGS: $*\"; cat; echo '.'; } >> "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := runServerWith(t, mom, 0, func(s *Server) { s.run.mailProgram = script })
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "mailjob", attr("Mail_Points", "be"), attr("Mail_Users", "alice@example"))
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	waitFor(t, "begin mail", func() bool {
		b, _ := os.ReadFile(out)
		return strings.HasSuffix(string(b), "\n.\n")
	})
	momc := privConn(t, s)
	obit := &batchreq.JobObit{JobID: id, ExitStatus: 3, Attrs: batchreq.AttrList{batchreq.NewResourceAttr("resources_used", "cput", "00:00:01")}}
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", obit)); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	want := "ARGS: -f adm alice@example\nTo: alice@example \nSubject: PBS JOB " + id + "\nPrecedence: bulk\n\n" +
		"PBS Job Id: " + id + "\nJob Name:   mailjob\nExec host:  vm/0\nBegun execution\n.\n" +
		"ARGS: -f adm alice@example\nTo: alice@example \nSubject: PBS JOB " + id + "\nPrecedence: bulk\n\n" +
		"PBS Job Id: " + id + "\nJob Name:   mailjob\nExec host:  vm/0\nExecution terminated\nExit_status=3\nresources_used.cput=00:00:01\n.\n"
	var got string
	// The fake mailer writes a mail in three steps: wait for the end of
	// the second.
	waitFor(t, "two mails", func() bool {
		b, _ := os.ReadFile(out)
		got = string(b)
		return strings.Count(got, "ARGS:") == 2 && strings.HasSuffix(got, "\n.\n")
	})
	if got != want {
		t.Errorf("mail\n got %q\nwant %q", got, want)
	}
	if m := expandMailFormat(`%i\t%j\\%x\"`, map[byte]string{'i': "1.vm", 'j': "n"}); m != "1.vm\tn\\%x\"" {
		t.Errorf("expand %q", m)
	}
}

func TestShutdownImmediateRequeuesRunningJobs(t *testing.T) {
	mom := newFakeMom(t)
	home := t.TempDir()
	s := runServerAt(t, home, InitCreate, mom, 0, nil)
	c := privConn(t, s)
	setupCluster(t, c)
	// a MOM without checkpoint support: the jobs (Checkpoint u) are
	// offered a checkpoint first (seed 001), then requeued or killed
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_HoldJob] = batchreq.PBSE_NOSUP
	mom.mu.Unlock()
	momsReported(s)
	rerun := submit(t, c, "rerunnable")
	kill := submit(t, c, "fixed", attr("Rerunable", "False"))
	for _, id := range []string{rerun, kill} {
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
			t.Fatalf("RunJob %s: %d", id, p.Code)
		}
		mom.next(batchreq.PBS_BATCH_Commit)
	}
	done := make(chan *batchreq.Reply, 1)
	go func() {
		done <- c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_IMMEDIATE}))
	}()
	signals := map[string]string{}
	for i := 0; i < 2; i++ {
		r := mom.next(batchreq.PBS_BATCH_SignalJob)
		sj := r.Body.(*batchreq.SignalJob)
		signals[sj.JobID] = sj.Signal + "/" + r.Extension
	}
	if signals[rerun] != "SIGKILL/rerun" || signals[kill] != "SIGKILL/" {
		t.Errorf("signals %v", signals)
	}
	momc := privConn(t, s)
	for _, id := range []string{rerun, kill} {
		if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: 265})); p.Code != 0 {
			t.Fatalf("obit %s: %d", id, p.Code)
		}
	}
	select {
	case p := <-done:
		if p.Code != 0 {
			t.Fatalf("shutdown: %d", p.Code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	<-s.Done()
	s = runServerAt(t, home, InitWarm, mom, 0, nil)
	momsReported(s)
	c = privConn(t, s)
	if st := jobAttr(t, c, rerun, "job_state"); st != "Q" {
		t.Errorf("rerunnable job after restart: %q", st)
	}
	if st := jobAttr(t, c, kill, "job_state"); st != "" {
		t.Errorf("killed job after restart: %q", st)
	}
}

func TestDeleteNannyAndForceCancel(t *testing.T) {
	mom := newFakeMom(t)
	s := runServerWith(t, mom, 0, func(s *Server) { s.run.nannyInterval = 100 * time.Millisecond })
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("job_nanny", "true"))); p.Code != 0 {
		t.Fatalf("job_nanny: %d", p.Code)
	}
	del := func(id string) {
		d := batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})
		d.SetExtension("deldelay=0")
		if p := c.do(d); p.Code != 0 {
			t.Fatalf("DeleteJob: %d", p.Code)
		}
	}
	run := func(name string) string {
		id := submit(t, c, name)
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
			t.Fatalf("RunJob: %d", p.Code)
		}
		mom.next(batchreq.PBS_BATCH_Commit)
		return id
	}
	id := run("stubborn")
	del(id)
	for _, want := range []string{"SIGTERM", "SIGKILL", "SIGKILL"} {
		if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != want {
			t.Fatalf("signal %q, want %q", sj.Signal, want)
		}
	}
	// the MOM no longer knows the job: the nanny purges it
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_SignalJob] = batchreq.PBSE_UNKJOBID
	mom.mu.Unlock()
	waitFor(t, "nanny purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_SignalJob)
	mom.mu.Unlock()

	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("job_nanny", "false"), attr("job_force_cancel_time", "1"))); p.Code != 0 {
		t.Fatalf("job_force_cancel_time: %d", p.Code)
	}
	id2 := run("hung")
	del(id2)
	waitFor(t, "forced purge", func() bool { return jobAttr(t, c, id2, "job_state") == "" })
	if got := nodeAttr(t, c, "jobs"); got != "" {
		t.Errorf("node jobs after purge %q", got)
	}
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	var all string
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		all += string(b)
	}
	for _, want := range []string{"exiting job '" + id + "' still exists, sending a SIGKILL", id2 + ";purging job without checking MOM"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// privConn connects to the server from a reserved port with
// SO_REUSEADDR, so that the many daemon connections of these tests do
// not use up the reserved ports while earlier ones sit in TIME_WAIT.
func privConn(t *testing.T, s *Server) *client {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a reserved source port")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := dialReserved(ctx, s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, r: dis.NewReader(nc)}
}

func TestDependentReleasedAtObit(t *testing.T) {
	mom := newFakeMom(t)
	mom.gating = true
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	parent := submit(t, c, "parent")
	child := submit(t, c, "child", attr("depend", "afterok:"+parent))
	if st := jobAttr(t, c, child, "job_state"); st != "H" {
		t.Fatalf("child before: %q", st)
	}
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: parent})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	if p := privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: parent})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	// the parent's files are still being delivered (the MOM holds the
	// end-of-job connection), yet the child is already released
	waitFor(t, "child released", func() bool { return jobAttr(t, c, child, "job_state") == "Q" })
	if st := jobAttr(t, c, parent, "job_state"); st != "E" {
		t.Errorf("parent %q", st)
	}
	mom.release(parent)
	waitFor(t, "parent gone", func() bool { return jobAttr(t, c, parent, "job_state") == "" })
	if st := jobAttr(t, c, child, "job_state"); st != "Q" {
		t.Errorf("child after: %q", st)
	}
}
