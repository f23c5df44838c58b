package link

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/internal/momtest"
	"gopbs/mom/jobexec"
	"gopbs/mom/momd"
	"gopbs/mom/momlog"
	"gopbs/mom/procfs"
	"gopbs/momproto"
	"gopbs/rpp"
)

func TestMain(m *testing.M) {
	jobexec.RunStarterIfRequested()
	os.Exit(m.Run())
}

const testUser = "gopbsmomtest"

func requireRoot(t *testing.T) { t.Helper(); momtest.RequireRoot(t) }

// requireUser creates the throwaway job user when absent.
func requireUser(t *testing.T) *user.User { t.Helper(); return momtest.RequireUser(t, testUser) }

// fakeServer plays pbs_server towards the MOM: an RPP endpoint for IS and
// a TCP listener (same port number) for the MOM's pre-obit and obit.
type fakeServer struct {
	t    *testing.T
	ep   *rpp.Endpoint
	ln   net.Listener
	port int
	reqs chan serverReq
}

type serverReq struct {
	req  *batchreq.Request
	peer netip.AddrPort
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			ln.Close()
			continue
		}
		s := &fakeServer{t: t, ep: rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40}),
			ln: ln, port: port, reqs: make(chan serverReq, 16)}
		t.Cleanup(func() { s.ep.Close(); s.ln.Close() })
		return s
	}
	t.Fatal("no port free for both TCP and UDP")
	return nil
}

// serve answers the MOM's batch requests with answer(req), one request
// per connection as the MOM sends them.
func (s *fakeServer) serve(answer func(*batchreq.Request) *batchreq.Reply) {
	go func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := dis.NewReader(bufio.NewReader(c))
				for {
					req, err := batchreq.ReadServerRequest(r)
					if err != nil {
						return
					}
					peer, _ := netip.ParseAddrPort(c.RemoteAddr().String())
					s.reqs <- serverReq{req, peer}
					w := dis.NewWriter(c)
					answer(req).Encode(w)
					w.Flush()
				}
			}()
		}
	}()
}

type testMom struct {
	m      *Mom
	eng    *jobexec.Engine
	home   string
	batch  netip.AddrPort
	rmTCP  netip.AddrPort
	rmUDP  netip.AddrPort
	log    *momtest.SyncBuffer
	cancel context.CancelFunc
	done   chan struct{}
}

func listenTCP(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// startMom runs a Mom with a real execution engine in a temporary
// PBS_HOME on ephemeral loopback ports.
func startMom(t *testing.T, srv *fakeServer, cfgText string) *testMom {
	t.Helper()
	return startMomIn(t, srv, cfgText, openDir(t, "gopbs-mom-", nil), "none")
}

// openDir makes a directory that every user can reach (t.TempDir's parent
// is private), owned by owner when given; it is removed at the end of the
// test.
func openDir(t *testing.T, prefix string, owner *user.User) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		if err := os.Chown(dir, uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startMomIn starts a Mom whose PBS_HOME is base/torque; unless recover is
// "none" it first recovers the saved jobs in that mode.
func startMomIn(t *testing.T, srv *fakeServer, cfgText, base, recover string, tweaks ...func(*Options)) *testMom {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	tm := &testMom{home: filepath.Join(base, "torque"), log: &momtest.SyncBuffer{}, done: make(chan struct{})}
	logger := momlog.NewWriter(tm.log, "pbs_mom", logline.EventAll)
	uhome := filepath.Join(base, "home")
	os.MkdirAll(uhome, 0o755)
	if u, err := user.Lookup(testUser); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(uhome, uid, gid)
	}
	// Jobs are polled every 100 ms, unless the test configures a
	// $check_poll_time longer than the default: then that one.
	poll := 100 * time.Millisecond
	if cfg.CheckPollTime > config.DefaultCheckPollTime {
		poll = 0
	}
	tm.eng, err = jobexec.New(jobexec.Options{
		Home: tm.home, Host: "localhost", Config: cfg, Log: logger,
		Lookup: func(name, group string) (*jobexec.Credentials, error) {
			c, err := jobexec.LookupUser(name, group)
			if err == nil {
				c.Home = uhome
			}
			return c, err
		},
		PollInterval: poll, KillGrace: 200 * time.Millisecond,
		OnExit: func(ex jobexec.Exit) { tm.m.JobExited(ex) },
	})
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	serverPort := 0
	if srv != nil {
		servers = []string{fmt.Sprintf("127.0.0.1:%d", srv.port)}
		serverPort = srv.port
	}
	cfgFile := filepath.Join(tm.home, "mom_priv", "config")
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	mopt := Options{ConfigFile: cfgFile,
		Host: "localhost", Home: tm.home, Config: cfg, Log: logger, Exec: tm.eng,
		Servers: servers, ServerPort: serverPort, RPP: &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40},
		HelloStatusDelay: -1, ObitRetry: 200 * time.Millisecond,
	}
	for _, tw := range tweaks {
		tw(&mopt)
	}
	tm.m, err = New(mopt)
	if err != nil {
		t.Fatal(err)
	}
	if recover != "none" {
		mode, err := momd.ParseRestartMode(recover)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tm.m.Recover(context.Background(), mode); err != nil {
			t.Fatal(err)
		}
	}
	batch, rm := listenTCP(t), listenTCP(t)
	rpc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listeners{Batch: batch, RM: rm, RPP: rpc}
	if srv != nil {
		if l.Client, err = rpp.ListenReserved(netip.MustParseAddr("127.0.0.1")); err != nil {
			t.Fatal(err)
		}
	}
	tm.batch = batch.Addr().(*net.TCPAddr).AddrPort()
	tm.rmTCP = rm.Addr().(*net.TCPAddr).AddrPort()
	tm.rmUDP = rpc.LocalAddr().(*net.UDPAddr).AddrPort()
	ctx, cancel := context.WithCancel(context.Background())
	tm.cancel = cancel
	go func() {
		defer close(tm.done)
		tm.m.Serve(ctx, l)
	}()
	t.Cleanup(tm.stop)
	return tm
}

