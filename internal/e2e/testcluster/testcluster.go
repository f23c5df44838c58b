// Package testcluster runs a GoPBS cluster for end-to-end tests: pbs_server,
// pbs_mom processes (one per node) and pbs_sched, built once per test
// binary, in homes under one temporary directory, on free loopback
// ports, each started in a process group of its own and stopped when the
// test ends. Nodes other than localhost have loopback addresses of their
// own (127.0.0.2, ...): the daemons then run in a mount namespace whose
// /etc/hosts names the nodes, and each MOM binds its node's address. The
// helpers wait for what the daemons report (a port that accepts, a
// node's first status), never for the clock.
//
// The pieces it is made of (building, homes, ports, accounts, daemons)
// are package e2e's; root's batch connection is package batchconn's.
package testcluster

import (
	"net"
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
)

// StartLimit bounds the wait for a daemon to listen or a MOM to report.
const StartLimit = 30 * time.Second

// Options describe a cluster.
type Options struct {
	// Programs are built besides pbs_server, pbs_mom and pbs_sched.
	Programs []string
	// Nodes maps the names of nodes that have loopback addresses of
	// their own to those addresses ("n1": "127.0.0.2"). When set, the
	// daemons run in a mount namespace whose /etc/hosts has them and
	// localhost (the test is skipped where that cannot be done or an
	// address is not usable); when empty, the daemons run as they are
	// and the only node is localhost.
	Nodes map[string]string
	// MomConfig is added to every MOM's mom_priv/config after
	// "$pbsserver localhost".
	MomConfig string
	// MomEnvironment returns the pbs_environment of a node's MOM (nil:
	// "PATH=/usr/bin:/bin").
	MomEnvironment func(node string) string
	// Mail gives the server a sendmail that appends each mail to
	// Cluster.MailFile.
	Mail bool
	// LogLimit cuts each daemon log a failed test shows to its last
	// LogLimit bytes (0: whole logs).
	LogLimit int
}

// Ports are the ports of a cluster: the server's batch port, the MOMs'
// batch and resource-monitor ports, the scheduler's port.
type Ports struct{ Server, Mom, RM, Sched int }

// Cluster is the processes of one test and where they keep their state.
type Cluster struct {
	// Programs is where the programs were built.
	Programs e2e.Programs
	// Base is the cluster's directory (mode 0755, removed at the end).
	Base string
	// Ports are the cluster's ports.
	Ports Ports
	// Hosts is the /etc/hosts of the daemons' namespace ("" without
	// Options.Nodes: no namespace). A test that has a hosts file of its
	// own (simulated nodes) may set it before starting the daemons,
	// having checked e2e.RequireNamespaces.
	Hosts string
	// ServerHome and SchedHome are the PBS_HOMEs of the server and the
	// scheduler.
	ServerHome, SchedHome string
	// ServerEnv is added to the server's environment.
	ServerEnv []string
	// MailFile receives the server's mails (Options.Mail).
	MailFile string
	// Server is the running pbs_server (StartServer).
	Server *e2e.Daemon
	// Conn is root's connection to the server (StartServer).
	Conn *batchconn.Conn
	// Sched is the running pbs_sched (StartSched).
	Sched *e2e.Daemon

	t    testing.TB
	opts Options
	moms map[string]*Mom
}

// Mom is a node's pbs_mom.
type Mom struct {
	// Node is the node's name, Addr its address ("" for localhost).
	Node, Addr string
	// Home is the MOM's PBS_HOME.
	Home string
	// Daemon is the running process (the last one StartMom started).
	Daemon *e2e.Daemon
}

