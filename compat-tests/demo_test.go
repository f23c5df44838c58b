package compattests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/internal/e2e"
)

// TestMakeDemo runs `make demo` as root, without sudo, as a newcomer's
// root shell on a fresh machine would (issue 14 item 8). The demo uses the
// standard ports, so it runs in a network namespace of its own (only its
// loopback up): nothing listening on this machine's ports 15001-15004
// plays a part, and the demo's daemons are reachable only there. The
// demo must run its first job, and pbs_sched must have the sample
// sched_config that `make install` installs.
func TestMakeDemo(t *testing.T) {
	e2e.RequireRoot(t, "the demo makes pbs_iff setuid root and runs a job as its user")
	if testing.Short() {
		t.Skip("builds every binary (-short)")
	}
	for _, prog := range []string{"make", "unshare", "ip", "runuser", "useradd"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	if out, err := exec.Command("unshare", "--net", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace here: %v %s", err, out)
	}
	root, err := e2e.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := e2e.Dir(t)
	bin, home := filepath.Join(dir, "build"), filepath.Join(dir, "demo")
	env := append(os.Environ(), "PBS_HOME="+home, "DEMO_USER="+e2eClientUser)
	// The user exists before the demo so that the test's clean-up owns it.
	e2e.User(t, e2eClientUser).MakeHome(t)
	t.Cleanup(func() {
		stop := exec.Command(filepath.Join(root, "contrib", "demo.sh"), "stop")
		stop.Env = append(env, "BIN="+bin)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("contrib/demo.sh stop: %v\n%s", err, out)
		}
	})
	// Each daemon detaches; the namespace lives on with them until the
	// clean-up stops them by the pids the demo recorded.
	cmd := exec.Command("unshare", "--net", "sh", "-c", `ip link set lo up && exec make -C "$1" demo BIN="$2"`, "sh", root, bin)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(8 * time.Minute):
		_ = cmd.Process.Kill()
		err = <-done
	}
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hello from GoPBS job ") {
		t.Errorf("make demo did not show the first job's output:\n%s", out.String())
	}
	want, err := os.ReadFile(filepath.Join(root, "sched", "config", "sched_config"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(home, "sched_priv", "sched_config"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the demo's sched_priv/sched_config is not the sample (%v):\n%s", err, got)
	}
}
