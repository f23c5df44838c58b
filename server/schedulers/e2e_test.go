package schedulers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/testcluster"
	"gopbs/tools/pbsbench/load"
)

// The end-to-end test of several schedulers runs pbs_server, the
// pbs_sched processes it starts for two sched objects, and nine simulated
// nodes (tools/nodesim) as processes on loopback ports in a temporary
// PBS_HOME. pbs_server and nodesim run in private mount namespaces whose
// /etc/hosts names the simulated nodes (the schedulers inherit the
// server's); the clients (qmgr, qterm) find the server through
// PBS_DEFAULT and HOSTALIASES.

type cluster struct {
	*testcluster.Cluster
	t                       *testing.T
	bin, base, home         string
	svPort, momPort, rmPort int
	server                  *e2e.Daemon
	dialer                  *load.Dialer
}

// inNamespace returns a command running program in the daemons' private
// mount namespace, where the hosts file nodesim wrote is /etc/hosts.
func (c *cluster) inNamespace(program string, args ...string) *exec.Cmd {
	return c.Command(nil, program, args...)
}

// run runs a client command as root and returns its output and status.
func (c *cluster) run(stdin string, program string, args ...string) (string, string, int) {
	c.t.Helper()
	return c.runAt(c.svPort, stdin, program, args...)
}

func (c *cluster) runAt(port int, stdin string, program string, args ...string) (string, string, int) {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, program), args...)
	cmd.Dir = c.base
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PBS_DEFAULT=localhost:" + strconv.Itoa(port), "LANG=C",
		"HOSTALIASES=" + filepath.Join(c.base, "hostaliases"), "HOME=/root", "LOGNAME=root", "USER=root"}
	cmd.Stdin = strings.NewReader(stdin)
	return e2e.Run(c.t, cmd, 60*time.Second)
}

// qmgr runs qmgr commands that must succeed.
func (c *cluster) qmgr(cmds ...string) {
	c.t.Helper()
	for _, cmd := range cmds {
		if out, errOut, code := c.run("", "qmgr", "-a", "-c", cmd); code != 0 {
			c.t.Fatalf("qmgr -c %q: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
}

// do sends one request over a privileged connection.
func (c *cluster) do(reqs ...*batchreq.Request) []*batchreq.Reply {
	c.t.Helper()
	conn, err := c.dialer.Dial()
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	var out []*batchreq.Reply
	for _, r := range reqs {
		p, err := conn.Do(r)
		if err != nil {
			c.t.Fatalf("request %s: %v", batchreq.RequestName(r.Type), err)
		}
		out = append(out, p)
	}
	return out
}

// jobs returns job name → "state exec_host queue".
func (c *cluster) jobs() map[string]string {
	c.t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}))[0]
	out := map[string]string{}
	for _, o := range p.Status {
		var name, st, host, queue string
		for _, a := range o.Attrs {
			switch a.Name {
			case "Job_Name":
				name = a.Value
			case "job_state":
				st = a.Value
			case "exec_host":
				host = a.Value
			case "queue":
				queue = a.Value
			}
		}
		out[name] = st + " " + host + " " + queue
	}
	return out
}

// schedAttr returns an attribute of a sched object.
func (c *cluster) schedAttr(name, attr string) string {
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSched, "root", &batchreq.StatusReq{ID: name}))[0]
	for _, o := range p.Status {
		for _, a := range o.Attrs {
			if a.Name == attr {
				return a.Value
			}
		}
	}
	return ""
}

