// Tests of a job's start: the prologue and epilogue scripts' arguments and
// failures, and the failures of the start itself.

package jobexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

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
