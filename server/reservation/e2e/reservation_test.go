package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
	"gopbs/internal/e2e/testcluster"
	"gopbs/sched/config"
)

// Users of the tests: the owner of the reservations and a stranger.
const (
	ownerUser    = "gopbsresv"
	strangerUser = "gopbsresv2"
)

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// nodeAddr are the cluster's nodes and their MOMs' addresses.
var nodeAddr = map[string]string{"n1": "127.0.0.2", "n2": "127.0.0.3", "n3": "127.0.0.4"}

// cluster is pbs_server, three MOMs (n1, n2, n3, one slot each) and
// pbs_sched, with the commands run as users.
type cluster struct {
	*testcluster.Cluster
	t               *testing.T
	work, svHome    string
	c               *batchconn.Conn
	owner, stranger *e2e.Account
	mailFile        string
	acctDir         string
	clientEnv       []string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	tc := testcluster.New(t, testcluster.Options{Nodes: nodeAddr, Mail: true,
		MomConfig: "$status_update_time 2\n$check_poll_time 1\n",
		Programs: []string{"pbs_iff", "qsub", "qstat", "plus_reserve", "plus_status", "plus_commit", "plus_abort",
			"plus_cancel", "plus_destroy", "plus_modify", "plus_availnodes", "plus_account"}})
	cl := &cluster{Cluster: tc, t: t, svHome: tc.ServerHome, mailFile: tc.MailFile}
	cl.owner, cl.stranger = e2e.User(t, ownerUser), e2e.User(t, strangerUser)
	cl.owner.MakeHome(t)
	cl.work = filepath.Join(tc.Base, "work")
	os.MkdirAll(cl.work, 0o777)
	os.Chmod(cl.work, 0o777)
	cl.acctDir = filepath.Join(cl.svHome, "server_priv", "accounting")
	e2e.LogFilesOnFailure(t, 0, filepath.Join(cl.acctDir, "*"))
	cl.clientEnv = []string{"PATH=/usr/bin:/bin", "PBS_DEFAULT=127.0.0.1:" + strconv.Itoa(tc.Ports.Server), "LANG=C", "TZ=UTC"}

	cl.startServer("create")
	tc.DefaultQueue("batch")
	tc.SetServer(batchreq.NewAttr("keep_completed", "600"), batchreq.NewAttr("scheduler_iteration", "5"))
	tc.CreateNodes(1, "n1", "n2", "n3")
	for _, node := range []string{"n1", "n2", "n3"} {
		tc.StartMom(node)
	}
	tc.WaitReported("n1", "n2", "n3")
	// the FIFO scheduler without the duration_offset margin: a job may
	// backfill up to the reservation's start
	tc.StartSched(config.Shipped + "\nduration_offset: 0\n")
	tc.SetServer(batchreq.NewAttr("scheduling", "true"))
	return cl
}

func (cl *cluster) startServer(init string) {
	cl.StartServer(init)
	cl.c = cl.Conn
	cl.c.Timeout = 20 * time.Second
}

// crash kills the server with SIGKILL and starts it again on its home.
func (cl *cluster) crash() {
	cl.t.Helper()
	cl.Server.Kill()
	cl.startServer("warm")
	cl.waitNodesUp()
}

// waitNodesUp waits until every MOM has reported to the server.
func (cl *cluster) waitNodesUp() {
	cl.t.Helper()
	for _, node := range []string{"n1", "n2", "n3"} {
		e2e.WaitFor(cl.t, node+" up", 30*time.Second, func() bool {
			st := cl.status(batchreq.PBS_BATCH_StatusNode, node)["state"]
			return st == "free" || st == "job-exclusive"
		})
	}
}

// status returns the attributes of one job, node or queue (nil: none).
func (cl *cluster) status(typ int, id string) map[string]string { return cl.c.Status(typ, id) }

func (cl *cluster) job(id string) map[string]string {
	return cl.status(batchreq.PBS_BATCH_StatusJob, id)
}

// run runs a command as user u (root when nil) and returns its output
// and exit status.
func (cl *cluster) run(u *e2e.Account, name string, args ...string) (string, string, int) {
	cl.t.Helper()
	cmd := exec.Command(cl.Programs.Path(name), args...)
	cmd.Dir = cl.work
	cmd.Env = append([]string(nil), cl.clientEnv...)
	if u != nil {
		u.AsUser(cmd, cl.work)
	} else {
		cmd.Env = append(cmd.Env, "HOME=/root", "LOGNAME=root", "USER=root", "PBS_HOME="+cl.svHome)
	}
	return e2e.Run(cl.t, cmd, 30*time.Second)
}

