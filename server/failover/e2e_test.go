package failover

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/internal/e2e"
	"gopbs/internal/e2e/testcluster"
	"gopbs/internal/pgtest"
)

// The failover end-to-end test runs the real programs as processes: a
// PostgreSQL server (internal/pgtest), two pbs_server processes sharing
// its database on two loopback ports, a pbs_mom whose $pbsserver lines
// name both, a pbs_sched, and the real qsub and qstat with the server
// list "localhost:<first>,localhost:<second>" in PBS_DEFAULT, run as an
// unprivileged user through the setuid pbs_iff. A storm of submissions
// runs while the active server is killed (SIGKILL); the standby takes
// over, and the test checks that every acknowledged job is there exactly
// once, that the jobs running at the kill complete (their obits reach the
// new server) and that every job submitted runs to completion.

const foUser = "gopbsfailover"

// foCluster is the test's processes and their homes.
type foCluster struct {
	t                        *testing.T
	bin, base, work, list    string
	homes                    [2]string // the two servers'
	momHome                  string
	ports                    [2]int // the two servers' batch ports
	momPort, rmPort, schPort int
	user                     *e2e.Account
}

// run runs a client command as the test user (or root) with the two
// servers in PBS_DEFAULT.
func (c *foCluster) run(root bool, limit time.Duration, name string, args ...string) (string, string, int) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.work
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PBS_DEFAULT=" + c.list, "LANG=C",
		"HOSTALIASES=" + filepath.Join(c.work, "hostaliases")}
	if root {
		cmd.Env = append(cmd.Env, "HOME=/root", "LOGNAME=root", "USER=root")
	} else {
		c.user.AsUser(cmd, "")
	}
	return e2e.Run(c.t, cmd, limit)
}

func (c *foCluster) qmgr(cmds ...string) {
	c.t.Helper()
	for _, q := range cmds {
		if out, errOut, code := c.run(true, 30*time.Second, "qmgr", "-a", "-c", q); code != 0 {
			c.t.Fatalf("qmgr -c %q: exit %d\n%s%s", q, code, out, errOut)
		}
	}
}

func (c *foCluster) startServer(i int, init string) *e2e.Daemon {
	ps := strconv.Itoa
	cmd := exec.Command(filepath.Join(c.bin, "pbs_server"), "-D", "-f", "-t", init, "-d", c.homes[i],
		"-p", ps(c.ports[i]), "-M", ps(c.momPort), "-R", ps(c.rmPort), "-S", "127.0.0.1:"+ps(c.schPort), "-H", "localhost")
	return e2e.Start(c.t, fmt.Sprintf("pbs_server %d", i), cmd)
}

// listening reports whether something accepts connections on port.
func listening(port int) bool {
	nc, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	nc.Close()
	return true
}