// stop ends the Mom's services; jobs keep running, as when pbs_mom exits.
func (tm *testMom) stop() {
	tm.cancel()
	<-tm.done
	tm.eng.Close()
}

// batchClient is the server's side of a launch connection.
type batchClient struct {
	t *testing.T
	c net.Conn
	r *dis.Reader
	w *dis.Writer
}

func dialBatch(t *testing.T, addr netip.AddrPort) *batchClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := DialReserved(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	t.Cleanup(func() { c.Close() })
	return &batchClient{t: t, c: c, r: dis.NewReader(bufio.NewReader(c)), w: dis.NewWriter(c)}
}

func (b *batchClient) do(reqType int, body batchreq.Body, ext string) *batchreq.Reply {
	b.t.Helper()
	req := batchreq.NewRequest(reqType, "PBS_Server", body)
	req.SetExtension(ext)
	req.Encode(b.w)
	if err := b.w.Flush(); err != nil {
		b.t.Fatal(err)
	}
	rep, err := batchreq.ReadReply(b.r)
	if err != nil {
		b.t.Fatalf("%s: %v", batchreq.RequestName(reqType), err)
	}
	return rep
}

func (b *batchClient) disconnect() {
	batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, "PBS_Server", nil).Encode(b.w)
	b.w.Flush()
	b.c.Close()
}

func jobAttrs(id, outDir string) batchreq.AttrList {
	return batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "t.sh"),
		batchreq.NewAttr("Job_Owner", testUser+"@localhost"),
		batchreq.NewAttr("queue", "batch"),
		batchreq.NewAttr("server", "localhost"),
		batchreq.NewAttr("Checkpoint", "u"),
		batchreq.NewAttr("Error_Path", "localhost:"+outDir+"/t.sh.e1"),
		batchreq.NewAttr("exec_host", "localhost/0"),
		batchreq.NewAttr("Join_Path", "n"),
		batchreq.NewAttr("Keep_Files", "n"),
		batchreq.NewAttr("Output_Path", "localhost:"+outDir+"/t.sh.o1"),
		batchreq.NewResourceAttr("Resource_List", "nodes", "1"),
		batchreq.NewResourceAttr("Resource_List", "walltime", "00:01:00"),
		batchreq.NewAttr("Variable_List", "PBS_O_QUEUE=batch,PBS_O_HOST=localhost,PBS_O_WORKDIR=/tmp"),
		batchreq.NewAttr("euser", testUser),
		batchreq.NewAttr("egroup", ""),
		batchreq.NewAttr("hashname", id),
		batchreq.NewAttr("fault_tolerant", "False"),
	}
}

// launch sends QueueJob … Commit on one connection, as the server's
// send-job child does (spec 10 §6.1).
func launch(t *testing.T, tm *testMom, id, script, outDir string) {
	t.Helper()
	b := dialBatch(t, tm.batch)
	check := func(rep *batchreq.Reply, choice int, what string) {
		t.Helper()
		if rep.Code != 0 || rep.Choice != choice {
			t.Fatalf("%s reply: code %d choice %d text %q", what, rep.Code, rep.Choice, rep.Text)
		}
	}
	rep := b.do(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: id, Destination: "localhost", Attrs: jobAttrs(id, outDir)}, "")
	check(rep, batchreq.BATCH_REPLY_CHOICE_Queue, "QueueJob")
	if rep.JobID != id {
		t.Fatalf("QueueJob reply job id %q", rep.JobID)
	}
	check(b.do(batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{JobID: id, Data: []byte(script)}, ""),
		batchreq.BATCH_REPLY_CHOICE_NULL, "JobScript")
	check(b.do(batchreq.PBS_BATCH_RdytoCommit, &batchreq.JobID{ID: id}, ""), batchreq.BATCH_REPLY_CHOICE_RdytoCommit, "RdytoCommit")
	check(b.do(batchreq.PBS_BATCH_Commit, &batchreq.JobID{ID: id}, ""), batchreq.BATCH_REPLY_CHOICE_Commit, "Commit")
	b.disconnect()
}

func nextReq(t *testing.T, s *fakeServer, want int) serverReq {
	t.Helper()
	select {
	case r := <-s.reqs:
		if r.req.Type != want {
			t.Fatalf("server got %s, want %s", batchreq.RequestName(r.req.Type), batchreq.RequestName(want))
		}
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s from MOM", batchreq.RequestName(want))
	}
	return serverReq{}
}

