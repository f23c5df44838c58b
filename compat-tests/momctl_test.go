package compattests

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/capture"
	"gopbs/internal/e2e"
	"gopbs/momproto"
	"gopbs/rpp"
)

// The momctl suite runs GoPBS's momctl for every momctl scenario of the
// manifest twice: against a resource monitor that answers with the
// captured reply (the RM request messages must equal the captured ones
// and stdout, stderr and the exit status the manifest's, byte for byte),
// and against a GoPBS pbs_mom (the output must match after normalising
// what differs between machines: load, memory, the kernel).

func init() {
	// The fake batch server of the clients suite cannot answer RPP: momctl
	// is compared here instead.
	for _, id := range []int{23, 24, 25, 26} {
		if _, ok := pendingClient[id]; !ok {
			pendingClient[id] = "momctl talks RPP to a MOM: compared by TestMomctl (momctl_test.go)"
		}
	}
}

// momctlScenarios returns the manifest's momctl scenarios.
func momctlScenarios(t *testing.T) (string, []capture.Scenario) {
	dir := requireCaptures(t)
	all, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []capture.Scenario
	for _, sc := range all {
		if len(sc.Argv) > 0 && filepath.Base(sc.Argv[0]) == "momctl" {
			out = append(out, sc)
		}
	}
	return dir, out
}

// buildMomctl builds tools/momctl (once per test binary).
func buildMomctl(t *testing.T) string {
	t.Helper()
	return e2e.Build(t, "momctl").Path("momctl")
}

// rmExchange is the RM messages of one captured momctl run: what momctl
// sent to port 15003 and what MOM answered.
type rmExchange struct {
	requests [][]byte
	replies  [][]byte
}

// capturedRM extracts the whole RM messages of a momctl capture.
func capturedRM(t *testing.T, c *capture.Capture) rmExchange {
	t.Helper()
	var ex rmExchange
	var partial = map[bool][]byte{}
	for _, d := range c.Datagrams {
		toMom := d.Dst.Port() == 15003
		if !toMom && d.Src.Port() != 15003 {
			continue
		}
		p, err := rpp.Parse(d.Payload)
		if err != nil {
			t.Fatalf("frame %d: %v", d.Frame, err)
		}
		switch p.Type {
		case rpp.RPP_DATA:
			partial[toMom] = append(partial[toMom], p.Payload...)
		case rpp.RPP_EOD:
			msg := append(partial[toMom], p.Payload...)
			partial[toMom] = nil
			if toMom {
				ex.requests = append(ex.requests, msg)
			} else {
				ex.replies = append(ex.replies, msg)
			}
		}
	}
	return ex
}

// runMomctl runs momctl in the capture namespace as root and returns a
// description of how its output differs from the scenario's (after norm,
// when not nil).
func runMomctl(t *testing.T, ns *captureNamespace, bin string, port int, sc *capture.Scenario, norm func(string) string) string {
	t.Helper()
	args := append([]string{"-p", strconv.Itoa(port)}, sc.Argv[1:]...)
	cmd := ns.command("root", 0, 0, bin, args...)
	stdout, stderr, ok := runUntil(t, cmd, "", 60*time.Second)
	if !ok {
		return "momctl did not finish within 60 s"
	}
	if norm == nil {
		norm = func(s string) string { return s }
	}
	var diffs []string
	want := 0
	if sc.ExitCode != nil {
		want = *sc.ExitCode
	}
	if got := cmd.ProcessState.ExitCode(); got != want {
		diffs = append(diffs, fmt.Sprintf("exit status %d, want %d", got, want))
	}
	if d := textDiff("stdout", norm(sc.Stdout), norm(stdout)); d != "" {
		diffs = append(diffs, d)
	}
	if d := textDiff("stderr", sc.Stderr, stderr); d != "" {
		diffs = append(diffs, d)
	}
	return strings.Join(diffs, "\n")
}

// replayRM is a resource monitor on a loopback port that answers each
// request message with the next captured reply and records what it
// received.
func replayRM(t *testing.T, replies [][]byte) (port int, received func() [][]byte) {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 100 * time.Millisecond, Retry: 40})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan [][]byte, 1)
	go func() {
		var msgs [][]byte
		defer func() { got <- msgs }()
		s, err := ep.Accept(ctx)
		if err != nil {
			return
		}
		defer s.Close()
		next := 0
		for {
			m, err := s.Recv(ctx)
			if err != nil {
				return
			}
			msgs = append(msgs, m)
			if req, err := momproto.DecodeRMRequest(m); err == nil && req.Command == momproto.RM_CMD_CLOSE {
				return
			}
			if next < len(replies) {
				s.Send(replies[next])
				next++
			}
		}
	}()
	t.Cleanup(func() { cancel(); ep.Close() })
	return pc.LocalAddr().(*net.UDPAddr).Port, func() [][]byte {
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			cancel()
			return <-got
		}
	}
}

