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
	l.add(scenarioResult{suite: "s", name: "d", outcome: Deliberate, detail: "x (spec 04 §4)"})
	closing, notes := l.summary()
	if closing != "conformance: 4 scenarios, 1 match, 1 differ, 1 skipped, 1 deliberate" {
		t.Fatalf("closing line %q", closing)
	}
	if len(notes) != 3 || !strings.Contains(notes[0], "s/b: differ stdout differs:") || !strings.Contains(notes[2], "s/d: deliberate x (spec 04") {
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
	// A scenario that corrected the capture and then matched departs
	// deliberately.
	l.run(t, "self", "departs", "", func(t *testing.T) string {
		l.depart(t, "state_count", "spec 04 §4: sub-jobs are counted in their own state")
		return ""
	})
	// A correction does not excuse any other difference: with a pending
	// mark (so that this test does not fail) it is skipped, not
	// deliberate; without one it would differ.
	l.run(t, "self", "departs-and-differs", "issue 0: example", func(t *testing.T) string {
		l.depart(t, "state_count", "spec 04 §4")
		return "another attribute differs"
	})
	// Departures of a scenario that skipped are forgotten.
	l.run(t, "self", "departs-and-skips", "", func(t *testing.T) string {
		l.depart(t, "x", "seed 001")
		t.Skip("prerequisite absent")
		return ""
	})
	closing, notes := l.summary()
	if closing != "conformance: 6 scenarios, 1 match, 0 differ, 4 skipped, 1 deliberate" {
		t.Fatalf("closing line %q (notes %q)", closing, notes)
	}
	if len(l.departures) != 0 {
		t.Fatalf("departures left behind: %v", l.departures)
	}
}

func TestCitesSource(t *testing.T) {
	for _, tc := range []struct {
		reason string
		ok     bool
	}{
		{"spec 04 §4 counts sub-jobs in their own state", true},
		{"spec README deviation 45", true},
		{"seed 001: sync sets are accepted", true},
		{"TORQUE is wrong here", false},
		{"spec says so", false},
		{"", false},
	} {
		if got := citesSource(tc.reason); got != tc.ok {
			t.Errorf("citesSource(%q) = %v, want %v", tc.reason, got, tc.ok)
		}
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
