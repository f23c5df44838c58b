package compattests

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
)

// momctlJobUser owns the job run through the server-backed MOM.
const momctlJobUser = "gopbsmomctl"

// serverBackedMom is a GoPBS pbs_mom that reports to a GoPBS pbs_server,
// both run in the capture namespace (host name vm), so that the server
// lines of momctl -d come from a real server conversation.
type serverBackedMom struct {
	rmPort int
}

// nsDaemon runs one daemon in the capture namespace until the test ends.
type nsDaemon struct {
	name string
	cmd  *exec.Cmd
	out  *bytes.Buffer
}

func startNSDaemon(t *testing.T, ns *captureNamespace, bin string, args ...string) *nsDaemon {
	t.Helper()
	d := &nsDaemon{name: filepath.Base(bin), cmd: ns.command("root", 0, 0, bin, args...), out: &bytes.Buffer{}}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", d.name, d.out)
		}
	})
	return d
}

// batchClient is a root connection to pbs_server from a reserved port.
type batchClient struct {
	t  *testing.T
	nc net.Conn
	r  *dis.Reader
}

func dialServer(t *testing.T, port int) *batchClient {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		nc, err := iff.DialReserved(ctx, fmt.Sprintf("127.0.0.1:%d", port))
		cancel()
		if err == nil {
			t.Cleanup(func() { nc.Close() })
			return &batchClient{t: t, nc: nc, r: dis.NewReader(nc)}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pbs_server does not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *batchClient) do(typ int, body batchreq.Body) *batchreq.Reply {
	c.t.Helper()
	c.nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.nc.Write(batchreq.NewRequest(typ, "root", body).Append(nil)); err != nil {
		c.t.Fatal(err)
	}
	rep, err := batchreq.ReadReply(c.r)
	if err != nil {
		c.t.Fatalf("%s reply: %v", batchreq.RequestName(typ), err)
	}
	return rep
}

func (c *batchClient) must(typ int, body batchreq.Body) *batchreq.Reply {
	c.t.Helper()
	rep := c.do(typ, body)
	if rep.Code != 0 {
		c.t.Fatalf("%s: error %d %s", batchreq.RequestName(typ), rep.Code, rep.Text)
	}
	return rep
}

// jobGone reports whether the server no longer knows job id.
func (c *batchClient) jobGone(id string) bool {
	return c.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}).Code == batchreq.PBSE_UNKJOBID
}

