package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests start this test binary as the background copy; TestMain
// plays the copy's part when the marker is set.
const (
	testEnv    = "GOPBS_DAEMON_TEST_COPY"
	behaveEnv  = "GOPBS_DAEMON_TEST_BEHAVE" // ready, fail, exit, silent
	resultFile = "GOPBS_DAEMON_TEST_RESULT" // where the copy writes what it saw
)

func TestMain(m *testing.M) {
	if os.Getenv(testEnv) != "" {
		os.Exit(copyMain())
	}
	os.Exit(m.Run())
}

// copyMain is the background copy: it records its session, working
// directory, arguments and marker, then behaves as asked.
func copyMain() int {
	p := Child(testEnv)
	wd, _ := os.Getwd()
	sid, _ := getsid()
	seen := fmt.Sprintf("sid-is-pid=%v\nwd=%s\nargs=%s\nmarker=%s\n", sid == os.Getpid(), wd,
		strings.Join(os.Args[1:], " "), os.Getenv(testEnv))
	fmt.Println("stdout of the copy")
	if err := os.WriteFile(os.Getenv(resultFile), []byte(seen), 0o644); err != nil {
		return 3
	}
	switch os.Getenv(behaveEnv) {
	case "ready":
		p.Ready(nil)
		p.Ready(errors.New("ignored: only the first report counts"))
	case "fail":
		p.Ready(errors.New("cannot lock '/x/mom.lock' - another mom running"))
		return 1
	case "exit":
		return 2
	}
	return 0
}

func startCopy(t *testing.T, behave string, opt Options) (seen, out string, err error) {
	t.Helper()
	dir := t.TempDir()
	result := filepath.Join(dir, "result")
	outFile := filepath.Join(dir, "out")
	t.Setenv(behaveEnv, behave)
	t.Setenv(resultFile, result)
	opt.Env = testEnv
	opt.Output = outFile
	err = Detach(opt)
	// Without WaitReady, Detach returns before the copy wrote anything.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, rerr := os.ReadFile(result)
		if rerr == nil && strings.HasSuffix(string(b), "\n") && strings.Contains(string(b), "marker=") {
			o, _ := os.ReadFile(outFile)
			return string(b), string(o), err
		}
		if time.Now().After(deadline) {
			t.Fatalf("the copy did not run (Detach: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDetachReady(t *testing.T) {
	dir := t.TempDir()
	seen, out, err := startCopy(t, "ready", Options{WaitReady: true, Dir: dir, Args: []string{"pbs_test", "-a", "b"},
		ExtraArgs: []string{"-f"}})
	if err != nil {
		t.Fatalf("Detach: %v", err)
	}
	for _, want := range []string{"sid-is-pid=true\n", "wd=" + dir + "\n", "args=-a b -f\n", "marker=1\n"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the copy saw\n%s\nwant %q", seen, want)
		}
	}
	if out != "stdout of the copy\n" {
		t.Errorf("output file %q", out)
	}
}

func TestDetachFailure(t *testing.T) {
	_, _, err := startCopy(t, "fail", Options{WaitReady: true})
	if err == nil || err.Error() != "cannot lock '/x/mom.lock' - another mom running" {
		t.Errorf("Detach = %v, want the copy's error", err)
	}
}

func TestDetachExitWithoutReport(t *testing.T) {
	_, _, err := startCopy(t, "exit", Options{WaitReady: true})
	if !errors.Is(err, ErrExited) {
		t.Errorf("Detach = %v, want ErrExited", err)
	}
}

func TestDetachNoWait(t *testing.T) {
	seen, _, err := startCopy(t, "silent", Options{})
	if err != nil {
		t.Fatalf("Detach: %v", err)
	}
	if !strings.Contains(seen, "marker=1\n") {
		t.Errorf("the copy saw\n%s", seen)
	}
}

func TestChildOutsideTheCopy(t *testing.T) {
	t.Setenv(testEnv, "")
	p := Child(testEnv)
	if p != nil {
		t.Fatalf("Child = %+v without the marker", p)
	}
	p.Ready(nil) // nil-safe
	if err := Detach(Options{}); err == nil {
		t.Error("Detach without Env accepted")
	}
}