// New builds the programs and makes the cluster's homes and ports; it
// starts nothing. It skips the test unless it runs as root (reserved
// ports, jobs run as other users) and, in -short mode, always.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	e2e.RequireRoot(t, "reserved ports, jobs run as other users")
	c := &Cluster{t: t, opts: opts, moms: map[string]*Mom{}}
	if len(opts.Nodes) > 0 {
		e2e.RequireNamespaces(t)
		for _, a := range opts.Nodes {
			l, err := net.Listen("tcp", net.JoinHostPort(a, "0"))
			if err != nil {
				t.Skipf("loopback address %s not usable: %v", a, err)
			}
			l.Close()
		}
	}
	c.Programs = e2e.Build(t, append([]string{"pbs_server", "pbs_mom", "pbs_sched"}, opts.Programs...)...)
	c.Base = e2e.Dir(t)
	p := e2e.FreePorts(t, 4)
	c.Ports = Ports{Server: p[0], Mom: p[1], RM: p[2], Sched: p[3]}
	c.ServerHome, c.SchedHome = c.home("server"), c.home("sched")
	e2e.LogFilesOnFailure(t, opts.LogLimit, filepath.Join(c.ServerHome, "server_logs", "*"), filepath.Join(c.SchedHome, "sched_logs", "*"))
	if len(opts.Nodes) > 0 {
		hosts := "127.0.0.1\tlocalhost\n"
		names := make([]string, 0, len(opts.Nodes))
		for n := range opts.Nodes {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			hosts += opts.Nodes[n] + "\t" + n + "\n"
		}
		c.Hosts = filepath.Join(c.Base, "hosts")
		e2e.WriteFile(t, c.Hosts, hosts)
	}
	if opts.Mail {
		bin := filepath.Join(c.Base, "bin")
		c.MailFile = filepath.Join(c.Base, "mail.txt")
		e2e.WriteFile(t, filepath.Join(bin, "sendmail"), "#!/bin/sh\n{ echo \"ARGS $*\"; cat; echo .; } >> "+c.MailFile+"\n")
		if err := os.Chmod(filepath.Join(bin, "sendmail"), 0o755); err != nil {
			t.Fatal(err)
		}
		c.ServerEnv = append(c.ServerEnv, "PATH="+bin+":"+os.Getenv("PATH"))
	}
	return c
}

// home makes the PBS_HOME Base/name (server_name localhost).
func (c *Cluster) home(name string) string {
	h := filepath.Join(c.Base, name)
	if err := e2e.MakeHome(h, "localhost"); err != nil {
		c.t.Fatal(err)
	}
	return h
}

