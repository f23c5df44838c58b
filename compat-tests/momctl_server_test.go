package compattests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
)

// momctlJobUser owns the job run through the server-backed MOM.
const momctlJobUser = "gopbsmomctl"

// serverBackedMom is a GoPBS pbs_mom that reports to a GoPBS pbs_server,
// both run in the capture namespace (host name vm), so that the server
// lines of momctl -d come from a real server conversation.
type serverBackedMom struct {
	rmPort int
}

// startNSDaemon runs one daemon in the capture namespace until the test
// ends.
func startNSDaemon(t *testing.T, ns *captureNamespace, bin string, args ...string) *e2e.Daemon {
	t.Helper()
	return e2e.Start(t, filepath.Base(bin), ns.command("root", 0, 0, bin, args...))
}

// batchClient is a root connection to pbs_server from a reserved port.
type batchClient struct {
	t *testing.T
	*batchconn.Conn
}

func dialServer(t *testing.T, port int) *batchClient {
	t.Helper()
	return &batchClient{t: t, Conn: batchconn.DialReserved(t, fmt.Sprintf("127.0.0.1:%d", port), 10*time.Second)}
}

func (c *batchClient) do(typ int, body batchreq.Body) *batchreq.Reply {
	c.t.Helper()
	return c.Do(batchreq.NewRequest(typ, "root", body))
}

func (c *batchClient) must(typ int, body batchreq.Body) *batchreq.Reply {
	c.t.Helper()
	return c.Must(batchreq.NewRequest(typ, "root", body))
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

// startServerBackedMom starts pbs_server (node vm) and pbs_mom in the
// capture namespace and replays the history the captured MOM had before
// capture 23: one hello and the server's cluster addresses at start-up,
// then a job run to completion, whose DeleteJob is the server's last
// request to the MOM.
func startServerBackedMom(t *testing.T, ns *captureNamespace) *serverBackedMom {
	t.Helper()
	u := e2e.User(t, momctlJobUser)
	userHome := ns.home(t, momctlJobUser, u.UID, u.GID) // /home/<user> in the namespace

	bin := e2e.Build(t, "pbs_server", "pbs_mom").Dir
	base := e2e.Dir(t) // the job starter runs as the job user
	svHome, momHome := filepath.Join(base, "server"), filepath.Join(base, "mom")
	for _, h := range []string{svHome, momHome} {
		if err := e2e.MakeHome(h, captureHost); err != nil {
			t.Fatal(err)
		}
	}
	// The captured MOM's configuration (captures README).
	e2e.WriteFile(t, filepath.Join(momHome, "mom_priv", "config"),
		"$pbsserver "+captureHost+"\n$logevent 255\n$usecp *:/home /home\n")
	e2e.LogFilesOnFailure(t, 0, filepath.Join(base, "*", "*_logs", "*"))

	ports := e2e.FreePorts(t, 3)
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
	e2e.WaitFor(t, "node "+captureHost+" to report its status", 30*time.Second, c.nodeUp)

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
	e2e.WaitFor(t, "job "+id+" to end", 30*time.Second, func() bool { return c.jobGone(id) })
	// The server's DeleteJob makes the MOM forget the job.
	e2e.WaitFor(t, "the MOM to purge job "+id, 30*time.Second, func() bool {
		files, _ := filepath.Glob(filepath.Join(momHome, "mom_priv", "jobs", "*.JB"))
		return len(files) == 0
	})
	if b, err := os.ReadFile(filepath.Join(userHome, "STDIN.o")); err != nil || string(b) != "done\n" {
		t.Errorf("job output %q (%v)", b, err)
	}
	return &serverBackedMom{rmPort: ports[2]}
}
