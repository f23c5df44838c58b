package server

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// The end-to-end test runs pbs_server, pbs_mom and pbs_sched as
// processes in temporary homes on ephemeral loopback ports: a job
// submitted to the server runs on the MOM, its obit completes it, and
// with scheduling on the scheduler starts the next one.

const e2eJobUser = "gopbsruntest"

// e2eBuild builds the three daemons into a temporary directory.
func e2eBuild(t *testing.T) map[string]string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gopbs-run-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// the MOM's job starter is its own binary, run as the job user
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for _, name := range []string{"server/cmd/pbs_server", "mom/cmd/pbs_mom", "sched/cmd/pbs_sched"} {
		out := filepath.Join(dir, filepath.Base(name))
		if b, err := exec.Command("go", "build", "-o", out, "gopbs/"+name).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v: %s", name, err, b)
		}
		bins[filepath.Base(name)] = out
	}
	return bins
}

// e2ePort returns a port free for TCP and UDP on loopback.
func e2ePort(t *testing.T) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if pc, err := net.ListenPacket("udp", ":"+strconv.Itoa(p)); err == nil {
			pc.Close()
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

type e2eDaemon struct {
	name string
	cmd  *exec.Cmd
	out  *bytes.Buffer
}

func e2eStart(t *testing.T, bin string, args ...string) *e2eDaemon {
	t.Helper()
	d := &e2eDaemon{name: filepath.Base(bin), cmd: exec.Command(bin, args...), out: &bytes.Buffer{}}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			d.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", d.name, d.out.String())
		}
	})
	return d
}

func e2eUser(t *testing.T) *user.User {
	t.Helper()
	u, err := user.Lookup(e2eJobUser)
	if err != nil {
		if out, err := exec.Command("useradd", "-M", "-s", "/bin/sh", e2eJobUser).CombinedOutput(); err != nil {
			if u, err2 := user.Lookup(e2eJobUser); err2 == nil {
				return u
			}
			t.Skipf("cannot create job user: %v: %s", err, out)
		}
		if u, err = user.Lookup(e2eJobUser); err != nil {
			t.Skipf("job user: %v", err)
		}
	}
	return u
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

func e2eWait(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestEndToEndServerMomSched(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: reserved ports and setuid job execution")
	}
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	u := e2eUser(t)
	bins := e2eBuild(t)
	base, err := os.MkdirTemp("", "gopbs-run-e2e-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755) // the job user must reach out/
	outDir := filepath.Join(base, "out")
	os.MkdirAll(outDir, 0o777)
	os.Chmod(outDir, 0o777)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	os.Chown(outDir, uid, gid)
	// MOM starts jobs in the user's home directory.
	if _, err := os.Stat(u.HomeDir); err != nil {
		if err := os.MkdirAll(u.HomeDir, 0o755); err != nil {
			t.Skipf("job user's home: %v", err)
		}
		os.Chown(u.HomeDir, uid, gid)
	}

	svPort, momPort, rmPort, schedPort := e2ePort(t), e2ePort(t), e2ePort(t), e2ePort(t)
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
	for _, d := range []string{svHome, filepath.Join(momHome, "mom_priv"), filepath.Join(schedHome, "sched_priv"), filepath.Join(schedHome, "sched_logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{svHome, momHome, schedHome} {
		os.WriteFile(filepath.Join(h, "server_name"), []byte("localhost\n"), 0o644)
	}
	os.WriteFile(filepath.Join(momHome, "mom_priv", "config"), []byte("$pbsserver localhost\n$status_update_time 2\n"), 0o644)

	ps := strconv.Itoa
	e2eStart(t, bins["pbs_server"], "-D", "-f", "-t", "create", "-d", svHome, "-p", ps(svPort), "-M", ps(momPort),
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
	e2eStart(t, bins["pbs_mom"], "-D", "-d", momHome, "-H", "localhost", "-M", ps(momPort), "-R", ps(rmPort), "-S", ps(svPort))
	e2eWait(t, "the MOM's first IS_STATUS", 20*time.Second, func() bool {
		return strings.Contains(e2eNodeStatus(t, c), "opsys=linux")
	})

	// qrun: the job runs and its obit completes it.
	id := e2eSubmit(t, c, "hello", "#!/bin/sh\necho hello from $PBS_JOBID\n", outDir)
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d %s", p.Code, p.Text)
	}
	e2eWait(t, "job "+id+" to finish", 30*time.Second, func() bool { return jobAttr(t, c, id, "job_state") == "" })
	out, err := os.ReadFile(filepath.Join(outDir, "hello.out"))
	if err != nil || string(out) != "hello from "+id+"\n" {
		t.Errorf("job output %q %v", out, err)
	}
	acct, _ := os.ReadFile(filepath.Join(svHome, "server_priv", "accounting", time.Now().Format("20060102")))
	if !strings.Contains(string(acct), ";E;"+id+";user="+e2eJobUser) || !strings.Contains(string(acct), "Exit_status=0") {
		t.Errorf("accounting:\n%s", acct)
	}

	// The scheduler starts a job when scheduling is on.
	e2eStart(t, bins["pbs_sched"], "-D", "-d", schedHome, "-S", ps(schedPort), "-R", ps(rmPort))
	id2 := e2eSubmit(t, c, "viasched", "#!/bin/sh\necho scheduled\n", outDir)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("scheduling: %d", p.Code)
	}
	e2eWait(t, "scheduled job "+id2+" to finish", 40*time.Second, func() bool { return jobAttr(t, c, id2, "job_state") == "" })
	if out, err := os.ReadFile(filepath.Join(outDir, "viasched.out")); err != nil || string(out) != "scheduled\n" {
		t.Errorf("scheduled job output %q %v", out, err)
	}
}
