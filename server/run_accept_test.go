package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

// acceptCluster is a pbs_server and a pbs_mom run as processes in
// temporary homes on loopback ports, for the end-to-end acceptance test.
type acceptCluster struct {
	t                       *testing.T
	bins                    e2e.Programs
	base, svHome, momHome   string
	outDir                  string
	svPort, momPort, rmPort int
	schedPort               int
	server                  *e2e.Daemon
	c                       *client
	uid, gid                int
	userHome                string
}

func (ac *acceptCluster) startServer(init string) {
	ps := strconv.Itoa
	args := []string{"-D", "-d", ac.svHome, "-p", ps(ac.svPort), "-M", ps(ac.momPort), "-R", ps(ac.rmPort),
		"-S", ps(ac.schedPort), "-H", "localhost", "-t", init}
	if init == "create" {
		args = append(args, "-f")
	}
	ac.server = e2eStart(ac.t, ac.bins.Path("pbs_server"), args...)
	ac.c = e2eDial(ac.t, ac.svPort)
}

// submit queues a job owned by the test user with its working directory
// outDir; attrs are added to (or replace) the defaults.
func (ac *acceptCluster) submit(name, script string, attrs ...batchreq.Attr) string {
	t := ac.t
	t.Helper()
	list := batchreq.AttrList{
		attr("Job_Name", name), attr("Job_Owner", e2eJobUser+"@localhost"), attr("Checkpoint", "u"),
		attr("Join_Path", "n"), attr("Keep_Files", "n"), attr("Rerunable", "True"),
		attr("Variable_List", "PBS_O_HOME="+ac.userHome+",PBS_O_WORKDIR="+ac.outDir+",PBS_O_HOST=localhost,PBS_O_QUEUE=batch"),
	}
	list = append(list, attrs...)
	p := ac.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list}))
	if p.Code != 0 {
		t.Fatalf("QueueJob %s: %d %s", name, p.Code, p.Text)
	}
	id := p.JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte(script)}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	} {
		if p := ac.c.do(r); p.Code != 0 {
			t.Fatalf("%s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
	}
	return id
}

func (ac *acceptCluster) run(id string) {
	ac.t.Helper()
	if p := ac.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		ac.t.Fatalf("RunJob %s: %d %s", id, p.Code, p.Text)
	}
}

func (ac *acceptCluster) attr(id, name string) string { return jobAttr(ac.t, ac.c, id, name) }

func (ac *acceptCluster) waitState(id, state string, d time.Duration) {
	ac.t.Helper()
	e2e.WaitFor(ac.t, "job "+id+" in state "+state, d, func() bool { return ac.attr(id, "job_state") == state })
}

// accounting returns today's accounting records.
func (ac *acceptCluster) accounting() string {
	b, _ := os.ReadFile(filepath.Join(ac.svHome, "server_priv", "accounting", time.Now().Format("20060102")))
	return string(b)
}

// record returns the accounting record of type typ for job id.
func (ac *acceptCluster) record(typ, id string) string {
	for _, l := range strings.Split(ac.accounting(), "\n") {
		if strings.Contains(l, ";"+typ+";"+id+";") {
			return l
		}
	}
	return ""
}

func (ac *acceptCluster) readOut(name string) string {
	b, err := os.ReadFile(filepath.Join(ac.outDir, name))
	if err != nil {
		ac.t.Errorf("output file %s: %v", name, err)
	}
	return string(b)
}

func seqOf(id string) string { s, _, _ := strings.Cut(id, "."); return s }

