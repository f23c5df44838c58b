package jobexec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// at returns 2026-11-22 02:35:<sec> UTC plus ms milliseconds (the clock of
// capture 96).
func at(min, sec, ms int) time.Time {
	return time.Date(2026, 11, 22, 2, min, sec, ms*int(time.Millisecond), time.UTC)
}

func TestWalltimeCountsWholeClockSeconds(t *testing.T) {
	tests := []struct {
		name         string
		cfg          string
		start, now   time.Time
		suspendedFor time.Duration
		suspendedAt  time.Time // the job is suspended since then
		want         int64
	}{
		// capture 96: started 02:35:48.231, polled 02:35:57.x, obit 02:35:58.26
		{name: "poll of capture 96", start: at(35, 48, 231), now: at(35, 57, 600), want: 9},
		{name: "obit of capture 96", start: at(35, 48, 231), now: at(35, 58, 264), want: 10},
		// 8.2 s elapsed, but the clock's second changed 9 times
		{name: "late in the second", start: at(35, 48, 900), now: at(35, 57, 100), want: 9},
		{name: "same second", start: at(35, 48, 100), now: at(35, 48, 900), want: 0},
		{name: "clock behind the start", start: at(35, 48, 0), now: at(35, 47, 0), want: 0},
		{name: "suspended before", start: at(35, 0, 500), now: at(36, 0, 0), suspendedFor: 20 * time.Second, want: 40},
		{name: "suspended now", start: at(35, 0, 500), now: at(36, 0, 0), suspendedAt: at(35, 50, 900), want: 50},
		{name: "wallmult", cfg: "$wallmult 2.5\n", start: at(35, 0, 0), now: at(35, 4, 0), want: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := unitEngine(t, tc.cfg)
			r := &runningJob{started: tc.start, state: StateRunning, suspendedFor: tc.suspendedFor}
			if !tc.suspendedAt.IsZero() {
				r.state, r.suspendedAt = StateSuspended, tc.suspendedAt
			}
			if got := e.walltimeLocked(r, tc.now); got != tc.want {
				t.Errorf("walltime = %d, want %d", got, tc.want)
			}
		})
	}
}

// newClockedEnv is a test engine whose walltime clock is c and whose
// monitor never polls by itself within a test: polls are the test's.
func newClockedEnv(t *testing.T, c *fakeClock, cfgText string, opts ...func(*Options)) *testEnv {
	t.Helper()
	return newTestEnv(t, cfgText, append([]func(*Options){func(o *Options) {
		o.Now = c.Now
		o.PollInterval = time.Hour
		o.KillGrace = 300 * time.Millisecond
	}}, opts...)...)
}

func (te *testEnv) start(j *Job) int {
	te.t.Helper()
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		te.t.Fatalf("Start: %v", err)
	}
	return sid
}

