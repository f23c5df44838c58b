// Package docs holds the project's documentation; its test checks that
// the comparisons with TORQUE quote the figures measured on this machine
// class.
package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTorqueFiguresQuoted: README.md and docs/performance.md compare
// GoPBS with TORQUE 2.5.13 by the figures of
// ../shared/reference-figures.md (issue 14 item 10): performance.md
// quotes every TORQUE figure of its table, both say which figures are not
// yet 5x better, and neither quotes the older figures measured on
// another machine.
func TestTorqueFiguresQuoted(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "..", "shared", "reference-figures.md"))
	if os.IsNotExist(err) {
		t.Skip("../shared/reference-figures.md is absent (the shared directory beside the repository)")
	}
	if err != nil {
		t.Fatal(err)
	}
	perf := read(t, "performance.md")
	readme := read(t, filepath.Join("..", "README.md"))
	rows := 0
	for _, line := range strings.Split(string(ref), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "figure") || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		rows++
		figure, torque, gopbs := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])
		if !strings.Contains(perf, torque) || !strings.Contains(perf, gopbs) {
			t.Errorf("docs/performance.md does not quote %q: TORQUE %q, GoPBS %q", figure, torque, gopbs)
		}
	}
	if rows < 8 {
		t.Fatalf("reference-figures.md: %d figure rows, want at least 8", rows)
	}
	for name, text := range map[string]string{"README.md": readme, "docs/performance.md": perf} {
		if !strings.Contains(text, "reference-figures.md") {
			t.Errorf("%s does not name ../shared/reference-figures.md", name)
		}
		if !strings.Contains(strings.ToLower(text), "not yet 5x") && !strings.Contains(text, "**not yet**") {
			t.Errorf("%s does not say which figures are not yet 5x better", name)
		}
		for _, old := range []string{"TORQUE: ~1,100", "1,100/s\nempty", "(TORQUE: 2.7 s)", "(TORQUE: 17 s)", "(TORQUE: ~7 KB)"} {
			if strings.Contains(text, old) {
				t.Errorf("%s still quotes %q, a TORQUE figure from another machine", name, old)
			}
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