// must runs a command that must exit 0 and returns its standard output.
func (cl *cluster) must(u *e2e.Account, name string, args ...string) string {
	cl.t.Helper()
	out, errOut, code := cl.run(u, name, args...)
	if code != 0 {
		cl.t.Fatalf("%s %q: exit %d\nstdout: %s\nstderr: %s", name, args, code, out, errOut)
	}
	return out
}

// resvState returns a reservation's state as plus_status -x shows it
// ("" when it does not list it).
func (cl *cluster) resvState(id string) string {
	out, _, code := cl.run(nil, "plus_status", "-r", id, "-x")
	if code != 0 {
		return ""
	}
	_, rest, ok := strings.Cut(out, "<state>")
	if !ok {
		return ""
	}
	st, _, _ := strings.Cut(rest, "</state>")
	if _, p, ok := strings.Cut(rest, "<pending>"); ok {
		op, _, _ := strings.Cut(p, "</pending>")
		st += "/" + op
	}
	return st
}

// submit writes a job script sleeping secs seconds and submits it as the
// owner with qsub's extra arguments; it returns the job id.
func (cl *cluster) submit(name string, secs int, args ...string) string {
	cl.t.Helper()
	script := filepath.Join(cl.work, name+".sh")
	e2e.WriteFile(cl.t, script, "#!/bin/sh\n#PBS -N "+name+"\n#PBS -k oe\nsleep "+strconv.Itoa(secs)+"\n")
	return strings.TrimSpace(cl.must(cl.owner, "qsub", append(args, script)...))
}

// accounting returns today's accounting file.
func (cl *cluster) accounting() string {
	b, _ := os.ReadFile(filepath.Join(cl.acctDir, time.Now().Format("20060102")))
	return string(b)
}

