package jobexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/mom/config"
)

// TestTasksOfMotherSuperior: tasks spawned in a running job get the job's
// environment with their TM variables, write to the job's output, are
// listed, report their exit status, and die with the job.
func TestTasksOfMotherSuperior(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("20.srv", "sleep 30\n")
	j.ExecHost = "node1/0+node1/1"
	j.Cookie = "0123456789ABCDEF0123456789ABCDEF"
	if _, err := te.eng.Start(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	spawn := func(id int, argv ...string) {
		t.Helper()
		err := te.eng.Spawn(ctx, "20.srv", TaskSpec{TaskID: id, ParentTask: 1, VNode: 1, Argv: argv, Env: []string{"EXTRA=yes"}})
		if err != nil {
			t.Fatalf("Spawn %d: %v", id, err)
		}
	}
	spawn(2, "sh", "-c", "echo task $PBS_TASKNUM node $PBS_NODENUM vnode $PBS_VNODENUM $EXTRA $PBS_JOBCOOKIE $USER; exit 3")
	if st, err := te.eng.WaitTask(ctx, "20.srv", 2); err != nil || st != 3 {
		t.Errorf("WaitTask 2: %d %v, want 3", st, err)
	}
	out := te.spool("20.srv.OU")
	if want := "task 2 node 0 vnode 1 yes 0123456789ABCDEF0123456789ABCDEF " + testUser + "\n"; out != want {
		t.Errorf("task output %q, want %q", out, want)
	}
	spawn(3, "sleep", "30")
	if ids, err := te.eng.Tasks("20.srv"); err != nil || !slices.Equal(ids, []int{1, 2, 3}) {
		t.Errorf("Tasks: %v %v", ids, err)
	}
	if err := te.eng.Spawn(ctx, "20.srv", TaskSpec{TaskID: 3, Argv: []string{"true"}}); err == nil {
		t.Error("a second task 3 was started")
	}
	if err := te.eng.SignalTask("20.srv", 3, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st, err := te.eng.WaitTask(ctx, "20.srv", 3); err != nil || st != 256+int(syscall.SIGTERM) {
		t.Errorf("WaitTask 3 after SIGTERM: %d %v", st, err)
	}
	// A task still running when the job ends is killed with it.
	spawn(4, "sleep", "30")
	if err := te.eng.Signal(ctx, "20.srv", "SIGKILL", false); err != nil {
		t.Fatal(err)
	}
	te.waitExit(10 * time.Second)
	if _, err := te.eng.WaitTask(ctx, "20.srv", 4); err != nil {
		t.Errorf("task 4 not reaped after the job's end: %v", err)
	}
	if _, err := te.eng.WaitTask(ctx, "20.srv", 9); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("WaitTask of an unknown task: %v", err)
	}
	if err := te.eng.Spawn(ctx, "nope", TaskSpec{TaskID: 2, Argv: []string{"true"}}); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("Spawn in an unknown job: %v", err)
	}
}

// TestSisterJob: a joined job has no shell; its tasks write where they
// are told, KillTasks ends them, and the job never reaches OnExit.
func TestSisterJob(t *testing.T) {
	te := newTestEnv(t, "")
	tmp := filepath.Join(filepath.Dir(te.uhome), "scratch")
	if err := os.Mkdir(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(tmp, 0o1777)
	te.setConfig(func(c *config.Config) { c.TmpDir = tmp })
	j := te.job("21.srv", "")
	j.ExecHost = "ms/0+node1/0"
	if err := te.eng.Join(j, 1); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Join(j, 1); !errors.Is(err, ErrJobExists) {
		t.Errorf("second Join: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = te.eng.Spawn(ctx, "21.srv", TaskSpec{TaskID: 3, NodeID: 1, VNode: 1, Stdout: w, Stderr: w,
		Argv: []string{"sh", "-c", "echo node $PBS_NODENUM task $PBS_TASKNUM $TMPDIR; exec sleep 30"}})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 64)
	n, _ := r.Read(line)
	if got, want := string(line[:n]), "node 1 task 3 "+filepath.Join(tmp, "21.srv")+"\n"; got != want {
		t.Errorf("task output %q, want %q", got, want)
	}
	if ids, _ := te.eng.Tasks("21.srv"); !slices.Equal(ids, []int{3}) {
		t.Errorf("Tasks of the sister job: %v", ids)
	}
	if _, err := te.eng.KillTasks("21.srv"); err != nil {
		t.Fatal(err)
	}
	if st, err := te.eng.WaitTask(ctx, "21.srv", 3); err != nil || st != 256+int(syscall.SIGTERM) && st != 256+int(syscall.SIGKILL) {
		t.Errorf("task after KillTasks: %d %v", st, err)
	}
	if err := te.eng.Purge("21.srv"); err != nil {
		t.Fatal(err)
	}
	select {
	case ex := <-te.exits:
		t.Errorf("OnExit called for a sister job: %+v", ex)
	case <-time.After(200 * time.Millisecond):
	}
	if left, _ := filepath.Glob(filepath.Join(te.home, "mom_priv", "jobs", "21.srv*")); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(tmp, "21.srv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the job's tmpdir is left: %v", err)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "prog")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644)
	for _, tc := range []struct{ file, path, want string }{
		{"prog", "/nonexistent:" + dir, exe},
		{"plain", dir, "plain"},
		{"/bin/sh", dir, "/bin/sh"},
		{"sh", "", "/bin/sh"},
		{"missing", dir, "missing"},
	} {
		if got := lookPath(tc.file, tc.path); got != tc.want && !(tc.file == "sh" && strings.HasSuffix(got, "/sh")) {
			t.Errorf("lookPath(%q, %q) = %q, want %q", tc.file, tc.path, got, tc.want)
		}
	}
}