// TestJobLifecycle runs a job through a MOM as pbs_server drives it:
// IS hello and status, launch, status poll, obit, stage-out, delete.
func TestJobLifecycle(t *testing.T) {
	u := requireUser(t)
	srv := newFakeServer(t)
	srv.serve(func(req *batchreq.Request) *batchreq.Reply {
		switch req.Type {
		case batchreq.PBS_BATCH_StatusJob:
			return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{{
				ObjType: batchreq.MGR_OBJ_JOB, Name: req.Body.(*batchreq.StatusReq).ID,
				Attrs: batchreq.AttrList{batchreq.NewAttr("exec_host", "localhost/0")}}}}
		}
		return batchreq.NullReply()
	})
	tm := startMom(t, srv, "$status_update_time 1\n")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// IS: the MOM opens a stream from a privileged port and says hello.
	is, status := acceptIS(t, ctx, srv.ep)
	if is.RemoteAddr().Port() >= 1024 {
		t.Errorf("IS stream from port %d, want a privileged port", is.RemoteAddr().Port())
	}
	for _, want := range []string{"opsys=linux", "state=free", "jobs= ", "varattr= ", "gres="} {
		if !contains(status, want) {
			t.Errorf("IS_STATUS lacks %q: %q", want, status)
		}
	}
	if !hasPrefix(status, "uname=") || !hasPrefix(status, "ncpus=") || !hasPrefix(status, "physmem=") {
		t.Errorf("IS_STATUS incomplete: %q", status)
	}

	outDir := openDir(t, "gopbs-out-", u)

	id := "1.testserver"
	launch(t, tm, id, "echo hello from $PBS_JOBID\nsleep 1\nexit 3\n", outDir)

	// First poll: session_id only (spec 10 §7).
	b := dialBatch(t, tm.batch)
	rep := b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	if rep.Code != 0 || len(rep.Status) != 1 || len(rep.Status[0].Attrs) == 0 {
		t.Fatalf("first StatusJob reply %+v", rep)
	}
	if a := rep.Status[0].Attrs; a[len(a)-1].Name != "session_id" || (len(a) != 1 && len(a) != 5) {
		t.Errorf("first StatusJob reply carries %+v; want session_id, after resources_used if sampled", a)
	}
	rep = b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	if _, again := rep.Status[0].Attrs.Get("session_id"); again {
		t.Errorf("session_id reported twice")
	}
	rep = b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: "99.nosuch"}, "")
	if rep.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("StatusJob of unknown job: code %d", rep.Code)
	}
	b.disconnect()

	// The job's jobs= status item names it.
	status = recvStatus(t, ctx, is)
	if !contains(status, "jobs="+id) {
		t.Errorf("IS_STATUS while running lacks jobs=%s: %q", id, status)
	}

	// End of job: pre-obit StatusJob, then JobObit, both from privileged
	// ports with user pbs_mom.
	pre := nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	if pre.req.User != "pbs_mom" || pre.peer.Port() >= 1024 {
		t.Errorf("pre-obit from %s port %d", pre.req.User, pre.peer.Port())
	}
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit)
	ob := obit.req.Body.(*batchreq.JobObit)
	if ob.JobID != id || ob.ExitStatus != 3 {
		t.Errorf("obit %+v, want exit 3", ob)
	}
	var names []string
	for _, a := range ob.Attrs {
		names = append(names, a.FullName())
	}
	if got := strings.Join(names, ","); got != "resources_used.cput,resources_used.mem,resources_used.vmem,resources_used.walltime" {
		t.Errorf("obit attributes %s", got)
	}

	// Stage-out of stdout/stderr and delete, on one connection (captures 58, 73).
	b = dialBatch(t, tm.batch)
	rep = b.do(batchreq.PBS_BATCH_CopyFiles, &batchreq.CopyFiles{JobID: id, Owner: testUser, ExecUser: testUser,
		Direction: batchreq.STAGE_DIR_OUT, Pairs: []batchreq.FilePair{
			{Flag: batchreq.STDJOBFILE, Local: id + ".OU", Remote: "localhost:" + outDir + "/t.sh.o1"},
			{Flag: batchreq.STDJOBFILE, Local: id + ".ER", Remote: "localhost:" + outDir + "/t.sh.e1"},
		}}, "")
	if rep.Code != 0 {
		t.Fatalf("CopyFiles: code %d %q", rep.Code, rep.Text)
	}
	out, err := os.ReadFile(filepath.Join(outDir, "t.sh.o1"))
	if err != nil || string(out) != "hello from "+id+"\n" {
		t.Errorf("delivered stdout %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(tm.home, "spool", id+".OU")); err == nil {
		t.Error("spool file left after delivery")
	}
	rep = b.do(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
	if rep.Code != 0 {
		t.Fatalf("DeleteJob: code %d", rep.Code)
	}
	rep = b.do(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
	if rep.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("second DeleteJob: code %d", rep.Code)
	}
	b.disconnect()
	if _, err := os.Stat(filepath.Join(tm.home, "mom_priv", "jobs", id+".SC")); err == nil {
		t.Error("job script left after DeleteJob")
	}
	// Log lines with the events and classes of the captured mom_logs.
	waitLog(t, tm,
		";0002;   pbs_mom;n/a;mom_server_check_connection;sending hello to server 127.0.0.1\n",
		";0080;   pbs_mom;Svr;preobit_reply;top of preobit_reply\n",
		";0080;   pbs_mom;Svr;preobit_reply;DIS_reply_read/decode_DIS_replySvr worked, top of while loop\n",
		";0080;   pbs_mom;Svr;preobit_reply;in while loop, no error from job stat\n",
		";0080;   pbs_mom;Job;"+id+";obit sent to server\n")
}

// waitLog waits until the MOM log holds the given pieces in this order.
func waitLog(t *testing.T, tm *testMom, pieces ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		log, i := tm.log.String(), 0
		for _, p := range pieces {
			k := strings.Index(log, p)
			if k < 0 {
				break
			}
			log, i = log[k+len(p):], i+1
		}
		if i == len(pieces) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("MOM log lacks %q (in this order after %d pieces):\n%s", pieces[i], i, tm.log.String())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestModifyWalltime: qalter -l walltime on a running job reaches the
// execution engine, which enforces the new limit; a bad value is refused
// and changes nothing.
func TestModifyWalltime(t *testing.T) {
	requireUser(t)
	srv, tm := startWithServer(t)
	id := "8.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	modify := func(walltime string) int {
		b := dialBatch(t, tm.batch)
		defer b.disconnect()
		return b.do(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
			Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", walltime)}}, "").Code
	}
	if code := modify("bad:x"); code != batchreq.PBSE_BADATVAL {
		t.Errorf("ModifyJob walltime=bad:x: code %d, want PBSE_BADATVAL", code)
	}
	if code := modify("00:00:01"); code != 0 {
		t.Fatalf("ModifyJob walltime=00:00:01: code %d", code)
	}
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != jobexec.JOB_EXEC_OVERLIMIT {
		t.Errorf("obit exit status %d, want JOB_EXEC_OVERLIMIT (%d)", obit.ExitStatus, jobexec.JOB_EXEC_OVERLIMIT)
	}
	// The comment names the limit.
	if c, _ := obit.Attrs.Get("comment"); !strings.HasPrefix(c, "job killed: walltime ") || !strings.HasSuffix(c, " exceeded limit 1") {
		t.Errorf("obit comment %q", c)
	}
}

// TestObitFailureLogged: when the server cannot be reached for the
// pre-obit, the MOM logs the system error in scan_for_exiting as TORQUE
// does ("LOG_ERROR::<strerror> (<errno>) in scan_for_exiting, ") and
// tries again.
func TestObitFailureLogged(t *testing.T) {
	requireUser(t)
	srv := newFakeServer(t)
	srv.ln.Close() // connections to the server are refused
	tm := startMom(t, srv, "")
	dumpLogOnFailure(t, tm)
	launch(t, tm, "9.testserver", "exit 0\n", os.TempDir())
	line := ";0001;   pbs_mom;Svr;pbs_mom;LOG_ERROR::Connection refused (111) in scan_for_exiting, \n"
	waitLog(t, tm, line, line) // and again at the retry
}

// startWithServer starts a MOM reporting to a fake server that accepts
// everything (acceptAll).
func startWithServer(t *testing.T) (*fakeServer, *testMom) {
	t.Helper()
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	tm := startMom(t, srv, "")
	dumpLogOnFailure(t, tm)
	return srv, tm
}

// acceptAll answers the MOM's requests as a server that knows no job
// details: an empty status for StatusJob (the pre-obit), else success.
func acceptAll(req *batchreq.Request) *batchreq.Reply {
	if req.Type == batchreq.PBS_BATCH_StatusJob {
		return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{}}
	}
	return batchreq.NullReply()
}

// TestSignalAndDelete covers qdel of a running job: SIGTERM, obit with
// 256+15, and the error replies of requests MOM does not support.
func TestSignalAndDelete(t *testing.T) {
	requireUser(t)
	srv, tm := startWithServer(t)
	id := "2.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	b := dialBatch(t, tm.batch)
	for _, tc := range []struct {
		typ  int
		body batchreq.Body
		code int
	}{
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGBOGUS"}, batchreq.PBSE_UNKSIG},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: "7.x", Signal: "SIGTERM"}, batchreq.PBSE_UNKJOBID},
		{batchreq.PBS_BATCH_CheckpointJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, batchreq.PBSE_NOSUP},
		{batchreq.PBS_BATCH_HoldJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, batchreq.PBSE_NOSUP},
		{batchreq.PBS_BATCH_MessJob, &batchreq.MessJob{JobID: id, FileOpt: batchreq.MSG_ERR, Message: "note"}, 0},
		{batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
			Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", "00:02:00")}}, 0},
		{batchreq.PBS_BATCH_Shutdown, &batchreq.Shutdown{}, batchreq.PBSE_NOSUP},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "suspend"}, 0},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "resume"}, 0},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGTERM"}, 0},
	} {
		if rep := b.do(tc.typ, tc.body, ""); rep.Code != tc.code {
			t.Errorf("%s: code %d, want %d", batchreq.RequestName(tc.typ), rep.Code, tc.code)
		}
	}
	b.disconnect()
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != 256+15 {
		t.Errorf("obit exit status %d, want 271", obit.ExitStatus)
	}
	if b, err := os.ReadFile(filepath.Join(tm.home, "spool", id+".ER")); err != nil || !strings.Contains(string(b), "note\n") {
		t.Errorf("MessJob text not in stderr spool: %q %v", b, err)
	}
}

