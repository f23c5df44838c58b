package compattests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLedgerSummary(t *testing.T) {
	var l ledger
	l.add(scenarioResult{suite: "s", name: "a", outcome: Match})
	l.add(scenarioResult{suite: "s", name: "b", outcome: Differ, detail: "stdout differs:\nmore"})
	l.add(scenarioResult{suite: "s", name: "c", outcome: Skipped, detail: "pending (issue 6)"})
	closing, notes := l.summary()
	if closing != "conformance: 3 scenarios, 1 match, 1 differ, 1 skipped" {
		t.Fatalf("closing line %q", closing)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "s/b: differ stdout differs:") {
		t.Fatalf("notes %q", notes)
	}
}

func TestStandardNormalizer(t *testing.T) {
	n := standardNormalizer()
	got := n.apply("    ctime = Sun Nov 22 01:21:24 2026\n<ctime>1795310482</ctime> walltime 01:00:00 port 15001")
	want := "    ctime = <DATE>\n<ctime><EPOCH></ctime> walltime 01:00:00 port 15001"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestTextDiff(t *testing.T) {
	if d := textDiff("stdout", "a\nb\n", "a\nb\n"); d != "" {
		t.Fatalf("equal texts differ: %q", d)
	}
	d := textDiff("stdout", "a\nb\n", "a\nc\n")
	if !strings.Contains(d, `line 2`) || !strings.Contains(d, `want "b"`) || !strings.Contains(d, `got  "c"`) {
		t.Fatalf("diff %q", d)
	}
}

func TestHostCommand(t *testing.T) {
	out, err := hostCommand(t, captureHost, "sh", "-c", "hostname; getent hosts "+captureHost).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != captureHost || !strings.HasPrefix(lines[1], "127.0.0.1") {
		t.Fatalf("namespace output %q", out)
	}
}

func TestLedgerRun(t *testing.T) {
	var l ledger
	// Subtests that would fail the parent are run against a throwaway
	// testing.T through t.Run; only outcomes that do not fail are used here.
	l.run(t, "self", "matches", "", func(t *testing.T) string { return "" })
	l.run(t, "self", "pending-differs", "issue 0: example", func(t *testing.T) string { return "x differs" })
	l.run(t, "self", "skips", "", func(t *testing.T) string { t.Skip("prerequisite absent"); return "" })
	closing, notes := l.summary()
	if closing != "conformance: 3 scenarios, 1 match, 0 differ, 2 skipped" {
		t.Fatalf("closing line %q (notes %q)", closing, notes)
	}
}

func TestCaptureCorpus(t *testing.T) {
	dir := requireCaptures(t)
	data, err := os.ReadFile(filepath.Join(dir, "manifest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Pcap string `json:"pcap"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("manifest line %d: %v", n+1, err)
		}
		if _, err := os.Stat(filepath.Join(dir, e.Pcap)); err != nil {
			t.Errorf("manifest names a missing pcap: %v", err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("empty manifest")
	}
}