// TestTasksSurviveRestart: tasks are recorded in the job's task file
// (spec 13 §7); a new engine on the same home (a MOM restarted with -p)
// re-attaches them: an exited task keeps its exit status, a running one
// is tracked until its session is gone.
func TestTasksSurviveRestart(t *testing.T) {
	var opt Options
	te := newTestEnv(t, "", func(o *Options) { opt = *o })
	j := te.job("22.srv", "")
	j.ExecHost = "ms/0+node1/0"
	if err := te.eng.Join(j, 1); err != nil {
		t.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, ts := range []TaskSpec{
		{TaskID: 3, ParentTask: 1, NodeID: 1, Argv: []string{"sleep", "30"}},
		{TaskID: 4, ParentTask: 1, NodeID: 1, Argv: []string{"sh", "-c", "exit 5"}},
	} {
		ts.Stdout, ts.Stderr = devnull, devnull
		if err := te.eng.Spawn(ctx, "22.srv", ts); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := te.eng.WaitTask(ctx, "22.srv", 4); err != nil || st != 5 {
		t.Fatalf("task 4: %d %v", st, err)
	}
	recs, err := ReadTaskFile(te.eng.TaskFilePath("22.srv"))
	if err != nil || len(recs) != 2 {
		t.Fatalf("task file: %+v %v", recs, err)
	}
	if r := recs[0]; r.TaskID != 3 || r.Status != TaskRunning || r.SessionID <= 0 || r.ParentTask != 1 || r.JobID != "22.srv" {
		t.Errorf("record of task 3: %+v", r)
	}
	if r := recs[1]; r.TaskID != 4 || r.Status != TaskExited || r.ExitStatus != 5 {
		t.Errorf("record of task 4: %+v", r)
	}
	sid := recs[0].SessionID
	defer syscall.Kill(-sid, syscall.SIGKILL)

	eng2, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close()
	if err := eng2.Join(j, 1); err != nil {
		t.Fatal(err)
	}
	if highest, err := eng2.AdoptTasks("22.srv"); err != nil || highest != 4 {
		t.Fatalf("AdoptTasks: %d %v", highest, err)
	}
	if ids, _ := eng2.Tasks("22.srv"); !slices.Equal(ids, []int{3, 4}) {
		t.Errorf("adopted tasks %v", ids)
	}
	if st, err := eng2.WaitTask(ctx, "22.srv", 4); err != nil || st != 5 {
		t.Errorf("adopted exited task 4: %d %v", st, err)
	}
	if err := eng2.SignalTask("22.srv", 3, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if st, err := eng2.WaitTask(ctx, "22.srv", 3); err != nil || st != 0 {
		t.Errorf("adopted task 3 after its end: %d %v", st, err)
	}
	recs, _ = ReadTaskFile(eng2.TaskFilePath("22.srv"))
	if len(recs) != 2 || recs[0].Status != TaskExited {
		t.Errorf("task file after the adopted task ended: %+v", recs)
	}
	if _, err := eng2.AdoptTasks("nope"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("AdoptTasks of an unknown job: %v", err)
	}
}