// tcpExchange connects to addr (from a privileged port when reserved),
// sends msg and returns the answer: what one read returns, or with all
// everything until the MOM closes the connection (at most 5 s).
func tcpExchange(t *testing.T, ctx context.Context, addr netip.AddrPort, reserved bool, msg []byte, all bool) []byte {
	t.Helper()
	var c net.Conn
	var err error
	if reserved {
		c, err = DialReserved(ctx, addr)
	} else {
		c, err = net.Dial("tcp", addr.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(msg)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if all {
		b, _ := io.ReadAll(c)
		return b
	}
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	return buf[:n]
}

// acceptIS accepts the MOM's IS stream at ep, expects its IS_HELLO,
// answers with IS_CLUSTER_ADDRS (127.0.0.1) and returns the stream and
// the first status.
func acceptIS(t *testing.T, ctx context.Context, ep *rpp.Endpoint) (*rpp.Stream, []string) {
	t.Helper()
	is, err := ep.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectHello(t, ctx, is)
	is.Send([]byte("+4+1+2210+2130706433")) // IS_CLUSTER_ADDRS 127.0.0.1
	return is, recvStatus(t, ctx, is)
}

// expectHello checks that the next message on s is IS_HELLO.
func expectHello(t *testing.T, ctx context.Context, s *rpp.Stream) {
	t.Helper()
	if b, err := s.Recv(ctx); err != nil || string(b) != "+4+1+1" {
		t.Fatalf("IS message %q, %v; want IS_HELLO", b, err)
	}
}

func recvStatus(t *testing.T, ctx context.Context, s *rpp.Stream) []string {
	t.Helper()
	for {
		b, err := s.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := momproto.DecodeIS(b)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Command == momproto.IS_STATUS {
			return msg.Status
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func hasPrefix(l []string, p string) bool {
	for _, x := range l {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

// rmQuery sends one RM request over RPP from a privileged port.
func rmQuery(t *testing.T, addr netip.AddrPort, lines ...string) []string {
	t.Helper()
	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40})
	defer ep.Close()
	s, _ := ep.Open(addr)
	s.Send((&momproto.RMRequest{Version: 1, Command: momproto.RM_CMD_REQUEST, Lines: lines}).Append(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := momproto.DecodeRMReply(b)
	if err != nil || rep.Code != momproto.RM_RSP_OK {
		t.Fatalf("RM reply %q: %v", b, err)
	}
	s.Send((&momproto.RMRequest{Version: 1, Command: momproto.RM_CMD_CLOSE}).Append(nil))
	s.Flush(ctx)
	s.Close()
	return rep.Answers
}

func TestRM(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "$status_update_time 45\nmax_load 99\n")
	dumpLogOnFailure(t, tm)
	got := rmQuery(t, tm.rmUDP, "ncpus", "arch", "physmem", "loadave", "max_load", "ideal_load", "bogusname",
		"version", "status_update_time", "jobstartblocktime", "cycle", "configversion")
	want := []string{"ncpus=", "arch=linux", "physmem=", "loadave=", "max_load=99", "ideal_load=? 15201",
		"bogusname=? 15201", "version=2.5.13", "status_update_time=45", "jobstartblocktime=5", "cycle forced",
		"configversion=? 15201"}
	if len(got) != len(want) {
		t.Fatalf("answers %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("answer %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	diag := rmQuery(t, tm.rmUDP, "diag3")[0]
	for _, want := range []string{"\nHost: localhost/localhost   Version: 2.5.13   PID: ", "Communication Model:    RPP\n",
		"NOTE:  no local jobs detected\n", "\ndiagnostics complete\n"} {
		if !strings.Contains(diag, want) {
			t.Errorf("diag3 lacks %q:\n%s", want, diag)
		}
	}
	waitLog(t, tm, ";0002;   pbs_mom;n/a;rm_request;reporting cycle forced\n",
		";0002;   pbs_mom;n/a;rm_request;internal diagnostics complete\n")

	// RM over TCP from a privileged port.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reply := tcpExchange(t, ctx, tm.rmTCP, true, []byte("+1+1+2+7loadave+5ncpus"), false)
	rep, err := momproto.DecodeRMReply(reply)
	if err != nil || len(rep.Answers) != 2 || !strings.HasPrefix(rep.Answers[1], "ncpus=") {
		t.Errorf("TCP RM reply %q: %v", reply, err)
	}

	// RM_CMD_CONFIG is refused (connection closed) without $remote_reconfig.
	if b := tcpExchange(t, ctx, tm.rmTCP, true, []byte("+1+1+3+15CONFIG:$logevent"), true); len(b) != 0 {
		t.Errorf("RM_CMD_CONFIG answered %q without $remote_reconfig", b)
	}

	// TM for a job this MOM does not have: TM_ERROR / TM_ENOTFOUND.
	tmReply := tcpExchange(t, ctx, tm.rmTCP, false, []byte("+2+1+4x.vm+3abc3+100+7+0"), true)
	if string(tmReply) != "+2+13+999+75+17006" {
		t.Errorf("TM_INIT reply %q, want TM_ERROR 17006 for event 7", tmReply)
	}

	// From an unprivileged port: closed without a reply.
	if b := tcpExchange(t, ctx, tm.rmTCP, false, []byte("+1+1+2+7loadave"), true); len(b) != 0 {
		t.Errorf("unprivileged RM request answered: %q", b)
	}
	if !strings.Contains(tm.log.String(), "bad attempt to connect - unauthorized (port: ") {
		t.Error("unauthorised attempt not logged")
	}
}

// TestGarbage sends random bytes to every port; the MOM must keep
// answering.
func TestGarbage(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "")
	rng := rand.New(rand.NewPCG(42, 7))
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	samples := [][]byte{[]byte("+2+1+1"), []byte("+2+1+12+10PBS_Server+99999999999999999999"), []byte("+1+1+2"),
		[]byte("+2+1+1+0+0+0+999999999"), []byte("GET / HTTP/1.0\r\n\r\n"), {0xff, 0, 0xfe}}
	for range 30 {
		samples = append(samples, junk(rng.IntN(3000)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, addr := range []netip.AddrPort{tm.batch, tm.rmTCP} {
		for _, s := range samples {
			c, err := DialReserved(ctx, addr)
			if err != nil {
				t.Fatal(err)
			}
			c.Write(s)
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			c.Read(make([]byte, 100))
			c.Close()
		}
	}
	u, err := net.Dial("udp", tm.rmUDP.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		u.Write(s)
	}
	// Valid RPP framing around garbage messages.
	for _, s := range samples {
		pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
		ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 20 * time.Millisecond, Retry: 5})
		st, _ := ep.Open(tm.rmUDP)
		st.Send(s)
		st.Flush(ctx)
		ep.Close()
	}
	u.Close()
	if got := rmQuery(t, tm.rmUDP, "version"); len(got) != 1 || got[0] != "version=2.5.13" {
		t.Fatalf("after garbage: %q", got)
	}
	b := dialBatch(t, tm.batch)
	if rep := b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{}, ""); rep.Code != 0 || rep.Choice != batchreq.BATCH_REPLY_CHOICE_Status {
		t.Fatalf("after garbage: StatusJob reply %+v", rep)
	}
}

func dumpLogOnFailure(t *testing.T, tm *testMom) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("MOM log:\n%s", tm.log.String())
		}
	})
}

// TestRecover restarts a MOM under a running job: mode -p (also the
// default, "") re-attaches it with its original start time; -r kills it
// and -q leaves it running, both reporting it aborted (JOB_EXEC_INITABT).
func TestRecover(t *testing.T) {
	requireUser(t)
	for _, mode := range []string{"", "p", "q", "r"} {
		t.Run("mode="+mode, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.serve(acceptAll)
			base := openDir(t, "gopbs-mom-", nil)
			first := startMomIn(t, srv, "", base, "none")
			id := "3.testserver"
			launch(t, first, id, "exec sleep 60\n", os.TempDir())
			st, err := first.eng.Status(id)
			if err != nil || st.SessionID == 0 {
				t.Fatalf("job not running: %+v %v", st, err)
			}
			sid := st.SessionID
			first.stop()
			// The job started 30 s ago as far as the restarted MOM can
			// tell (no start_time attribute: the job file's stime).
			started := time.Now().Add(-30 * time.Second).Truncate(time.Second)
			jb := filepath.Join(first.home, "mom_priv", "jobs", id+".JB")
			setStime(t, jb, started)
			adopt := mode == "" || mode == "p"
			saved, err := loadJob(jb)
			if err != nil || len(saved.spec.Cookie) != 32 {
				t.Fatalf("job file cookie %q: %v", saved.spec.Cookie, err)
			}

			second := startMomIn(t, srv, "", base, mode)
			dumpLogOnFailure(t, second)
			if adopt {
				// TM still works: the cookie came back from the job file.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				req := &momproto.TMRequest{Version: momproto.TM_PROTOCOL_VER, JobID: id, Cookie: saved.spec.Cookie,
					Command: momproto.TM_INIT, Event: 3, FromTask: 1, Body: momproto.Empty{}}
				tmb := tcpExchange(t, ctx, second.rmTCP, false, req.Append(nil), false)
				cancel()
				if rep, _, err := momproto.DecodeTMReply(tmb, func(int) int { return momproto.TM_INIT }); err != nil || rep.Code != momproto.TM_OKAY {
					t.Errorf("TM_INIT after restart: %q (%v)", tmb, err)
				}
				if st, err := second.eng.Status(id); err != nil || !st.Started.Equal(started) {
					t.Errorf("re-attached job started %v (%v), want %v", st.Started, err, started)
				}
				b := dialBatch(t, second.batch)
				rep := b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
				if rep.Code != 0 || len(rep.Status) != 1 {
					t.Fatalf("recovered job not reported running: %+v", rep)
				}
				if rep := b.do(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGKILL"}, ""); rep.Code != 0 {
					t.Fatalf("SIGKILL of recovered job: code %d", rep.Code)
				}
				b.disconnect()
			}
			nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
			obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
			if !adopt && obit.ExitStatus != jobexec.JOB_EXEC_INITABT {
				t.Errorf("obit exit status %d, want %d", obit.ExitStatus, jobexec.JOB_EXEC_INITABT)
			}
			if mode == "q" {
				// The processes were left running: check, then end them.
				if syscall.Kill(sid, 0) != nil {
					t.Error("-q killed the job's processes")
				}
				syscall.Kill(-sid, syscall.SIGKILL)
			}
			if mode == "r" && !gone(sid) {
				syscall.Kill(-sid, syscall.SIGKILL)
				t.Error("-r left the job's processes running")
			}
		})
	}
}

// gone waits up to 5 s for a process to end (a zombie counts as ended:
// the test process, not the MOM, would have to reap it).
func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if p, err := procfs.ParseStat(stat); err == nil && p.State == 'Z' {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// TestStartTime: a recovered job's start is its start_time attribute,
// else the job file's modification time.
func TestStartTime(t *testing.T) {
	file := filepath.Join(t.TempDir(), "1.x.JB")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1700000000, 0)
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		attrs batchreq.AttrList
		want  time.Time
	}{
		{batchreq.AttrList{batchreq.NewAttr("start_time", "1763780000")}, time.Unix(1763780000, 0)},
		{batchreq.AttrList{batchreq.NewAttr("start_time", "bogus")}, mtime},
		{nil, mtime},
	} {
		j := &job{attrs: tc.attrs}
		if got := j.startTime(file); !got.Equal(tc.want) {
			t.Errorf("startTime with %v = %v, want %v", tc.attrs, got, tc.want)
		}
	}
}