// expectRunning checks that no exit is reported within a short while.
func (te *testEnv) expectRunning(what string) {
	te.t.Helper()
	select {
	case ex := <-te.exits:
		te.t.Fatalf("%s: the job ended: %+v", what, ex)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestWalltimeKillAtPoll replays capture 96 with a fake clock: a job with
// walltime=00:00:05 started at 02:35:48.231 is left alone by a poll at
// walltime 5 and killed by the poll at 02:35:57 ("walltime 9 exceeded
// limit 5", SIGTERM, exit status -10).
func TestWalltimeKillAtPoll(t *testing.T) {
	clk := &fakeClock{t: at(35, 48, 231)}
	te := newClockedEnv(t, clk, "")
	sid := te.start(te.job("31.vm", "sleep 120\n", Resource{"walltime", "00:00:05"}))

	clk.Set(at(35, 53, 900))
	te.eng.Poll()
	te.expectRunning("poll at walltime 5")
	if st, err := te.eng.Status("31.vm"); err != nil || st.Usage.Walltime != 5 || st.State != StateRunning {
		t.Fatalf("status after the first poll: %+v, %v", st, err)
	}
	if strings.Contains(te.logBuf.String(), "exceeded") {
		t.Fatalf("killed at walltime 5:\n%s", te.logBuf.String())
	}

	clk.Set(at(35, 57, 247))
	// taken before the poll, which notes the kill's time itself: under
	// load the poll's signalling can take half a second after that
	killed := time.Now()
	te.eng.Poll()
	// The end is processed a second after the kill: the obit's walltime
	// is 10 (obit at 02:35:58.264).
	clk.Set(at(35, 58, 250))
	ex := te.waitExit(10 * time.Second)
	if d := time.Since(killed); d < 900*time.Millisecond {
		t.Errorf("end processed %v after the kill, want a second", d)
	}
	if ex.Status != JOB_EXEC_OVERLIMIT || ex.Message != "walltime 9 exceeded limit 5" || ex.Usage.Walltime != 10 {
		t.Errorf("exit %+v; want status -10, the poll's message and walltime 10", ex)
	}
	if e := te.spool("31.vm.ER"); e != "=>> PBS: job killed: walltime 9 exceeded limit 5\n" {
		t.Errorf("stderr file %q", e)
	}
	log := te.logBuf.String()
	for _, want := range []string{
		";0008;   pbs_mom;Job;31.vm;walltime 9 exceeded limit 5\n",
		fmt.Sprintf(";0008;   pbs_mom;Job;31.vm;kill_task: killing pid %d task 1 with sig 15\n", sid),
		";0080;   pbs_mom;Job;31.vm;scan_for_terminated: job 31.vm task 1 terminated, sid=" + fmt.Sprint(sid) + "\n",
		";0008;   pbs_mom;Job;31.vm;job was terminated\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestOverLimitEscalation: a job that ignores SIGTERM gets the message and
// SIGTERM at the first poll over its limit, SIGTERM again at the next and
// SIGKILL at the third (spec 11 §9).
func TestOverLimitEscalation(t *testing.T) {
	clk := &fakeClock{t: at(35, 0, 0)}
	// The script replaces the top shell, so that the whole session
	// ignores SIGTERM.
	var killsMu sync.Mutex
	var kills []string // OnLimitKill's calls
	te := newClockedEnv(t, clk, "$exec_with_exec true\n", func(o *Options) {
		o.OnLimitKill = func(msg string) {
			killsMu.Lock()
			kills = append(kills, msg)
			killsMu.Unlock()
		}
	})
	ready := filepath.Join(te.uhome, "trapped")
	sid := te.start(te.job("40.vm", "trap '' TERM\ntouch "+ready+"\nsleep 120\n", Resource{"walltime", "00:00:05"}))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job did not set its trap")
		}
		time.Sleep(20 * time.Millisecond)
	}
	termLine := fmt.Sprintf("40.vm;kill_task: killing pid %d task 1 with sig 15\n", sid)

	for i, now := range []time.Time{at(35, 10, 0), at(35, 55, 0)} {
		clk.Set(now)
		te.eng.Poll()
		te.expectRunning(fmt.Sprintf("poll %d over the limit", i+1))
		// Each delivery walks the session killMaxWalks times, as the
		// shell outlives SIGTERM.
		if n := strings.Count(te.logBuf.String(), termLine); n != (i+1)*killMaxWalks {
			t.Fatalf("after poll %d over the limit, %d SIGTERMs to the job's shell:\n%s", i+1, n, te.logBuf.String())
		}
	}
	clk.Set(at(36, 40, 0))
	te.eng.Poll()
	ex := te.waitExit(10 * time.Second)
	if ex.Status != JOB_EXEC_OVERLIMIT || ex.Message != "walltime 10 exceeded limit 5" || ex.Usage.Walltime != 100 {
		t.Errorf("exit %+v; want -10, the first poll's message, walltime 100", ex)
	}
	log := te.logBuf.String()
	if n := strings.Count(log, "exceeded limit"); n != 1 {
		t.Errorf("%d over-limit messages, want 1:\n%s", n, log)
	}
	killsMu.Lock()
	if len(kills) != 1 || kills[0] != "walltime 10 exceeded limit 5" {
		t.Errorf("OnLimitKill calls %q, want one for the first poll over the limit", kills)
	}
	killsMu.Unlock()
	graceful := fmt.Sprintf("40.vm;kill_task: killing pid %d task 1 gracefully with sig 15\n", sid)
	if n := strings.Count(log, graceful); n != 1 {
		t.Errorf("%d graceful SIGKILL deliveries to the shell at the third poll, want 1:\n%s", n, log)
	}
	// Its state is logged at each look during the grace time (0, 250 ms).
	if n := strings.Count(log, fmt.Sprintf("40.vm;kill_task: process (pid=%d/state=S) after sig 9\n", sid)); n < 2 {
		t.Errorf("the shell's state logged %d times during the grace time:\n%s", n, log)
	}
	if e := te.spool("40.vm.ER"); e != "=>> PBS: job killed: walltime 10 exceeded limit 5\n" {
		t.Errorf("stderr file %q", e)
	}
}

// TestPollNowRunsCycle: PollNow makes the monitor poll at once, though its
// interval is an hour.
func TestPollNowRunsCycle(t *testing.T) {
	clk := &fakeClock{t: at(35, 0, 0)}
	te := newClockedEnv(t, clk, "")
	te.start(te.job("41.vm", "sleep 120\n", Resource{"walltime", "00:00:01"}))
	clk.Set(at(35, 2, 0))
	te.expectRunning("before PollNow")
	te.eng.PollNow()
	te.eng.PollNow() // a second request while one is pending does not block
	if ex := te.waitExit(10 * time.Second); ex.Status != JOB_EXEC_OVERLIMIT {
		t.Errorf("exit %+v, want -10", ex)
	}
}

// TestJobEndSamplesOtherJobs: when a job ends, the other running jobs'
// usage is sampled (as in captures 74, 82 and 87, where of two jobs ending
// together the first reports mem=0kb and the second what it used).
func TestJobEndSamplesOtherJobs(t *testing.T) {
	clk := &fakeClock{t: at(35, 0, 0)}
	te := newClockedEnv(t, clk, "")
	waitProcs(t, te, te.start(te.job("42.vm", "sleep 120\n")), 2) // the shell and sleep are up
	clk.Set(at(35, 3, 0))
	te.start(te.job("43.vm", "exit 0\n"))
	ex := te.waitExit(10 * time.Second)
	if ex.JobID != "43.vm" || ex.Usage.Mem != 0 || ex.Usage.Walltime != 0 {
		t.Errorf("exit %+v, want 43.vm with mem 0 and walltime 0", ex)
	}
	st, err := te.eng.Status("42.vm")
	if err != nil || st.Usage.Mem == 0 || st.Usage.VMem == 0 {
		t.Errorf("usage of the job left running: %+v, %v; want it sampled", st.Usage, err)
	}
	if err := te.eng.Signal(context.Background(), "42.vm", "SIGKILL", false); err != nil {
		t.Fatal(err)
	}
	te.waitExit(10 * time.Second)
}

// TestMemNotPolledWhenOff: with "$enforce mem off" pbs_mom leaves mem to
// the rlimits, as TORQUE (capture 97): a job whose processes together use
// more than mem= is not killed by the poll.
func TestMemNotPolledWhenOff(t *testing.T) {
	clk := &fakeClock{t: at(35, 0, 0)}
	te := newClockedEnv(t, clk, "$enforce mem off\n")
	hog := `perl -e '$x = "a" x (6*1024*1024); sleep 30' &` + "\n"
	te.start(te.job("44.vm", hog+hog+hog+"wait\n", Resource{"mem", "20mb"}))
	deadline := time.Now().Add(10 * time.Second)
	for {
		te.eng.Poll()
		st, err := te.eng.Status("44.vm")
		if err != nil {
			t.Fatal(err)
		}
		if st.Usage.Mem > 20<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never used more than 20 MB: %+v", st.Usage)
		}
		time.Sleep(100 * time.Millisecond)
	}
	te.expectRunning("over mem")
	if strings.Contains(te.logBuf.String(), "exceeded") {
		t.Errorf("over-limit message:\n%s", te.logBuf.String())
	}
	if err := te.eng.Signal(context.Background(), "44.vm", "SIGKILL", false); err != nil {
		t.Fatal(err)
	}
	te.waitExit(10 * time.Second)
}

// TestPollNowJoinsRecentCycle: a PollNow that comes right after the
// monitor's own cycle (the status cycle and $check_poll_time have the same
// period) is part of that cycle, not a second one that would escalate an
// over-limit kill at once.
func TestPollNowJoinsRecentCycle(t *testing.T) {
	clk := &fakeClock{t: at(35, 0, 0)}
	te := newClockedEnv(t, clk, "$exec_with_exec true\n", func(o *Options) { o.PollInterval = 2 * time.Second })
	ready := filepath.Join(te.uhome, "trapped")
	sid := te.start(te.job("45.vm", "trap '' TERM\ntouch "+ready+"\nsleep 120\n", Resource{"walltime", "00:00:05"}))
	termLine := fmt.Sprintf("45.vm;kill_task: killing pid %d task 1 with sig 15\n", sid)
	// SIGTERM deliveries: each walks the session killMaxWalks times, as
	// the shell outlives them.
	terms := func() int { return strings.Count(te.logBuf.String(), termLine) / killMaxWalks }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job did not set its trap")
		}
	}
	clk.Set(at(35, 10, 0))
	for deadline := time.Now().Add(5 * time.Second); terms() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor did not poll:\n%s", te.logBuf.String())
		}
	}
	polled := time.Now()
	te.eng.PollNow()
	time.Sleep(300 * time.Millisecond)
	if n := terms(); n != 1 {
		t.Fatalf("PollNow right after the monitor's cycle ran another: %d SIGTERMs", n)
	}
	time.Sleep(time.Until(polled.Add(1200 * time.Millisecond)))
	te.eng.PollNow()
	for deadline := time.Now().Add(700 * time.Millisecond); terms() != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("PollNow a second after the cycle did not poll: %d SIGTERMs", terms())
		}
	}
	if err := te.eng.Signal(context.Background(), "45.vm", "SIGKILL", false); err != nil {
		t.Fatal(err)
	}
	te.waitExit(10 * time.Second)
}

