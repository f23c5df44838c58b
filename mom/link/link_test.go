package link

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
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

func dumpLogOnFailure(t *testing.T, tm *testMom) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("MOM log:\n%s", tm.log.String())
		}
	})
}
