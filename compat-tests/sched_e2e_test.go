package compattests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
)

// The scheduler end-to-end suite runs the real daemons built from the
// tree — pbs_server, pbs_mom and pbs_sched — as processes in temporary
// homes on loopback ports. Unprivileged users submit jobs with qsub
// (authenticated by the setuid-root pbs_iff); root configures the server
// with qmgr. Each scenario writes a sched_config, starts pbs_sched, queues
// its jobs with scheduling off, turns scheduling on and reads the order in
// which the jobs started from the server's accounting records (S), and the
// comments the scheduler gave jobs it could not run from qstat -f.
//
// The node has few slots (np=1 for the ordering scenarios), so jobs run
// one after the other and their order is the policy's.

// schedE2EUsers are the unprivileged accounts that submit jobs.
var schedE2EUsers = [2]string{"gopbssched1", "gopbssched2"}

// schedCluster is one pbs_server with one pbs_mom (node localhost), and
// the pbs_sched of the current scenario.
type schedCluster struct {
	t                                 *testing.T
	bin, base, work                   string
	svHome, momHome, schedHome        string
	svPort, momPort, rmPort, schdPort int
	users                             [2]*e2e.Account
	sched                             *e2e.Daemon
	mom                               *e2e.Daemon
	acctSeen                          map[string]int // accounting file → lines already returned
	// hosts, when set, is the hosts(5) file the daemons see (a mount
	// namespace of their own each): the multi-node cluster's.
	hosts string
}