// lockPID returns the pid in a scheduler's lock file.
func lockPID(priv string) int {
	b, _ := os.ReadFile(filepath.Join(priv, "sched.lock"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func newCluster(t *testing.T) *cluster {
	e2e.RequireNamespaces(t)
	tc := testcluster.New(t, testcluster.Options{Programs: []string{"nodesim", "qmgr", "qterm", "pbs_iff"}})
	c := &cluster{Cluster: tc, t: t, bin: tc.Programs.Dir, base: tc.Base, home: tc.ServerHome,
		svPort: tc.Ports.Server, momPort: tc.Ports.Mom, rmPort: tc.Ports.RM}
	e2e.WriteFile(t, filepath.Join(c.base, "hostaliases"), "localhost 127.0.0.1\n")
	e2e.LogFilesOnFailure(t, 20000, filepath.Join(c.home, "sched_logs_*", "*"), filepath.Join(c.home, "sched_priv_*", "sched_out"))
	tc.Hosts = filepath.Join(c.base, "hosts")
	cmd := exec.Command(filepath.Join(c.bin, "nodesim"), "-n", "9", "-hosts", tc.Hosts)
	if _, errOut, code := e2e.Run(t, cmd, 30*time.Second); code != 0 {
		t.Fatalf("nodesim -hosts: %s", errOut)
	}
	c.server = tc.StartServer("create", "-a", "false")
	c.dialer = &load.Dialer{Addr: fmt.Sprintf("127.0.0.1:%d", c.svPort), User: "root", Timeout: 30 * time.Second}
	t.Cleanup(func() {
		// the schedulers lead process groups of their own
		for _, s := range []string{"s1", "s2"} {
			if pid := lockPID(filepath.Join(c.home, "sched_priv_"+s)); alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return c
}

// TestSeveralSchedulers: two GoPBS schedulers with different policies
// over two partitions of four simulated nodes each.
func TestSeveralSchedulers(t *testing.T) {
	c := newCluster(t)
	ps := strconv.Itoa
	c.qmgr("set server managers = root@localhost", "set server keep_completed = 0", "set server acl_roots = root",
		"create queue q1 queue_type = execution", "set queue q1 partition = p1, enabled = true, started = true",
		"create queue q2 queue_type = execution", "set queue q2 partition = p2, enabled = true, started = true",
		"create queue q4 queue_type = route")
	e2e.Start(t, "nodesim", c.inNamespace("nodesim", "-server", fmt.Sprintf("127.0.0.1:%d", c.svPort), "-n", "9",
		"-np", "1", "-rmport", ps(c.rmPort), "-momport", ps(c.momPort), "-interval", "5s", "-create"))
	e2e.WaitFor(t, "nine free nodes", 60*time.Second, func() bool {
		p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: ":ALL"}))[0]
		free := 0
		for _, o := range p.Status {
			for _, a := range o.Attrs {
				if a.Name == "state" && a.Value == "free" {
					free++
				}
			}
		}
		return free == 9
	})
	for i := 1; i <= 9; i++ {
		part := "p1"
		switch {
		case i == 9:
			part = "p9" // no scheduler's: idle until it moves to p1
		case i > 4:
			part = "p2"
		}
		c.qmgr(fmt.Sprintf("set node simnode%05d partition = %s", i, part))
	}

	// The partition rules and their codes, as qmgr prints them.
	for _, tc := range []struct{ cmd, stderr string }{
		{"s q q4 partition=p1", "qmgr obj=q4 svr=default: Can not assign a partition to route queue\nqmgr: Error (15217) returned from server\n"},
		{"s q q1 queue_type=route", "qmgr obj=q1 svr=default: Route queues are incompatible with the partition attribute queue_type\nqmgr: Error (15218) returned from server\n"},
		{"s n simnode00005 queue=q1", "qmgr obj=simnode00005 svr=default: Partition p2 is not part of queue for node\nqmgr: Error (15220) returned from server\n"},
	} {
		out, errOut, code := c.run("", "qmgr", "-c", tc.cmd)
		if errOut != tc.stderr || out != "" || code != 0 {
			t.Errorf("qmgr -c %q: exit %d, stdout %q, stderr %q, want %q", tc.cmd, code, out, errOut, tc.stderr)
		}
	}
	c.qmgr("set node simnode00001 queue = q1")
	for _, tc := range []struct{ cmd, stderr string }{
		{"s n simnode00001 partition=p2", "qmgr obj=simnode00001 svr=default: Queue q1 is not part of partition for node\nqmgr: Error (15219) returned from server\n"},
		{"s q q1 partition=p2", "qmgr obj=q1 svr=default: Invalid partition in queue\nqmgr: Error (15221) returned from server\n"},
	} {
		out, errOut, code := c.run("", "qmgr", "-c", tc.cmd)
		if errOut != tc.stderr || out != "" || code != 0 {
			t.Errorf("qmgr -c %q: exit %d, stdout %q, stderr %q, want %q", tc.cmd, code, out, errOut, tc.stderr)
		}
	}

	// Two schedulers with different policies: s1 first come first
	// served, s2 shortest job first.
	schedPorts := e2e.FreePorts(t, 2)
	for i, s := range []string{"s1", "s2"} {
		priv := filepath.Join(c.home, "sched_priv_"+s)
		if err := os.MkdirAll(priv, 0o750); err != nil {
			t.Fatal(err)
		}
		policy := map[string]string{"s1": "sort_by: no_sort\tALL\n", "s2": "sort_by: shortest_job_first\tALL\n"}[s]
		e2e.WriteFile(t, filepath.Join(priv, "sched_config"), "by_queue: True\tALL\nstrict_fifo: false\tALL\nhelp_starving_jobs\tfalse\tALL\n"+policy)
		c.qmgr("create sched "+s, fmt.Sprintf("set sched %s port = %d", s, schedPorts[i]))
	}
	c.qmgr("set sched s1 partitions = p1", "set sched s2 partitions = 'p2'")
	out, errOut, _ := c.run("", "qmgr", "-c", "set sched s2 partitions += p1")
	if want := "qmgr obj=s2 svr=default: Partition p1 is already associated with scheduler s1\nqmgr: Error (15222) returned from server\n"; errOut != want {
		t.Errorf("second owner of p1: stdout %q stderr %q, want %q", out, errOut, want)
	}

	// Queue the jobs first: cput 5h, 4h, ... 1h in q1 and 6h ... 1h
	// in q2 (the jobs of simulated nodes run until deleted).
	conn, err := c.dialer.Dial()
	if err != nil {
		t.Fatal(err)
	}
	submit := func(queue, name string, hours int) {
		t.Helper()
		j := &load.Job{Queue: queue, Name: name, Extra: load.ResourceList(fmt.Sprintf("cput=%02d:00:00", hours))}
		if _, err := conn.Submit(j); err != nil {
			t.Fatalf("submit %s: %v", name, err)
		}
	}
	for i := 1; i <= 5; i++ {
		submit("q1", fmt.Sprintf("a%d", i), 6-i)
	}
	for i := 1; i <= 6; i++ {
		submit("q2", fmt.Sprintf("b%d", i), 7-i)
	}
	conn.Close()
	c.qmgr("set sched s1 scheduling = true", "set sched s2 scheduling = true")

	wantRun := map[string]string{"a1": "1", "a2": "2", "a3": "3", "a4": "4", "b3": "", "b4": "", "b5": "", "b6": ""}
	e2e.WaitFor(t, "eight running jobs", 60*time.Second, func() bool {
		n := 0
		for _, v := range c.jobs() {
			if strings.HasPrefix(v, "R ") {
				n++
			}
		}
		return n == 8
	})
	jobs := c.jobs()
	for name, v := range jobs {
		_, runs := wantRun[name]
		running := strings.HasPrefix(v, "R ")
		if running != runs {
			t.Errorf("job %s: %q, running should be %v", name, v, runs)
		}
		if !running {
			continue
		}
		n, _ := strconv.Atoi(regexp.MustCompile(`simnode0*(\d+)`).FindStringSubmatch(v)[1])
		if strings.HasPrefix(name, "a") && (n < 1 || n > 4) || strings.HasPrefix(name, "b") && (n < 5 || n > 8) {
			t.Errorf("job %s ran outside its partition: %s", name, v)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// Each job was run by its partition's scheduler: its log says so. A
	// scheduler holds its log lines until the end of its cycle, so a job
	// the server shows running may not be in the log yet: wait for every
	// running job's "Job Run" line, then see whose log it is in.
	ids := map[string]string{} // job id → name
	for _, o := range c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}))[0].Status {
		for _, a := range o.Attrs {
			if a.Name == "Job_Name" {
				ids[o.Name] = a.Value
			}
		}
	}
	logs := map[string]string{}
	e2e.WaitFor(t, "the schedulers' Job Run lines of the running jobs", 30*time.Second, func() bool {
		for _, s := range []string{"s1", "s2"} {
			logs[s] = c.schedLog(s)
		}
		for id, name := range ids {
			if _, runs := wantRun[name]; runs && !strings.Contains(logs["s1"]+logs["s2"], "Job;"+id+";Job Run") {
				return false
			}
		}
		return true
	})
	for s, prefix := range map[string]string{"s1": "a", "s2": "b"} {
		for id, name := range ids {
			_, runs := wantRun[name]
			inLog := strings.Contains(logs[s], "Job;"+id+";Job Run")
			mine := strings.HasPrefix(name, prefix)
			if runs && mine != inLog {
				t.Errorf("scheduler %s log: job %s (%s) run there: %v", s, id, name, inLog)
			}
		}
	}
	if st := c.schedAttr("s1", "state"); st != "IDLE" && st != "SCHEDULING" {
		t.Errorf("s1 state %q", st)
	}

	// A connection that names itself sees its scheduler's slice only,
	// and may not run a job outside it.
	hello := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SchedHello, "root", &batchreq.StatusReq{ID: "s2"}),
		batchreq.NewRequest(batchreq.PBS_BATCH_StatusQue, "root", &batchreq.StatusReq{}),
		batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: ":ALL"}),
		batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: jobID(t, c, "a5")}))
	if hello[0].Code != 0 || len(hello[1].Status) != 1 || hello[1].Status[0].Name != "q2" || len(hello[2].Status) != 4 ||
		len(hello[3].Status) != 6 || hello[4].Code != batchreq.PBSE_PERM {
		t.Errorf("slice of s2: hello %d, %d queues, %d nodes, %d jobs, RunJob outside %d %q", hello[0].Code,
			len(hello[1].Status), len(hello[2].Status), len(hello[3].Status), hello[4].Code, hello[4].Text)
	}

	// Kill s1: the server starts it again and says so; s2's jobs go on.
	priv1 := filepath.Join(c.home, "sched_priv_s1")
	old := lockPID(priv1)
	if !alive(old) {
		t.Fatalf("s1's pid %d from its lock file is not alive", old)
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, "s1 restarted", 30*time.Second, func() bool {
		pid := lockPID(priv1)
		return pid != old && alive(pid) && strings.Contains(c.schedAttr("s1", "comment"), "restarted")
	})
	// the restarted s1 schedules again: a fifth node for p1 runs a5
	c.qmgr("set node simnode00009 partition = p1", "set sched s1 scheduler_iteration = 2")
	e2e.WaitFor(t, "a5 running on simnode00009", 30*time.Second, func() bool {
		return strings.HasPrefix(c.jobs()["a5"], "R simnode00009")
	})
	after := c.jobs()
	for name, v := range jobs {
		if strings.HasPrefix(name, "b") && after[name] != v {
			t.Errorf("s2's job %s changed while s1 restarted: %q → %q", name, v, after[name])
		}
	}

	c.dirChanges(priv1)

	// A scheduler left without partition says so in its log and shuts
	// down; it is started again when it has one (seed 003, interface 2).
	privS2 := filepath.Join(c.home, "sched_priv_s2")
	oldS2 := lockPID(privS2)
	c.qmgr("unset sched s2 partitions")
	e2e.WaitFor(t, "s2 shut down for having no partition", 30*time.Second, func() bool {
		return !alive(oldS2) && c.schedAttr("s2", "state") == "DOWN" &&
			c.schedAttr("s2", "comment") == "Scheduler does not contain a partition" &&
			strings.Contains(c.schedLog("s2"), ";Scheduler does not contain a partition")
	})
	c.qmgr("set sched s2 partitions = p2")
	e2e.WaitFor(t, "s2 running again with its partition", 30*time.Second, func() bool {
		pid := lockPID(privS2)
		return pid != oldS2 && alive(pid) && c.schedAttr("s2", "comment") == ""
	})

	// print recreates the configuration on another server.
	c.qmgr("set sched s1 scheduling = false", "set sched s2 scheduling = false")
	var dump string
	for _, what := range []string{"print server", "print node", "print sched"} {
		out, errOut, code := c.run("", "qmgr", "-c", what)
		if code != 0 {
			t.Fatalf("qmgr -c %q: %d %s", what, code, errOut)
		}
		dump += out
	}
	// node states and statuses are the MOMs' to report (and their
	// values do not read back)
	dump = regexp.MustCompile(`(?m)^set node \S+ (state|status|jobs) .*\n`).ReplaceAllString(dump, "")
	home2 := filepath.Join(c.base, "home2")
	if err := e2e.MakeHome(home2, "localhost"); err != nil {
		t.Fatal(err)
	}
	ports := e2e.FreePorts(t, 4)
	s2 := e2e.Start(t, "pbs_server2", c.inNamespace("pbs_server", "-D", "-f", "-t", "create", "-d", home2,
		"-p", ps(ports[0]), "-M", ps(ports[1]), "-R", ps(ports[2]), "-S", "127.0.0.1:"+ps(ports[3]), "-H", "localhost", "-a", "false"))
	s2.WaitListening(t, fmt.Sprintf("127.0.0.1:%d", ports[0]), 20*time.Second)
	if _, errOut, code := c.runAt(ports[0], dump, "qmgr"); code != 0 || errOut != "" {
		t.Fatalf("qmgr < dump: exit %d\n%s\ndump:\n%s", code, errOut, dump)
	}
	for _, what := range []string{"print sched", "print node simnode00001", "print queue q1"} {
		want, _, _ := c.run("", "qmgr", "-c", what)
		got, _, _ := c.runAt(ports[0], "", "qmgr", "-c", what)
		// node states and statuses are the MOMs' to report
		clean := func(s string) string {
			return regexp.MustCompile(`(?m)^set node \S+ (state|status|jobs) .*\n`).ReplaceAllString(s, "")
		}
		if clean(got) != clean(want) {
			t.Errorf("%s after qmgr < dump:\n%s\nwant\n%s", what, got, want)
		}
	}

	// qterm -s stops the server and the schedulers it runs.
	c.qmgr("set sched s2 scheduling = true")
	priv2 := filepath.Join(c.home, "sched_priv_s2")
	e2e.WaitFor(t, "s2 running again", 30*time.Second, func() bool { return alive(lockPID(priv2)) })
	pid2 := lockPID(priv2)
	if _, errOut, code := c.run("", "qterm", "-s"); code != 0 {
		t.Fatalf("qterm -s: %d %s", code, errOut)
	}
	c.server.Wait(t, 30*time.Second)
	e2e.WaitFor(t, "s2 stopped", 15*time.Second, func() bool { return !alive(pid2) })
}