// TestHealthCheck: a node check script reporting ERROR puts its line in
// the status message, reports state=down with $down_on_error, and makes
// QueueJob fail when the check runs at job start.
func TestHealthCheck(t *testing.T) {
	requireRoot(t)
	script := filepath.Join(t.TempDir(), "check.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho all good\necho ERROR disk full\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := newFakeServer(t)
	tm := startMom(t, srv, "$node_check_script "+script+"\n$node_check_interval 1,jobstart\n$down_on_error true\n$status_update_time 1\n")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, status := acceptIS(t, ctx, srv.ep)
	if !contains(status, "message=ERROR disk full") || !contains(status, "state=down") {
		t.Errorf("status %q lacks the health check's message and state=down", status)
	}
	b := dialBatch(t, tm.batch)
	rep := b.do(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: "5.x", Destination: "localhost", Attrs: jobAttrs("5.x", "/tmp")}, "")
	if rep.Code != batchreq.PBSE_MOMREJECT {
		t.Errorf("QueueJob on a failing node: code %d, want PBSE_MOMREJECT", rep.Code)
	}
}

// TestReconfig: with $remote_reconfig, RM_CMD_CONFIG rewrites the config
// file and the new values are in force.
func TestReconfig(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "$remote_reconfig true\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	text := "CONFIG:$remote_reconfig true\n$status_update_time 77\n"
	req := (&momproto.RMRequest{Version: 1, Command: momproto.RM_CMD_CONFIG, Lines: []string{text}}).Append(nil)
	if b := tcpExchange(t, ctx, tm.rmTCP, true, req, false); string(b) != "3+100" {
		t.Fatalf("RM_CMD_CONFIG reply %q, want RM_RSP_OK", b)
	}
	if got := rmQuery(t, tm.rmUDP, "status_update_time"); got[0] != "status_update_time=77" {
		t.Errorf("after reconfig: %q", got)
	}
}

