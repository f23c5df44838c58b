package momd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/internal/momtest"
	"gopbs/mom/momlog"
)

func TestLockExclusive(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "mom_priv"), 0o751); err != nil {
		t.Fatal(err)
	}
	l, err := Lock(home)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	// fcntl locks are per process: test the conflict from a child process.
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$")
	cmd.Env = append(os.Environ(), "MOMD_LOCK_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	want := "cannot lock '" + filepath.Join(home, "mom_priv", "mom.lock") + "' - another mom running"
	if !strings.Contains(string(out), want) {
		t.Errorf("helper output %q lacks %q", out, want)
	}
	// Reading the file (open+close) would drop an fcntl lock: do it last.
	b, _ := os.ReadFile(filepath.Join(home, "mom_priv", "mom.lock"))
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q", b)
	}
}

// TestLockHelper runs in a child process of TestLockExclusive.
func TestLockHelper(t *testing.T) {
	home := os.Getenv("MOMD_LOCK_HOME")
	if home == "" {
		t.Skip("helper for TestLockExclusive")
	}
	_, err := Lock(home)
	if err == nil {
		t.Fatal("second lock succeeded")
	}
	fmt.Println(err)
}

func TestServersAndConfig(t *testing.T) {
	home := t.TempDir()
	cfg, err := LoadConfig(filepath.Join(home, "missing"))
	if err != nil || cfg.CheckPollTime != config.DefaultCheckPollTime {
		t.Fatalf("missing config: %v", err)
	}
	if s := Servers(home, cfg); s != nil {
		t.Errorf("servers without server_name: %v", s)
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte("srv1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := Servers(home, cfg); len(s) != 1 || s[0] != "srv1" {
		t.Errorf("servers = %v", s)
	}
	cfg.PBSServers = []string{"vm"}
	if s := Servers(home, cfg); len(s) != 1 || s[0] != "vm" {
		t.Errorf("servers = %v", s)
	}
}

func TestStartupLinesMatchCapture(t *testing.T) {
	cfg, _ := config.Parse(strings.NewReader("$pbsserver vm\n$logevent 255\n$usecp vm:/home /home\n$usecp vm:/tmp /tmp\n"))
	var buf bytes.Buffer
	log := momlog.NewWriter(&buf, "pbs_mom", cfg.LogEvent)
	LogStartup(log, cfg, Servers("", cfg), "/opt/torque/sbin/pbs_mom", 1795310291)
	LogShutdown(log, 15)
	re := regexp.MustCompile(`(?m)^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;`)
	got := re.ReplaceAllString(buf.String(), "")
	want := `0002;   pbs_mom;Svr;Log;Log opened
0002;   pbs_mom;Svr;pbs_mom;Torque Mom Version = 2.5.13, loglevel = 0
0002;   pbs_mom;Svr;setpbsserver;vm
0002;   pbs_mom;Svr;mom_server_add;server vm added
0002;   pbs_mom;Svr;usecp;vm:/home /home
0002;   pbs_mom;Svr;usecp;vm:/tmp /tmp
0002;   pbs_mom;n/a;initialize;independent
0080;   pbs_mom;Svr;pbs_mom;before init_abort_jobs
0002;   pbs_mom;Svr;pbs_mom;Is up
0002;   pbs_mom;Svr;setup_program_environment;MOM executable path and mtime at launch: /opt/torque/sbin/pbs_mom 1795310291
0002;   pbs_mom;Svr;pbs_mom;Torque Mom Version = 2.5.13, loglevel = 0
0002;   pbs_mom;Svr;pbs_mom;caught signal 15: leaving jobs running, just exiting
0002;   pbs_mom;Svr;pbs_mom;Is down
0002;   pbs_mom;Svr;Log;Log closed
`
	if got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	// The captured MOM log (logs/mom_logs) starts with exactly these lines.
	if shared := sharedDir(); shared != "" {
		b, err := os.ReadFile(filepath.Join(shared, "captures", "logs", "mom_logs-20261122.log"))
		if err == nil {
			captured := re.ReplaceAllString(string(b), "")
			if !strings.HasPrefix(captured, strings.Join(strings.SplitAfter(want, "\n")[:11], "")) {
				t.Errorf("captured log start differs:\n%s", captured[:min(len(captured), 900)])
			}
		}
	}
}

// sharedDir finds ../shared relative to the module root, or "".
func sharedDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(s); err == nil {
				return s
			}
			return ""
		}
	}
	return ""
}

func TestImmunizeOOM(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to lower oom_score_adj")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOOMHelper$")
	cmd.Env = append(os.Environ(), "MOMD_OOM_CHILD=1")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "permission denied") {
		t.Skip("this environment does not allow lowering oom_score_adj (no CAP_SYS_RESOURCE)")
	}
	if err != nil || !strings.Contains(string(out), "score=-1000") {
		t.Errorf("helper: %v\n%s", err, out)
	}
}

// TestOOMHelper runs in a child process of TestImmunizeOOM.
func TestOOMHelper(t *testing.T) {
	if os.Getenv("MOMD_OOM_CHILD") == "" {
		t.Skip("helper for TestImmunizeOOM")
	}
	if err := ImmunizeOOM(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("/proc/self/oom_score_adj")
	fmt.Printf("score=%s", b)
}

func TestParseRestartMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want RestartMode
	}{{"", RecoverPoll}, {"p", RecoverPoll}, {"-p", RecoverPoll}, {"r", RecoverKill}, {"-q", RecoverRequeue}, {"P", RecoverPurge}} {
		got, err := ParseRestartMode(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRestartMode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if tc.in != "" && strings.TrimPrefix(got.String(), "-") != strings.TrimPrefix(tc.in, "-") {
			t.Errorf("%v.String() does not round-trip %q", got, tc.in)
		}
	}
	if _, err := ParseRestartMode("x"); err == nil {
		t.Error("ParseRestartMode accepted x")
	}
	if s := RestartMode(9).String(); s != "RestartMode(9)" {
		t.Errorf("String of a bad mode %q", s)
	}
}

// TestVersionLineRepeats: the version line comes again every interval,
// with the log level of the configuration in force then.
func TestVersionLineRepeats(t *testing.T) {
	var buf momtest.SyncBuffer
	log := momlog.NewWriter(&buf, "pbs_mom", logline.EventAll)
	var cfg atomic.Pointer[config.Config]
	c := config.Default()
	cfg.Store(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); LogVersionEvery(ctx, log, 50*time.Millisecond, cfg.Load) }()
	const line = ";0002;   pbs_mom;Svr;pbs_mom;Torque Mom Version = 2.5.13, loglevel = "
	waitFor := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(buf.String(), want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("log lacks %q:\n%s", want, buf.String())
			}
		}
	}
	waitFor(line + "0\n")
	c2 := *c
	c2.LogLevel = 3
	cfg.Store(&c2)
	waitFor(line + "3\n")
	cancel()
	<-done
	n := strings.Count(buf.String(), line)
	time.Sleep(150 * time.Millisecond)
	if m := strings.Count(buf.String(), line); m != n {
		t.Errorf("version lines after the context ended: %d, then %d", n, m)
	}
}
