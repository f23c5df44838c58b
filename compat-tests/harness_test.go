// Package compattests is GoPBS's conformance suite: it replays real TORQUE
// 2.5.13 traffic (a directory of pcaps with a manifest.jsonl, by default
// ../shared/captures beside the repository) against GoPBS programs started
// in temporary homes on ephemeral loopback ports, and compares what GoPBS
// answers and prints with what TORQUE did.
//
// Every comparison is a scenario. A scenario matches, differs, is
// skipped (its prerequisites are absent, or it is marked pending with the
// issue that will close it and still differs), or departs deliberately:
// the capture shows a TORQUE behaviour that the spec or a seed says GoPBS
// must not reproduce, the scenario replaced the captured value with the
// one the spec requires, and with that one correction everything matched
// exactly. The suite ends with one line
//
//	conformance: N scenarios, N match, N differ, N skipped, N deliberate
//
// and fails on any difference in a scenario that is not marked pending.
//
// Set GOPBS_CAPTURES to check GoPBS against another directory of captures,
// for example a site's own TORQUE traffic recorded with tcpdump.
package compattests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopbs/internal/capture"
	"gopbs/internal/e2e"
)

// Outcome is the result of one scenario.
type Outcome string

// The outcomes a scenario can have.
const (
	Match      Outcome = "match"
	Differ     Outcome = "differ"
	Skipped    Outcome = "skipped"
	Deliberate Outcome = "deliberate"
)

// citation is what the reason of a deliberate difference must contain: the
// spec section, spec README deviation or seed that requires GoPBS to depart
// from the capture.
var citation = regexp.MustCompile(`\b(spec \d\d|seed \d{3}|deviation \d+)`)

type scenarioResult struct {
	suite, name string
	outcome     Outcome
	detail      string
}

// ledger collects scenario outcomes across every test of the package so
// that TestMain can print the closing line.
type ledger struct {
	mu      sync.Mutex
	results []scenarioResult
	// departures holds, per running scenario (by test name), the
	// deliberate differences its body applied.
	departures map[string][]string
}

// depart records, from inside a scenario body, that the scenario replaced
// a captured value (what) with the value reason's spec or seed requires,
// and that GoPBS's reply will be compared with the replaced value. A
// reason that cites no spec section, deviation or seed fails the test. The
// scenario ends "deliberate" only when nothing else differs.
func (l *ledger) depart(t *testing.T, what, reason string) {
	t.Helper()
	if !citesSource(reason) {
		t.Errorf("deliberate difference %q: the reason %q cites no spec section, deviation or seed", what, reason)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.departures == nil {
		l.departures = map[string][]string{}
	}
	l.departures[t.Name()] = append(l.departures[t.Name()], what+" ("+reason+")")
}

// citesSource reports whether the reason of a deliberate difference names
// the spec section, spec README deviation or seed that requires it.
func citesSource(reason string) bool { return citation.MatchString(reason) }

// takeDepartures returns and forgets the departures of one scenario.
func (l *ledger) takeDepartures(t *testing.T) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.departures[t.Name()]
	delete(l.departures, t.Name())
	return d
}

func (l *ledger) add(r scenarioResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.results = append(l.results, r)
}

// summary returns the closing line and, one per line, every scenario that
// did not match.
func (l *ledger) summary() (closing string, notes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[Outcome]int{}
	for _, r := range l.results {
		counts[r.outcome]++
		if r.outcome != Match {
			notes = append(notes, fmt.Sprintf("  %s/%s: %s %s", r.suite, r.name, r.outcome, firstLine(r.detail)))
		}
	}
	sort.Strings(notes)
	closing = fmt.Sprintf("conformance: %d scenarios, %d match, %d differ, %d skipped, %d deliberate",
		len(l.results), counts[Match], counts[Differ], counts[Skipped], counts[Deliberate])
	return closing, notes
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// results is the ledger of this test binary; TestMain prints it.
var results ledger

func TestMain(m *testing.M) {
	code := m.Run()
	closing, notes := results.summary()
	for _, n := range notes {
		fmt.Println(n)
	}
	fmt.Println(closing)
	e2e.RemoveBuilds()
	os.Exit(code)
}

// run runs one scenario as a subtest of t and records its outcome in the
// ledger; tests use results.run. body compares GoPBS
// with the capture and returns a description of the differences, or ""
// when everything matches; it may call t.Skip when a prerequisite is
// absent. pending, when not empty, names the issue that will make the
// scenario match (e.g. "issue 6: needs pbs_mom"): a pending scenario that
// differs is recorded as skipped instead of failing the suite. A body
// that corrected the capture through l.depart and found nothing else
// different is recorded as deliberate; any remaining difference makes
// it differ as usual.
func (l *ledger) run(t *testing.T, suite, name, pending string, body func(t *testing.T) string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		res := scenarioResult{suite: suite, name: name, outcome: Skipped}
		returned := false
		defer func() {
			// t.Skip and t.Fatal leave through runtime.Goexit: record
			// what they left behind.
			if !returned {
				l.takeDepartures(t)
				switch {
				case t.Skipped() && pending != "":
					res.detail = "not run (" + pending + ")"
				case t.Skipped():
					res.detail = "skipped by the scenario"
				case t.Failed():
					res.outcome, res.detail = Differ, "the scenario failed"
				}
			}
			l.add(res)
		}()
		diff := body(t)
		returned = true
		departures := l.takeDepartures(t)
		switch {
		case diff == "" && !t.Failed() && len(departures) > 0:
			res.outcome, res.detail = Deliberate, strings.Join(departures, "; ")
			if pending != "" {
				t.Logf("scenario now matches up to its deliberate differences; remove its pending mark (%s)", pending)
			}
		case diff == "" && !t.Failed():
			res.outcome = Match
			if pending != "" {
				t.Logf("scenario now matches; remove its pending mark (%s)", pending)
			}
		case pending != "":
			res.outcome, res.detail = Skipped, "pending ("+pending+"): "+diff
			t.Logf("pending (%s), still differs:\n%s", pending, diff)
		default:
			res.outcome, res.detail = Differ, diff
			t.Errorf("differs from the capture:\n%s", diff)
		}
	})
}

