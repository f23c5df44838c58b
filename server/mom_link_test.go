package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	momlink "gopbs/server/link/mom"
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
	s.run.Resolve = func(host string) []netip.Addr {
		if host == "vm" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		}
		return momlink.ResolveAddr(host)
	}
	if mom != nil {
		s.run.Dial = func(ctx context.Context, host string) (net.Conn, error) {
			if host != "vm" && host != "vm2" {
				return nil, errors.New("unknown MOM host " + host)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", mom.ln.Addr().String())
		}
	}
	s.mailer.Program = "true" // never send real mail from tests
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
