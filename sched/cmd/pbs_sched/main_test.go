package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"pbs_sched", "-x"}, &stderr); code != 1 {
		t.Errorf("unknown flag: exit %d", code)
	}
	stderr.Reset()
	if code := run([]string{"pbs_sched", "extra"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("operand: exit %d, %q", code, stderr.String())
	}
}

func TestForegroundLockConflict(t *testing.T) {
	t.Chdir(".") // run changes to sched_priv; restore afterwards
	home := t.TempDir()
	priv := filepath.Join(home, "sched_priv")
	os.MkdirAll(priv, 0o755)
	os.MkdirAll(filepath.Join(home, "sched_logs"), 0o755)
	f, err := os.OpenFile(filepath.Join(priv, "sched.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run([]string{"pbs_sched", "-D", "-d", home, "-S", "0"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "sched.lock") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	log, _ := os.ReadDir(filepath.Join(home, "sched_logs"))
	if len(log) != 1 {
		t.Errorf("log files %v", log)
	}
}

func TestNASSyntaxErrorStopsTheStart(t *testing.T) {
	t.Chdir(".") // run changes to sched_priv; restore afterwards
	home := t.TempDir()
	priv := filepath.Join(home, "sched_priv")
	os.MkdirAll(priv, 0o755)
	os.MkdirAll(filepath.Join(home, "sched_logs"), 0o755)
	os.WriteFile(filepath.Join(priv, "config"), []byte("SUBMIT_QUEUE submit\nBATCH_QUEUES batch\nTEST_ONLY\n"), 0o644)
	var stderr bytes.Buffer
	code := run([]string{"pbs_sched", "-D", "-d", home, "-S", "0", "-listen", "127.0.0.1"}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "config line 3: TEST_ONLY: missing argument <boolean>") ||
		!strings.Contains(stderr.String(), "the scheduler will not start") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
