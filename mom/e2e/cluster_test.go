package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
	"gopbs/internal/e2e/testcluster"
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
	*testcluster.Cluster
	t                 *testing.T
	user              *e2e.Account
	svHome, momHome   string
	outDir, mailFile  string
	svPort, momPort   int
	rmPort, schedPort int
	server, mom       *e2e.Daemon
	c                 *batchconn.Conn
}

// newCluster starts pbs_server (completed jobs kept, mail to a file) and
// pbs_mom with momConfig added to its mom_priv/config.
func newCluster(t *testing.T, momConfig string) *cluster {
	t.Helper()
	tc := testcluster.New(t, testcluster.Options{Mail: true,
		MomConfig: "$status_update_time 1\n$check_poll_time 1\n" + momConfig})
	u := e2e.User(t, testUser)
	u.MakeHome(t)
	cl := &cluster{Cluster: tc, t: t, user: u, svHome: tc.ServerHome, mailFile: tc.MailFile,
		svPort: tc.Ports.Server, momPort: tc.Ports.Mom, rmPort: tc.Ports.RM, schedPort: tc.Ports.Sched}
	cl.outDir = filepath.Join(tc.Base, "out")
	os.MkdirAll(cl.outDir, 0o777)
	os.Chown(cl.outDir, u.UID, u.GID)
	cl.startServer("create")
	tc.DefaultQueue("batch")
	tc.SetServer(batchreq.NewAttr("keep_completed", "600"))
	tc.CreateNodes(2, "localhost")
	cl.momHome = tc.Mom("localhost").Home
	cl.startMom()
	return cl
}

func (cl *cluster) startServer(init string) {
	cl.server = cl.StartServer(init)
	cl.c = cl.Conn
}

func (cl *cluster) startMom(extra ...string) {
	cl.mom = cl.StartMom("localhost", extra...).Daemon
	cl.WaitReported("localhost")
}

// status returns the attributes of one job or node ("Resource_List.mem"
// for resources); nil when there is none.
func (cl *cluster) status(typ int, id string) map[string]string { return cl.c.Status(typ, id) }

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
	return cl.c.Submit(list, script)
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
