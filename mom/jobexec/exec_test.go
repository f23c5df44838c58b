package jobexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/internal/momtest"
	"gopbs/mom/momlog"
)

func TestMain(m *testing.M) {
	RunStarterIfRequested()
	os.Exit(m.Run())
}

const testUser = "gopbstest"

// testEnv is a throwaway PBS_HOME plus a home directory for the test user.
type testEnv struct {
	t      *testing.T
	eng    *Engine
	home   string // PBS_HOME
	uhome  string // the user's home
	cred   Credentials
	logBuf *momtest.SyncBuffer
	exits  chan Exit
}

// requireRootUser skips unless running as root, and creates the test user
// when absent.
func requireRootUser(t *testing.T) *user.User {
	t.Helper()
	return momtest.RequireUser(t, testUser)
}

func newTestEnv(t *testing.T, cfgText string, opts ...func(*Options)) *testEnv {
	t.Helper()
	u := requireRootUser(t)
	base := t.TempDir()
	for _, d := range []string{base, filepath.Dir(base)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	te := &testEnv{t: t, home: filepath.Join(base, "torque"), uhome: filepath.Join(base, "home"),
		logBuf: &momtest.SyncBuffer{}, exits: make(chan Exit, 4)}
	if err := os.MkdirAll(te.uhome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(te.uhome, uid, gid); err != nil {
		t.Fatal(err)
	}
	te.cred = Credentials{Name: testUser, UID: uint32(uid), GID: uint32(gid), Home: te.uhome, Shell: "/bin/bash"}
	cfg, err := config.Parse(strings.NewReader(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{
		Home: te.home, Host: "node1.example.com", Config: cfg,
		Log: momlog.NewWriter(te.logBuf, "pbs_mom", logline.EventAll),
		Lookup: func(name, group string) (*Credentials, error) {
			if name != testUser {
				return nil, fmt.Errorf("no user %q", name)
			}
			c := te.cred
			return &c, nil
		},
		OnExit:       func(ex Exit) { te.exits <- ex },
		PollInterval: 100 * time.Millisecond,
		KillGrace:    time.Second,
		ResumeDelay:  100 * time.Millisecond,
	}
	for _, o := range opts {
		o(&opt)
	}
	te.eng, err = New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(te.eng.Close)
	return te
}

// job returns a job description for the test user with a script.
func (te *testEnv) job(id, script string, res ...Resource) *Job {
	te.t.Helper()
	j := &Job{
		ID: id, Prefix: id, Name: "testjob", Owner: testUser + "@submit", User: testUser, Queue: "batch",
		Account: "acct1", Umask: -1, ExecHost: "node1/0",
		OutputPath: "submit:" + filepath.Join(te.uhome, "testjob.o"+strings.Split(id, ".")[0]),
		ErrorPath:  "submit:" + filepath.Join(te.uhome, "testjob.e"+strings.Split(id, ".")[0]),
		JoinPath:   "n", KeepFiles: "n",
		Variables: ParseVariableList("PBS_O_QUEUE=batch,PBS_O_HOST=submit,PBS_O_HOME=" + te.uhome +
			",PBS_O_WORKDIR=" + te.uhome + ",FOO=bar\\,baz"),
		Resources: append([]Resource{{"neednodes", "1"}, {"nodes", "1"}}, res...),
	}
	if err := os.WriteFile(te.eng.ScriptPath(j.Prefix), []byte("#!/bin/bash\n"+script), 0o700); err != nil {
		te.t.Fatal(err)
	}
	return j
}

// setConfig changes a copy of the engine's configuration.
func (te *testEnv) setConfig(change func(*config.Config)) {
	c := *te.eng.conf()
	change(&c)
	te.eng.SetConfig(&c)
}

func (te *testEnv) run(j *Job) (int, Exit) {
	te.t.Helper()
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		te.t.Fatalf("Start: %v", err)
	}
	return sid, te.waitExit(15 * time.Second)
}

func (te *testEnv) waitExit(d time.Duration) Exit {
	te.t.Helper()
	select {
	case ex := <-te.exits:
		return ex
	case <-time.After(d):
		te.t.Fatalf("job did not end within %v; log:\n%s", d, te.logBuf.String())
	}
	return Exit{}
}

func (te *testEnv) spool(name string) string {
	te.t.Helper()
	b, err := os.ReadFile(filepath.Join(te.home, "spool", name))
	if err != nil {
		te.t.Fatalf("spool file: %v", err)
	}
	return string(b)
}

func envMap(out string) map[string]string {
	m := map[string]string{}
	for _, ln := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(ln, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestEnvironmentOutputAndFiles(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("3.srv", "echo hello\necho oops >&2\nenv\necho PWD=$(pwd)\nid -u\numask\n",
		Resource{"walltime", "01:00:00"})
	sid, ex := te.run(j)
	if ex.Status != 0 || ex.SessionID != sid || ex.StartFailed {
		t.Fatalf("exit = %+v (sid %d)", ex, sid)
	}
	out := te.spool("3.srv.OU")
	if !strings.HasPrefix(out, "hello\n") {
		t.Errorf("stdout starts %q", out[:min(len(out), 40)])
	}
	if errOut := te.spool("3.srv.ER"); errOut != "oops\n" {
		t.Errorf("stderr = %q", errOut)
	}
	env := envMap(out)
	want := map[string]string{
		"PBS_JOBID": "3.srv", "PBS_JOBNAME": "testjob", "PBS_QUEUE": "batch", "PBS_O_QUEUE": "batch",
		"HOME": te.uhome, "USER": testUser, "LOGNAME": testUser, "SHELL": "/bin/bash",
		"PBS_NODEFILE": te.home + "/aux//3.srv", "PBS_GPUFILE": te.home + "/aux//3.srvgpu",
		"PBS_NODENUM": "0", "PBS_TASKNUM": "1", "PBS_VNODENUM": "0", "PBS_NP": "1",
		"PBS_NUM_NODES": "1", "PBS_NUM_PPN": "1", "PBS_WALLTIME": "3600", "PBS_MOMPORT": "15003",
		"PBS_VERSION": "TORQUE-2.5.13", "PBS_ENVIRONMENT": "PBS_BATCH", "ENVIRONMENT": "BATCH",
		"FOO": "bar,baz", "PWD": te.uhome,
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if len(env["PBS_JOBCOOKIE"]) != 32 {
		t.Errorf("PBS_JOBCOOKIE = %q", env["PBS_JOBCOOKIE"])
	}
	if !strings.Contains(out, "\n"+strconv.Itoa(int(te.cred.UID))+"\n0077\n") {
		t.Errorf("uid/umask lines missing in %q", out)
	}
	fi, err := os.Stat(filepath.Join(te.home, "spool", "3.srv.OU"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != te.cred.UID || fi.Mode().Perm() != 0o600 {
		t.Errorf("spool file owner %d mode %v", st.Uid, fi.Mode())
	}
	nodefile, err := os.ReadFile(filepath.Join(te.home, "aux", "3.srv"))
	if err != nil || string(nodefile) != "node1\n" {
		t.Errorf("node file %q, %v", nodefile, err)
	}
	for _, line := range []string{"TMomFinalizeJob3;job 3.srv started, pid = " + strconv.Itoa(sid),
		"3.srv;scan_for_terminated: job 3.srv task 1 terminated, sid=" + strconv.Itoa(sid),
		";0008;   pbs_mom;Job;3.srv;job was terminated"} {
		if !strings.Contains(te.logBuf.String(), line) {
			t.Errorf("log lacks %q", line)
		}
	}
	recs, err := ReadTaskFile(te.eng.TaskFilePath("3.srv"))
	if err != nil || len(recs) != 1 || recs[0].SessionID != sid || recs[0].Status != TaskExited {
		t.Errorf("task file %+v, %v", recs, err)
	}
	if err := te.eng.Purge("3.srv"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{te.eng.ScriptPath("3.srv"), te.eng.TaskFilePath("3.srv"), filepath.Join(te.home, "aux", "3.srv")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed", p)
		}
	}
	if _, err := te.eng.Status("3.srv"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("Status after purge: %v", err)
	}
}

func TestJoinKeepAndExitCode(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("4.srv", "echo out\necho err >&2\nexit 3\n")
	j.JoinPath = "oe"
	_, ex := te.run(j)
	if ex.Status != 3 {
		t.Errorf("exit status %d, want 3", ex.Status)
	}
	if out := te.spool("4.srv.OU"); out != "out\nerr\n" {
		t.Errorf("joined output %q", out)
	}
	if _, err := os.Stat(filepath.Join(te.home, "spool", "4.srv.ER")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".ER exists with -j oe")
	}

	j = te.job("5.srv", "echo kept\n")
	j.KeepFiles = "oe"
	j.Name = "dir/kjob"
	te.run(j)
	b, err := os.ReadFile(filepath.Join(te.uhome, "kjob.o5"))
	if err != nil || string(b) != "kept\n" {
		t.Errorf("kept output %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(te.uhome, "kjob.e5")); err != nil {
		t.Errorf("kept error file: %v", err)
	}
}

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

func writeRootScript(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestPrologueEpilogueArguments(t *testing.T) {
	te := newTestEnv(t, "")
	rec := filepath.Join(te.uhome, "args")
	priv := filepath.Join(te.home, "mom_priv")
	if err := os.WriteFile(rec, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(rec, 0o666)
	writeRootScript(t, filepath.Join(priv, "prologue"),
		`(echo "prologue $# $(id -u) $(pwd)"; for a in "$@"; do echo "[$a]"; done) >> `+rec+"\n", 0o500)
	writeRootScript(t, filepath.Join(priv, "epilogue"),
		`(echo "epilogue $#"; for a in "$@"; do echo "[$a]"; done) >> `+rec+"\necho epilogue-out\n", 0o500)
	writeRootScript(t, filepath.Join(priv, "prologue.user"), `echo "user prologue $(id -u)" >> `+rec+"\n", 0o555)
	j := te.job("12.srv", "echo job\n", Resource{"walltime", "00:05:00"})
	sid, ex := te.run(j)
	if n, err := te.eng.Epilogue(context.Background(), "12.srv"); n != 0 || err != nil {
		t.Fatalf("Epilogue = %d, %v", n, err)
	}
	b, _ := os.ReadFile(rec)
	grp := lookupGroupName(te.cred.GID)
	want := "prologue 7 0 " + priv + "\n[12.srv]\n[" + testUser + "]\n[" + grp + "]\n[testjob]\n" +
		"[neednodes=1,nodes=1,walltime=00:05:00]\n[batch]\n[acct1]\n" +
		"user prologue " + strconv.Itoa(int(te.cred.UID)) + "\n" +
		"epilogue 10\n[12.srv]\n[" + testUser + "]\n[" + grp + "]\n[testjob]\n[" + strconv.Itoa(sid) + "]\n" +
		"[neednodes=1,nodes=1,walltime=00:05:00]\n[" + ex.Usage.String() + "]\n[batch]\n[acct1]\n[0]\n"
	if string(b) != want {
		t.Errorf("script record:\n%s\nwant:\n%s", b, want)
	}
	if out := te.spool("12.srv.OU"); out != "job\nepilogue-out\n" {
		t.Errorf("stdout %q", out)
	}
}

func TestPrologueFailures(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		mode   os.FileMode
		status int
	}{
		{"exit1", "exit 1\n", 0o500, JOB_EXEC_FAIL2},
		{"exit2", "exit 2\n", 0o500, JOB_EXEC_RETRY},
		{"badperm", "exit 0\n", 0o777, JOB_EXEC_RETRY},
		{"timeout", "sleep 20\n", 0o500, JOB_EXEC_RETRY},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t, "$prologalarm 1\n")
			writeRootScript(t, filepath.Join(te.home, "mom_priv", "prologue"), tc.body, tc.mode)
			id := strconv.Itoa(20+i) + ".srv"
			_, err := te.eng.Start(context.Background(), te.job(id, "echo never\n"))
			var se *StartError
			if !errors.As(err, &se) || se.Status != tc.status {
				t.Fatalf("Start error %v, want status %d", err, tc.status)
			}
			ex := te.waitExit(5 * time.Second)
			if !ex.StartFailed || ex.Status != tc.status {
				t.Errorf("exit %+v", ex)
			}
		})
	}
}

func TestStartFailures(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("30.srv", "echo x\n")
	j.User = "nosuchuser"
	_, err := te.eng.Start(context.Background(), j)
	var se *StartError
	if !errors.As(err, &se) || se.Status != JOB_EXEC_FAIL1 {
		t.Errorf("unknown user: %v", err)
	}
	te.waitExit(5 * time.Second)

	j = te.job("31.srv", "echo x\n")
	j.Variables = append(j.Variables, Var{"PBS_O_INITDIR", "/nonexistent/dir"})
	_, err = te.eng.Start(context.Background(), j)
	if !errors.As(err, &se) || se.Status != JOB_EXEC_FAIL2 {
		t.Errorf("bad initdir: %v", err)
	}
	te.waitExit(5 * time.Second)
	if e := te.spool("31.srv.ER"); !strings.HasPrefix(e, "PBS: chdir to '/nonexistent/dir' failed: ") {
		t.Errorf("stderr %q", e)
	}

	j = te.job("32.srv", "echo x\n")
	j.ShellPathList = "/bin/nonexistent-shell"
	sid, ex := te.run(j)
	if sid == 0 || ex.Status != ExecFailedStatus {
		t.Errorf("bad shell: exit %+v", ex)
	}
	if e := te.spool("32.srv.ER"); e != "PBS: exec of shell '/bin/nonexistent-shell' failed\n" {
		t.Errorf("stderr %q", e)
	}
	if _, err := te.eng.Start(context.Background(), te.job("33.srv", "sleep 5\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := te.eng.Start(context.Background(), te.job("33.srv", "sleep 5\n")); !errors.Is(err, ErrJobExists) {
		t.Errorf("duplicate start: %v", err)
	}
	if err := te.eng.Purge("33.srv"); err != nil {
		t.Fatal(err)
	}
	te.waitExit(10 * time.Second)
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

func TestTmpdirNodefileSuffixAndPrecancel(t *testing.T) {
	te := newTestEnv(t, "")
	tmpBase := filepath.Join(filepath.Dir(te.uhome), "scratch")
	if err := os.Mkdir(tmpBase, 0o1777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(tmpBase, 0o1777)
	te.setConfig(func(c *config.Config) { c.TmpDir, c.NodefileSuffix = tmpBase, "-ib" })
	rec := filepath.Join(te.uhome, "precancel")
	writeRootScript(t, filepath.Join(te.home, "mom_priv", "epilogue.precancel"),
		`echo "precancel $1 $(id -u)" > `+rec+"\n", 0o555)
	if err := os.WriteFile(rec, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(rec, 0o666)
	j := te.job("80.srv", "echo TMPDIR=$TMPDIR\ncat $PBS_NODEFILE\ntouch $TMPDIR/x\nsleep 30\n")
	j.ExecHost = "node1/1+node1/0"
	sid, err := te.eng.Start(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	waitProcs(t, te, sid, 3)
	ctx := context.Background()
	if err := te.eng.Signal(ctx, "80.srv", "suspend", false); err != nil {
		t.Fatal(err)
	}
	// SIGTERM to a suspended job: SIGCONT first, then SIGTERM.
	if err := te.eng.Signal(ctx, "80.srv", "SIGTERM", false); err != nil {
		t.Fatal(err)
	}
	if ex := te.waitExit(10 * time.Second); ex.Status != 271 {
		t.Errorf("exit %d", ex.Status)
	}
	out := te.spool("80.srv.OU")
	tmp := filepath.Join(tmpBase, "80.srv")
	if out != "TMPDIR="+tmp+"\nnode1-ib\nnode1-ib\n" {
		t.Errorf("stdout %q", out)
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Sys().(*syscall.Stat_t).Uid != te.cred.UID {
		t.Errorf("tmpdir: %v", err)
	}
	if b, _ := os.ReadFile(rec); string(b) != "precancel 80.srv "+strconv.Itoa(int(te.cred.UID))+"\n" {
		t.Errorf("precancel record %q", b)
	}
	if !strings.Contains(te.logBuf.String(), fmt.Sprintf("kill_task: killing pid %d task 1 with sig 18", sid)) {
		t.Error("no SIGCONT before SIGTERM")
	}
	if err := te.eng.Purge("80.srv"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tmpdir not removed: %v", err)
	}
}

func TestSisterScripts(t *testing.T) {
	te := newTestEnv(t, "")
	rec := filepath.Join(te.uhome, "sister")
	if err := os.WriteFile(rec, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(rec, 0o666)
	priv := filepath.Join(te.home, "mom_priv")
	writeRootScript(t, filepath.Join(priv, "prologue.parallel"), `echo "pp $# $1" >> `+rec+"\n", 0o500)
	writeRootScript(t, filepath.Join(priv, "epilogue.user.parallel"), `echo "eup $# $5 ${10}" >> `+rec+"\n", 0o555)
	writeRootScript(t, filepath.Join(priv, "epilogue.parallel"), "exit 3\n", 0o500)
	j := &Job{ID: "90.srv", User: testUser, Name: "n", Queue: "batch"}
	if rc, err := te.eng.SisterPrologue(context.Background(), j); rc != 0 || err != nil {
		t.Errorf("SisterPrologue = %d, %v", rc, err)
	}
	if rc, err := te.eng.SisterEpilogue(context.Background(), j, 4242, Usage{}, 0); rc != 3 || err != nil {
		t.Errorf("SisterEpilogue = %d, %v", rc, err)
	}
	if b, _ := os.ReadFile(rec); string(b) != "pp 7 90.srv\neup 10 4242 0\n" {
		t.Errorf("records %q", b)
	}
}

func TestFinalNameOutputCreatedAsUser(t *testing.T) {
	te := newTestEnv(t, "$spool_as_final_name true\n")
	j := te.job("95.srv", "echo direct\n")
	_, ex := te.run(j)
	if ex.Status != 0 {
		t.Fatalf("exit %+v", ex)
	}
	p := filepath.Join(te.uhome, "testjob.o95")
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "direct\n" {
		t.Fatalf("final output %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Sys().(*syscall.Stat_t).Uid != te.cred.UID {
		t.Errorf("owner %d", fi.Sys().(*syscall.Stat_t).Uid)
	}
	// A directory only root may write to: the user cannot create the file.
	rootDir := filepath.Join(filepath.Dir(te.uhome), "rootonly")
	if err := os.Mkdir(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	j = te.job("96.srv", "echo x\n")
	j.OutputPath = "submit:" + filepath.Join(rootDir, "out")
	_, err = te.eng.Start(context.Background(), j)
	var se *StartError
	if !errors.As(err, &se) || se.Status != JOB_EXEC_STDOUTFAIL {
		t.Errorf("start with unwritable output: %v", err)
	}
	te.waitExit(5 * time.Second)
	if _, err := os.Stat(filepath.Join(rootDir, "out")); err == nil {
		t.Error("file created in a root-only directory")
	}
}

func TestShellInvocationOptions(t *testing.T) {
	show := "read -r _ _ _ _ _ sid _ < /proc/$$/stat\necho \"args=$* leader=$([ $sid = $$ ] && echo yes || echo no) parent=$(tr '\\0' ' ' < /proc/$PPID/cmdline)\"\n"
	tests := []struct {
		name, cfg, args, want string
	}{
		{"default", "", "", "args= leader=no parent=-bash "},
		{"no login", "$source_login_batch false\n", "a b", "args=a b leader=no parent=bash "},
		{"exec", "$exec_with_exec true\n", "x", "args=x leader=yes parent="},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t, tc.cfg)
			id := strconv.Itoa(100+i) + ".srv"
			j := te.job(id, show)
			j.JobArguments = tc.args
			te.run(j)
			if out := te.spool(id + ".OU"); !strings.HasPrefix(out, tc.want) {
				t.Errorf("output %q, want prefix %q", out, tc.want)
			}
		})
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
