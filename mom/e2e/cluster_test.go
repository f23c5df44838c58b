package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
)

// testUser runs the jobs.
const testUser = "gopbslimits"

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// cluster is a pbs_server and a pbs_mom for node localhost.
type cluster struct {
	t                 *testing.T
	bins              e2e.Programs
	user              *e2e.Account
	svHome, momHome   string
	outDir, mailFile  string
	svPort, momPort   int
	rmPort, schedPort int
	server, mom       *e2e.Daemon
	c                 *batchconn.Conn
	momConfig         string
	serverEnv         []string
}

// newCluster starts pbs_server (completed jobs kept, mail to a file) and
// pbs_mom with momConfig added to its mom_priv/config.
func newCluster(t *testing.T, momConfig string) *cluster {
	t.Helper()
	e2e.RequireRoot(t, "reserved ports and jobs run as another user")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	u := e2e.User(t, testUser)
	u.MakeHome(t)
	cl := &cluster{t: t, user: u, bins: e2e.Build(t, "pbs_server", "pbs_mom"), momConfig: momConfig}
	base := e2e.Dir(t)
	cl.outDir = filepath.Join(base, "out")
	os.MkdirAll(cl.outDir, 0o777)
	os.Chown(cl.outDir, u.UID, u.GID)
	cl.svHome, cl.momHome = filepath.Join(base, "server"), filepath.Join(base, "mom")
	for _, h := range []string{cl.svHome, cl.momHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	e2e.LogFilesOnFailure(t, 0, filepath.Join(cl.svHome, "server_logs", "*"), filepath.Join(cl.momHome, "mom_logs", "*"))
	// sendmail of the server: each mail appended to mailFile.
	bin := filepath.Join(base, "bin")
	cl.mailFile = filepath.Join(base, "mail.txt")
	e2e.WriteFile(t, filepath.Join(bin, "sendmail"), "#!/bin/sh\n{ echo \"ARGS $*\"; cat; echo .; } >> "+cl.mailFile+"\n")
	os.Chmod(filepath.Join(bin, "sendmail"), 0o755)
	cl.serverEnv = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	ports := e2e.FreePorts(t, 4)
	cl.svPort, cl.momPort, cl.rmPort, cl.schedPort = ports[0], ports[1], ports[2], ports[3]
	cl.startServer("create")
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("keep_completed", "600")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "localhost", batchreq.NewAttr("np", "2")),
	} {
		cl.c.Must(r)
	}
	e2e.WriteFile(t, filepath.Join(cl.momHome, "mom_priv", "config"),
		"$pbsserver localhost\n$status_update_time 1\n$check_poll_time 1\n"+momConfig)
	e2e.WriteFile(t, filepath.Join(cl.momHome, "pbs_environment"), "PATH=/usr/bin:/bin\n")
	cl.startMom()
	return cl
}

func (cl *cluster) startServer(init string) {
	ps := strconv.Itoa
	args := []string{"-D", "-d", cl.svHome, "-p", ps(cl.svPort), "-M", ps(cl.momPort), "-R", ps(cl.rmPort),
		"-S", ps(cl.schedPort), "-H", "localhost", "-t", init}
	if init == "create" {
		args = append(args, "-f")
	}
	cmd := exec.Command(cl.bins.Path("pbs_server"), args...)
	cmd.Env = cl.serverEnv
	cl.server = e2e.Start(cl.t, "pbs_server", cmd)
	cl.c = batchconn.DialReserved(cl.t, "127.0.0.1:"+ps(cl.svPort), 20*time.Second)
}

func (cl *cluster) startMom(extra ...string) {
	ps := strconv.Itoa
	args := append([]string{"-D", "-d", cl.momHome, "-H", "localhost", "-M", ps(cl.momPort), "-R", ps(cl.rmPort), "-S", ps(cl.svPort)}, extra...)
	cl.mom = e2e.Start(cl.t, "pbs_mom", exec.Command(cl.bins.Path("pbs_mom"), args...))
	e2e.WaitFor(cl.t, "the MOM's first IS_STATUS", 30*time.Second, func() bool {
		return strings.Contains(cl.status(batchreq.PBS_BATCH_StatusNode, "localhost")["status"], "opsys=linux")
	})
}

func mgr(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

// status returns the attributes of one job or node ("Resource_List.mem"
// for resources); nil when there is none.
func (cl *cluster) status(typ int, id string) map[string]string {
	p := cl.c.Do(batchreq.NewRequest(typ, "root", &batchreq.StatusReq{ID: id}))
	if p.Code != 0 || len(p.Status) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, a := range p.Status[0].Attrs {
		name := a.Name
		if a.HasResource {
			name += "." + a.Resource
		}
		out[name] = a.Value
	}
	return out
}

// job returns the attribute name of job id.
func (cl *cluster) job(id, name string) string {
	return cl.status(batchreq.PBS_BATCH_StatusJob, id)[name]
}

// submit queues a job of the test user; attrs are added to (or replace)
// the defaults. Its output goes to outDir/<name>.out and .err.
func (cl *cluster) submit(name, script string, attrs ...batchreq.Attr) string {
	cl.t.Helper()
	list := batchreq.AttrList{
		batchreq.NewAttr("Job_Name", name), batchreq.NewAttr("Job_Owner", testUser+"@localhost"),
		batchreq.NewAttr("Join_Path", "n"), batchreq.NewAttr("Keep_Files", "n"),
		batchreq.NewAttr("Output_Path", "localhost:"+filepath.Join(cl.outDir, name+".out")),
		batchreq.NewAttr("Error_Path", "localhost:"+filepath.Join(cl.outDir, name+".err")),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME="+cl.outDir+",PBS_O_WORKDIR="+cl.outDir+",PBS_O_HOST=localhost"),
	}
	for _, a := range attrs {
		replaced := false
		for i := range list {
			if list[i].Name == a.Name && list[i].Resource == a.Resource {
				list[i], replaced = a, true
			}
		}
		if !replaced {
			list = append(list, a)
		}
	}
	id := cl.c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list})).JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte(script)}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	} {
		cl.c.Must(r)
	}
	return id
}

// run sends RunJob for id.
func (cl *cluster) run(id string) {
	cl.t.Helper()
	cl.c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
}

// waitState waits until job id is in state.
func (cl *cluster) waitState(id, state string, limit time.Duration) {
	cl.t.Helper()
	e2e.WaitFor(cl.t, "job "+id+" in state "+state, limit, func() bool { return cl.job(id, "job_state") == state })
}

// read returns a file's content ("" if it cannot be read).
func read(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// serverLog returns today's server log.
func (cl *cluster) serverLog() string {
	return read(filepath.Join(cl.svHome, "server_logs", time.Now().Format("20060102")))
}

// record returns the accounting record of type typ for job id, "" if none.
func (cl *cluster) record(typ, id string) string {
	acct := read(filepath.Join(cl.svHome, "server_priv", "accounting", time.Now().Format("20060102")))
	for _, line := range strings.Split(acct, "\n") {
		if strings.Contains(line, ";"+typ+";"+id+";") {
			return line
		}
	}
	return ""
}