// TestRerunAndDelFiles: Rerun sends the spooled stdout and stderr back to
// the server with MvJobFile and removes them; DelFiles removes files as
// the job's user.
func TestRerunAndDelFiles(t *testing.T) {
	u := requireUser(t)
	srv, tm := startWithServer(t)
	id := "4.testserver"
	launch(t, tm, id, "echo out\necho err >&2\n", os.TempDir())
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	nextReq(t, srv, batchreq.PBS_BATCH_JobObit)

	b := dialBatch(t, tm.batch)
	if rep := b.do(batchreq.PBS_BATCH_Rerun, &batchreq.JobID{ID: id}, ""); rep.Code != 0 {
		t.Fatalf("Rerun: code %d %q", rep.Code, rep.Text)
	}
	for _, want := range []struct {
		typ  int
		data string
	}{{batchreq.StdOut, "out\n"}, {batchreq.StdErr, "err\n"}} {
		f := nextReq(t, srv, batchreq.PBS_BATCH_MvJobFile).req.Body.(*batchreq.JobFile)
		if f.JobID != id || f.FileType != want.typ || string(f.Data) != want.data || f.Seq != 0 {
			t.Errorf("MvJobFile %+v, want type %d data %q", f, want.typ, want.data)
		}
	}
	for _, suffix := range []string{".OU", ".ER"} {
		if _, err := os.Stat(filepath.Join(tm.home, "spool", id+suffix)); err == nil {
			t.Errorf("spool file %s left after Rerun", suffix)
		}
	}

	dir := openDir(t, "gopbs-delfiles-", u)
	uid, _ := strconv.Atoi(u.Uid)
	victim := filepath.Join(dir, "stagein.dat")
	os.WriteFile(victim, []byte("x"), 0o644)
	os.Chown(victim, uid, -1)
	rep := b.do(batchreq.PBS_BATCH_DelFiles, &batchreq.CopyFiles{JobID: id, Owner: testUser, ExecUser: testUser,
		Direction: batchreq.STAGE_DIR_IN, Pairs: []batchreq.FilePair{{Flag: batchreq.STAGEFILE, Local: victim, Remote: "localhost:/nowhere"}}}, "")
	if rep.Code != 0 {
		t.Errorf("DelFiles: code %d %q", rep.Code, rep.Text)
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("DelFiles left the file")
	}
	b.disconnect()
}

