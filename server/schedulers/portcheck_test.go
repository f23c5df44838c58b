package schedulers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLivePID: an adopted scheduler is found through the first lock file
// naming a live process, so that one which moved its lock file to a new
// sched_priv is stopped as well as one that did not.
func TestLivePID(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	lockIn := func(name string, pid int) string {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sched.lock"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stale := lockIn("old", dead.Process.Pid)
	live := lockIn("new", os.Getpid())
	none := filepath.Join(base, "none")
	me := os.Getpid()
	for _, c := range []struct {
		privs []string
		want  int
	}{
		{[]string{live, stale}, me},
		{[]string{stale, live}, me},
		{[]string{none, live}, me},
		{[]string{stale}, 0},
		{[]string{none, ""}, 0},
	} {
		if got := livePID(c.privs...); got != c.want {
			t.Errorf("livePID(%q) = %d, want %d", c.privs, got, c.want)
		}
	}
}