// nodeUp reports whether node vm has sent its status.
func (c *batchClient) nodeUp() bool {
	rep := c.do(batchreq.PBS_BATCH_StatusNode, &batchreq.StatusReq{ID: captureHost})
	if rep.Code != 0 || len(rep.Status) != 1 {
		return false
	}
	v, _ := rep.Status[0].Attrs.Get("state")
	return v == "free"
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// startServerBackedMom starts pbs_server (node vm) and pbs_mom in the
// capture namespace and replays the history the captured MOM had before
// capture 23: one hello and the server's cluster addresses at start-up,
// then a job run to completion, whose DeleteJob is the server's last
// request to the MOM.
func startServerBackedMom(t *testing.T, ns *captureNamespace) *serverBackedMom {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	u, err := user.Lookup(momctlJobUser)
	if err != nil {
		if out, err := exec.Command("useradd", "-M", "-s", "/bin/sh", momctlJobUser).CombinedOutput(); err != nil {
			t.Skipf("cannot create job user %s: %v %s", momctlJobUser, err, out)
		}
		if u, err = user.Lookup(momctlJobUser); err != nil {
			t.Skip(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	userHome := ns.home(t, momctlJobUser, uid, gid) // /home/<user> in the namespace

	base, err := os.MkdirTemp("", "gopbs-momctl-server-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755) // the job starter runs as the job user
	t.Cleanup(func() { os.RemoveAll(base) })
	bin := filepath.Join(base, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "./server/cmd/pbs_server", "./mom/cmd/pbs_mom")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	svHome, momHome := filepath.Join(base, "server"), filepath.Join(base, "mom")
	for _, d := range []string{svHome, filepath.Join(momHome, "mom_priv")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{svHome, momHome} {
		os.WriteFile(filepath.Join(h, "server_name"), []byte(captureHost+"\n"), 0o644)
	}
	// The captured MOM's configuration (captures README).
	os.WriteFile(filepath.Join(momHome, "mom_priv", "config"),
		[]byte("$pbsserver "+captureHost+"\n$logevent 255\n$usecp *:/home /home\n"), 0o644)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(base, "*", "*_logs", "*"))
			for _, f := range logs {
				b, _ := os.ReadFile(f)
				t.Logf("%s:\n%s", f, b)
			}
		}
	})

	ports := freePorts(t, 3)
	sv, mom, rm := strconv.Itoa(ports[0]), strconv.Itoa(ports[1]), strconv.Itoa(ports[2])
	startNSDaemon(t, ns, filepath.Join(bin, "pbs_server"), "-D", "-f", "-t", "create", "-d", svHome,
		"-p", sv, "-M", mom, "-R", rm, "-H", captureHost)
	c := dialServer(t, ports[0])
	for _, m := range []*batchreq.Manage{
		{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "batch",
			Attrs: batchreq.AttrList{batchreq.NewAttr("queue_type", "execution")}},
		{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_QUEUE, ObjName: "batch",
			Attrs: batchreq.AttrList{batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")}},
		{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SERVER,
			Attrs: batchreq.AttrList{batchreq.NewAttr("default_queue", "batch")}},
		{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_NODE, ObjName: captureHost,
			Attrs: batchreq.AttrList{batchreq.NewAttr("np", "2")}},
	} {
		c.must(batchreq.PBS_BATCH_Manager, m)
	}
	startNSDaemon(t, ns, filepath.Join(bin, "pbs_mom"), "-D", "-d", momHome, "-M", mom, "-R", rm, "-S", sv)
	waitUntil(t, "node "+captureHost+" to report its status", 30*time.Second, c.nodeUp)

	owner := momctlJobUser + "@" + captureHost
	id := c.must(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{Attrs: batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "STDIN"), batchreq.NewAttr("Job_Owner", owner),
		batchreq.NewAttr("Checkpoint", "u"), batchreq.NewAttr("Join_Path", "n"), batchreq.NewAttr("Keep_Files", "n"),
		batchreq.NewAttr("Output_Path", captureHost+":"+"/home/"+momctlJobUser+"/STDIN.o"),
		batchreq.NewAttr("Error_Path", captureHost+":"+"/home/"+momctlJobUser+"/STDIN.e"),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME=/home/"+momctlJobUser+",PBS_O_WORKDIR=/home/"+momctlJobUser+
			",PBS_O_HOST="+captureHost),
	}}).JobID
	c.must(batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{JobID: id, Data: []byte("#!/bin/sh\necho done\n")})
	c.must(batchreq.PBS_BATCH_RdytoCommit, &batchreq.JobID{ID: id})
	c.must(batchreq.PBS_BATCH_Commit, &batchreq.JobID{ID: id})
	c.must(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: id})
	waitUntil(t, "job "+id+" to end", 30*time.Second, func() bool { return c.jobGone(id) })
	// The server's DeleteJob makes the MOM forget the job.
	waitUntil(t, "the MOM to purge job "+id, 30*time.Second, func() bool {
		files, _ := filepath.Glob(filepath.Join(momHome, "mom_priv", "jobs", "*.JB"))
		return len(files) == 0
	})
	if b, err := os.ReadFile(filepath.Join(userHome, "STDIN.o")); err != nil || string(b) != "done\n" {
		t.Errorf("job output %q (%v)", b, err)
	}
	return &serverBackedMom{rmPort: ports[2]}
}