// Command returns a command running the built program with args, in the
// daemons' namespace when the cluster has one, with env added to the
// test's environment.
func (c *Cluster) Command(env []string, program string, args ...string) *exec.Cmd {
	if c.Hosts != "" {
		return e2e.HostsCommand(c.Hosts, env, c.Programs.Path(program), args...)
	}
	cmd := exec.Command(c.Programs.Path(program), args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// ServerArgs returns pbs_server's arguments for home and the cluster's
// ports: in the foreground, as host localhost, started with -t init
// ("create" adds -f), then extra.
func (c *Cluster) ServerArgs(home, init string, extra ...string) []string {
	ps := strconv.Itoa
	args := []string{"-D", "-d", home, "-p", ps(c.Ports.Server), "-M", ps(c.Ports.Mom), "-R", ps(c.Ports.RM),
		"-S", ps(c.Ports.Sched), "-H", "localhost", "-t", init}
	if init == "create" {
		args = append(args, "-f")
	}
	return append(args, extra...)
}

// StartServer starts pbs_server on ServerHome (-t init, see ServerArgs)
// and connects Conn to it as root once it listens. After a kill it may
// be called again, for a warm start.
func (c *Cluster) StartServer(init string, extra ...string) *e2e.Daemon {
	c.t.Helper()
	if c.Conn != nil {
		c.Conn.Close()
	}
	c.Server = e2e.Start(c.t, "pbs_server", c.Command(c.ServerEnv, "pbs_server", c.ServerArgs(c.ServerHome, init, extra...)...))
	addr := "127.0.0.1:" + strconv.Itoa(c.Ports.Server)
	c.Server.WaitListening(c.t, addr, StartLimit)
	c.Conn = batchconn.DialReserved(c.t, addr, StartLimit)
	return c.Server
}

// Manage sends Manager requests (batchconn.Manager) that must succeed.
func (c *Cluster) Manage(reqs ...*batchreq.Request) {
	c.t.Helper()
	for _, r := range reqs {
		c.Conn.Must(r)
	}
}

// DefaultQueue creates the execution queue name, enabled and started,
// and makes it the server's default queue.
func (c *Cluster) DefaultQueue(name string) {
	c.t.Helper()
	c.Manage(
		batchconn.Manager(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, name, batchreq.NewAttr("queue_type", "execution")),
		batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, name, batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")),
		batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", name)))
}

// SetServer sets server attributes.
func (c *Cluster) SetServer(attrs ...batchreq.Attr) {
	c.t.Helper()
	c.Manage(batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attrs...))
}

// CreateNodes creates nodes with np virtual processors each.
func (c *Cluster) CreateNodes(np int, nodes ...string) {
	c.t.Helper()
	for _, n := range nodes {
		c.Manage(batchconn.Manager(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, n, batchreq.NewAttr("np", strconv.Itoa(np))))
	}
}

// Mom returns the MOM of node, making its home (mom_priv/config with
// Options.MomConfig, pbs_environment) the first time; it is not started.
func (c *Cluster) Mom(node string) *Mom {
	c.t.Helper()
	if m := c.moms[node]; m != nil {
		return m
	}
	m := &Mom{Node: node, Addr: c.opts.Nodes[node], Home: c.home("mom-" + node)}
	e2e.LogFilesOnFailure(c.t, c.opts.LogLimit, filepath.Join(m.Home, "mom_logs", "*"))
	e2e.WriteFile(c.t, filepath.Join(m.Home, "mom_priv", "config"), "$pbsserver localhost\n"+c.opts.MomConfig)
	env := "PATH=/usr/bin:/bin\n"
	if c.opts.MomEnvironment != nil {
		env = c.opts.MomEnvironment(node)
	}
	e2e.WriteFile(c.t, filepath.Join(m.Home, "pbs_environment"), env)
	c.moms[node] = m
	return m
}

// StartMom starts the MOM of node (Mom) with extra arguments (-p, say,
// after a stop) and returns it; it does not wait (WaitReported does).
func (c *Cluster) StartMom(node string, extra ...string) *Mom {
	c.t.Helper()
	m := c.Mom(node)
	ps := strconv.Itoa
	args := append([]string{"-D", "-d", m.Home, "-H", node, "-M", ps(c.Ports.Mom), "-R", ps(c.Ports.RM), "-S", ps(c.Ports.Server)}, extra...)
	var env []string
	if m.Addr != "" {
		env = []string{"GOPBS_MOM_ADDR=" + m.Addr}
	}
	m.Daemon = e2e.Start(c.t, "pbs_mom "+node, c.Command(env, "pbs_mom", args...))
	return m
}

// WaitReported waits until the server has each node's status from its
// MOM (the first IS_STATUS: "opsys=" in the node's status).
func (c *Cluster) WaitReported(nodes ...string) {
	c.t.Helper()
	for _, n := range nodes {
		e2e.WaitFor(c.t, n+"'s first IS_STATUS", StartLimit, func() bool {
			return strings.Contains(c.Conn.Status(batchreq.PBS_BATCH_StatusNode, n)["status"], "opsys=")
		})
	}
}

// StartSched writes sched_config (unless empty: the scheduler's default
// then) and starts pbs_sched on SchedHome, listening on 127.0.0.1, with
// extra arguments; it returns once the scheduler listens, so that a
// cycle the server asks for next reaches it.
func (c *Cluster) StartSched(schedConfig string, extra ...string) *e2e.Daemon {
	c.t.Helper()
	if schedConfig != "" {
		e2e.WriteFile(c.t, filepath.Join(c.SchedHome, "sched_priv", "sched_config"), schedConfig)
	}
	ps := strconv.Itoa
	args := append([]string{"-D", "-d", c.SchedHome, "-S", ps(c.Ports.Sched), "-R", ps(c.Ports.RM), "-listen", "127.0.0.1"}, extra...)
	c.Sched = e2e.Start(c.t, "pbs_sched", c.Command(nil, "pbs_sched", args...))
	c.Sched.WaitListening(c.t, "127.0.0.1:"+ps(c.Ports.Sched), StartLimit)
	return c.Sched
}

// Job returns the attributes of job id (nil once the server forgot it).
func (c *Cluster) Job(id string) map[string]string {
	c.t.Helper()
	return c.Conn.Status(batchreq.PBS_BATCH_StatusJob, id)
}

// WaitState waits until job id is in state ("" : gone).
func (c *Cluster) WaitState(id, state string, limit time.Duration) {
	c.t.Helper()
	e2e.WaitFor(c.t, "job "+id+" in state "+state, limit, func() bool { return c.Job(id)["job_state"] == state })
}

// ServerLog returns today's server log.
func (c *Cluster) ServerLog() string {
	b, _ := os.ReadFile(filepath.Join(c.ServerHome, "server_logs", time.Now().Format("20060102")))
	return string(b)
}

// Accounting returns today's accounting records of the server, a line
// each.
func (c *Cluster) Accounting() []string {
	b, _ := os.ReadFile(filepath.Join(c.ServerHome, "server_priv", "accounting", time.Now().Format("20060102")))
	return strings.Split(string(b), "\n")
}