// newSchedCluster builds the programs, starts pbs_server and pbs_mom and
// waits for node localhost to be free.
func newSchedCluster(t *testing.T) *schedCluster {
	t.Helper()
	e2e.RequireRoot(t, "setuid pbs_iff, reserved ports, jobs run as test users")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	c := &schedCluster{t: t, acctSeen: map[string]int{}}
	for i, name := range schedE2EUsers {
		c.users[i] = e2e.User(t, name)
		c.users[i].MakeHome(t) // pbs_mom starts the jobs there
	}
	c.bin = e2e.Build(t, "pbs_server", "pbs_mom", "pbs_sched", "pbs_iff", "qsub", "qstat", "qmgr", "pbsnodes").Dir
	c.base = e2e.Dir(t)
	c.work = filepath.Join(c.base, "work")
	c.svHome, c.momHome, c.schedHome = filepath.Join(c.base, "server"), filepath.Join(c.base, "mom"), filepath.Join(c.base, "sched")
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		t.Fatal(err)
	}
	// both users write job output here
	if err := os.Chmod(c.work, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{c.svHome, c.momHome, c.schedHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	e2e.WriteFile(t, filepath.Join(c.momHome, "mom_priv", "config"), "$pbsserver localhost\n$status_update_time 2\n")
	ports := e2e.FreePorts(t, 4)
	c.svPort, c.momPort, c.rmPort, c.schdPort = ports[0], ports[1], ports[2], ports[3]
	e2e.LogFilesOnFailure(t, 20000, filepath.Join(c.base, "*", "*_logs", "*"))
	ps := strconv.Itoa
	c.start("pbs_server", "-D", "-f", "-t", "create", "-d", c.svHome, "-p", ps(c.svPort), "-M", ps(c.momPort),
		"-R", ps(c.rmPort), "-S", "127.0.0.1:"+ps(c.schdPort), "-H", "localhost").WaitListening(t, c.addr(c.svPort), 10*time.Second)
	c.qmgr("set server scheduling = false",
		"set server scheduler_iteration = 2",
		"set server keep_completed = 0",
		"create node localhost np=1")
	c.mom = c.start("pbs_mom", "-D", "-d", c.momHome, "-H", "localhost", "-M", ps(c.momPort), "-R", ps(c.rmPort), "-S", ps(c.svPort))
	c.waitFor("node localhost to be free", 20*time.Second, func() bool {
		out, _, _ := c.run(-1, "pbsnodes", "localhost")
		return strings.Contains(out, "state = free") && strings.Contains(out, "opsys=")
	})
	return c
}

// start runs a daemon of the cluster; it is stopped when the (sub)test
// c.t ends.
func (c *schedCluster) start(name string, args ...string) *e2e.Daemon {
	c.t.Helper()
	return c.startEnv(name, name, nil, args...)
}

// startEnv is start of program name, called label in the test's output,
// with env added to its environment.
func (c *schedCluster) startEnv(label, name string, env []string, args ...string) *e2e.Daemon {
	c.t.Helper()
	if c.hosts != "" {
		return e2e.Start(c.t, label, e2e.HostsCommand(c.hosts, env, filepath.Join(c.bin, name), args...))
	}
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return e2e.Start(c.t, label, cmd)
}

// addr is the loopback address of port.
func (c *schedCluster) addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

func (c *schedCluster) waitFor(what string, d time.Duration, cond func() bool) {
	c.t.Helper()
	e2e.WaitFor(c.t, what, d, cond)
}

// run runs a client command as test user who (an index of users), or as
// root for who < 0.
func (c *schedCluster) run(who int, name string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.work
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PBS_DEFAULT=localhost:" + strconv.Itoa(c.svPort), "LANG=C", localhostAlias(c.t, c.work)}
	if who >= 0 {
		c.users[who].AsUser(cmd, "")
	} else {
		cmd.Env = append(cmd.Env, "HOME=/root", "LOGNAME=root", "USER=root")
	}
	return e2e.Run(c.t, cmd, 30*time.Second)
}

// qmgr runs each qmgr command as root.
func (c *schedCluster) qmgr(cmds ...string) {
	c.t.Helper()
	for _, cmd := range cmds {
		if out, errOut, code := c.run(-1, "qmgr", "-a", "-c", cmd); code != 0 {
			c.t.Fatalf("qmgr -c %q: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
}

// e2eJob is a job of a scenario.
type e2eJob struct {
	name  string
	user  int      // index into schedCluster.users
	queue string   // -q
	args  []string // more qsub options (-l, -p)
	sleep string   // seconds the job runs ("0" by default)
	// script, when set, is the job's script instead of the sleep.
	script string
}

// submit queues job j with qsub as its user and returns the job id.
func (c *schedCluster) submit(j e2eJob) string {
	c.t.Helper()
	sleep := j.sleep
	if sleep == "" {
		sleep = "0"
	}
	script := filepath.Join(c.work, j.name+".sh")
	text := "#!/bin/sh\nsleep " + sleep + "\n"
	if j.script != "" {
		text = j.script
	}
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		c.t.Fatal(err)
	}
	args := []string{"-N", j.name, "-j", "oe", "-o", "localhost:" + filepath.Join(c.work, j.name+".out")}
	if j.queue != "" {
		args = append(args, "-q", j.queue)
	}
	args = append(append(args, j.args...), script)
	out, errOut, code := c.run(j.user, "qsub", args...)
	if code != 0 {
		c.t.Fatalf("qsub %q as %s: exit %d\n%s%s", args, c.users[j.user].Name, code, out, errOut)
	}
	return strings.TrimSpace(out)
}

// startScheduler writes sched_config (and the other sched_priv files) and
// starts pbs_sched; the previous scenario's scheduler is stopped first.
func (c *schedCluster) startScheduler(schedConfig string, files map[string]string) {
	c.t.Helper()
	if c.sched != nil {
		c.sched.Stop()
	}
	priv := filepath.Join(c.schedHome, "sched_priv")
	for _, name := range []string{"sched_config", "resource_group", "usage", "holidays", "dedicated_time"} {
		_ = os.Remove(filepath.Join(priv, name))
	}
	if err := os.WriteFile(filepath.Join(priv, "sched_config"), []byte(schedConfig), 0o644); err != nil {
		c.t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(priv, name), []byte(text), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	ps := strconv.Itoa
	c.sched = c.start("pbs_sched", "-D", "-d", c.schedHome, "-S", ps(c.schdPort), "-R", ps(c.rmPort), "-listen", "127.0.0.1")
	c.sched.WaitListening(c.t, c.addr(c.schdPort), 10*time.Second)
}

// acctRecord is one line of the server's accounting file.
type acctRecord struct {
	kind, id string
}

// accounting returns the accounting records not returned before, in file
// order.
func (c *schedCluster) accounting() []acctRecord {
	files, _ := filepath.Glob(filepath.Join(c.svHome, "server_priv", "accounting", "*"))
	sort.Strings(files)
	var out []acctRecord
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// only complete lines: the server may be writing the last one
		lines := strings.Split(string(b), "\n")
		lines = lines[:len(lines)-1]
		for _, line := range lines[min(c.acctSeen[f], len(lines)):] {
			if fields := strings.SplitN(line, ";", 4); len(fields) >= 3 {
				out = append(out, acctRecord{kind: fields[1], id: fields[2]})
			}
		}
		c.acctSeen[f] = len(lines)
	}
	return out
}

// jobComment returns the comment attribute of job id (qstat -f, root).
func (c *schedCluster) jobComment(id string) string {
	out, _, _ := c.run(-1, "qstat", "-f", id)
	out = strings.ReplaceAll(out, "\n\t", "")
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "comment = "); ok {
			return v
		}
	}
	return ""
}

// schedScenario is one policy check.
type schedScenario struct {
	name        string
	schedConfig string
	files       map[string]string // other sched_priv files
	np          int               // slots of node localhost
	setup       []string          // qmgr commands before the jobs are queued
	teardown    []string          // qmgr commands after the scenario
	jobs        []e2eJob
	// pauseAfter pauses after queueing the job of that index (qtime
	// differences for starvation).
	pauseAfter map[int]time.Duration
	// want is the expected start order (job names).
	want []string
	// comments are waited for while the jobs run: job name → the
	// comment it must get.
	comments map[string]string
	// check, when set, makes further checks on the accounting records.
	check func(t *testing.T, names map[string]string, recs []acctRecord)
}

// runScenario queues the scenario's jobs with scheduling off, turns
// scheduling on and checks the start order and comments.
func (c *schedCluster) runScenario(t *testing.T, sc schedScenario) {
	c.t = t
	c.qmgr("set server scheduling = false", fmt.Sprintf("set node localhost np = %d", max(sc.np, 1)))
	c.qmgr(sc.setup...)
	c.startScheduler(sc.schedConfig, sc.files)
	c.accounting()               // forget earlier scenarios' records
	ids := map[string]string{}   // name → id
	names := map[string]string{} // id → name
	for i, j := range sc.jobs {
		id := c.submit(j)
		ids[j.name], names[id] = id, j.name
		if d := sc.pauseAfter[i]; d > 0 {
			time.Sleep(d)
		}
	}
	c.qmgr("set server scheduling = true")
	pendingComments := map[string]string{}
	for name, want := range sc.comments {
		pendingComments[name] = want
	}
	var recs []acctRecord
	ended := map[string]bool{}
	c.waitFor("the scenario's jobs to end", 40*time.Second, func() bool {
		for name, want := range pendingComments {
			if got := c.jobComment(ids[name]); got == want {
				delete(pendingComments, name)
			}
		}
		for _, r := range c.accounting() {
			if names[r.id] == "" {
				continue
			}
			recs = append(recs, r)
			if r.kind == "E" || r.kind == "D" {
				ended[r.id] = true
			}
		}
		return len(ended) == len(sc.jobs)
	})
	c.qmgr("set server scheduling = false")
	c.qmgr(sc.teardown...)
	var got []string
	for _, r := range recs {
		if r.kind == "S" {
			got = append(got, names[r.id])
		}
	}
	if strings.Join(got, " ") != strings.Join(sc.want, " ") {
		t.Errorf("start order %v, want %v", got, sc.want)
	}
	for name, want := range pendingComments {
		t.Errorf("job %s (%s) never had the comment %q", name, ids[name], want)
	}
	if sc.check != nil {
		sc.check(t, names, recs)
	}
}

// Job comments of TORQUE's FIFO scheduler (spec 14 §6.2, §7).
const (
	e2eCommentNodes      = "Not Running: Not enough of the right type of nodes are available"
	e2eCommentStrictFIFO = "Not Running: Strict fifo order"
	e2eCommentQueueUser  = "Not Running: User has reached queue running job limit."
	e2eCommentDraining   = "Not Running: Draining system to allow starving job to run"
)

func schedScenarios() []schedScenario {
	queue := func(name string, attrs ...string) []string {
		cmds := []string{"create queue " + name + " queue_type = execution"}
		for _, a := range append([]string{"enabled = true", "started = true"}, attrs...) {
			cmds = append(cmds, "set queue "+name+" "+a)
		}
		return cmds
	}
	// stopQueue keeps a finished scenario's queue from being scheduled
	// (and listed first) in later scenarios.
	stopQueue := func(names ...string) []string {
		var cmds []string
		for _, n := range names {
			cmds = append(cmds, "set queue "+n+" started = false")
		}
		return cmds
	}
	cput := func(v string) []string { return []string{"-l", "cput=" + v} }
	return []schedScenario{
		{
			// No sort: jobs run in the order they were queued, whatever
			// their priority.
			name:        "fifo",
			schedConfig: "sort_by: no_sort\n",
			np:          1,
			setup:       queue("fifo"),
			teardown:    stopQueue("fifo"),
			jobs: []e2eJob{
				{name: "f1", queue: "fifo", args: []string{"-p", "-10"}, sleep: "2"},
				{name: "f2", queue: "fifo", args: []string{"-p", "10"}},
				{name: "f3", queue: "fifo"},
			},
			want:     []string{"f1", "f2", "f3"},
			comments: map[string]string{"f3": e2eCommentNodes},
		},
		{
			name:        "sort_by",
			schedConfig: "sort_by: high_priority_first\n",
			np:          1,
			setup:       queue("prio"),
			teardown:    stopQueue("prio"),
			jobs: []e2eJob{
				{name: "p1", queue: "prio", args: []string{"-p", "-10"}},
				{name: "p2", queue: "prio", args: []string{"-p", "10"}},
				{name: "p3", queue: "prio"},
			},
			want: []string{"p2", "p3", "p1"},
		},
		{
			// by_queue with sort_queues: the higher-priority queue's
			// jobs first (shortest first within it), though a job of
			// the other queue is shorter.
			name:        "by_queue",
			schedConfig: "by_queue: true\nsort_queues: true\nsort_by: shortest_job_first\n",
			np:          1,
			setup:       append(queue("bqlow", "Priority = 10"), queue("bqhigh", "Priority = 20")...),
			teardown:    stopQueue("bqlow", "bqhigh"),
			jobs: []e2eJob{
				{name: "l1", queue: "bqlow", args: cput("5")},
				{name: "h1", queue: "bqhigh", args: cput("30")},
				{name: "h2", queue: "bqhigh", args: cput("20")},
			},
			want: []string{"h2", "h1", "l1"},
		},
		{
			// round_robin: one job from each queue in turn; three slots
			// take a1, b1, a2 in the first cycle.
			name:        "round_robin",
			schedConfig: "round_robin: true\nsort_queues: true\n",
			np:          3,
			setup:       append(queue("rra", "Priority = 20"), queue("rrb", "Priority = 10")...),
			teardown:    stopQueue("rra", "rrb"),
			jobs: []e2eJob{
				{name: "a1", queue: "rra", sleep: "2"}, {name: "a2", queue: "rra", sleep: "2"}, {name: "a3", queue: "rra"},
				{name: "b1", queue: "rrb", sleep: "2"}, {name: "b2", queue: "rrb"}, {name: "b3", queue: "rrb"},
			},
			want: []string{"a1", "b1", "a2", "a3", "b2", "b3"},
		},
		{
			// strict_fifo: the two-slot job cannot run while blk holds
			// a slot, and the job queued after it must wait too.
			name:        "strict_fifo",
			schedConfig: "strict_fifo: true\n",
			np:          2,
			setup:       queue("strict"),
			teardown:    stopQueue("strict"),
			jobs: []e2eJob{
				{name: "blk", queue: "strict", sleep: "3"},
				{name: "big", queue: "strict", args: []string{"-l", "nodes=1:ppn=2"}},
				{name: "small", queue: "strict"},
			},
			want:     []string{"blk", "big", "small"},
			comments: map[string]string{"big": e2eCommentNodes, "small": e2eCommentStrictFIFO},
		},
		{
			// fair_share: user 1 has three times user 2's shares; every
			// job charges its requested cput.
			name:        "fair_share",
			schedConfig: "fair_share: true\n",
			files: map[string]string{"resource_group": schedE2EUsers[0] + " 100 root 3\n" +
				schedE2EUsers[1] + " 200 root 1\n"},
			np:       1,
			setup:    queue("fair"),
			teardown: stopQueue("fair"),
			jobs: []e2eJob{
				{name: "y1", user: 1, queue: "fair", args: cput("100")},
				{name: "y2", user: 1, queue: "fair", args: cput("100")},
				{name: "y3", user: 1, queue: "fair", args: cput("100")},
				{name: "x1", user: 0, queue: "fair", args: cput("100")},
				{name: "x2", user: 0, queue: "fair", args: cput("100")},
				{name: "x3", user: 0, queue: "fair", args: cput("100")},
			},
			want: []string{"y1", "x1", "x2", "x3", "y2", "y3"},
		},
		{
			// help_starving_jobs: blk and old have waited longer than
			// max_starve; blk, the first of them, runs. While it runs
			// old is the starving job: it cannot run (the node is
			// busy), and the later cycles hold the shorter jobs back
			// for it, with TORQUE's comment.
			name:        "help_starving_jobs",
			schedConfig: "help_starving_jobs: true\nmax_starve: 3\nsort_by: shortest_job_first\n",
			np:          1,
			setup:       queue("starve"),
			teardown:    stopQueue("starve"),
			jobs: []e2eJob{
				{name: "blk", queue: "starve", args: cput("1"), sleep: "4"},
				{name: "old", queue: "starve", args: cput("100")},
				{name: "s1", queue: "starve", args: cput("10")},
				{name: "s2", queue: "starve", args: cput("20")},
			},
			pauseAfter: map[int]time.Duration{1: 3200 * time.Millisecond},
			want:       []string{"blk", "old", "s1", "s2"},
			comments:   map[string]string{"s1": e2eCommentDraining},
		},
		{
			// max_user_run: one running job per user in the queue,
			// though the node has three slots.
			name:        "max_user_run",
			schedConfig: "sort_by: no_sort\n",
			np:          3,
			setup:       queue("limit", "max_user_run = 1"),
			teardown:    stopQueue("limit"),
			jobs: []e2eJob{
				{name: "r1", queue: "limit", sleep: "2"},
				{name: "r2", queue: "limit"},
				{name: "q1", user: 1, queue: "limit", sleep: "2"},
			},
			want:     []string{"r1", "q1", "r2"},
			comments: map[string]string{"r2": e2eCommentQueueUser},
			check: func(t *testing.T, names map[string]string, recs []acctRecord) {
				// r2 starts only after r1 ended
				var order []string
				for _, r := range recs {
					order = append(order, r.kind+":"+names[r.id])
				}
				s := " " + strings.Join(order, " ") + " "
				if i, k := strings.Index(s, " E:r1 "), strings.Index(s, " S:r2 "); i < 0 || k < i {
					t.Errorf("r2 started while r1 ran: %s", s)
				}
			},
		},
		{
			// a resources line (a key of later PBS schedulers): the
			// queue's vmem, which TORQUE 2.5.13's scheduler does not
			// look at, is checked against what is left, so w2 waits
			// for w1 though the node has a free slot.
			name:        "resources",
			schedConfig: "resources: \"vmem\"\n",
			np:          2,
			setup:       queue("consumable", "resources_available.vmem = 800mb"),
			teardown:    stopQueue("consumable"),
			jobs: []e2eJob{
				{name: "w1", queue: "consumable", args: []string{"-l", "vmem=500mb"}, sleep: "2"},
				{name: "w2", queue: "consumable", args: []string{"-l", "vmem=500mb"}},
			},
			want:     []string{"w1", "w2"},
			comments: map[string]string{"w2": "Not Running: Not enough vmem available"},
			check: func(t *testing.T, names map[string]string, recs []acctRecord) {
				var order []string
				for _, r := range recs {
					order = append(order, r.kind+":"+names[r.id])
				}
				s := " " + strings.Join(order, " ") + " "
				if i, k := strings.Index(s, " E:w1 "), strings.Index(s, " S:w2 "); i < 0 || k < i {
					t.Errorf("w2 started while w1 ran: %s", s)
				}
			},
		},
	}
}

// TestSchedulerPolicyEndToEnd checks that the jobs of a user run in the
// order the configured sched_config policy dictates, on the real daemons.
func TestSchedulerPolicyEndToEnd(t *testing.T) {
	c := newSchedCluster(t)
	for _, sc := range schedScenarios() {
		t.Run(sc.name, func(t *testing.T) { c.runScenario(t, sc) })
	}
	t.Run("plus_external_scheduler", c.testExternalScheduler)
}

// plusClient is a PluS-style external scheduler: an ordinary client
// connection (from an unprivileged port) authenticated by running
// pbs_iff with the connection's port number, as PluS's Java scheduler
// does (seed 002 §3.6).
type plusClient struct {
	*batchconn.Conn
	t    *testing.T
	user string
}

// dialPlus connects to the server and authenticates the connection as
// test user who through the port-number form of pbs_iff.
func (c *schedCluster) dialPlus(t *testing.T, who int) *plusClient {
	t.Helper()
	nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", c.svPort))
	if err != nil {
		t.Fatal(err)
	}
	conn := batchconn.New(t, nc)
	port := nc.LocalAddr().(*net.TCPAddr).Port
	if port < 1024 {
		t.Fatalf("client port %d is reserved", port)
	}
	out, errOut, code := c.run(who, "pbs_iff", "localhost", strconv.Itoa(c.svPort), strconv.Itoa(port))
	if code != 0 || out != "\x00\x00\x00\x00" {
		t.Fatalf("pbs_iff localhost %d %d: exit %d, stdout %q, stderr %q", c.svPort, port, code, out, errOut)
	}
	return &plusClient{Conn: conn, t: t, user: c.users[who].Name}
}

// do sends one request and returns the reply.
func (p *plusClient) do(reqType int, body batchreq.Body) *batchreq.Reply {
	p.t.Helper()
	return p.Do(batchreq.NewRequest(reqType, p.user, body))
}

// must sends a request that must succeed.
func (p *plusClient) must(reqType int, body batchreq.Body) *batchreq.Reply {
	p.t.Helper()
	reply := p.do(reqType, body)
	if reply.Code != 0 {
		p.t.Fatalf("%s as %s: code %d %s", batchreq.RequestName(reqType), p.user, reply.Code, reply.Text)
	}
	return reply
}

// jobState returns the job's state letter, or "" when the server does not
// know the job.
func (p *plusClient) jobState(id string) string {
	p.t.Helper()
	reply := p.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id})
	if reply.Code != 0 || len(reply.Status) != 1 {
		return ""
	}
	for _, a := range reply.Status[0].Attrs {
		if a.Name == "job_state" {
			return a.Value
		}
	}
	return ""
}

