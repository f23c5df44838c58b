package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMetricsListener runs pbs_mom -D in-process with -http on a free
// loopback port (the flag winning over a bad $http_address line), scrapes
// its metrics and stops it; a bad $http_address alone stops the start.
func TestMetricsListener(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "mom_priv"), 0o751); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "mom_priv", "config")
	if err := os.WriteFile(cfg, []byte("$logevent 255\n$http_address bogus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-D", "-d", home, "-M", "0", "-R", "0", "-S", "1", "-H", "momnode"}); err == nil || !strings.Contains(err.Error(), "metrics listener") {
		t.Fatalf("bad $http_address: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-D", "-d", home, "-M", "0", "-R", "0", "-S", "1", "-H", "momnode", "-http", "0"})
	}()
	re := regexp.MustCompile(`metrics listener on (http://127\.0\.0\.1:\d+/metrics)`)
	var url string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" {
		ents, _ := os.ReadDir(filepath.Join(home, "mom_logs"))
		for _, e := range ents {
			data, _ := os.ReadFile(filepath.Join(home, "mom_logs", e.Name()))
			if m := re.FindSubmatch(data); m != nil {
				url = string(m[1])
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no metrics listener line in the log")
		}
		select {
		case err := <-done:
			t.Fatalf("pbs_mom exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`gopbs_mom_info{node="momnode",version="2.5.13"} 1`,
		`gopbs_mom_jobs{state="running"} 0`,
		`gopbs_mom_enforcement_kills_total{resource="walltime"} 0`,
		`gopbs_mom_memory_bytes{kind="physical"} `,
		"gopbs_mom_load1 ",
		"gopbs_mom_cpus ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pbs_mom did not stop on SIGTERM")
	}
	http.DefaultClient.CloseIdleConnections()
	if _, err := http.Get(url); err == nil {
		t.Error("the metrics listener outlived pbs_mom's run")
	}
}
