// Package e2e holds the harness that GoPBS's end-to-end tests share: it
// builds the programs of the module once per test binary (pbs_iff setuid
// root), creates unprivileged test accounts, temporary PBS_HOME
// directories and free loopback ports, starts daemons and stops them when
// the test ends, runs commands with a time limit, runs programs in a
// UTS and mount namespace of their own under a chosen host name, and runs
// programs on a pseudo-terminal (Terminal) as a person at a terminal
// would.
//
// Most helpers need root (setuid pbs_iff, useradd, reserved ports,
// namespaces); they skip the test, saying why, when they cannot do their
// job here, and fail it when something that should work does not.
//
// A test binary that builds programs removes them when it ends if its
// TestMain calls RemoveBuilds; directories left behind by test binaries
// that ended without it are removed by the next build.
//
// Package batchconn beside this one is the tests' batch-protocol client.
package e2e

import (
	"bytes"
	"errors"
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

// RequireRoot skips the test unless it runs as root; why says what needs
// root.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: " + why)
	}
}

// ModuleRoot returns the directory holding the module's go.mod, found by
// walking up from the working directory (a package's directory under go
// test).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Shared returns the project's shared directory (captures, spec), found
// as ../shared beside the module root, or skips the test when it is
// absent.
func Shared(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Skipf("no shared directory: %v", err)
	}
	d := filepath.Join(filepath.Dir(root), "shared")
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		t.Skipf("no shared directory: %s is absent", d)
	}
	return d
}

// Dir returns a new temporary directory that every user may search (mode
// 0755), so that programs running as a test user reach the files under
// it. It is removed when the test ends.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gopbs-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// HomeDirs are the directories Home creates in a PBS_HOME, as an
// installation has them.
func HomeDirs() []string {
	return []string{"server_priv", "server_priv/accounting", "server_logs", "mom_priv", "mom_logs",
		"sched_priv", "sched_logs", "spool", "undelivered"}
}

// Home returns a new PBS_HOME directory (in a Dir) with the directories
// of HomeDirs and a server_name file naming server.
func Home(t testing.TB, server string) string {
	t.Helper()
	home := filepath.Join(Dir(t), "torque")
	if err := MakeHome(home, server); err != nil {
		t.Fatal(err)
	}
	return home
}

// MakeHome creates the directories of HomeDirs under home (spool and
// undelivered world-writable, sticky) and writes server_name naming
// server. Existing directories and files are kept, except server_name.
func MakeHome(home, server string) error {
	for _, d := range HomeDirs() {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			return fmt.Errorf("PBS_HOME: %w", err)
		}
	}
	for _, d := range []string{"spool", "undelivered"} {
		if err := os.Chmod(filepath.Join(home, d), 0o777|os.ModeSticky); err != nil {
			return fmt.Errorf("PBS_HOME: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte(server+"\n"), 0o644); err != nil {
		return fmt.Errorf("PBS_HOME: %w", err)
	}
	return nil
}

// WriteFile writes text to path (mode 0644), creating its directory, and
// fails the test on error.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WaitFor calls cond every 50 ms until it reports true, and fails the
// test ("timed out waiting for what") when limit passes first.
func WaitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// LogFilesOnFailure has the test log, when it ends failed, every file
// matching the glob patterns (the daemons' logs, say), each cut to its
// last limit bytes when limit is positive.
func LogFilesOnFailure(t testing.TB, limit int, patterns ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, pattern := range patterns {
			files, _ := filepath.Glob(pattern)
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Logf("%s: %v", f, err)
					continue
				}
				text := string(b)
				if limit > 0 {
					text = tail(text, limit)
				}
				t.Logf("%s:\n%s", f, text)
			}
		}
	})
}

// Run runs cmd, which must not have been started, and returns what it
// wrote to its standard output and standard error and its exit code (-1
// when a signal ended it). Output the caller already directed elsewhere
// is not returned. The test fails when cmd cannot start or runs longer
// than limit (it is then killed, see RunFor).
func Run(t testing.TB, cmd *exec.Cmd, limit time.Duration) (stdout, stderr string, code int) {
	t.Helper()
	stdout, stderr, finished := RunFor(t, cmd, limit)
	if !finished {
		t.Fatalf("%s %q hung (more than %v)", filepath.Base(cmd.Path), cmd.Args[1:], limit)
	}
	return stdout, stderr, cmd.ProcessState.ExitCode()
}

// RunFor runs cmd, which must not have been started, for at most limit
// and returns what it wrote to its standard output and standard error
// (output the caller already directed elsewhere is not returned); its
// exit status is in cmd.ProcessState. When cmd runs longer it is killed,
// with its process group when it leads one (SysProcAttr.Setpgid), and
// finished is false. The test fails when cmd cannot start.
func RunFor(t testing.TB, cmd *exec.Cmd, limit time.Duration) (stdout, stderr string, finished bool) {
	t.Helper()
	var o, e bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &o
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &e
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", filepath.Base(cmd.Path), err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return o.String(), e.String(), true
	case <-time.After(limit):
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		} else {
			_ = cmd.Process.Kill()
		}
		<-done
		return o.String(), e.String(), false
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tail returns at most the last n bytes of s, starting at a line.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "…\n" + s
}
