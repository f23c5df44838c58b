package jobexec

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/internal/e2e"
	"gopbs/mom/cgroup"
)

// testCgroups sets up a cgroup root of its own for the test on this
// machine's cgroup v2 hierarchy, or skips saying why there is none.
func testCgroups(t *testing.T) *cgroup.Root {
	t.Helper()
	mount, err := cgroup.Mount()
	if err != nil {
		t.Skipf("this machine: %v", err)
	}
	dir := filepath.Join(mount, "gopbs-jobexec-"+strconv.Itoa(os.Getpid())+"-"+t.Name())
	root, err := cgroup.Setup(mount, dir)
	if err != nil {
		t.Skipf("the cgroup v2 hierarchy is not writable here: %v", err)
	}
	if err := root.Probe(); err != nil {
		t.Skipf("processes cannot be started in a cgroup here: %v", err)
	}
	t.Cleanup(func() { syscall.Rmdir(dir) })
	return root
}

// orphanCPU is a job script whose CPU time goes to a process that leaves
// the job's session and is reaped by init: only the job's cgroup counts
// it. The script then waits until the test lets it end.
const orphanCPU = `setsid -f perl -e 'while ((times)[0] < 1.2) {} open(F, ">", "$ENV{HOME}/burnt")'
while [ ! -f "$HOME/burnt" ]; do sleep 0.1; done
while [ ! -f "$HOME/end" ]; do sleep 0.1; done
`

// TestCgroupUsageAndCleanup runs jobs in cgroups of the real hierarchy:
// the job's processes are in the job's group, the CPU time of a process
// that left the session counts in the job's cput, a process left behind
// is killed at the end and the group is removed. The same job without
// cgroups shows what the cgroup adds.
func TestCgroupUsageAndCleanup(t *testing.T) {
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		t.Skip("needs perl to burn CPU time")
	}
	root := testCgroups(t)
	for _, withGroups := range []bool{true, false} {
		te := newTestEnv(t, "", func(o *Options) {
			if withGroups {
				o.Cgroups = root
			}
		})
		os.Remove(filepath.Join(te.uhome, "burnt"))
		os.Remove(filepath.Join(te.uhome, "end"))
		id := "60.srv"
		// The escaped sleep's argument is this run's own, so that other
		// runs of this package as the same user (or the script's own
		// "sleep 0.1") are never taken for it.
		escaped := []string{"sleep", strconv.Itoa(300 + os.Getpid()%10000)}
		sid, err := te.eng.Start(t.Context(), te.job(id, "setsid -f "+strings.Join(escaped, " ")+"\n"+orphanCPU))
		if err != nil {
			t.Fatal(err)
		}
		group := filepath.Join(root.Dir(), id)
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(sid) + "/cgroup"); withGroups != strings.Contains(string(b), "/"+filepath.Base(root.Dir())+"/"+id+"\n") {
			t.Errorf("with cgroups %v: the job's shell is in %q", withGroups, b)
		}
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(te.uhome, "burnt")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the orphan did not burn its CPU time")
			}
		}
		te.eng.Poll()
		st, err := te.eng.Status(id)
		if err != nil {
			t.Fatal(err)
		}
		if withGroups && st.Usage.CPUTime < 1 || !withGroups && st.Usage.CPUTime >= 1 {
			t.Errorf("with cgroups %v: cput %d s after an orphan burnt 1.2 s", withGroups, st.Usage.CPUTime)
		}
		// The job ends: with a cgroup its escaped sleep goes with it.
		if err := os.WriteFile(filepath.Join(te.uhome, "end"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ex := te.waitExit(30 * time.Second)
		if ex.Status != 0 {
			t.Errorf("exit %+v", ex)
		}
		if withGroups && ex.Usage.CPUTime < 1 {
			t.Errorf("final cput %d", ex.Usage.CPUTime)
		}
		left := false
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if left = userRuns(int(te.cred.UID), escaped); !left {
				break
			}
		}
		if withGroups == left {
			t.Errorf("with cgroups %v: the escaped sleep is left running: %v", withGroups, left)
		}
		if !withGroups {
			killUser(int(te.cred.UID), escaped)
		}
		if _, err := os.Stat(group); !os.IsNotExist(err) {
			t.Errorf("job group %s left: %v", group, err)
		}
	}
}

// userRuns reports whether a live process of uid has the command line argv.
func userRuns(uid int, argv []string) bool {
	return len(userProcs(uid, argv)) > 0
}

// userProcs returns the live processes of uid whose command line is argv.
func userProcs(uid int, argv []string) []int {
	var out []int
	for _, p := range e2e.Processes(uid) {
		if slices.Equal(p.Argv, argv) {
			out = append(out, p.PID)
		}
	}
	return out
}

// killUser kills the processes of uid whose command line is argv.
func killUser(uid int, argv []string) {
	for _, p := range userProcs(uid, argv) {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// TestOOMKillIsLimitKill: a job whose cgroup had a process killed for its
// memory.max ends as a job killed over its mem limit, with the message in
// its stderr file and the log. The group's files are played by the test
// (the kernel's side of memory.max is TestMemoryLimitOnThisMachine in
// package cgroup).
func TestOOMKillIsLimitKill(t *testing.T) {
	te := newTestEnv(t, "")
	dir := t.TempDir()
	for name, text := range map[string]string{
		"cpu.stat": "usage_usec 1500000\n", "memory.peak": "52432896\n", "memory.max": "52428800\n",
		"memory.events": "low 0\nhigh 0\nmax 40\noom 1\noom_kill 1\noom_group_kill 1\n", "cgroup.kill": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := cgroup.OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	j := te.job("61.srv", "sleep 60\n", Resource{"mem", "50mb"})
	sid, err := te.eng.Start(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	te.eng.mu.Lock()
	r := te.eng.jobs["61.srv"]
	r.cg, r.cgMemory = g, true
	te.eng.mu.Unlock()
	syscall.Kill(-sid, syscall.SIGKILL) // as the kernel's group kill
	ex := te.waitExit(30 * time.Second)
	const msg = "mem 52432896 exceeded limit 52428800"
	if ex.Status != JOB_EXEC_OVERLIMIT || ex.Message != msg || ex.Usage.Mem != 52432896 || ex.Usage.CPUTime != 1 {
		t.Errorf("exit %+v", ex)
	}
	if e := te.spool("61.srv.ER"); e != "=>> PBS: job killed: "+msg+"\n" {
		t.Errorf("stderr %q", e)
	}
	if !strings.Contains(te.logBuf.String(), ";61.srv;"+msg) {
		t.Errorf("log:\n%s", te.logBuf.String())
	}
}