// TestTransactionsAcrossRestarts: a reservation made with -T waits for
// its commit through a SIGKILL of the server (and keeps its node from a
// long job meanwhile); only its owner may commit
// it; committed it gets its queue; a cancel with -T survives another
// crash and is aborted; plus_destroy removes it. Bad requests exit 1 with
// the server's reason.
func TestTransactionsAcrossRestarts(t *testing.T) {
	cl := newCluster(t)
	id := strings.TrimSpace(cl.must(cl.owner, "plus_reserve", "-T", "-s", "+2h", "-D", "30m", "-n", "1"))
	if id != "R1" {
		t.Fatalf("plus_reserve -T printed %q", id)
	}
	if st := cl.resvState(id); st != "WAIT_COMMIT/reserve" {
		t.Fatalf("before the crash: %q", st)
	}
	cl.crash()
	if st := cl.resvState(id); st != "WAIT_COMMIT/reserve" {
		t.Fatalf("after the crash: %q", st)
	}
	// the scheduler does not see an uncommitted reservation (it has no
	// queue yet), but the server's first fit passes over its node for a
	// job that would still run at its start
	long := cl.submit("long", 600, "-l", "walltime=03:00:00")
	e2e.WaitFor(t, "job "+long+" running", 60*time.Second, func() bool { return cl.job(long)["job_state"] == "R" })
	if h := cl.job(long)["exec_host"]; strings.HasPrefix(h, "n1/") {
		t.Errorf("a 3-hour job was started on n1, held by %s from 2 hours on", id)
	}
	if _, errOut, code := cl.run(cl.stranger, "plus_commit", "-r", id); code != 1 || !strings.Contains(errOut, "only its owner or a manager") {
		t.Errorf("a stranger's plus_commit: exit %d, %q", code, errOut)
	}
	if cl.status(batchreq.PBS_BATCH_StatusQue, id) != nil {
		t.Fatal("the queue exists before the commit")
	}
	cl.must(cl.owner, "plus_commit", "-r", id)
	if st := cl.resvState(id); st != "CONFIRMED" {
		t.Fatalf("after the commit: %q", st)
	}
	q := cl.status(batchreq.PBS_BATCH_StatusQue, id)
	if q == nil || q["acl_users"] != ownerUser || q["acl_user_enable"] != "True" {
		t.Fatalf("queue %s: %v", id, q)
	}
	if !strings.Contains(cl.accounting(), ";Y;"+id+";owner="+ownerUser) {
		t.Errorf("no Y record:\n%s", cl.accounting())
	}
	cl.must(cl.owner, "plus_cancel", "-T", "-r", id)
	cl.crash()
	if st := cl.resvState(id); st != "CONFIRMED/cancel" {
		t.Fatalf("pending cancel after the crash: %q", st)
	}
	if _, errOut, code := cl.run(cl.owner, "plus_modify", "-r", id, "-n", "2"); code != 1 || !strings.Contains(errOut, "waiting for commit or abort") {
		t.Errorf("modify while a cancel waits: exit %d %q", code, errOut)
	}
	cl.must(cl.owner, "plus_abort", "-r", id)
	if st := cl.resvState(id); st != "CONFIRMED" {
		t.Fatalf("after the abort: %q", st)
	}
	// refusals: too many nodes, an unknown node, a stranger's cancel
	if _, errOut, code := cl.run(cl.owner, "plus_reserve", "-s", "+2h", "-D", "30m", "-n", "3"); code != 1 ||
		!strings.Contains(errOut, "only 2 of 3 nodes free") || !strings.Contains(errOut, "held by R1") {
		t.Errorf("three nodes over R1: exit %d %q", code, errOut)
	}
	if _, errOut, code := cl.run(cl.owner, "plus_reserve", "-s", "+2h", "-D", "30m", "-n", "n9"); code != 1 || !strings.Contains(errOut, "unknown node n9") {
		t.Errorf("unknown node: exit %d %q", code, errOut)
	}
	if _, errOut, code := cl.run(cl.stranger, "plus_cancel", "-r", id); code != 1 || !strings.Contains(errOut, "belongs to "+ownerUser) {
		t.Errorf("a stranger's plus_cancel: exit %d %q", code, errOut)
	}
	if out := cl.must(cl.owner, "plus_availnodes", "-s", "+2h", "-e", "+150m"); strings.TrimSpace(out) != "2" {
		t.Errorf("plus_availnodes over R1: %q", out)
	}
	cl.must(cl.owner, "plus_destroy", "-r", id)
	if _, errOut, code := cl.run(cl.owner, "plus_status", "-r", id); code != 1 || !strings.Contains(errOut, "unknown reservation") {
		t.Errorf("status of a destroyed reservation: exit %d %q", code, errOut)
	}
	e2e.WaitFor(t, "queue "+id+" removed", 10*time.Second, func() bool { return cl.status(batchreq.PBS_BATCH_StatusQue, id) == nil })
	// the counter survives: the next reservation is R2
	cl.crash()
	if id := strings.TrimSpace(cl.must(cl.owner, "plus_reserve", "-s", "+3h", "-D", "10m", "-n", "1")); id != "R2" {
		t.Errorf("after a destroy and a crash plus_reserve printed %q, want R2", id)
	}
}