// TestLeftoversKilledBeforeTerminatedNote: when the job's shell ends, what
// is left of its session is killed first, then scan_for_terminated and
// "job was terminated" are logged, in TORQUE's order (captures 58, 62, 96).
func TestLeftoversKilledBeforeTerminatedNote(t *testing.T) {
	te := newTestEnv(t, "")
	sid, ex := te.run(te.job("46.vm", "sleep 120 &\nexit 0\n"))
	if ex.Status != 0 {
		t.Errorf("exit %+v", ex)
	}
	log := te.logBuf.String()
	kill := strings.Index(log, "46.vm;kill_task: killing pid ")
	note := strings.Index(log, fmt.Sprintf("46.vm;scan_for_terminated: job 46.vm task 1 terminated, sid=%d\n", sid))
	end := strings.Index(log, "46.vm;job was terminated\n")
	if kill < 0 || note < kill || end < note {
		t.Errorf("want the leftover's kill, scan_for_terminated, job was terminated in this order:\n%s", log)
	}
}

// TestAdoptedEndSeenWithinSeconds: the end of an adopted job (recovered
// after a MOM restart) is noticed within a second or two, not at the next
// poll (capture 103: noticed 2 s after the job's end).
func TestAdoptedEndSeenWithinSeconds(t *testing.T) {
	clk := &fakeClock{t: at(38, 34, 210)}
	te := newClockedEnv(t, clk, "")
	cmd := exec.Command("/bin/sleep", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	go func() { _ = cmd.Wait(); ended <- time.Now() }()
	if err := te.eng.Adopt(te.job("38.vm", ""), cmd.Process.Pid, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(39, 36, 300))
	ex := te.waitExit(10 * time.Second)
	if d := time.Since(<-ended); d > 2500*time.Millisecond {
		t.Errorf("adopted job's end noticed %v after it", d)
	}
	if ex.Status != 0 || ex.Usage.Walltime != 62 {
		t.Errorf("exit %+v, want status 0 and walltime 62", ex)
	}
}