func jobOp(id string, attrs ...batchreq.Attr) *batchreq.Manage {
	return &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id, Attrs: attrs}
}

// testExternalScheduler: with scheduling off, an operator client acting as
// the scheduler lists the jobs, comments, runs, holds, requeues and
// releases them on the real server and MOM; the job owner may not run
// jobs.
func (c *schedCluster) testExternalScheduler(t *testing.T) {
	c.t = t
	operator := c.users[1].Name
	c.qmgr("set server scheduling = false", "set node localhost np = 1",
		"set server operators += "+operator+"@*")
	c.qmgr(append([]string{"create queue plus queue_type = execution"}, "set queue plus enabled = true", "set queue plus started = true")...)
	defer c.qmgr("set server operators -= "+operator+"@*", "set queue plus started = false")
	if c.sched != nil {
		c.sched.Stop() // the external scheduler is the only one
	}
	c.accounting()
	// The first run of long sleeps until it is requeued; the second ends
	// at once.
	marker := filepath.Join(c.work, "long.ran")
	script := filepath.Join(c.work, "long.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nif [ -e "+marker+" ]; then exit 0; fi\ntouch "+marker+"\nsleep 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := c.run(0, "qsub", "-N", "long", "-q", "plus", "-j", "oe", "-o", "localhost:"+filepath.Join(c.work, "long.out"), script)
	if code != 0 {
		t.Fatalf("qsub: %s%s", out, errOut)
	}
	long := strings.TrimSpace(out)
	short := c.submit(e2eJob{name: "short", queue: "plus"})

	// The owner is no operator: the server refuses it the scheduler's
	// actions.
	owner := c.dialPlus(t, 0)
	if p := owner.do(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: long}); p.Code != batchreq.PBSE_PERM {
		t.Errorf("RunJob by the job owner: code %d, want %d (PBSE_PERM)", p.Code, batchreq.PBSE_PERM)
	}

	plus := c.dialPlus(t, 1)
	st := plus.must(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{})
	seen := map[string]bool{}
	for _, o := range st.Status {
		seen[o.Name] = true
	}
	if !seen[long] || !seen[short] {
		t.Fatalf("StatusJob as the operator lists %v, want %s and %s", seen, long, short)
	}
	plus.must(batchreq.PBS_BATCH_ModifyJob, jobOp(long, batchreq.NewAttr("comment", "started by plus")))
	plus.must(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: long})
	plus.must(batchreq.PBS_BATCH_HoldJob, jobOp(short, batchreq.NewAttr("Hold_Types", "o")))
	if s := plus.jobState(short); s != "H" {
		t.Errorf("held job %s is in state %q", short, s)
	}
	c.waitFor("job "+long+" to start its script", 20*time.Second, func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	if got := c.jobComment(long); got != "started by plus" {
		t.Errorf("comment of %s: %q", long, got)
	}
	// requeue the running job
	plus.must(batchreq.PBS_BATCH_Rerun, &batchreq.JobID{ID: long})
	c.waitFor("job "+long+" to be requeued", 20*time.Second, func() bool { return plus.jobState(long) == "Q" })
	plus.must(batchreq.PBS_BATCH_ReleaseJob, jobOp(short, batchreq.NewAttr("Hold_Types", "o")))
	if s := plus.jobState(short); s != "Q" {
		t.Errorf("released job %s is in state %q", short, s)
	}
	plus.must(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: short})
	c.waitFor("job "+short+" to end", 20*time.Second, func() bool { return plus.jobState(short) == "" })
	plus.must(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: long})
	c.waitFor("job "+long+" to end", 20*time.Second, func() bool { return plus.jobState(long) == "" })
	var got []string
	for _, r := range c.accounting() {
		if (r.id == long || r.id == short) && r.kind != "Q" {
			got = append(got, r.kind+":"+r.id)
		}
	}
	want := []string{"S:" + long, "R:" + long, "S:" + short, "E:" + short, "S:" + long, "E:" + long}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("accounting records %v, want %v", got, want)
	}
}