// capturesDir returns the capture directory to replay: $GOPBS_CAPTURES, or
// ../shared/captures beside the repository root. ok is false when there is
// none.
func capturesDir() (dir string, ok bool) {
	if d := os.Getenv("GOPBS_CAPTURES"); d != "" {
		return d, true
	}
	root, err := e2e.ModuleRoot()
	if err != nil {
		return "", false
	}
	d := filepath.Join(root, "..", "shared", "captures")
	if _, err := os.Stat(filepath.Join(d, "manifest.jsonl")); err != nil {
		return "", false
	}
	return d, true
}

// requireCaptures returns the capture directory or skips the test, saying
// why.
func requireCaptures(t *testing.T) string {
	t.Helper()
	d, ok := capturesDir()
	if !ok {
		t.Skip("no capture directory: ../shared/captures beside the repository is absent and GOPBS_CAPTURES is unset")
	}
	return d
}

// readManifest reads the manifest of capture directory dir and returns
// its scenarios in order and the same scenarios by id.
func readManifest(t *testing.T, dir string) ([]capture.Scenario, map[int]*capture.Scenario) {
	t.Helper()
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int]*capture.Scenario{}
	for i := range scenarios {
		byID[scenarios[i].ID] = &scenarios[i]
	}
	return scenarios, byID
}

// captureHost is the host name of the machine the captures were made on.
// Programs under test run in a UTS and mount namespace of their own where
// the host name is this and it resolves to 127.0.0.1, so that output
// depending on the host name (job ids, Job_Owner, folded lines) can be
// compared byte for byte, whatever this machine is called.
const captureHost = "vm"

// hostCommand returns a command that runs name with args inside a fresh UTS
// and mount namespace whose host name is host and whose /etc/hosts maps host
// (and localhost) to 127.0.0.1 (e2e.HostCommand). It needs root and the
// unshare(1) program; the test is skipped otherwise.
func hostCommand(t *testing.T, host string, name string, args ...string) *exec.Cmd {
	t.Helper()
	return e2e.HostCommand(t, host, name, args...)
}

// A normalizer rewrites the parts of a text that must differ between a
// capture and a GoPBS run (dates, times, session ids, ports) into fixed
// placeholders, so that the rest can be compared exactly.
type normalizer struct {
	rules []rule
}

type rule struct {
	re   *regexp.Regexp
	repl string
}

// add appends a rule replacing every match of pattern with repl (which may
// use $1-style references).
func (n *normalizer) add(pattern, repl string) *normalizer {
	n.rules = append(n.rules, rule{regexp.MustCompile(pattern), repl})
	return n
}

// apply returns s with every rule applied in order.
func (n *normalizer) apply(s string) string {
	for _, r := range n.rules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// standardNormalizer returns the rules every output comparison needs:
// ctime(3) dates and epoch seconds of the capture era.
func standardNormalizer() *normalizer {
	n := &normalizer{}
	// "Sun Nov 22 01:21:24 2026" as printed by ctime(3).
	n.add(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-3]\d \d\d:\d\d:\d\d \d{4}\b`, "<DATE>")
	// Epoch seconds (10 digits starting 1 or 2: 2001–2033).
	n.add(`\b[12]\d{9}\b`, "<EPOCH>")
	return n
}

// textDiff describes how got differs from want, line by line, or returns ""
// when they are equal.
func textDiff(label, want, got string) string {
	if want == got {
		return ""
	}
	wl := strings.Split(want, "\n")
	gl := strings.Split(got, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%s differs:\n", label)
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 12; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  line %d\n    want %q\n    got  %q\n", i+1, w, g)
			shown++
		}
	}
	return b.String()
}
