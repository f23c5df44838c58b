package reliability

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

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

type binaries struct{ server, mom, sched, iff string }

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
)

// bins builds the daemons and pbs_iff (setuid root) once per test
// binary. Tests skip unless run as root.
func bins(t *testing.T) binaries {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("reliability tests need root (reserved ports, setuid pbs_iff, daemons)")
	}
	if testing.Short() {
		t.Skip("reliability suite skipped in -short mode")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gopbs-reliability-bin")
		if err != nil {
			buildErr = err
			return
		}
		os.Chmod(dir, 0o755)
		built = binaries{
			server: filepath.Join(dir, "pbs_server"), mom: filepath.Join(dir, "pbs_mom"),
			sched: filepath.Join(dir, "pbs_sched"), iff: filepath.Join(dir, "pbs_iff"),
		}
		cmd := exec.Command("go", "build", "-o", dir+"/", "./server/cmd/pbs_server", "./mom/cmd/pbs_mom",
			"./sched/cmd/pbs_sched", "./tools/pbs_iff")
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build daemons: %v\n%s", err, out)
			return
		}
		buildErr = os.Chmod(built.iff, os.ModeSetuid|0o755)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// freePort returns a loopback port free for both TCP and UDP. It picks
// from below the kernel's ephemeral range (32768 and up), so that the
// outgoing connections of tests running in parallel cannot take the port
// between this check and the daemon's bind.
func freePort(t *testing.T) int {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		pc, err := net.ListenPacket("udp", fmt.Sprintf(":%d", port))
		if err != nil {
			continue
		}
		pc.Close()
		return port
	}
	t.Fatal("no free port")
	return 0
}

// cluster is a set of daemons in one PBS_HOME.
type cluster struct {
	t    *testing.T
	b    binaries
	home string
	// ports
	server, mom, rm, sched int

	srv *proc
}

// proc is a daemon process.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, b: bins(t), home: t.TempDir()}
	makeLayout(c.home)
	c.server, c.mom, c.rm, c.sched = freePort(t), freePort(t), freePort(t), freePort(t)
	return c
}

// makeLayout creates the PBS_HOME directories and server_name.
func makeLayout(home string) {
	for _, d := range []string{"server_priv", "server_logs", "mom_priv", "mom_logs", "sched_priv", "sched_logs", "spool", "undelivered"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.WriteFile(filepath.Join(home, "server_name"), []byte("localhost\n"), 0o644)
}

func (c *cluster) addr() string { return fmt.Sprintf("127.0.0.1:%d", c.server) }

// dialer returns a pbsbench dialer for the server, authenticating as
// user like pbs_iff does.
func (c *cluster) dialer(user string) *load.Dialer {
	return &load.Dialer{Addr: c.addr(), User: user, Auth: true, Timeout: 20 * time.Second}
}

func (c *cluster) start(name, path string, args ...string) *proc {
	c.t.Helper()
	p := &proc{name: name, cmd: exec.Command(path, args...), done: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	p.cmd.Stdout = &p.stderr
	p.cmd.Env = append(os.Environ(), "PBS_HOME="+c.home)
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	c.t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) kill() {
	if p.alive() {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// stop sends SIGTERM and waits (bounded) for the exit.
func (p *proc) stop() {
	if !p.alive() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

// startServer starts pbs_server (init create, cold or warm) and waits
// until it accepts connections.
func (c *cluster) startServer(init string) *proc {
	c.t.Helper()
	p := c.start("pbs_server", c.b.server, "-D", "-f", "-t", init, "-d", c.home, "-p", strconv.Itoa(c.server),
		"-H", "localhost", "-M", strconv.Itoa(c.mom), "-R", strconv.Itoa(c.rm), "-S", strconv.Itoa(c.sched), "-a", "false")
	c.srv = p
	waitListening(c.t, p, c.addr())
	return p
}

// startMom starts pbs_mom reporting to the cluster's server.
func (c *cluster) startMom() *proc {
	c.t.Helper()
	os.MkdirAll(filepath.Join(c.home, "mom_priv"), 0o755)
	os.WriteFile(filepath.Join(c.home, "mom_priv", "config"), []byte("$pbsserver localhost\n$logevent 0x1ff\n"), 0o644)
	p := c.start("pbs_mom", c.b.mom, "-D", "-d", c.home, "-H", "localhost", "-M", strconv.Itoa(c.mom),
		"-R", strconv.Itoa(c.rm), "-S", strconv.Itoa(c.server))
	waitListening(c.t, p, fmt.Sprintf("127.0.0.1:%d", c.mom))
	return p
}

// startSched starts pbs_sched on the cluster's scheduler port.
func (c *cluster) startSched() *proc {
	c.t.Helper()
	p := c.start("pbs_sched", c.b.sched, "-D", "-d", c.home, "-S", strconv.Itoa(c.sched), "-R", strconv.Itoa(c.rm))
	p.cmd.Env = append(p.cmd.Env, "PBS_BATCH_SERVICE_PORT="+strconv.Itoa(c.server))
	waitListening(c.t, p, fmt.Sprintf("127.0.0.1:%d", c.sched))
	return p
}

func waitListening(t *testing.T, p *proc, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			nc.Close()
			return
		}
		if !p.alive() {
			t.Fatalf("%s exited (%v):\n%s", p.name, p.err, p.stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s:\n%s", p.name, addr, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	if !c.srv.alive() {
		c.t.Fatalf("pbs_server died (%v):\n%s", c.srv.err, c.srv.stderr.String())
	}
	c.submit(8, 2)
	c.jobIDs()
}
