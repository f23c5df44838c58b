// Tests of how a running job ends or is acted on: walltime and memory
// limits exceeded, deletion of its process tree, signals and suspension,
// rerun, CPU usage, modify and abort, adopted jobs, and signals that
// arrive before the start.

package jobexec

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWalltimeExceededKilled(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("6.srv", "sleep 30\n", Resource{"walltime", "00:00:01"})
	start := time.Now()
	_, ex := te.run(j)
	if ex.Status != JOB_EXEC_OVERLIMIT {
		t.Errorf("exit status %d, want -10", ex.Status)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("kill took %v", d)
	}
	if e := te.spool("6.srv.ER"); !strings.HasPrefix(e, "=>> PBS: job killed: walltime ") || !strings.Contains(e, "exceeded limit 1\n") {
		t.Errorf("stderr %q", e)
	}
	if !strings.Contains(te.logBuf.String(), ";6.srv;walltime 2 exceeded limit 1") {
		t.Errorf("log:\n%s", te.logBuf.String())
	}
}

func TestMemoryExceededKilled(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("needs perl to allocate memory")
	}
	te := newTestEnv(t, "$enforce mem poll\n")
	// Three processes of ~12 MB each: the job's total exceeds mem=20mb
	// and the poll kills it.
	hog := `perl -e '$x = "a" x (6*1024*1024); sleep 30' &` + "\n"
	j := te.job("7.srv", hog+hog+hog+"wait\n", Resource{"mem", "20mb"})
	_, ex := te.run(j)
	if ex.Status != JOB_EXEC_OVERLIMIT {
		t.Fatalf("exit %+v, want -10; stderr %q", ex, te.spool("7.srv.ER"))
	}
	if !strings.Contains(te.spool("7.srv.ER"), "=>> PBS: job killed: mem ") {
		t.Errorf("stderr %q", te.spool("7.srv.ER"))
	}
	if ex.Usage.Mem < 20<<20 {
		t.Errorf("mem used %d", ex.Usage.Mem)
	}
}

func TestDeleteKillsProcessTree(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("8.srv", "trap '' TERM\n(sleep 100; echo never) &\nsleep 100 &\nwait\n")
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, te, sid, 4)
	ctx := context.Background()
	if err := te.eng.Signal(ctx, "8.srv", "SIGTERM", false); err != nil {
		t.Fatal(err)
	}
	ex := te.waitExit(10 * time.Second)
	if ex.Status != 256+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 271", ex.Status)
	}
	waitSession(t, "processes left in session "+strconv.Itoa(sid), func() bool {
		ps, _ := te.eng.proc.Session(sid)
		return len(live(ps)) == 0
	})
	if err := te.eng.Signal(ctx, "nope", "SIGTERM", false); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown job: %v", err)
	}
}

// waitSession waits (5 s at most) until cond holds of a job's session,
// and fails the test with what otherwise.
func waitSession(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

func waitProcs(t *testing.T, te *testEnv, sid, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ps, _ := te.eng.proc.Session(sid); len(live(ps)) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session %d never had %d processes", sid, n)
}

func TestSignalExitEncodingAndSuspend(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("9.srv", "sleep 100\n")
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, te, sid, 3)
	ctx := context.Background()
	if err := te.eng.Signal(ctx, "9.srv", "resume", false); !errors.Is(err, ErrBadState) {
		t.Errorf("resume of running job: %v", err)
	}
	if err := te.eng.Signal(ctx, "9.srv", "suspend", false); err != nil {
		t.Fatal(err)
	}
	waitSession(t, "the session stopped", func() bool {
		ps, _ := te.eng.proc.Session(sid)
		for _, p := range ps {
			if p.State != 'T' {
				return false
			}
		}
		return true
	})
	ps, _ := te.eng.proc.Session(sid)
	for _, p := range ps {
		if p.State != 'T' {
			t.Errorf("pid %d state %c after suspend", p.PID, p.State)
		}
	}
	if st, _ := te.eng.Status("9.srv"); st.State != StateSuspended {
		t.Errorf("state %v", st.State)
	}
	if err := te.eng.Signal(ctx, "9.srv", "resume", false); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Signal(ctx, "9.srv", "BOGUS", false); !errors.Is(err, ErrUnknownSignal) {
		t.Errorf("bogus signal: %v", err)
	}
	if err := te.eng.Signal(ctx, "9.srv", "usr1", false); err != nil {
		t.Fatal(err)
	}
	ex := te.waitExit(10 * time.Second)
	if ex.Status != 256+int(syscall.SIGUSR1) {
		t.Errorf("exit %d, want 266", ex.Status)
	}
	if !strings.Contains(te.logBuf.String(), fmt.Sprintf("9.srv;kill_task: killing pid %d task 1 with sig 19", sid)) {
		t.Errorf("log lacks SIGSTOP line:\n%s", te.logBuf.String())
	}
}

func TestRerunReportsZero(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("10.srv", "sleep 100\n")
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, te, sid, 2)
	if err := te.eng.Signal(context.Background(), "10.srv", "SIGKILL", true); err != nil {
		t.Fatal(err)
	}
	if ex := te.waitExit(10 * time.Second); ex.Status != 0 {
		t.Errorf("rerun exit %d", ex.Status)
	}
}