// serverLog returns the server logs of home.
func serverLog(home string) string {
	files, _ := filepath.Glob(filepath.Join(home, "server_logs", "*"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// jobStatus is what qstat -f says of one job.
type jobStatus struct {
	state, exit string
	count       int // how many times the id appears
}

// jobs runs qstat -f through the server list and returns its jobs.
func (c *foCluster) jobs() map[string]*jobStatus {
	c.t.Helper()
	out, errOut, code := c.run(false, time.Minute, "qstat", "-f")
	if code != 0 {
		c.t.Fatalf("qstat -f: exit %d\n%s", code, errOut)
	}
	jobs := map[string]*jobStatus{}
	var cur *jobStatus
	for line := range strings.SplitSeq(out, "\n") {
		if id, ok := strings.CutPrefix(line, "Job Id: "); ok {
			id = strings.TrimSpace(id)
			if jobs[id] == nil {
				jobs[id] = &jobStatus{}
			}
			cur = jobs[id]
			cur.count++
			continue
		}
		if cur == nil {
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "job_state = "); ok {
			cur.state = v
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "exit_status = "); ok {
			cur.exit = v
		}
	}
	return jobs
}

// submit runs qsub for a job running sleep secs and returns the id it
// printed, or "" when qsub failed (the job was not acknowledged).
func (c *foCluster) submit(name string, secs int) string {
	script := filepath.Join(c.work, "sleep"+strconv.Itoa(secs)+".sh")
	out, _, code := c.run(false, time.Minute, "qsub", "-N", name, "-j", "oe",
		"-o", "localhost:"+filepath.Join(c.work, "out", name+".out"), script)
	if code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

func TestFailoverEndToEnd(t *testing.T) {
	e2e.RequireRoot(t, "setuid pbs_iff, reserved ports, jobs run as a test user")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	pg := pgtest.Start(t)
	tc := testcluster.New(t, testcluster.Options{Programs: []string{"pbs_iff", "qsub", "qstat", "qdel", "qmgr"}, LogLimit: 300})
	c := &foCluster{t: t, user: e2e.User(t, foUser), bin: tc.Programs.Dir, base: tc.Base}
	c.user.MakeHome(t)
	c.work = filepath.Join(c.base, "work")
	for _, d := range []string{c.work, filepath.Join(c.work, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	e2e.WriteFile(t, filepath.Join(c.work, "hostaliases"), "localhost 127.0.0.1\n")
	for _, secs := range []int{0, 20} {
		e2e.WriteFile(t, filepath.Join(c.work, "sleep"+strconv.Itoa(secs)+".sh"), fmt.Sprintf("#!/bin/sh\nsleep %d\n", secs))
	}
	c.ports = [2]int{tc.Ports.Server, e2e.FreePort(t)}
	c.momPort, c.rmPort, c.schPort = tc.Ports.Mom, tc.Ports.RM, tc.Ports.Sched
	c.list = fmt.Sprintf("localhost:%d,localhost:%d", c.ports[0], c.ports[1])
	c.homes = [2]string{tc.ServerHome, filepath.Join(c.base, "server2")}
	if err := e2e.MakeHome(c.homes[1], "localhost"); err != nil {
		t.Fatal(err)
	}
	c.momHome = tc.Mom("localhost").Home
	for _, h := range c.homes {
		p := filepath.Join(h, "server_priv", URLFile)
		e2e.WriteFile(t, p, "# the pair's database\n"+pg.URL+"\n")
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e2e.LogFilesOnFailure(t, 300, filepath.Join(c.homes[1], "server_logs", "*")) // the others' are the cluster's

	// The first server creates the database and serves; the second
	// stands by, not listening.
	first := c.startServer(0, "create")
	first.WaitListening(t, "127.0.0.1:"+strconv.Itoa(c.ports[0]), 30*time.Second)
	second := c.startServer(1, "warm")
	e2e.WaitFor(t, "the second server standing by", 30*time.Second, func() bool {
		return strings.Contains(serverLog(c.homes[1]), "standing by")
	})
	if listening(c.ports[1]) || !second.Alive() {
		t.Fatalf("the standby listens (or exited: %v)", second.Err())
	}
	c.qmgr("create queue batch queue_type=execution",
		"set queue batch enabled=true, started=true",
		"set server default_queue=batch",
		"set server keep_completed=3600",
		"set server scheduler_iteration=2",
		"create node localhost np=4",
		"set server scheduling=true")
	e2e.WriteFile(t, filepath.Join(c.momHome, "mom_priv", "config"), fmt.Sprintf(
		"$pbsserver localhost:%d\n$pbsserver localhost:%d\n$status_update_time 2\n$check_poll_time 1\n", c.ports[0], c.ports[1]))
	tc.StartMom("localhost")
	root, err := e2e.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := os.ReadFile(filepath.Join(root, "sched", "config", "sched_config"))
	if err != nil {
		t.Fatal(err)
	}
	tc.StartSched(string(sc))

	// Two jobs run across the kill.
	var long []string
	for i := range 2 {
		id := c.submit(fmt.Sprintf("long%d", i), 20)
		if id == "" {
			t.Fatal("qsub of a long job failed before the kill")
		}
		long = append(long, id)
	}
	e2e.WaitFor(t, "the long jobs running", 60*time.Second, func() bool {
		j := c.jobs()
		return j[long[0]] != nil && j[long[0]].state == "R" && j[long[1]] != nil && j[long[1]].state == "R"
	})

	// The storm: 4 clients submitting in a loop, each id qsub printed
	// recorded as acknowledged.
	var mu sync.Mutex
	var acked []string
	failed := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := c.submit(fmt.Sprintf("s%d-%d", g, i), 0)
				mu.Lock()
				if id != "" {
					acked = append(acked, id)
				} else {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	e2e.WaitFor(t, "20 submissions before the kill", 2*time.Minute, func() bool { return count() >= 20 })
	before := count()
	first.Kill()
	killed := time.Now()
	e2e.WaitFor(t, "the standby serving", time.Minute, func() bool { return listening(c.ports[1]) })
	t.Logf("the standby listens %v after the kill", time.Since(killed).Round(time.Millisecond))
	e2e.WaitFor(t, "20 submissions after the kill", 2*time.Minute, func() bool { return count() >= before+20 })
	close(stop)
	wg.Wait()
	t.Logf("%d submissions acknowledged (%d before the kill), %d refused or failed during the take-over", len(acked), before, failed)
	if !strings.Contains(serverLog(c.homes[1]), "active: this server holds the failover lock") {
		t.Error("the second server's log does not say it became active")
	}

	// Job ids name the pair's server ("N.localhost"): commands given one
	// reach the active server through the list.
	if out, errOut, code := c.run(false, time.Minute, "qstat", "-f", long[0]); code != 0 || !strings.Contains(out, "Job Id: "+long[0]) {
		t.Errorf("qstat -f %s after the take-over: exit %d\n%s%s", long[0], code, out, errOut)
	}
	out, errOut, code := c.run(false, time.Minute, "qsub", "-h", filepath.Join(c.work, "sleep0.sh"))
	held := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("qsub -h after the take-over: exit %d\n%s", code, errOut)
	}
	if out, errOut, code := c.run(false, time.Minute, "qdel", held); code != 0 {
		t.Errorf("qdel %s after the take-over: exit %d\n%s%s", held, code, out, errOut)
	}

	// Every acknowledged job is there exactly once and runs to the end;
	// the long jobs started by the first server complete on the second.
	e2e.WaitFor(t, "every job complete", 3*time.Minute, func() bool {
		j := c.jobs()
		for _, id := range append(append([]string{}, long...), acked...) {
			if j[id] == nil || j[id].state != "C" {
				return false
			}
		}
		return true
	})
	j := c.jobs()
	if s := j[held]; s != nil && s.state != "C" {
		t.Errorf("deleted job %s is %s", held, s.state)
	}
	seen := map[string]int{}
	for _, id := range append(append([]string{}, long...), acked...) {
		seen[id]++
		if seen[id] > 1 {
			t.Errorf("qsub printed %s twice", id)
		}
		switch s := j[id]; {
		case s == nil:
			t.Errorf("acknowledged job %s lost", id)
		case s.count != 1:
			t.Errorf("job %s listed %d times", id, s.count)
		case s.exit != "0":
			t.Errorf("job %s ended with exit status %q", id, s.exit)
		}
	}
	// The MOM sent the long jobs' obits to the second server, the first
	// being gone.
	for _, id := range long {
		if !strings.Contains(momLog(c.momHome, id), fmt.Sprintf("127.0.0.1:%d answered", c.ports[1])) {
			t.Errorf("the MOM's log does not show %s's obit going to the second server", id)
		}
	}
}

// momLog returns the lines of the MOM logs of home that name word.
func momLog(home, word string) string {
	files, _ := filepath.Glob(filepath.Join(home, "mom_logs", "*"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.Contains(line, word) {
				b.WriteString(line + "\n")
			}
		}
	}
	return b.String()
}

// TestLostLockEndsServer: when PostgreSQL ends the active server's lock
// session (as it does for a vanished host, or an administrator with
// pg_terminate_backend), that pbs_server exits with status 3 at once and
// the standby takes over.
func TestLostLockEndsServer(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	pg := pgtest.Start(t)
	c := &foCluster{t: t}
	c.bin = e2e.Build(t, "pbs_server").Dir
	c.base = e2e.Dir(t)
	ports := e2e.FreePorts(t, 5)
	c.ports = [2]int{ports[0], ports[1]}
	c.momPort, c.rmPort, c.schPort = ports[2], ports[3], ports[4]
	c.homes = [2]string{filepath.Join(c.base, "server1"), filepath.Join(c.base, "server2")}
	for _, h := range c.homes {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(h, "server_priv", URLFile)
		e2e.WriteFile(t, p, pg.URL+"\n")
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e2e.LogFilesOnFailure(t, 100, filepath.Join(c.base, "*", "*_logs", "*"))
	first := c.startServer(0, "create")
	first.WaitListening(t, "127.0.0.1:"+strconv.Itoa(c.ports[0]), 30*time.Second)
	second := c.startServer(1, "warm")
	e2e.WaitFor(t, "the second server standing by", 30*time.Second, func() bool {
		return strings.Contains(serverLog(c.homes[1]), "standing by")
	})
	adm := admin(t, pg.URL)
	if _, err := adm.Exec(t.Context(), "SELECT pg_terminate_backend($1)", backendOf(t, adm)); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case <-first.Done():
		err = first.Err()
	case <-time.After(time.Minute):
		t.Fatal("the server that lost its lock still runs")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit of the server that lost its lock: %v, want status 3", err)
	}
	if !strings.Contains(first.Output(), "lost the failover lock") || !strings.Contains(serverLog(c.homes[0]), "lost the failover lock") {
		t.Errorf("the server did not say why it stopped:\n%s", first.Output())
	}
	second.WaitListening(t, "127.0.0.1:"+strconv.Itoa(c.ports[1]), time.Minute)
}
