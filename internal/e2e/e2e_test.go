package e2e

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a small daemon for the Daemon
// tests: "listen:PORT" listens on 127.0.0.1:PORT until killed.
const helperEnv = "GOPBS_E2E_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(runHelper(h))
	}
	code := m.Run()
	RemoveBuilds()
	os.Exit(code)
}

func runHelper(h string) int {
	port, ok := strings.CutPrefix(h, "listen:")
	if !ok {
		return 2
	}
	time.Sleep(100 * time.Millisecond) // not at once: WaitListening must poll
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	for {
		nc, err := ln.Accept()
		if err != nil {
			return 1
		}
		nc.Close()
	}
}

// fatalRecorder is a testing.TB whose Fatal and Skip end only the
// goroutine calling them and record the message, so that failure paths
// of the helpers can be tested.
type fatalRecorder struct {
	testing.TB
	mu      sync.Mutex
	fatal   string
	skipped string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *fatalRecorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *fatalRecorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *fatalRecorder) Skip(args ...any) { r.Skipf("%s", fmt.Sprint(args...)) }

// call runs f with r in a goroutine of its own and returns the Fatal
// message ("" when f returned normally).
func (r *fatalRecorder) call(f func(tb testing.TB)) string {
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

// cleanupRecorder is a testing.TB that keeps its cleanups for the test
// to run, reports failed as Failed and records what is logged.
type cleanupRecorder struct {
	testing.TB
	failed   bool
	cleanups []func()
	logged   []string
}

func (r *cleanupRecorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *cleanupRecorder) Failed() bool     { return r.failed }
func (r *cleanupRecorder) Logf(format string, args ...any) {
	r.logged = append(r.logged, fmt.Sprintf(format, args...))
}
func (r *cleanupRecorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestLogFilesOnFailure(t *testing.T) {
	dir := t.TempDir()
	WriteFile(t, filepath.Join(dir, "server", "server_logs", "20260101"), "one\ntwo\nthree\n")
	WriteFile(t, filepath.Join(dir, "mom", "mom_logs", "20260101"), "mom line\n")
	WriteFile(t, filepath.Join(dir, "mom", "other", "x"), "not a log\n")
	for _, tc := range []struct {
		name   string
		failed bool
		limit  int
		want   []string
	}{
		{"passed", false, 0, nil},
		{"failed", true, 0, []string{
			filepath.Join(dir, "mom", "mom_logs", "20260101") + ":\nmom line\n",
			filepath.Join(dir, "server", "server_logs", "20260101") + ":\none\ntwo\nthree\n",
		}},
		{"failed, cut", true, 9, []string{
			filepath.Join(dir, "mom", "mom_logs", "20260101") + ":\nmom line\n",
			filepath.Join(dir, "server", "server_logs", "20260101") + ":\n…\nthree\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &cleanupRecorder{TB: t, failed: tc.failed}
			LogFilesOnFailure(r, tc.limit, filepath.Join(dir, "*", "*_logs", "*"))
			if len(r.logged) != 0 {
				t.Fatalf("logged before the end: %q", r.logged)
			}
			r.runCleanups()
			if !slices.Equal(r.logged, tc.want) {
				t.Errorf("logged %q, want %q", r.logged, tc.want)
			}
		})
	}
}

func TestPackage(t *testing.T) {
	for name, want := range map[string]string{
		"pbs_server": "./server/cmd/pbs_server",
		"pbs_mom":    "./mom/cmd/pbs_mom",
		"pbs_sched":  "./sched/cmd/pbs_sched",
		"pbs_iff":    "./tools/pbs_iff",
		"qsub":       "./tools/qsub",
	} {
		if got := Package(name); got != want {
			t.Errorf("Package(%q) = %q, want %q", name, got, want)
		}
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pbs_server", "pbs_mom", "pbs_sched", "pbs_iff", "qsub", "qstat", "momctl"} {
		if _, err := os.Stat(filepath.Join(root, Package(name), "main.go")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestLinkFlags(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"gopbs/pbs.DefaultPort": "15001"}, "-X gopbs/pbs.DefaultPort=15001"},
		{map[string]string{"b.Y": "2", "a.X": "1"}, "-X a.X=1 -X b.Y=2"},
	} {
		if got := linkFlags(c.vars); got != c.want {
			t.Errorf("linkFlags(%v) = %q, want %q", c.vars, got, c.want)
		}
	}
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	start := time.Now()
	p := Build(t, "tracejob")
	first := time.Since(start)
	fi, err := os.Stat(p.Path("tracejob"))
	if err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("tracejob not built: %v %v", fi, err)
	}
	// the clients find the pbs_iff beside them
	out, err := exec.Command("go", "version", "-m", p.Path("tracejob")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "gopbs/pbs.SbinDir="+p.Dir) {
		t.Errorf("tracejob not linked with SbinDir %s: %v\n%s", p.Dir, err, out)
	}
	// built once per test binary
	start = time.Now()
	if again := Build(t, "tracejob"); again != p {
		t.Errorf("second Build: %v, first %v", again, p)
	}
	if d := time.Since(start); d > first/2 && d > 50*time.Millisecond {
		t.Errorf("second Build took %v (first %v): built again?", d, first)
	}
	// other link-time variables: another directory
	v := BuildVars(t, map[string]string{"gopbs/pbs.DefaultPort": "17001"}, "tracejob")
	if v.Dir == p.Dir {
		t.Errorf("BuildVars shares the directory %s", v.Dir)
	}
	if fi, err := os.Stat(p.Dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("build directory %v %v, want mode 0755", fi, err)
	}
}

func TestBuildFailureRemembered(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b := &buildDir{root: root, dir: t.TempDir(), done: map[string]error{}}
	err = b.build([]string{"no-such-program"})
	if err == nil || !strings.Contains(err.Error(), "no-such-program") {
		t.Fatalf("build of a missing package: %v", err)
	}
	b.root = "/nonexistent" // a second go build would fail differently
	if err2 := b.build([]string{"no-such-program"}); err2 != err {
		t.Errorf("second build: %v, want the first error", err2)
	}
}

func TestSweepBuildDirs(t *testing.T) {
	tmp := t.TempDir()
	// a process that has ended
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := cmd.Process.Pid
	dirs := map[string]bool{ // name → kept
		buildDirPrefix + strconv.Itoa(gone) + "-123":        false,
		buildDirPrefix + strconv.Itoa(os.Getpid()) + "-456": true,
		buildDirPrefix + strconv.Itoa(os.Getppid()) + "-7":  true,
		buildDirPrefix + "notapid-1":                        true,
		"gopbs-other-1":                                     true,
	}
	for name := range dirs {
		if err := os.Mkdir(filepath.Join(tmp, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepBuildDirs(tmp)
	for name, kept := range dirs {
		_, err := os.Stat(filepath.Join(tmp, name))
		if (err == nil) != kept {
			t.Errorf("%s: exists %v, want %v", name, err == nil, kept)
		}
	}
}

func TestPickRange(t *testing.T) {
	for _, c := range []struct {
		in        string
		low, high int
	}{
		{"32768\t60999\n", 20000, 32000},
		{"", 20000, 32000},
		{"garbage", 20000, 32000},
		{"x 60999", 20000, 32000},
		{"25000 60999", 20000, 25000},
		{"20500 60999", 1024, 20500},
		{"1500 60999", 20000, 32000},
		{"40000 60999", 20000, 32000},
	} {
		low, high := pickRange(c.in)
		if low != c.low || high != c.high {
			t.Errorf("pickRange(%q) = %d, %d; want %d, %d", c.in, low, high, c.low, c.high)
		}
	}
}

func TestFreePorts(t *testing.T) {
	low, high := portRange()
	a := FreePorts(t, 4)
	b := FreePorts(t, 4)
	all := append(append([]int(nil), a...), b...)
	for i, p := range all {
		if p < low || p >= high {
			t.Errorf("port %d outside [%d, %d)", p, low, high)
		}
		if slices.Contains(all[:i], p) {
			t.Errorf("port %d handed out twice in %v", p, all)
		}
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d: %v", p, err)
			continue
		}
		if portFree(p) {
			t.Errorf("portFree(%d) while it is bound", p)
		}
		ln.Close()
	}
	// a range whose only port is taken
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	if got, err := freePorts(1, taken, taken+1); err == nil {
		t.Errorf("freePorts in [%d, %d) = %v while the port is bound", taken, taken+1, got)
	}
}

func TestMakeHome(t *testing.T) {
	home := Home(t, "vm")
	for _, d := range HomeDirs() {
		if fi, err := os.Stat(filepath.Join(home, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(home, "spool")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("spool: %v %v", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(home, "server_name")); err != nil || string(b) != "vm\n" {
		t.Errorf("server_name %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Dir(home)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("home's directory: %v %v", fi, err)
	}
	// again, over an existing home: kept, server_name replaced
	WriteFile(t, filepath.Join(home, "mom_priv", "config"), "$logevent 255\n")
	if err := MakeHome(home, "localhost"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "mom_priv", "config")); string(b) != "$logevent 255\n" {
		t.Errorf("config after MakeHome: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "server_name")); string(b) != "localhost\n" {
		t.Errorf("server_name after MakeHome: %q", b)
	}
}

func TestRun(t *testing.T) {
	out, errOut, code := Run(t, exec.Command("sh", "-c", "echo out; echo err >&2; exit 3"), 10*time.Second)
	if out != "out\n" || errOut != "err\n" || code != 3 {
		t.Errorf("Run: %q %q %d", out, errOut, code)
	}
	r := &fatalRecorder{TB: t}
	msg := r.call(func(tb testing.TB) { Run(tb, exec.Command("sleep", "10"), 100*time.Millisecond) })
	if !strings.Contains(msg, "hung") {
		t.Errorf("Run of a hanging command: %q", msg)
	}
}

func TestRunFor(t *testing.T) {
	cmd := exec.Command("sh", "-c", "cat; echo err >&2")
	cmd.Stdin = strings.NewReader("in\n")
	out, errOut, finished := RunFor(t, cmd, 10*time.Second)
	if out != "in\n" || errOut != "err\n" || !finished || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("RunFor: %q %q %v %v", out, errOut, finished, cmd.ProcessState)
	}
	// A hanging process group: the shell's background child holds the
	// output pipe open, so only killing the whole group ends the run
	// before WaitDelay.
	cmd = exec.Command("sh", "-c", "echo started; sleep 30 & sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	out, _, finished = RunFor(t, cmd, time.Second)
	if finished || out != "started\n" {
		t.Errorf("RunFor of a hanging group: finished %v, output %q", finished, out)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("RunFor of a hanging group returned after %v", d)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, "three calls", 5*time.Second, func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("cond called %d times", n)
	}
	r := &fatalRecorder{TB: t}
	if msg := r.call(func(tb testing.TB) { WaitFor(tb, "never", 100*time.Millisecond, func() bool { return false }) }); msg != "timed out waiting for never" {
		t.Errorf("WaitFor: %q", msg)
	}
}

func TestDaemon(t *testing.T) {
	port := FreePort(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=listen:"+strconv.Itoa(port))
	d := Start(t, "helper", cmd)
	d.WaitListening(t, "127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
	if !d.Alive() || d.Err() != nil {
		t.Fatalf("alive %v err %v", d.Alive(), d.Err())
	}
	if got := d.Output(); got != "listening\n" {
		t.Errorf("output %q", got)
	}
	if pgid, err := syscall.Getpgid(d.Cmd.Process.Pid); err != nil || pgid != d.Cmd.Process.Pid {
		t.Errorf("process group %d %v, want its own", pgid, err)
	}
	d.Stop()
	if d.Alive() {
		t.Fatal("alive after Stop")
	}
	if ee, ok := d.Err().(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("exit %v, want SIGTERM", d.Err())
	}
	d.Stop() // no effect once ended
	d.Kill()
}

func TestDaemonExits(t *testing.T) {
	d := Start(t, "short", exec.Command("sh", "-c", "echo bye; exit 4"))
	err := d.Wait(t, 10*time.Second)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 {
		t.Errorf("Wait: %v", err)
	}
	if d.Output() != "bye\n" {
		t.Errorf("output %q", d.Output())
	}
	r := &fatalRecorder{TB: t}
	msg := r.call(func(tb testing.TB) { d.WaitListening(tb, "127.0.0.1:1", 5*time.Second) })
	if !strings.Contains(msg, "short exited") || !strings.Contains(msg, "bye") {
		t.Errorf("WaitListening on an exited daemon: %q", msg)
	}
}

func TestDaemonGraceAndKill(t *testing.T) {
	// a daemon ignoring SIGTERM, with a child in its group
	d := Start(t, "stubborn", exec.Command("sh", "-c", `trap "" TERM; sleep 60 & echo started; wait`))
	WaitFor(t, "the daemon to start", 10*time.Second, func() bool { return d.Output() == "started\n" })
	d.Grace = 100 * time.Millisecond
	start := time.Now()
	d.Stop()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Stop took %v", took)
	}
	if d.Alive() {
		t.Fatal("alive after Stop")
	}
	if ee, ok := d.Err().(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("exit %v, want SIGKILL", d.Err())
	}
	// the group was killed: the sleep too
	WaitFor(t, "the process group to go", 10*time.Second, func() bool {
		return syscall.Kill(-d.Cmd.Process.Pid, 0) == syscall.ESRCH
	})
}

func TestUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: useradd")
	}
	const name = "gopbse2eunit"
	a := User(t, name)
	if a.Name != name || a.UID == 0 || a.HomeDir == "" {
		t.Fatalf("account %+v", a)
	}
	if b := User(t, name); *b != *a {
		t.Errorf("second lookup %+v, first %+v", b, a)
	}
	// an existing account is taken as it is, whatever shell is asked for
	if b := UserWithShell(t, name, "/bin/sh"); *b != *a {
		t.Errorf("UserWithShell %+v, User %+v", b, a)
	}
	const bashUser = "gopbse2ebash"
	if _, err := os.Stat("/bin/bash"); err == nil {
		b := UserWithShell(t, bashUser, "/bin/bash")
		out, _, _ := Run(t, exec.Command("getent", "passwd", bashUser), 10*time.Second)
		if !strings.HasSuffix(strings.TrimSpace(out), ":/bin/bash") || !strings.HasPrefix(out, bashUser+":") {
			t.Errorf("account %+v: passwd entry %q, want login shell /bin/bash", b, out)
		}
	}
	cmd := exec.Command("id", "-u")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	a.AsUser(cmd, "/tmp")
	out, _, code := Run(t, cmd, 10*time.Second)
	if code != 0 || strings.TrimSpace(out) != strconv.Itoa(a.UID) {
		t.Errorf("id -u as %s: %q exit %d", name, out, code)
	}
	if want := []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LOGNAME=" + name, "USER=" + name}; !slices.Equal(cmd.Env, want) {
		t.Errorf("env %q, want %q", cmd.Env, want)
	}
}

func TestHostCommand(t *testing.T) {
	RequireNamespaces(t)
	cmd := HostCommand(t, "vm", "sh", "-c", "hostname; grep -c vm /etc/hosts")
	out, errOut, code := Run(t, cmd, 10*time.Second)
	if code != 0 || out != "vm\n1\n" {
		t.Errorf("in the namespace: %q %q exit %d", out, errOut, code)
	}
	// the machine's own name is untouched
	if h, _ := os.Hostname(); h == "" {
		t.Error("host name lost")
	}
}

func TestShared(t *testing.T) {
	d := Shared(t) // skips without ../shared
	if !filepath.IsAbs(d) || filepath.Base(d) != "shared" {
		t.Errorf("Shared = %q", d)
	}
}

func TestDaemonChildHoldsOutput(t *testing.T) {
	// the daemon exits at once; its child keeps the output pipe open
	cmd := exec.Command("sh", "-c", "sleep 30 & echo parent done")
	cmd.WaitDelay = 200 * time.Millisecond
	d := Start(t, "parent", cmd)
	start := time.Now()
	err := d.Wait(t, 10*time.Second)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Wait took %v", took)
	}
	if !errors.Is(err, exec.ErrWaitDelay) {
		t.Errorf("Wait: %v, want ErrWaitDelay", err)
	}
	if d.Output() != "parent done\n" {
		t.Errorf("output %q", d.Output())
	}
	_ = syscall.Kill(-d.Cmd.Process.Pid, syscall.SIGKILL) // the sleep
}

func FuzzPickRange(f *testing.F) {
	for _, s := range []string{"32768\t60999\n", "", "1024 65535", "20500 60999", "-5 3", "99999999999999999999 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		low, high := pickRange(s)
		if low < 1024 || high > portHigh || high-low < 1 {
			t.Fatalf("pickRange(%q) = [%d, %d)", s, low, high)
		}
		if f := strings.Fields(s); len(f) == 2 {
			if first, err := strconv.Atoi(f[0]); err == nil && first >= low && first < high {
				t.Fatalf("pickRange(%q) = [%d, %d) holds the ephemeral start %d", s, low, high, first)
			}
		}
	})
}
