// Tests of a job run end to end by the engine as a real user: its
// environment, output and files, join and keep, TMPDIR and the nodefile,
// sister scripts, output files created as the user and the shell's
// invocation; and the test environment (testEnv) the package's tests share.

package jobexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
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
