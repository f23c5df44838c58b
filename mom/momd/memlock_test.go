package momd

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestHasCapability(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   bool
	}{
		{"Name:\tpbs_mom\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n", true},
		{"CapEff:\t0000000000004000\n", true},
		{"CapEff:\t0000000000003fff\n", false},
		{"CapEff:\tzz\n", false},
		{"Name:\tx\n", false},
	} {
		if got := hasCapability(strings.NewReader(tc.status), capIPCLock); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.status, got, tc.want)
		}
	}
}

// TestLockMemory locks a child process's memory (this test binary run
// again) and checks /proc/self/status: locked pages where permitted,
// nothing locked and no error elsewhere.
func TestLockMemory(t *testing.T) {
	if os.Getenv("MOMD_LOCK_CHILD") == "1" {
		locked, err := LockMemory()
		b, _ := os.ReadFile("/proc/self/status")
		vm := ""
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmLck:"); ok {
				vm = strings.TrimSpace(v)
			}
		}
		fmt.Printf("locked=%v err=%v VmLck=%s\n", locked, err, vm)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockMemory$")
	cmd.Env = append(os.Environ(), "MOMD_LOCK_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if memlockPermitted() {
		if !strings.HasPrefix(got, "locked=true err=<nil> VmLck=") || strings.HasSuffix(got, "VmLck=0 kB") {
			t.Errorf("permitted, child reports %q", got)
		}
	} else if got != "locked=false err=<nil> VmLck=0 kB" {
		t.Errorf("not permitted, child reports %q", got)
	}
}
