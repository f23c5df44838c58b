package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const mountinfo = `22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw
30 24 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
38 30 0:34 / /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory
41 30 0:37 / /sys/fs/cgroup/unified\040v2 rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
`

func TestParseMountinfo(t *testing.T) {
	p, ok := parseMountinfo(strings.NewReader(mountinfo))
	if !ok || p != "/sys/fs/cgroup/unified v2" {
		t.Errorf("parseMountinfo = %q, %v", p, ok)
	}
	if p, ok := parseMountinfo(strings.NewReader(strings.Split(mountinfo, "\n")[2])); ok {
		t.Errorf("a cgroup v1 mount taken for v2: %q", p)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add(mountinfo)
	f.Add(`1 2 3 4 \01 - cgroup2 x`)
	f.Fuzz(func(t *testing.T, s string) {
		parseMountinfo(strings.NewReader(s))
	})
}

func TestParseKeyed(t *testing.T) {
	got := parseKeyed([]byte("usage_usec 1234\nuser_usec 1000\nbad\nx y\nnr_periods 0\n"))
	if got["usage_usec"] != 1234 || got["user_usec"] != 1000 || len(got) != 3 {
		t.Errorf("parseKeyed = %v", got)
	}
}

func FuzzParseKeyed(f *testing.F) {
	f.Add([]byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 1\n"))
	f.Add([]byte("usage_usec 18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseKeyed(b)
	})
}

// fakeGroup is a group whose files are plain files of a temporary
// directory: the kernel's side is played by the test.
func fakeGroup(t *testing.T, files map[string]string) *Group {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestStatsFromFiles reads usage, the limit and an out-of-memory kill as
// the kernel reports them.
func TestStatsFromFiles(t *testing.T) {
	g := fakeGroup(t, map[string]string{
		"cpu.stat":      "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
		"memory.peak":   "52428800\n",
		"memory.max":    "52428800\n",
		"memory.events": "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 1\n",
	})
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{CPU: 2500 * time.Millisecond, MemPeak: 52428800, MemMax: 52428800, OOMKills: 1}
	if s != want {
		t.Errorf("Stats = %+v, want %+v", s, want)
	}
	// Without the memory controller only the CPU time is known.
	g = fakeGroup(t, map[string]string{"cpu.stat": "usage_usec 7\n"})
	if s, err := g.Stats(); err != nil || s != (Stats{CPU: 7 * time.Microsecond}) {
		t.Errorf("Stats without memory = %+v, %v", s, err)
	}
	// memory.max "max" is no limit.
	g = fakeGroup(t, map[string]string{"cpu.stat": "", "memory.current": "4096\n", "memory.max": "max\n"})
	if s, err := g.Stats(); err != nil || s != (Stats{MemPeak: 4096}) {
		t.Errorf("Stats with memory.current = %+v, %v", s, err)
	}
}

// TestLimitMemoryWrites checks what a limited group's files are set to.
func TestLimitMemoryWrites(t *testing.T) {
	g := fakeGroup(t, map[string]string{"memory.max": "", "memory.oom.group": ""})
	if err := g.limitMemory(50 << 20); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"memory.max": "52428800", "memory.oom.group": "1"} {
		if b, _ := os.ReadFile(filepath.Join(g.Path(), file)); string(b) != want {
			t.Errorf("%s = %q, want %q", file, b, want)
		}
	}
	// A hierarchy without the controller has no memory.max to write.
	if err := fakeGroup(t, nil).limitMemory(1); err == nil {
		t.Error("limitMemory succeeded without memory.max")
	}
}

// realRoot sets up a root of the machine's cgroup v2 hierarchy for the
// test, or skips saying why it cannot.
func realRoot(t *testing.T) *Root {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making control groups needs root")
	}
	mount, err := Mount()
	if err != nil {
		t.Skipf("this machine: %v", err)
	}
	dir := filepath.Join(mount, "gopbs-test-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(t.Name(), "/", "_"))
	r, err := Setup(mount, dir)
	if err != nil {
		t.Skipf("the cgroup v2 hierarchy at %s is not writable here: %v", mount, err)
	}
	t.Cleanup(func() { syscall.Rmdir(dir) })
	return r
}

// TestGroupOnThisMachine starts a process in a job group of the real
// hierarchy, reads its CPU time, kills it through the group and removes
// the group.
func TestGroupOnThisMachine(t *testing.T) {
	r := realRoot(t)
	g, err := r.Create("1.test[2]", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	if filepath.Base(g.Path()) != "1.test[2]" {
		t.Errorf("group path %s", g.Path())
	}
	cmd := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exec sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start in the group: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids, err := g.Procs()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(pids, cmd.Process.Pid) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm")
			if strings.TrimSpace(string(b)) == "sleep" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the process is not (or no longer) in the group: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU <= 0 {
		t.Errorf("no CPU time after a busy loop: %+v", s)
	}
	// A group of that name cannot be made while this one has processes.
	if _, err := r.Create("1.test[2]", 0); err == nil {
		t.Error("a second group replaced one with processes")
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("process ended with %v, not SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the group's process outlived Kill")
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path()); !os.IsNotExist(err) {
		t.Errorf("group directory left: %v", err)
	}
}

// TestMemoryLimitOnThisMachine runs a process allocating past memory.max
// in a limited group: the kernel kills it and memory.events says so.
func TestMemoryLimitOnThisMachine(t *testing.T) {
	r := realRoot(t)
	if !r.Memory() {
		t.Skipf("the cgroup v2 hierarchy here has no memory controller for %s (its controllers: %q; on a hybrid system memory is bound to the cgroup v1 hierarchy)", r.Dir(), r.Controllers())
	}
	g, err := r.Create("memtest", 20<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	cmd := exec.Command("/bin/sh", "-c", `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo ${#x}`)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("a process allocating 100 MB in a 20 MB group ended well: %s", out)
	}
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.OOMKills == 0 || s.MemMax != 20<<20 {
		t.Errorf("stats after the kill: %+v", s)
	}
}

func TestProbeOnThisMachine(t *testing.T) {
	r := realRoot(t)
	if err := r.Probe(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(r.Dir()); len(ents) == 0 {
		t.Fatal("root directory empty: not a cgroup")
	} else {
		for _, e := range ents {
			if e.IsDir() {
				t.Errorf("probe group %s left", e.Name())
			}
		}
	}
}