// TestEndToEndAcceptance runs pbs_server and pbs_mom as root with an
// unprivileged job user and checks issue 6's single-node acceptance
// points end to end: the job runs as the user with the PBS environment
// and working directory; its output files arrive under their default
// names with the right contents; exit status and resources_used are
// recorded; the accounting S and E records are right; an afterok child
// is released; qdel kills the job's whole process tree; walltime overrun
// is killed; and a server crash and restart while jobs run loses none.
func TestEndToEndAcceptance(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports and setuid job execution")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	u := e2eUser(t)
	base := e2e.Dir(t)
	ports := e2e.FreePorts(t, 4)
	ac := &acceptCluster{t: t, base: base, svHome: filepath.Join(base, "server"), momHome: filepath.Join(base, "mom"),
		outDir: filepath.Join(base, "out"), svPort: ports[0], momPort: ports[1], rmPort: ports[2], schedPort: ports[3]}
	ac.bins = e2e.Build(t, "pbs_server", "pbs_mom")
	ac.uid, ac.gid = u.UID, u.GID
	ac.userHome = u.HomeDir
	os.MkdirAll(ac.outDir, 0o755)
	os.Chown(ac.outDir, ac.uid, ac.gid)
	for _, h := range []string{ac.svHome, ac.momHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	e2e.WriteFile(t, filepath.Join(ac.momHome, "mom_priv", "config"), "$pbsserver localhost\n$status_update_time 2\n$check_poll_time 1\n")
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(base, "*", "*_logs", "*"))
			for _, f := range logs {
				b, _ := os.ReadFile(f)
				t.Logf("%s:\n%s", f, b)
			}
			t.Logf("accounting:\n%s", ac.accounting())
		}
	})

	ac.startServer("create")
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("default_queue", "batch"), attr("keep_completed", "300")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "localhost", attr("np", "8")),
	} {
		if p := ac.c.do(r); p.Code != 0 {
			t.Fatalf("setup: %d %s", p.Code, p.Text)
		}
	}
	e2eStart(t, ac.bins.Path("pbs_mom"), "-D", "-d", ac.momHome, "-H", "localhost", "-M", strconv.Itoa(ac.momPort),
		"-R", strconv.Itoa(ac.rmPort), "-S", strconv.Itoa(ac.svPort))
	e2e.WaitFor(t, "the MOM's first IS_STATUS", 20*time.Second, func() bool {
		return strings.Contains(e2eNodeStatus(t, ac.c), "opsys=linux")
	})

	t.Run("user, environment, output, exit status, accounting", func(t *testing.T) {
		ac.t = t
		id := ac.submit("envjob", "#!/bin/sh\n"+
			"echo user=$(id -un) pwd=$(pwd) home=$HOME\n"+
			"echo jobid=$PBS_JOBID name=$PBS_JOBNAME queue=$PBS_QUEUE env=$PBS_ENVIRONMENT\n"+
			"echo workdir=$PBS_O_WORKDIR ohost=$PBS_O_HOST nodes=$(cat $PBS_NODEFILE)\n"+
			"echo to stderr >&2\nexit 3\n", rattr("Resource_List", "nodes", "1"))
		ac.run(id)
		ac.waitState(id, "C", 30*time.Second)
		want := fmt.Sprintf("user=%s pwd=%s home=%s\njobid=%s name=envjob queue=batch env=PBS_BATCH\nworkdir=%s ohost=localhost nodes=localhost\n",
			e2eJobUser, ac.userHome, ac.userHome, id, ac.outDir)
		if got := ac.readOut("envjob.o" + seqOf(id)); got != want {
			t.Errorf("stdout\n got %q\nwant %q", got, want)
		}
		if got := ac.readOut("envjob.e" + seqOf(id)); got != "to stderr\n" {
			t.Errorf("stderr %q", got)
		}
		if st := ac.attr(id, "exit_status"); st != "3" {
			t.Errorf("exit_status %q, want 3", st)
		}
		for _, r := range []string{"cput", "mem", "vmem", "walltime"} {
			if ac.attr(id, "resources_used."+r) == "" {
				t.Errorf("resources_used.%s not recorded", r)
			}
		}
		common := "user=" + e2eJobUser + " group="
		s, e := ac.record("S", id), ac.record("E", id)
		for _, w := range []string{common, " jobname=envjob queue=batch ", " owner=" + e2eJobUser + "@localhost exec_host=localhost/"} {
			if !strings.Contains(s, w) {
				t.Errorf("S record lacks %q: %q", w, s)
			}
			if !strings.Contains(e, w) {
				t.Errorf("E record lacks %q: %q", w, e)
			}
		}
		for _, w := range []string{" Resource_List.neednodes=1 Resource_List.nodect=1 Resource_List.nodes=1", " session=", " end="} {
			if !strings.Contains(e, w) {
				t.Errorf("E record lacks %q: %q", w, e)
			}
		}
		// The usage follows Exit_status, in name order, no trailing
		// blank (TORQUE 2.5.13 stops at Exit_status; later releases and
		// OpenPBS append it: a deliberate difference, issue 14 item 7).
		usage := " Exit_status=3"
		for _, r := range []string{"cput", "mem", "vmem", "walltime"} {
			usage += " resources_used." + r + "=" + ac.attr(id, "resources_used."+r)
		}
		if !strings.HasSuffix(e, usage) {
			t.Errorf("E record %q, want it to end with %q", e, usage)
		}
		if strings.Contains(s, " end=") || strings.Contains(s, "Exit_status") {
			t.Errorf("S record %q", s)
		}
	})

	t.Run("afterok child released", func(t *testing.T) {
		ac.t = t
		parent := ac.submit("parent", "#!/bin/sh\nsleep 1\n")
		child := ac.submit("child", "#!/bin/sh\necho child ran\n", attr("depend", "afterok:"+parent))
		if st := ac.attr(child, "job_state"); st != "H" {
			t.Fatalf("child state %q before its parent ran, want H", st)
		}
		ac.run(parent)
		ac.waitState(parent, "C", 30*time.Second)
		ac.waitState(child, "Q", 10*time.Second)
		ac.run(child)
		ac.waitState(child, "C", 30*time.Second)
		if got := ac.readOut("child.o" + seqOf(child)); got != "child ran\n" {
			t.Errorf("child output %q", got)
		}
	})

	t.Run("qdel kills the process tree", func(t *testing.T) {
		ac.t = t
		pids := filepath.Join(ac.outDir, "tree.pids")
		id := ac.submit("tree", "#!/bin/sh\n"+
			"sleep 300 & echo $! >> "+pids+"\n"+
			"( sleep 300 & echo $! >> "+pids+"; wait ) &\n"+
			"echo $! >> "+pids+"\nwait\n")
		ac.run(id)
		e2e.WaitFor(t, "the job's processes", 20*time.Second, func() bool {
			b, _ := os.ReadFile(pids)
			return strings.Count(string(b), "\n") == 3
		})
		d := batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})
		if p := ac.c.do(d); p.Code != 0 {
			t.Fatalf("qdel: %d %s", p.Code, p.Text)
		}
		ac.waitState(id, "C", 30*time.Second)
		b, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			e2e.WaitFor(t, "process "+f+" to end", 10*time.Second, func() bool { return processGone(pid) })
		}
		if e := ac.record("E", id); !strings.Contains(e, "Exit_status=271") {
			t.Errorf("E record of the deleted job: %q", e)
		}
	})

	t.Run("walltime overrun killed", func(t *testing.T) {
		ac.t = t
		start := time.Now()
		id := ac.submit("wall", "#!/bin/sh\nsleep 120\n", rattr("Resource_List", "walltime", "00:00:02"))
		ac.run(id)
		ac.waitState(id, "C", 40*time.Second)
		if st := ac.attr(id, "exit_status"); st != "-10" {
			t.Errorf("exit_status %q, want -10 (JOB_EXEC_OVERLIMIT)", st)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("killed after %v", d)
		}
	})

	t.Run("server crash and restart loses no job", func(t *testing.T) {
		ac.t = t
		running := ac.submit("survivor", "#!/bin/sh\nsleep 4\necho survived\n")
		queued := ac.submit("waiting", "#!/bin/sh\necho waited\n")
		ac.run(running)
		ac.waitState(running, "R", 20*time.Second)
		// SIGKILL: no orderly shutdown. The job ends while the server is
		// down; MOM keeps its obit until the server is back.
		ac.server.Kill()
		time.Sleep(5 * time.Second)
		ac.startServer("warm")
		ac.waitState(running, "C", 60*time.Second)
		if st := ac.attr(running, "exit_status"); st != "0" {
			t.Errorf("exit_status of the job that ran across the restart: %q", st)
		}
		if got := ac.readOut("survivor.o" + seqOf(running)); got != "survived\n" {
			t.Errorf("output of the job that ran across the restart: %q", got)
		}
		if st := ac.attr(queued, "job_state"); st != "Q" {
			t.Errorf("queued job after the restart: state %q", st)
		}
		// The node is back once its MOM has said hello to the restarted
		// server; until then RunJob is refused with PBSE_RESCUNAV (15046).
		e2e.WaitFor(t, "RunJob of the queued job accepted", 30*time.Second, func() bool {
			p := ac.c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: queued}))
			if p.Code != 0 && p.Code != batchreq.PBSE_RESCUNAV {
				t.Fatalf("RunJob %s: %d %s", queued, p.Code, p.Text)
			}
			return p.Code == 0
		})
		ac.waitState(queued, "C", 30*time.Second)
	})
}

// processGone reports whether pid has exited (a zombie counts: its
// parent, not the MOM, reaps it).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}