// TestReservationWindow: reservation R1 for two of the three nodes
// starts 25 s after it is made and lasts 45 s. Before the start a job
// already running on n1 keeps running, a long job goes to the free n3, a
// second long job waits with a comment naming R1, and R1's jobs (qsub -q
// R1, -W x=ADVRES:R1) wait with a comment saying when R1 begins. At the
// start the job on n1 is requeued and R1's jobs run on n1 and n2; at the
// end the job still running there is deleted (accounting D record, mail
// to its owner), the queue removed, plus_status shows R1 done and
// plus_account reports its usage.
func TestReservationWindow(t *testing.T) {
	cl := newCluster(t)
	foreign := cl.submit("foreign", 600, "-l", "walltime=01:00:00")
	e2e.WaitFor(t, "job "+foreign+" running", 60*time.Second, func() bool { return cl.job(foreign)["job_state"] == "R" })
	if h := cl.job(foreign)["exec_host"]; !strings.HasPrefix(h, "n1/") {
		t.Fatalf("the first job runs on %q, want n1", h)
	}
	id := strings.TrimSpace(cl.must(cl.owner, "plus_reserve", "-s", "+25s", "-D", "45s", "-n", "2"))
	if id != "R1" {
		t.Fatalf("plus_reserve printed %q", id)
	}
	if out := cl.must(cl.owner, "plus_status", "-n", "-r", id); !strings.Contains(out, "n1,n2") && !strings.Contains(out, "n1+n2") {
		t.Errorf("plus_status -n:\n%s", out)
	}
	long := cl.submit("long", 600, "-l", "walltime=01:00:00")
	e2e.WaitFor(t, "job "+long+" running", 30*time.Second, func() bool { return cl.job(long)["job_state"] == "R" })
	if h := cl.job(long)["exec_host"]; !strings.HasPrefix(h, "n3/") {
		t.Errorf("the long job runs on %q, want n3 (n1 and n2 are reserved)", h)
	}
	long2 := cl.submit("long2", 600, "-l", "walltime=01:00:00")
	e2e.WaitFor(t, "job "+long2+" commented", 30*time.Second, func() bool {
		// pbs_sched's comment: it read R1 and booked its nodes
		return strings.HasPrefix(cl.job(long2)["comment"], "Not Running: nodes reserved by "+id+" from ")
	})
	inQueue := cl.submit("inresv", 5, "-q", id, "-l", "walltime=00:00:20")
	advres := cl.submit("advres", 600, "-W", "x=ADVRES:"+id, "-l", "walltime=01:00:00")
	if q := cl.job(advres)["queue"]; q != id {
		t.Errorf("-W x=ADVRES:%s: queue %q", id, q)
	}
	if _, errOut, code := cl.run(cl.stranger, "qsub", "-q", id, filepath.Join(cl.work, "inresv.sh")); code == 0 {
		t.Errorf("a stranger submitted into %s: %q", id, errOut)
	}
	e2e.WaitFor(t, "job "+inQueue+" commented", 10*time.Second, func() bool {
		return strings.HasPrefix(cl.job(inQueue)["comment"], "Not Running: reservation "+id+" begins at ")
	})
	if st := cl.job(inQueue)["job_state"]; st != "Q" {
		t.Fatalf("job %s of %s is %s before the start", inQueue, id, st)
	}

	e2e.WaitFor(t, id+" running", 60*time.Second, func() bool { return cl.resvState(id) == "RUNNING" })
	e2e.WaitFor(t, "job "+foreign+" requeued", 30*time.Second, func() bool { return cl.job(foreign)["job_state"] == "Q" })
	if !strings.Contains(cl.accounting(), ";R;"+foreign+";") || !strings.Contains(cl.accounting(), ";B;"+id+";") {
		t.Errorf("no R record of %s or B record of %s:\n%s", foreign, id, cl.accounting())
	}
	var hosts []string
	for _, j := range []string{inQueue, advres} {
		e2e.WaitFor(t, "job "+j+" started in "+id, 30*time.Second, func() bool {
			st := cl.job(j)
			return st == nil || st["exec_host"] != "" || st["job_state"] == "C"
		})
		hosts = append(hosts, cl.job(j)["exec_host"])
	}
	for _, h := range hosts {
		if !strings.HasPrefix(h, "n1/") && !strings.HasPrefix(h, "n2/") {
			t.Errorf("a job of %s ran on %q, outside n1 and n2 (%q)", id, h, hosts)
		}
	}
	if st := cl.job(long2)["job_state"]; st != "Q" {
		t.Errorf("job %s outside %s is %s during the window", long2, id, st)
	}

	e2e.WaitFor(t, id+" done", 90*time.Second, func() bool {
		out, _, _ := cl.run(nil, "plus_status", "-ne", "5", "-x")
		return strings.Contains(out, "<state>DONE</state>")
	})
	e2e.WaitFor(t, "job "+advres+" deleted", 60*time.Second, func() bool {
		st := cl.job(advres)
		return st == nil || st["job_state"] == "C"
	})
	if !strings.Contains(cl.accounting(), ";D;"+advres+";requestor=root@") || !strings.Contains(cl.accounting(), ";F;"+id+";") {
		t.Errorf("no D record of %s or F record of %s:\n%s", advres, id, cl.accounting())
	}
	e2e.WaitFor(t, "queue "+id+" removed", 30*time.Second, func() bool { return cl.status(batchreq.PBS_BATCH_StatusQue, id) == nil })
	if mail, _ := os.ReadFile(cl.mailFile); !strings.Contains(string(mail), advres) {
		t.Errorf("no mail about %s:\n%s", advres, mail)
	}
	report := cl.must(nil, "plus_account", "-l", "-f", filepath.Join(cl.acctDir, time.Now().Format("20060102")), "-d", "1")
	// R1's line: two nodes, done, its nodes, the two jobs that ran in it
	found := false
	for _, line := range strings.Split(report, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == id {
			found = true
			if f[1] != ownerUser || f[len(f)-1] != "2" || !slices.Contains(f, "n1+n2") || !slices.Contains(f, "DONE") {
				t.Errorf("plus_account -l line of %s: %q", id, line)
			}
		}
	}
	if !found {
		t.Errorf("plus_account -l does not list %s:\n%s", id, report)
	}
}
