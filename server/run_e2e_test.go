package server

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/e2e"
)

// The end-to-end test runs pbs_server, pbs_mom and pbs_sched as
// processes in temporary homes on free loopback ports: a job
// submitted to the server runs on the MOM, its obit completes it, and
// with scheduling on the scheduler starts the next one.

const e2eJobUser = "gopbsruntest"

// TestMain removes the programs the end-to-end tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// e2eBuild builds the daemons (once per test binary).
func e2eBuild(t *testing.T) e2e.Programs {
	t.Helper()
	return e2e.Build(t, "pbs_server", "pbs_mom", "pbs_sched")
}

// e2eStart starts a daemon; it is stopped when the test ends.
func e2eStart(t *testing.T, bin string, args ...string) *e2e.Daemon {
	t.Helper()
	return e2e.Start(t, filepath.Base(bin), exec.Command(bin, args...))
}

// e2eServerProcess prepares a lone pbs_server process in a temporary
// home on free loopback ports. start runs it with -t init ("create"
// adds -f); it may be called again after a kill, for a warm start. port
// is its batch port.
func e2eServerProcess(t *testing.T) (start func(init string) *e2e.Daemon, home string, port int) {
	t.Helper()
	bins := e2e.Build(t, "pbs_server")
	home = filepath.Join(e2e.Dir(t), "server")
	if err := e2e.MakeHome(home, "localhost"); err != nil {
		t.Fatal(err)
	}
	ports := e2e.FreePorts(t, 4)
	ps := strconv.Itoa
	start = func(init string) *e2e.Daemon {
		args := []string{"-D", "-d", home, "-p", ps(ports[0]), "-M", ps(ports[1]), "-R", ps(ports[2]), "-S", ps(ports[3]), "-H", "localhost", "-a", "false", "-t", init}
		if init == "create" {
			args = append(args, "-f")
		}
		return e2eStart(t, bins.Path("pbs_server"), args...)
	}
	return start, home, ports[0]
}

// e2eUser returns the job user, creating it (and its home directory,
// where pbs_mom starts jobs) when absent.
func e2eUser(t *testing.T) *e2e.Account {
	t.Helper()
	u := e2e.User(t, e2eJobUser)
	u.MakeHome(t)
	return u
}

// e2eBatchQueue creates the execution queue batch over c (root's),
// enables and starts it, makes it the default queue and lets root's jobs
// run (acl_roots).
func e2eBatchQueue(t *testing.T, c *client) {
	t.Helper()
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("default_queue", "batch")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_roots", "root")),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("setup: %d %q", p.Code, p.Text)
		}
	}
}

// e2eDial connects to the server from a reserved port (root).
func e2eDial(t *testing.T, port int) *client {
	t.Helper()
	var last error
	for i := 0; i < 100; i++ {
		for p := 1023; p > 600; p-- {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}}
			nc, err := d.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err == nil {
				return &client{t: t, nc: nc, r: dis.NewReader(nc)}
			}
			last = err
			if !strings.Contains(err.Error(), "address already in use") {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connect to server: %v", last)
	return nil
}

func e2eNodeStatus(t *testing.T, c *client) string {
	t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "localhost"}))
	if p.Code != 0 || len(p.Status) != 1 {
		return ""
	}
	for _, a := range p.Status[0].Attrs {
		if a.Name == "status" {
			return a.Value
		}
	}
	return ""
}

// e2eSubmit queues a job owned by the test user that writes to outDir.
func e2eSubmit(t *testing.T, c *client, name, script, outDir string) string {
	t.Helper()
	list := batchreq.AttrList{
		attr("Job_Name", name), attr("Job_Owner", e2eJobUser+"@localhost"), attr("Checkpoint", "u"),
		attr("Join_Path", "n"), attr("Keep_Files", "n"), attr("Rerunable", "True"),
		attr("Output_Path", "localhost:"+filepath.Join(outDir, name+".out")),
		attr("Error_Path", "localhost:"+filepath.Join(outDir, name+".err")),
		attr("Variable_List", "PBS_O_HOME="+outDir+",PBS_O_WORKDIR="+outDir+",PBS_O_HOST=localhost"),
	}
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list}))
	if p.Code != 0 {
		t.Fatalf("QueueJob: %d %s", p.Code, p.Text)
	}
	id := p.JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte(script)}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("%s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
	}
	return id
}