// TestIMUnknownJob: an IM request for a job this MOM has not joined is
// answered with IM_ERROR / PBSE_UNKJOBID.
func TestIMUnknownJob(t *testing.T) {
	requireRoot(t)
	tm := startMom(t, nil, "")
	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond})
	defer ep.Close()
	s, _ := ep.Open(tm.rmUDP)
	req := &momproto.IMMessage{IMHeader: momproto.IMHeader{Version: momproto.IM_PROTOCOL_VER, JobID: "7.vm",
		Cookie: "0123456789ABCDEF0123456789ABCDEF", Command: momproto.IM_KILL_JOB, Event: 5, FromTask: 1}, Body: momproto.Empty{}}
	s.Send(req.Append(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := momproto.DecodeIM(b, func(*momproto.IMHeader) int { return momproto.IM_KILL_JOB })
	if err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	ints, _ := rep.Body.(*momproto.Ints)
	if rep.Command != momproto.IM_ERROR || rep.JobID != "7.vm" || rep.Event != 5 || ints == nil || len(ints.Values) != 1 || ints.Values[0] != batchreq.PBSE_UNKJOBID {
		t.Errorf("reply %+v body %+v", rep, rep.Body)
	}
}

// TestShutdownGoodbye: a MOM that stops says GOODBYE on its IS stream
// (capture 103) and waits for the server's.
func TestShutdownGoodbye(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	stopped := make(chan struct{})
	go func() { tm.stop(); close(stopped) }()
	for {
		if _, err := is.Recv(ctx); err != nil {
			if err != io.EOF {
				t.Fatalf("IS stream ended with %v, want the MOM's GOODBYE", err)
			}
			break
		}
	}
	select {
	case <-is.Done(): // our GOODBYE was acknowledged too
	case <-ctx.Done():
		t.Fatal("GOODBYE exchange not completed")
	}
	<-stopped
}

// TestServerGoodbye: when the server closes the IS stream (qterm), the MOM
// logs the end of file as TORQUE does and says hello on a new stream.
func TestServerGoodbye(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	is.Close()
	again, err := srv.ep.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectHello(t, ctx, again)
	waitLog(t, tm, ";0002;   pbs_mom;n/a;mom_server_check_connection;sending hello to server 127.0.0.1\n",
		fmt.Sprintf(";0002;   pbs_mom;Svr;im_eof;End of File from addr 127.0.0.1:%d\n", srv.port),
		";0002;   pbs_mom;n/a;mom_server_check_connection;sending hello to server 127.0.0.1\n")
}

// TestServerRestartPing: a restarted server that pings the MOM with
// IS_HELLO on a stream of its own gets IS_HELLO back and then the status
// on that stream, without a second stream from the MOM.
func TestServerRestartPing(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	acceptIS(t, ctx, srv.ep)

	// The server process dies without GOODBYE and a new one starts on
	// the same port.
	srv.ep.Close()
	pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", srv.port))
	if err != nil {
		t.Skipf("cannot rebind the server port: %v", err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40})
	defer ep.Close()
	ping, _ := ep.Open(tm.rmUDP)
	ping.Send([]byte("+4+1+1")) // IS_HELLO
	expectHello(t, ctx, ping)
	ping.Send([]byte("+4+1+2210+2130706433"))
	status := recvStatus(t, ctx, ping)
	if !contains(status, "opsys=linux") {
		t.Errorf("status on the ping stream: %q", status)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if s, err := ep.Accept(short); err == nil {
		t.Errorf("the MOM opened a second stream from %v", s.RemoteAddr())
	}
}

// TestISReopenWhenDead: when nothing is acknowledged on the IS stream for
// twice status_update_time (the server died without GOODBYE), the MOM
// opens a new stream, long before the RPP retries run out.
func TestISReopenWhenDead(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	base := openDir(t, "gopbs-mom-", nil)
	startMomIn(t, srv, "$status_update_time 1\n", base, "none", func(o *Options) {
		o.RPP = &rpp.Options{Timeout: 100 * time.Millisecond, Retry: 10000} // never stale by retries here
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	acceptIS(t, ctx, srv.ep)
	srv.ep.Close() // the server dies
	pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", srv.port))
	if err != nil {
		t.Skipf("cannot rebind the server port: %v", err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 100 * time.Millisecond})
	defer ep.Close()
	began := time.Now()
	second, err := ep.Accept(ctx)
	if err != nil {
		t.Fatalf("no new IS stream: %v", err)
	}
	expectHello(t, ctx, second)
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("reopened after %v", d)
	}
}

// TestRefusedISBacksOff: a server that closes the IS stream at once,
// without a word (this node is not in its node list), is retried with
// back-off, never in a tight loop.
func TestRefusedISBacksOff(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	startMom(t, srv, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	opened := 0
	for {
		st, err := srv.ep.Accept(ctx)
		if err != nil {
			break
		}
		opened++
		st.Close()
	}
	if opened == 0 {
		t.Fatal("the MOM never opened its IS stream")
	}
	// Attempts at 0 s and after 2 s of back-off fit in the 3 s window; a
	// retry loop would open hundreds.
	if opened > 3 {
		t.Fatalf("the MOM opened %d IS streams in 3 s to a server that refuses them", opened)
	}
}

// TestLimitPollFollowsStatus: the usage poll comes right after each
// IS_STATUS, as TORQUE's does (capture 96: the IS_STATUS at 02:35:57.2, the
// job killed for "walltime 9 exceeded limit 5" in the same second). The
// engine's own poll interval ($check_poll_time 3600) never comes, so only
// the status cycle can kill the job. The periodic statuses count from the
// one after the hello (captures 102, 103).
func TestLimitPollFollowsStatus(t *testing.T) {
	requireUser(t)
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	tm := startMomIn(t, srv, "$status_update_time 2\n$check_poll_time 3600\n", openDir(t, "gopbs-mom-", nil), "none",
		func(o *Options) { o.HelloStatusDelay = time.Second })
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	first := time.Now()

	id := "31.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	b := dialBatch(t, tm.batch)
	if rep := b.do(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", "00:00:01")}}, ""); rep.Code != 0 {
		t.Fatalf("ModifyJob walltime=00:00:01: code %d", rep.Code)
	}
	b.disconnect()

	recvStatus(t, ctx, is)
	if gap := time.Since(first); gap < 1800*time.Millisecond {
		t.Errorf("periodic IS_STATUS %v after the one that followed the hello, want 2 s", gap)
	}
	// Walltime 1 or 2 at this status's poll (whole clock seconds): the
	// job is killed at this poll or the next status's.
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != jobexec.JOB_EXEC_OVERLIMIT {
		t.Errorf("obit exit status %d, want JOB_EXEC_OVERLIMIT", obit.ExitStatus)
	}
	if d := time.Since(first); d > 7*time.Second {
		t.Errorf("job killed %v after the first status, want at the second or third (2 s apart)", d)
	}
	waitLog(t, tm, ";0008;   pbs_mom;Job;"+id+";walltime ", " exceeded limit 1\n")
}
