package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gopbs/internal/e2e"
	"gopbs/tools/pbsbench/load"
)

// soak reports whether the long form runs.
func soak() bool { return os.Getenv("GOPBS_SOAK") != "" }

// scale picks the short or the long figure.
func scale(short, long int) int {
	if soak() {
		return long
	}
	return short
}

// bins builds the daemons and pbs_iff (setuid root) once per test
// binary. Tests skip unless run as root.
func bins(t *testing.T) e2e.Programs {
	t.Helper()
	e2e.RequireRoot(t, "the reliability suite uses reserved ports, a setuid pbs_iff and the daemons")
	if testing.Short() {
		t.Skip("reliability suite skipped in -short mode")
	}
	return e2e.Build(t, "pbs_server", "pbs_mom", "pbs_sched", "pbs_iff")
}

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// cluster is a set of daemons in one PBS_HOME.
type cluster struct {
	t    *testing.T
	b    e2e.Programs
	home string
	// ports
	server, mom, rm, sched int

	srv *e2e.Daemon
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, b: bins(t), home: e2e.Home(t, "localhost")}
	ports := e2e.FreePorts(t, 4)
	c.server, c.mom, c.rm, c.sched = ports[0], ports[1], ports[2], ports[3]
	return c
}

func (c *cluster) addr() string { return fmt.Sprintf("127.0.0.1:%d", c.server) }

// dialer returns a pbsbench dialer for the server, authenticating as
// user like pbs_iff does.
func (c *cluster) dialer(user string) *load.Dialer {
	return &load.Dialer{Addr: c.addr(), User: user, Auth: true, Timeout: 20 * time.Second}
}

// start starts a daemon in the cluster's home; it is killed (SIGKILL)
// when the test ends, and stop gives it 20 s to shut down.
func (c *cluster) start(name string, args ...string) *e2e.Daemon {
	c.t.Helper()
	cmd := exec.Command(c.b.Path(name), args...)
	cmd.Env = append(os.Environ(), "PBS_HOME="+c.home)
	d := e2e.Start(c.t, name, cmd)
	d.Grace = 20 * time.Second
	c.t.Cleanup(d.Kill)
	return d
}

// startServer starts pbs_server (init create, cold or warm) and waits
// until it accepts connections.
func (c *cluster) startServer(init string) *e2e.Daemon {
	c.t.Helper()
	p := c.start("pbs_server", "-D", "-f", "-t", init, "-d", c.home, "-p", strconv.Itoa(c.server),
		"-H", "localhost", "-M", strconv.Itoa(c.mom), "-R", strconv.Itoa(c.rm), "-S", strconv.Itoa(c.sched), "-a", "false")
	c.srv = p
	p.WaitListening(c.t, c.addr(), 20*time.Second)
	return p
}

// startMom starts pbs_mom reporting to the cluster's server.
func (c *cluster) startMom() *e2e.Daemon {
	c.t.Helper()
	e2e.WriteFile(c.t, filepath.Join(c.home, "mom_priv", "config"), "$pbsserver localhost\n$logevent 0x1ff\n")
	p := c.start("pbs_mom", "-D", "-d", c.home, "-H", "localhost", "-M", strconv.Itoa(c.mom),
		"-R", strconv.Itoa(c.rm), "-S", strconv.Itoa(c.server))
	p.WaitListening(c.t, fmt.Sprintf("127.0.0.1:%d", c.mom), 20*time.Second)
	return p
}

// startSched starts pbs_sched on the cluster's scheduler port.
func (c *cluster) startSched() *e2e.Daemon {
	c.t.Helper()
	cmd := exec.Command(c.b.Path("pbs_sched"), "-D", "-d", c.home, "-S", strconv.Itoa(c.sched), "-R", strconv.Itoa(c.rm))
	cmd.Env = append(os.Environ(), "PBS_HOME="+c.home, "PBS_BATCH_SERVICE_PORT="+strconv.Itoa(c.server))
	p := e2e.Start(c.t, "pbs_sched", cmd)
	p.Grace = 20 * time.Second
	c.t.Cleanup(p.Kill)
	p.WaitListening(c.t, fmt.Sprintf("127.0.0.1:%d", c.sched), 20*time.Second)
	return p
}

// setup creates the execution queue "batch" and makes it the default.
func (c *cluster) setup() {
	c.t.Helper()
	if err := load.Setup(c.dialer("root"), "batch"); err != nil {
		c.t.Fatal(err)
	}
}

// submit submits n held jobs with clients concurrent clients and fails
// the test on any error.
func (c *cluster) submit(n, clients int) *load.Result {
	c.t.Helper()
	res, err := load.Run(load.Config{Mode: load.ModeSubmit, Dialer: c.dialer("root"), Ops: n, Clients: clients,
		Job: load.Job{Hold: true}, MaxTime: 5 * time.Minute})
	if err != nil {
		c.t.Fatal(err)
	}
	if res.Failed > 0 || res.OK != n {
		c.t.Fatalf("submissions: %s; errors %q", res, res.Errors)
	}
	return res
}

// jobIDs returns the ids of every job on the server.
func (c *cluster) jobIDs() []string {
	c.t.Helper()
	conn, err := c.dialer("root").Dial()
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	ids, err := conn.StatJobIDs()
	if err != nil {
		c.t.Fatal(err)
	}
	return ids
}

// serving checks that the server still accepts a whole authenticated
// submission and a status request.
func (c *cluster) serving() {
	c.t.Helper()
	if !c.srv.Alive() {
		c.t.Fatalf("pbs_server died (%v):\n%s", c.srv.Err(), c.srv.Output())
	}
	c.submit(8, 2)
	c.jobIDs()
}
