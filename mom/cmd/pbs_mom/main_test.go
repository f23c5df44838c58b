package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/mom/momd"
)

// TestForegroundStartStop runs pbs_mom -D in-process on ephemeral ports
// with a throwaway PBS_HOME, then stops it with SIGTERM and checks the
// start-up and shutdown log lines.
func TestForegroundStartStop(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "mom_priv"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "mom_priv", "config"), []byte("$logevent 255\n$usecp *:/home /home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run([]string{"-D", "-d", home, "-M", "0", "-R", "0", "-S", "1"}) }()
	logDir := filepath.Join(home, "mom_logs")
	readLog := func() string {
		ents, _ := os.ReadDir(logDir)
		var b strings.Builder
		for _, e := range ents {
			data, _ := os.ReadFile(filepath.Join(logDir, e.Name()))
			b.Write(data)
		}
		return b.String()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readLog(), ";Is up\n") {
		if time.Now().After(deadline) {
			t.Fatalf("pbs_mom did not start; log:\n%s", readLog())
		}
		select {
		case err := <-done:
			t.Fatalf("pbs_mom exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// (The lock itself is tested in mom/momd: fcntl locks do not conflict
	// within one process.)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pbs_mom did not stop on SIGTERM")
	}
	log := readLog()
	for _, want := range []string{";0002;   pbs_mom;Svr;Log;Log opened\n", ";Svr;usecp;*:/home /home\n",
		";n/a;initialize;independent\n", "caught signal 15: leaving jobs running, just exiting\n", ";Svr;Log;Log closed\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestFlags(t *testing.T) {
	f, err := parseFlags([]string{"-d", "/x", "-r"})
	if err != nil || f.home != "/x" || f.recover != momd.RecoverKill {
		t.Errorf("%+v %v", f, err)
	}
	if f, _ := parseFlags(nil); f.recover != momd.RecoverPoll {
		t.Errorf("default restart mode %v", f.recover)
	}
	if _, err := parseFlags([]string{"-p", "-q"}); err == nil {
		t.Error("-p -q accepted")
	}
}

func TestWithRestartMode(t *testing.T) {
	got := strings.Join(withRestartMode([]string{"-D", "-r", "-d", "/x", "-q"}, "-p"), " ")
	if got != "-D -d /x -p" {
		t.Errorf("got %q", got)
	}
}