func TestEndToEndServerMomSched(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports and setuid job execution")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	u := e2eUser(t)
	bins := e2eBuild(t)
	base := e2e.Dir(t) // the job user must reach out/
	outDir := filepath.Join(base, "out")
	os.MkdirAll(outDir, 0o777)
	os.Chmod(outDir, 0o777)
	os.Chown(outDir, u.UID, u.GID)

	ports := e2e.FreePorts(t, 4)
	svPort, momPort, rmPort, schedPort := ports[0], ports[1], ports[2], ports[3]
	svHome, momHome, schedHome := filepath.Join(base, "server"), filepath.Join(base, "mom"), filepath.Join(base, "sched")
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(base, "*", "*_logs", "*"))
			for _, f := range logs {
				b, _ := os.ReadFile(f)
				t.Logf("%s:\n%s", f, b)
			}
		}
	})
	for _, h := range []string{svHome, momHome, schedHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	e2e.WriteFile(t, filepath.Join(momHome, "mom_priv", "config"), "$pbsserver localhost\n$status_update_time 2\n")

	ps := strconv.Itoa
	e2eStart(t, bins.Path("pbs_server"), "-D", "-f", "-t", "create", "-d", svHome, "-p", ps(svPort), "-M", ps(momPort),
		"-R", ps(rmPort), "-S", ps(schedPort), "-H", "localhost")
	c := e2eDial(t, svPort)
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("default_queue", "batch")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "localhost", attr("np", "2")),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("setup: %d %s", p.Code, p.Text)
		}
	}
	e2eStart(t, bins.Path("pbs_mom"), "-D", "-d", momHome, "-H", "localhost", "-M", ps(momPort), "-R", ps(rmPort), "-S", ps(svPort))
	e2e.WaitFor(t, "the MOM's first IS_STATUS", 20*time.Second, func() bool {
		return strings.Contains(e2eNodeStatus(t, c), "opsys=linux")
	})

	// qrun: the job runs and its obit completes it.
	id := e2eSubmit(t, c, "hello", "#!/bin/sh\necho hello from $PBS_JOBID\n", outDir)
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d %s", p.Code, p.Text)
	}
	e2e.WaitFor(t, "job "+id+" to finish", 30*time.Second, func() bool { return jobAttr(t, c, id, "job_state") == "" })
	out, err := os.ReadFile(filepath.Join(outDir, "hello.out"))
	if err != nil || string(out) != "hello from "+id+"\n" {
		t.Errorf("job output %q %v", out, err)
	}
	acct, _ := os.ReadFile(filepath.Join(svHome, "server_priv", "accounting", time.Now().Format("20060102")))
	if !strings.Contains(string(acct), ";E;"+id+";user="+e2eJobUser) || !strings.Contains(string(acct), "Exit_status=0") {
		t.Errorf("accounting:\n%s", acct)
	}

	// The scheduler starts a job when scheduling is on.
	// It must listen before scheduling is switched on: a first cycle
	// that finds nobody waits scheduler_iteration (600 s) for the next.
	sched := e2eStart(t, bins.Path("pbs_sched"), "-D", "-d", schedHome, "-S", ps(schedPort), "-R", ps(rmPort), "-listen", "127.0.0.1")
	sched.WaitListening(t, "127.0.0.1:"+ps(schedPort), 30*time.Second)
	id2 := e2eSubmit(t, c, "viasched", "#!/bin/sh\necho scheduled\n", outDir)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("scheduling: %d", p.Code)
	}
	e2e.WaitFor(t, "scheduled job "+id2+" to finish", 40*time.Second, func() bool { return jobAttr(t, c, id2, "job_state") == "" })
	if out, err := os.ReadFile(filepath.Join(outDir, "viasched.out")); err != nil || string(out) != "scheduled\n" {
		t.Errorf("scheduled job output %q %v", out, err)
	}
}
