package daemon

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReservablePolicyFile: the daemon reads sched_priv/reservable.ad
// with the other policy files; without one there is no custom condition,
// and a malformed one stops the start with the file and line.
func TestReservablePolicyFile(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		custom     bool
		err        string
	}{
		{name: "none"},
		{name: "sample", file: "[ PLUS_NODE_RESERVABLE = PLUS_CANDIDATE_NODE.isAlive && PLUS_CANDIDATE_NODE.nRunJobs == 0 ]", custom: true},
		{name: "malformed", file: "[\n PLUS_NODE_RESERVABLE = (1 + ]", err: "reservable.ad: line 2: want an expression, found \"]\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			priv := filepath.Join(home, "sched_priv")
			for _, dir := range []string{priv, filepath.Join(home, "sched_logs")} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(priv, "reservable.ad"), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := New(Options{Home: home, Stderr: io.Discard}, nil)
			if tc.err != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tc.err) {
					t.Fatalf("New: %v, want ...%s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Reservable == nil || d.Reservable.Custom() != tc.custom {
				t.Errorf("Reservable %+v, custom want %v", d.Reservable, tc.custom)
			}
		})
	}
}
