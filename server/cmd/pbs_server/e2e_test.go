package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
	"gopbs/server/store"
)

// The end-to-end suite starts pbs_server as a process in a temporary
// PBS_HOME on an ephemeral loopback port, authenticates through the real
// setuid-root pbs_iff (as root and as an unprivileged user), and checks
// shutdown, warm restart and crash safety.

const e2eUser = "gopbse2e"

// build compiles pbs_server and pbs_iff once per test binary; pbs_iff is
// made setuid root.
func build(t *testing.T) e2e.Programs {
	t.Helper()
	e2e.RequireRoot(t, "end-to-end tests use a setuid pbs_iff, reserved ports and a test user")
	return e2e.Build(t, "pbs_server", "pbs_iff")
}

// testUser returns the uid/gid of the unprivileged test user, creating it
// when absent.
func testUser(t *testing.T) (uint32, uint32) {
	t.Helper()
	u := e2e.User(t, e2eUser)
	return uint32(u.UID), uint32(u.GID)
}

type serverProc struct {
	t *testing.T
	*e2e.Daemon
}

func startServer(t *testing.T, b e2e.Programs, home string, port int, init string) *serverProc {
	t.Helper()
	cmd := exec.Command(b.Path("pbs_server"), "-D", "-f", "-t", init, "-d", home, "-p", strconv.Itoa(port), "-H", "localhost")
	d := &serverProc{t: t, Daemon: e2e.Start(t, "pbs_server", cmd)}
	t.Cleanup(d.Kill)
	d.WaitListening(t, fmt.Sprintf("127.0.0.1:%d", port), 10*time.Second)
	return d
}

// wait waits for the process to exit and returns its error.
func (d *serverProc) wait() error {
	return d.Wait(d.t, 10*time.Second)
}

// clientConn is a client connection authenticated by pbs_iff.
type clientConn struct {
	t *testing.T
	*batchconn.Conn
}

// connect opens a client connection and authenticates it with pbs_iff
// run with the given credentials (nil: root). portForm selects the
// port-number form of pbs_iff instead of the inherited descriptor.
func connect(t *testing.T, b e2e.Programs, port int, cred *syscall.Credential, portForm bool) *clientConn {
	t.Helper()
	nc, err := net.DialTCP("tcp", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if portForm {
		cmd = exec.Command(b.Path("pbs_iff"), "localhost", strconv.Itoa(port), strconv.Itoa(nc.LocalAddr().(*net.TCPAddr).Port))
	} else {
		f, err := nc.File()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd = exec.Command(b.Path("pbs_iff"), "localhost", strconv.Itoa(port), "3")
		cmd.ExtraFiles = []*os.File{f}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !bytes.Equal(out, []byte{0, 0, 0, 0}) {
		t.Fatalf("pbs_iff: %v, output %q, stderr %s", err, out, stderr.String())
	}
	c := &clientConn{t: t, Conn: batchconn.New(t, nc)}
	c.Timeout = 10 * time.Second
	return c
}

func (c *clientConn) do(req *batchreq.Request) *batchreq.Reply {
	c.t.Helper()
	return c.Do(req)
}

func (c *clientConn) must(req *batchreq.Request) *batchreq.Reply {
	c.t.Helper()
	return c.Must(req)
}

func manage(user string, cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, user, &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

// submit runs the QueueJob…Commit sequence and returns the job id.
func (c *clientConn) submit(user, script string) string {
	c.t.Helper()
	p := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, user, &batchreq.QueueJob{Attrs: batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "e2e"),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME=/tmp,PBS_O_WORKDIR=/tmp"),
	}}))
	id := p.JobID
	c.must(batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, user, &batchreq.JobFile{Data: []byte(script)}))
	c.must(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, user, &batchreq.JobID{ID: id}))
	c.must(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, user, &batchreq.JobID{ID: id}))
	return id
}