// schedLog returns the text of scheduler s's logs.
func (c *cluster) schedLog(s string) string {
	files, _ := filepath.Glob(filepath.Join(c.home, "sched_logs_"+s, "*"))
	var text string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		text += string(b)
	}
	return text
}

func jobID(t *testing.T, c *cluster, name string) string {
	t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}))[0]
	for _, o := range p.Status {
		for _, a := range o.Attrs {
			if a.Name == "Job_Name" && a.Value == name {
				return o.Name
			}
		}
	}
	t.Fatalf("no job %s", name)
	return ""
}

// dirChanges changes s1's sched_log and sched_priv while it runs (seed
// 003, interface 2): the scheduler takes a new log directory on itself
// (no restart) and says so there; likewise a new sched_priv, where it
// then has its accounting file; a sched_priv without sched_config is
// one it cannot take on (its comment says so and its scheduling goes
// off); a sched_priv that fails the server's checks is refused by the
// server the same way.
func (c *cluster) dirChanges(priv1 string) {
	t := c.t
	pid := lockPID(priv1)
	logDir := filepath.Join(c.home, "sched_logs_s1_new")
	c.qmgr("set sched s1 sched_log = " + logDir)
	want := "Scheduler log directory is changed to " + logDir
	e2e.WaitFor(t, "s1 logging in its new directory", 30*time.Second, func() bool {
		logs, _ := filepath.Glob(filepath.Join(logDir, "*"))
		for _, l := range logs {
			if b, _ := os.ReadFile(l); strings.Contains(string(b), want) {
				return true
			}
		}
		return false
	})
	if now := lockPID(priv1); now != pid || !alive(pid) {
		t.Errorf("s1 restarted for a new sched_log: pid %d, was %d", now, pid)
	}

	privNew := filepath.Join(c.home, "sched_priv_s1_new")
	if err := os.MkdirAll(privNew, 0o750); err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(filepath.Join(priv1, "sched_config"))
	if err != nil {
		t.Fatal(err)
	}
	e2e.WriteFile(t, filepath.Join(privNew, "sched_config"), string(conf))
	c.qmgr("set sched s1 sched_priv = " + privNew)
	want = "Scheduler priv directory is changed to " + privNew
	e2e.WaitFor(t, "s1 taking on its new sched_priv", 30*time.Second, func() bool {
		logs, _ := filepath.Glob(filepath.Join(logDir, "*"))
		for _, l := range logs {
			if b, _ := os.ReadFile(l); strings.Contains(string(b), want) {
				return true
			}
		}
		return false
	})
	if accts, _ := filepath.Glob(filepath.Join(privNew, "accounting", "*")); len(accts) != 1 {
		t.Errorf("accounting files in the new sched_priv: %q, want today's", accts)
	}
	// not restarted, and its lock file moved with its sched_priv
	if now := lockPID(privNew); now != pid || !alive(pid) {
		t.Errorf("s1's lock file in the new sched_priv: pid %d, want %d (not restarted)", now, pid)
	}
	if _, err := os.Stat(filepath.Join(priv1, "sched.lock")); !os.IsNotExist(err) {
		t.Errorf("s1's lock file is still in the old sched_priv: %v", err)
	}

	empty := filepath.Join(c.home, "sched_priv_empty")
	if err := os.MkdirAll(empty, 0o750); err != nil {
		t.Fatal(err)
	}
	c.qmgr("set sched s1 sched_priv = " + empty)
	e2e.WaitFor(t, "s1 refusing a sched_priv without sched_config", 30*time.Second, func() bool {
		return c.schedAttr("s1", "comment") == "Unable to change the sched_priv directory" && c.schedAttr("s1", "scheduling") == "False"
	})
	e2e.WaitFor(t, "s1 stopped", 30*time.Second, func() bool { return !alive(pid) && c.schedAttr("s1", "state") == "DOWN" })

	c.qmgr("set sched s1 sched_priv = "+priv1, "set sched s1 scheduling = true")
	e2e.WaitFor(t, "s1 running again", 30*time.Second, func() bool {
		return alive(lockPID(priv1)) && lockPID(priv1) != pid && c.schedAttr("s1", "state") != "DOWN"
	})
	c.qmgr("set sched s1 sched_priv = " + filepath.Join(c.home, "no_such_dir"))
	e2e.WaitFor(t, "the server refusing a sched_priv that fails its checks", 30*time.Second, func() bool {
		return c.schedAttr("s1", "comment") == "PBS failed validation checks for sched_priv directory" && c.schedAttr("s1", "scheduling") == "False"
	})
	c.qmgr("set sched s1 sched_priv = " + priv1)
}