// momctlNormalizer blanks what a GoPBS pbs_mom on this machine answers
// differently from the capture machine: numbers in query answers, the
// kernel in uname and, in diagnostics, the PID, the server port, ages in
// seconds, the PBS home, free blocks and the TCP timeout.
func momctlNormalizer() func(string) string {
	rules := []struct {
		re   *regexp.Regexp
		repl string
	}{
		{regexp.MustCompile(`'uname=[^']*'`), "'uname=<UNAME>'"},
		{regexp.MustCompile(`'(physmem|loadave|ncpus)=[0-9.]+(kb)?'`), "'$1=<N>'"},
		{regexp.MustCompile(`PID: \d+`), "PID: <PID>"},
		{regexp.MustCompile(`\(127\.0\.0\.1:\d+\)`), "(127.0.0.1:<PORT>)"},
		{regexp.MustCompile(`(Last Msg (From|To) Server|MOM active): +\d+ seconds`), "$1: <N> seconds"},
		{regexp.MustCompile(`/[^ ']*/(mom_priv|spool/)`), "<HOME>/$1"},
		{regexp.MustCompile(`\(\d+ blocks available\)`), "(<N> blocks available)"},
	}
	return func(s string) string {
		for _, r := range rules {
			s = r.re.ReplaceAllString(s, r.repl)
		}
		return s
	}
}

// TestMomctl compares momctl with the manifest, first against the captured
// MOM replies, then against a GoPBS pbs_mom.
func TestMomctl(t *testing.T) {
	dir, scenarios := momctlScenarios(t)
	if len(scenarios) == 0 {
		t.Skip("no momctl scenario in the manifest")
	}
	ns := newCaptureNamespace(t)
	bin := buildMomctl(t)
	for i := range scenarios {
		sc := &scenarios[i]
		label := fmt.Sprintf("%03d-%s (captured MOM replies)", sc.ID, strings.Join(sc.Argv, " "))
		results.run(t, "momctl", label, "", func(t *testing.T) string {
			c, err := capture.ReadFile(filepath.Join(dir, sc.Pcap))
			if err != nil {
				t.Fatal(err)
			}
			ex := capturedRM(t, c)
			if len(ex.requests) == 0 || len(ex.replies) == 0 {
				t.Skip("capture holds no RM exchange")
			}
			port, received := replayRM(t, ex.replies)
			diff := runMomctl(t, ns, bin, port, sc, nil)
			var diffs []string
			if diff != "" {
				diffs = append(diffs, diff)
			}
			got := received()
			for j := 0; j < max(len(got), len(ex.requests)); j++ {
				var w, g []byte
				if j < len(ex.requests) {
					w = ex.requests[j]
				}
				if j < len(got) {
					g = got[j]
				}
				if string(w) != string(g) {
					diffs = append(diffs, fmt.Sprintf("RM message %d: sent %q, want %q", j, g, w))
				}
			}
			return strings.Join(diffs, "\n")
		})
	}

	m := startCaptureMom(t, "")
	var withServer *serverBackedMom
	norm := momctlNormalizer()
	for i := range scenarios {
		sc := &scenarios[i]
		label := fmt.Sprintf("%03d-%s (GoPBS pbs_mom)", sc.ID, strings.Join(sc.Argv, " "))
		port := m.rmPort
		if slices.ContainsFunc(sc.Argv[1:], func(a string) bool { return strings.HasPrefix(a, "-d") }) {
			// The report of the captured MOM reflects its server's
			// messages (hellos, cluster addresses, the last DeleteJob):
			// ask a MOM that has a GoPBS server and has run a job.
			if withServer == nil {
				withServer = startServerBackedMom(t, ns)
			}
			port = withServer.rmPort
		}
		results.run(t, "momctl", label, "", func(t *testing.T) string {
			return runMomctl(t, ns, bin, port, sc, norm)
		})
	}
	// Verified live in spec 05 §8 (no capture): an unknown resource.
	zero := 0
	bogus := &capture.Scenario{Argv: []string{"momctl", "-q", "bogusname"}, ExitCode: &zero,
		Stdout: "   localhost:    bogusname = 'bogusname=? 15201'\n"}
	results.run(t, "momctl", "spec 05 §8 momctl -q bogusname (GoPBS pbs_mom)", "", func(t *testing.T) string {
		return runMomctl(t, ns, bin, m.rmPort, bogus, nil)
	})
}
