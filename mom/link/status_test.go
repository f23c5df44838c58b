package link

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/mom/config"
	"gopbs/mom/procfs"
)

// TestBusyHysteresis: state turns busy at $max_load and free again at
// $ideal_load or below; $auto_max_load counts the CPUs.
func TestBusyHysteresis(t *testing.T) {
	for _, cfgText := range []string{"$max_load 2\n$ideal_load 1\n", "$auto_max_load c*1\n$auto_ideal_load c-1\n"} {
		proc := t.TempDir()
		if err := os.WriteFile(filepath.Join(proc, "cpuinfo"), []byte("processor\t: 0\n\nprocessor\t: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse(strings.NewReader(cfgText))
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(Options{Host: "vm", Home: t.TempDir(), Exec: noExec{}, Config: cfg, Proc: procfs.FS{Root: proc}})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			load, state string
		}{{"0.50", "free"}, {"2.50", "busy"}, {"1.50", "busy"}, {"0.90", "free"}, {"1.90", "free"}, {"2.00", "busy"}} {
			if err := os.WriteFile(filepath.Join(proc, "loadavg"), []byte(step.load+" 0.1 0.1 1/100 7\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, _ := m.resource(t.Context(), "state"); got != step.state {
				t.Errorf("%q: load %s: state %s, want %s", cfgText, step.load, got, step.state)
			}
		}
	}
}