func (c *clientConn) jobs(user string) map[string]batchreq.AttrList {
	c.t.Helper()
	p := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, user, &batchreq.StatusReq{}))
	out := map[string]batchreq.AttrList{}
	for _, o := range p.Status {
		out[o.Name] = o.Attrs
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	b := build(t)
	uid, gid := testUser(t)
	home := e2e.Home(t, "localhost")
	port := e2e.FreePort(t)
	d := startServer(t, b, home, port, "create")

	root := connect(t, b, port, nil, false)
	root.must(manage("root", batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution")))
	root.must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch",
		batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")))
	root.must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch")))
	root.must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root")))
	root.must(manage("root", batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "node01", batchreq.NewAttr("np", "4")))
	if b, err := os.ReadFile(filepath.Join(home, "server_priv", "nodes")); err != nil || string(b) != "node01 np=4\n" {
		t.Fatalf("nodes file %q %v", b, err)
	}

	cred := &syscall.Credential{Uid: uid, Gid: gid}
	u := connect(t, b, port, cred, false)
	id := u.submit(e2eUser, "#!/bin/sh\necho hi\n")
	if p := u.do(manage(e2eUser, batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("scheduling", "true"))); p.Code != batchreq.PBSE_PERM {
		t.Fatalf("unprivileged Manager: %d %q", p.Code, p.Text)
	}
	// A request in another user's name is refused and the connection closed.
	if p := u.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{})); p.Code != batchreq.PBSE_BADCRED {
		t.Fatalf("user mismatch: %d %q", p.Code, p.Text)
	}
	// The port-number form of pbs_iff (Java schedulers) works too.
	u2 := connect(t, b, port, cred, true)
	jobs := u2.jobs(e2eUser)
	owner, _ := jobs[id].Get("Job_Owner")
	if owner != e2eUser+"@localhost" {
		t.Fatalf("job %s owner %q (jobs %v)", id, owner, jobs)
	}

	// qterm -t quick: the reply comes, the process exits cleanly.
	root.must(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_QUICK}))
	if err := d.wait(); err != nil {
		t.Fatalf("pbs_server exit: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(home, "server_logs", time.Now().Format("20060102")))
	for _, want := range []string{"Shutdown request from root@localhost ", "Starting to shutdown the server, type is Quick", "Server shutdown completed"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("server log lacks %q", want)
		}
	}

	// Warm restart recovers queue, node and job; SIGTERM stops it.
	d = startServer(t, b, home, port, "warm")
	root = connect(t, b, port, nil, false)
	if _, ok := root.jobs("root")[id]; !ok {
		t.Fatalf("job %s lost over restart", id)
	}
	p := root.must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{}))
	if len(p.Status) != 1 || p.Status[0].Name != "node01" {
		t.Fatalf("nodes after restart: %+v", p.Status)
	}
	id2 := root.submit("root", "sleep 1\n")
	if jobSeq(id2) <= jobSeq(id) {
		t.Fatalf("job number reused: %s after %s", id2, id)
	}
	d.Signal(syscall.SIGTERM)
	if err := d.wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

func jobSeq(id string) int {
	n, _ := strconv.Atoi(strings.SplitN(id, ".", 2)[0])
	return n
}

// TestCrashSafety kills pbs_server with SIGKILL during concurrent
// submissions: after a warm restart every acknowledged job exists with
// its script and no half-submitted job remains.
func TestCrashSafety(t *testing.T) {
	b := build(t)
	home := e2e.Home(t, "localhost")
	port := e2e.FreePort(t)
	d := startServer(t, b, home, port, "create")
	root := connect(t, b, port, nil, false)
	root.must(manage("root", batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution")))
	root.must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch",
		batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")))
	root.must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch")))
	root.must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root")))

	var mu sync.Mutex
	acked := map[string]string{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		c := connect(t, b, port, nil, false)
		wg.Add(1)
		go func(w int, c *clientConn) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				script := fmt.Sprintf("#!/bin/sh\necho worker %d job %d\n", w, i)
				id, err := trySubmit(c, script)
				if err != nil {
					return // the server died
				}
				mu.Lock()
				acked[id] = script
				mu.Unlock()
			}
		}(w, c)
	}
	// The kill comes while the submissions go on: once the server has
	// acknowledged a good number of them.
	e2e.WaitFor(t, "50 acknowledged submissions", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 50
	})
	d.Signal(syscall.SIGKILL)
	d.wait()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no submission was acknowledged")
	}

	d = startServer(t, b, home, port, "warm")
	root = connect(t, b, port, nil, false)
	jobs := root.jobs("root")
	for id := range acked {
		a, ok := jobs[id]
		if !ok {
			t.Errorf("acknowledged job %s lost", id)
			continue
		}
		if st, _ := a.Get("job_state"); st != "Q" {
			t.Errorf("job %s in state %s", id, st)
		}
	}
	for id, a := range jobs {
		if st, _ := a.Get("job_state"); st == "T" {
			t.Errorf("half-submitted job %s after restart", id)
		}
	}
	root.must(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_QUICK}))
	d.wait()
	// Every stored job has its script, and acknowledged scripts are intact.
	db, err := store.OpenBolt(filepath.Join(home, "server_priv", "serverdb.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	db.ForEach(store.Jobs, func(id string, _ []byte) error {
		n++
		sc, err := db.Get(store.Script, id)
		if err != nil || sc == nil {
			t.Errorf("job %s has no script", id)
		} else if want, ok := acked[id]; ok && string(sc) != want {
			t.Errorf("job %s script %q, want %q", id, sc, want)
		}
		return nil
	})
	t.Logf("%d acknowledged submissions before SIGKILL, %d jobs recovered", len(acked), n)
}

func trySubmit(c *clientConn, script string) (string, error) {
	steps := []func(id string) *batchreq.Request{
		func(string) *batchreq.Request {
			return batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: batchreq.AttrList{batchreq.NewAttr("Job_Name", "crash")}})
		},
		func(string) *batchreq.Request {
			return batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{Data: []byte(script)})
		},
		func(id string) *batchreq.Request {
			return batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id})
		},
		func(id string) *batchreq.Request {
			return batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id})
		},
	}
	id := ""
	for _, step := range steps {
		p, err := c.Try(step(id))
		if err != nil {
			return "", err
		}
		if p.Code != 0 {
			return "", fmt.Errorf("code %d %s", p.Code, p.Text)
		}
		if id == "" {
			id = p.JobID
		}
	}
	return id, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}