func TestCPUUsage(t *testing.T) {
	te := newTestEnv(t, "")
	// Burn 1.05 s of CPU time (not wall time: the test machine may be busy).
	j := te.job("11.srv", "while :; do read -r _ _ _ _ _ _ _ _ _ _ _ _ _ u s _ < /proc/$$/stat; [ $((u+s)) -ge 105 ] && break; done\n")
	_, ex := te.run(j)
	if ex.Usage.CPUTime < 1 || ex.Usage.Walltime < 1 || ex.Usage.VMem == 0 || ex.Usage.VMem > 200<<20 {
		t.Errorf("usage %+v", ex.Usage)
	}
	// Wall time depends on how busy the machine is: only its format is fixed.
	if s := ex.Usage.String(); !strings.HasPrefix(s, "cput=00:00:0") || !regexp.MustCompile(`,walltime=\d\d:\d\d:\d\d$`).MatchString(s) {
		t.Errorf("usage string %q", s)
	}
}

func TestModifyWalltimeAndAbort(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("60.srv", "sleep 30\n", Resource{"walltime", "01:00:00"})
	if _, err := te.eng.Start(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Modify("60.srv", []Resource{{"walltime", "bad:x"}}); err == nil {
		t.Error("bad walltime accepted")
	}
	if err := te.eng.Modify("60.srv", []Resource{{"walltime", "1"}}); err != nil {
		t.Fatal(err)
	}
	if ex := te.waitExit(10 * time.Second); ex.Status != JOB_EXEC_OVERLIMIT {
		t.Errorf("exit %d after walltime lowered", ex.Status)
	}

	// -q style abort: the job is reported, its processes keep running.
	j = te.job("61.srv", "sleep 30\n")
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, te, sid, 2)
	if err := te.eng.Abort("61.srv", JOB_EXEC_INITABT, false); err != nil {
		t.Fatal(err)
	}
	if ex := te.waitExit(5 * time.Second); ex.Status != JOB_EXEC_INITABT || ex.SessionID != sid {
		t.Errorf("abort exit %+v", ex)
	}
	if ps, _ := te.eng.proc.Session(sid); len(live(ps)) == 0 {
		t.Error("processes killed by a non-killing abort")
	}
	_ = syscall.Kill(-sid, syscall.SIGKILL)
}

func TestAdoptDetectsEnd(t *testing.T) {
	te := newTestEnv(t, "")
	// A session not started by the engine, like jobs surviving a MOM restart.
	cmd := exec.Command("/bin/sleep", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	j := te.job("62.srv", "")
	if err := te.eng.Adopt(j, cmd.Process.Pid, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Adopt(j, cmd.Process.Pid, time.Now()); !errors.Is(err, ErrJobExists) {
		t.Errorf("second Adopt: %v", err)
	}
	ex := te.waitExit(10 * time.Second)
	if ex.Status != 0 || ex.SessionID != cmd.Process.Pid {
		t.Errorf("adopted exit %+v", ex)
	}
	if !strings.Contains(te.logBuf.String(), fmt.Sprintf("scan_non_child_tasks;found exited session %d for task 1 in job 62.srv", cmd.Process.Pid)) {
		t.Errorf("log:\n%s", te.logBuf.String())
	}
}

// A signal that arrives while the job is still starting (here: in a slow
// prologue) waits for the start, as TORQUE's MOM, which starts a job before
// it reads its next request, answers it: a suspend then stops the job
// instead of failing with ErrBadState, and a SIGTERM is not lost.
func TestSignalWaitsForStart(t *testing.T) {
	for _, signal := range []string{"suspend", "SIGTERM"} {
		t.Run(signal, func(t *testing.T) {
			te := newTestEnv(t, "")
			writeRootScript(t, filepath.Join(te.home, "mom_priv", "prologue"), "sleep 1\n", 0o500)
			j := te.job("9.srv", "sleep 100\n")
			started := make(chan error, 1)
			go func() {
				_, err := te.eng.Start(context.Background(), j)
				started <- err
			}()
			deadline := time.Now().Add(5 * time.Second)
			for {
				if st, err := te.eng.Status("9.srv"); err == nil && st.State == StateStarting {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("job never seen starting")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := te.eng.Signal(context.Background(), "9.srv", signal, false); err != nil {
				t.Fatalf("%s while starting: %v", signal, err)
			}
			if err := <-started; err != nil {
				t.Fatal(err)
			}
			st, _ := te.eng.Status("9.srv")
			switch signal {
			case "suspend":
				if st.State != StateSuspended {
					t.Errorf("state %v after a suspend sent while starting", st.State)
				}
				te.eng.Signal(context.Background(), "9.srv", "SIGKILL", false)
			case "SIGTERM":
				select {
				case <-te.exits:
				case <-time.After(10 * time.Second):
					t.Errorf("job still %v 10 s after a SIGTERM sent while starting", st.State)
					te.eng.Signal(context.Background(), "9.srv", "SIGKILL", false)
				}
			}
		})
	}
}
