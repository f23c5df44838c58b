package compattests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/internal/e2e"
)

// pendingClient explains why a scenario's command cannot be compared yet.
var pendingClient = map[int]string{}

// TestClientsAgainstCaptures runs, in manifest order, the client command of
// every capture scenario against a fake server that replays the captured
// server replies, and compares the bytes the command sends, its stdout,
// stderr and exit status with the capture.
func TestClientsAgainstCaptures(t *testing.T) {
	dir := requireCaptures(t)
	ns := newCaptureNamespace(t)
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	bin, built := buildClientsFor(t, port)

	for i := range scenarios {
		sc := &scenarios[i]
		if len(sc.Argv) == 0 {
			continue
		}
		name := filepath.Base(sc.Argv[0])
		if !isClientCommand(name) {
			continue
		}
		label := fmt.Sprintf("%03d-%s", sc.ID, strings.Join(sc.Argv, " "))
		results.run(t, "clients", label, pendingClient[sc.ID], func(t *testing.T) string {
			if !built[name] {
				t.Skipf("%s is not implemented yet", name)
			}
			run := clientRun{user: sc.User, argv: sc.Argv, stdin: sc.Stdin, stdout: sc.Stdout, stderr: sc.Stderr, which: -1}
			if sc.ExitCode != nil {
				run.exit = *sc.ExitCode
			}
			return runScenario(t, ns, dir, sc, run, filepath.Join(bin, name), ln)
		})
	}
	// The other commands run during the second-round captures.
	for i := range scenarios {
		sc := &scenarios[i]
		for k, ec := range sc.ExtraCommands {
			if len(ec.Argv) == 0 || !isClientCommand(filepath.Base(ec.Argv[0])) {
				continue
			}
			name := filepath.Base(ec.Argv[0])
			label := fmt.Sprintf("%03d-extra%d-%s", sc.ID, k+1, strings.Join(ec.Argv, " "))
			results.run(t, "clients", label, pendingExtra[fmt.Sprintf("%d/%d", sc.ID, k+1)], func(t *testing.T) string {
				if !built[name] {
					t.Skipf("%s is not implemented yet", name)
				}
				run := clientRun{user: ec.User, argv: ec.Argv, stdout: ec.Stdout, stderr: ec.Stderr, exit: ec.ExitCode, which: k}
				return runScenario(t, ns, dir, sc, run, filepath.Join(bin, name), ln)
			})
		}
	}
}

func isClientCommand(name string) bool {
	for _, c := range clientCommands {
		if c == name && c != "pbs_iff" {
			return true
		}
	}
	return false
}

// clientRun is one command of a scenario: the main command or one of its
// extra commands (which is then its index, else -1), with what it printed.
type clientRun struct {
	user, stdin    string
	argv           []string
	stdout, stderr string
	exit           int
	which          int
	gap            time.Duration // since the scenario's previous command started
}

// pendingExtra explains why an extra command ("scenario/index") cannot be
// compared yet.
var pendingExtra = map[string]string{}

// userCommand reads the capture of scenario sc and readies the account
// of run's user (root needs none) with a home in the namespace that holds
// the job scripts the command names. It returns the capture, the run's
// captured conversation and the command, not started, running path with
// args as that user.
func userCommand(t *testing.T, ns *captureNamespace, dir string, sc *capture.Scenario, run clientRun, path string, args []string) (*capture.Capture, []*capture.Conn, *exec.Cmd) {
	t.Helper()
	cap, err := capture.ReadFile(filepath.Join(dir, sc.Pcap))
	if err != nil {
		t.Fatal(err)
	}
	uid, gid := 0, 0
	if run.user != "root" {
		uid, gid = ensureUser(t, run.user)
	}
	h := ns.home(t, run.user, uid, gid)
	conns := conversationOf(cap, sc, run.which)
	if err := writeScripts(h, run.argv, conns, uid, gid); err != nil {
		t.Fatal(err)
	}
	return cap, conns, ns.commandPath(run.user, uid, gid, capturePath(cap), path, args...)
}

// runUntil runs cmd, which must not have been started, with stdin as its
// standard input (none if empty), for at most limit (see e2e.RunFor).
func runUntil(t *testing.T, cmd *exec.Cmd, stdin string, limit time.Duration) (stdout, stderr string, finished bool) {
	t.Helper()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return e2e.RunFor(t, cmd, limit)
}

func runScenario(t *testing.T, ns *captureNamespace, dir string, sc *capture.Scenario, run clientRun, path string, ln *net.TCPListener) string {
	cap, conns, cmd := userCommand(t, ns, dir, sc, run, path, run.argv[1:])
	f := &fakeServer{ln: ln, conns: conns}
	done := make(chan struct{})
	var mom *capture.Conn
	if run.which < 0 && sc.QsubListenPort != 0 {
		for _, cn := range cap.Conns {
			if int(cn.Server.Port()) == sc.QsubListenPort {
				mom = cn
			}
		}
	}
	go func() {
		f.serve()
		if mom != nil {
			// The MOM connects back once the submission is done.
			f.callBack(mom)
		}
		close(done)
	}()

	stdout, stderr, ok := runUntil(t, cmd, run.stdin, 60*time.Second)
	if !ok {
		f.fail("command did not finish within 60 s")
	}
	f.stop()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		f.fail("fake server did not finish")
	}
	f.extra()

	var diffs []string
	diffs = append(diffs, f.diffs...)
	want := run.exit
	if got := cmd.ProcessState.ExitCode(); got != want {
		diffs = append(diffs, "exit status "+strconv.Itoa(got)+", want "+strconv.Itoa(want))
	}
	wantOut, gotOut := run.stdout, stdout
	if mom != nil {
		// The capture's output went through a terminal, which turned
		// every newline into CR LF.
		wantOut = strings.ReplaceAll(wantOut, "\r\n", "\n")
		gotOut = strings.ReplaceAll(gotOut, "\r\n", "\n")
	}
	if d := textDiff("stdout", wantOut, gotOut); d != "" {
		diffs = append(diffs, d)
	}
	if d := textDiff("stderr", run.stderr, stderr); d != "" {
		diffs = append(diffs, d)
	}
	return strings.Join(diffs, "\n")
}

// writeScripts puts the job scripts a scenario submits into the user's
// home: every operand ending in ".sh", with the content the capture's
// JobScript request carries.
func writeScripts(home string, argv []string, conns []*capture.Conn, uid, gid int) error {
	var script []byte
	for _, cn := range conns {
		if s, ok := jobScript(cn.Stream(true)); ok {
			script = s
			break
		}
	}
	if script == nil {
		script = []byte("#!/bin/bash\nsleep 20\n")
	}
	for _, a := range argv[1:] {
		if !strings.HasSuffix(a, ".sh") || strings.Contains(a, "/") {
			continue
		}
		p := filepath.Join(home, a)
		if err := os.WriteFile(p, script, 0o644); err != nil {
			return err
		}
		_ = os.Chown(p, uid, gid)
	}
	return nil
}

// jobScript extracts the data of the first JobScript request of a client
// stream.
func jobScript(s []byte) ([]byte, bool) {
	i := bytes.Index(s, []byte("+2+1+3+"))
	if i < 0 {
		return nil, false
	}
	r := dis.NewReader(bytes.NewReader(s[i:]))
	for k := 0; k < 3; k++ {
		if _, err := r.Uint(); err != nil {
			return nil, false
		}
	}
	if _, err := r.Str(); err != nil { // user
		return nil, false
	}
	for k := 0; k < 3; k++ { // sequence, file type, size
		if _, err := r.Uint(); err != nil {
			return nil, false
		}
	}
	if _, err := r.Str(); err != nil { // job id
		return nil, false
	}
	data, err := r.Bytes()
	if err != nil {
		return nil, false
	}
	return data, true
}

// pendingServerClient explains why a scenario's command cannot match
// against the GoPBS server yet, by the command's label prefix: the
// scenario number ("082") for the main command, with "-extraN" for its
// N-th extra command.
var pendingServerClient = map[string]string{}

// pendingFor returns the pending mark of a scenario's command (which is
// -1 for the main command, else the extra command's index).
func pendingFor(id, which int) string {
	if which < 0 {
		return pendingServerClient[fmt.Sprintf("%03d", id)]
	}
	return pendingServerClient[fmt.Sprintf("%03d-extra%d", id, which+1)]
}

// TestClientsAgainstServer runs the client commands of the capture run, in
// manifest order, against a GoPBS pbs_server configured like the capture
// cluster (the server replay's setup, node vm's MOM reporting the
// captured status) and compares their stdout, stderr and exit status with
// the manifest, dates and epoch times normalised. The commands
// authenticate through the setuid pbs_iff. Round 1 is the server replay's
// first-round sequence; of round 2 it runs the scenarios that need
// neither the scheduler nor a MOM (TestClientsAgainstServerWithMom runs
// those).
func TestClientsAgainstServer(t *testing.T) {
	dir := requireCaptures(t)
	ns := newCaptureNamespace(t)
	scenarios, byID := readManifest(t, dir)
	// As in the server replay (normalizeValue, dropHistory): network
	// counters are rates, and the capture server's zero
	// resources_assigned entries were left by a job run before the
	// capture, which a fresh server never ran. A running job's remaining
	// walltime, and the elapsed time qstat -a derives from it, depend on
	// when the command runs; qsub -a times are moved by as much as the
	// replay runs after the capture.
	norm := standardNormalizer().
		add(`(net_counter = )\d+ \d+ \d+`, "${1}<RATE>").
		add(`(?m)^[ \t]+resources_assigned\.\w+ = 0\n`, "").
		add(`(Walltime\.Remaining = )\d+`, "${1}<SECONDS>").
		add(`(<Remaining>)\d+(</Remaining>)`, "${1}<SECONDS>${2}").
		add(`(?m)( R  )\d\d:\d\d:\d\d$`, "${1}<ELAPSED>").
		add(`-a \d{12}\b`, "-a <DATETIME>")

	inSequence := map[int]bool{}
	for _, round := range []struct {
		name string
		def  func() ([]*batchreq.Request, []replayStep)
		mom  bool
	}{{"round1", round1, true}, {"round2", clientRound2, false}} {
		setup, steps := round.def()
		for _, st := range steps {
			inSequence[st.id] = true
		}
		t.Run(round.name, func(t *testing.T) {
			r := startRound(t, dir, setup, round.mom)
			bin, built := buildClientsFor(t, r.s.Addr().(*net.TCPAddr).Port)
			for _, st := range steps {
				sc, ok := byID[st.id]
				if !ok || len(sc.Argv) == 0 || !isClientCommand(filepath.Base(sc.Argv[0])) {
					continue
				}
				r.mustAdmin(t, fmt.Sprintf("before %d", st.id), st.before...)
				nextSeq := -1 // the job number the scenario's next submission takes
				if st.setNextJob {
					c, err := capture.ReadFile(filepath.Join(dir, sc.Pcap))
					if err != nil {
						t.Fatal(err)
					}
					if n := firstJobNumber(c); n >= 0 {
						r.admin(setServer("next_job_number", strconv.Itoa(n)))
						nextSeq = n
					}
				}
				if st.usage {
					r.reportUsage(t, filepath.Join(dir, sc.Pcap))
				}
				for k, run := range scenarioRuns(sc) {
					if st.compress && k > 0 && run.gap > time.Second {
						time.Sleep(1500 * time.Millisecond)
					}
					name := filepath.Base(run.argv[0])
					label := capLabel(sc.ID, run)
					// Sync-set submissions, which TORQUE 2.5.13 rejected
					// (consuming a job number), are accepted (seed 001).
					departure := ""
					if st.syncJobs && name == "qsub" && nextSeq >= 0 && run.exit == batchreq.PBSE_NOATTR&0xff && syncOption(run.argv) {
						id := fmt.Sprintf("%d.%s", nextSeq, captureHost)
						departure = fmt.Sprintf("%s: rejected with %d, accepted as %s", strings.Join(run.argv, " "), batchreq.PBSE_NOATTR, id)
						run.stdout, run.stderr, run.exit = id+"\n", "", 0
					}
					if name == "qsub" && nextSeq >= 0 {
						nextSeq++
					}
					// qstat -B shows state_count: the capture server's
					// counts had the array-count defect.
					var counted *correction
					if st.stateCount && name == "qstat" {
						counted = stepStateCount(t, filepath.Join(dir, sc.Pcap), readCapture(t, filepath.Join(dir, sc.Pcap)), st)
					}
					results.run(t, "clients-server", label, pendingFor(sc.ID, run.which), func(t *testing.T) string {
						if !built[name] {
							t.Skipf("%s is not implemented yet", name)
						}
						if departure != "" {
							results.depart(t, departure, syncReason)
						}
						if counted != nil {
							if fixed := correctServerLine(run.stdout, counted.counts); fixed != run.stdout {
								results.depart(t, fmt.Sprintf("qstat -B counts %q corrected to %q", serverLine(run.stdout), serverLine(fixed)), counted.reason)
								run.stdout = fixed
							}
						}
						return runAgainstServer(t, ns, dir, sc, run, filepath.Join(bin, name), norm)
					})
				}
				if st.momReports {
					r.replayMomReports(t, filepath.Join(dir, sc.Pcap), sc)
				}
				// What the capture run did between scenarios, as in the
				// server replay.
				if round.name == "round1" {
					r.afterRound1Step(t, dir, st.id)
				}
			}
		})
	}
	// The other client commands of the manifest, with the reason they
	// are not run here.
	for i := range scenarios {
		sc := &scenarios[i]
		if inSequence[sc.ID] || runsWithMom(sc.ID) || len(sc.Argv) == 0 || !isClientCommand(filepath.Base(sc.Argv[0])) {
			continue
		}
		reason := notAgainstServer(sc)
		label := fmt.Sprintf("%03d-%s", sc.ID, strings.Join(sc.Argv, " "))
		results.run(t, "clients-server", label, reason, func(t *testing.T) string {
			t.Skip(reason)
			return ""
		})
	}
}

// clientRound2 holds the second-round scenarios TestClientsAgainstServer
// runs: the server replay's round-2 setup, the qmgr session (80), the
// submissions to the routing queue (78, with the qstat -f after routing;
// 79, routing retried while the destination is disabled, with a short
// route_retry_time and the capture's pauses shortened as in the replay)
// and the sync-set submissions (88).
func clientRound2() (setup []*batchreq.Request, steps []replayStep) {
	setup, all := round2()
	for _, st := range all {
		if st.id == 80 || st.id == 78 || st.id == 79 || st.id == 88 {
			steps = append(steps, st)
		}
	}
	// Dependencies (82-87): every job the scenarios show is held or
	// queued behind its dependency when qstat runs, so the server alone
	// answers as the capture server did.
	for id := 82; id <= 87; id++ {
		steps = append(steps, replayStep{id: id, setNextJob: true})
	}
	return setup, steps
}

// scenarioRuns returns the commands of a scenario in the order they
// started: the main command and the extra commands.
func scenarioRuns(sc *capture.Scenario) []clientRun {
	main := clientRun{user: sc.User, argv: sc.Argv, stdin: sc.Stdin, stdout: sc.Stdout, stderr: sc.Stderr, which: -1}
	if sc.ExitCode != nil {
		main.exit = *sc.ExitCode
	}
	type timed struct {
		t   float64
		run clientRun
	}
	var all []timed
	mainT := 0.0
	if sc.MainCommandT != nil {
		mainT = *sc.MainCommandT
	}
	all = append(all, timed{mainT, main})
	for k, ec := range sc.ExtraCommands {
		if len(ec.Argv) == 0 || !isClientCommand(filepath.Base(ec.Argv[0])) {
			continue
		}
		all = append(all, timed{ec.T, clientRun{user: ec.User, argv: ec.Argv, stdout: ec.Stdout, stderr: ec.Stderr, exit: ec.ExitCode, which: k}})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	runs := make([]clientRun, len(all))
	for i, a := range all {
		runs[i] = a.run
		if i > 0 {
			runs[i].gap = time.Duration((a.t - all[i-1].t) * float64(time.Second))
		}
	}
	return runs
}

// buildClientsFor builds the client commands and pbs_iff (setuid root)
// for a server at port: their compiled-in batch port is port, their PBS
// home one whose server_name is the capture host, and their sbin
// directory where they are (see e2e.BuildVars). It returns that directory
// and the names built.
func buildClientsFor(t *testing.T, port int) (string, map[string]bool) {
	t.Helper()
	home := e2e.Dir(t)
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte(captureHost+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := e2e.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	built := map[string]bool{}
	for _, name := range clientCommands {
		if _, err := os.Stat(filepath.Join(root, e2e.Package(name), "main.go")); err == nil {
			names = append(names, name)
			built[name] = true
		}
	}
	vars := map[string]string{"gopbs/pbs.DefaultHome": home, "gopbs/pbs.DefaultPort": strconv.Itoa(port)}
	return e2e.BuildVars(t, vars, names...).Dir, built
}

// notAgainstServer says why a client scenario of the manifest is not run
// by TestClientsAgainstServer.
func notAgainstServer(sc *capture.Scenario) string {
	switch {
	case filepath.Base(sc.Argv[0]) == "momctl":
		return "momctl talks to pbs_mom, not to the server (TestMomctl, MOM replay)"
	}
	return "not part of the sequences run against the server"
}

// replayMomReports sends the connections node vm's MOM opened to the
// server during a scenario (job status before an obituary, the obituary)
// from a reserved port, as a MOM does, and reads the replies.
func (r *replayer) replayMomReports(t *testing.T, path string, sc *capture.Scenario) {
	start, _ := time.ParseInLocation("2006-01-02T15:04:05", sc.StartTime, time.Local)
	shift := time.Now().Unix() - start.Unix()
	r.forEachMomReport(t, path, func(rc *replayConn, data []byte) {
		reqs := splitRequests(data)
		if _, err := rc.nc.Write(shiftEpochs(data, shift)); err != nil {
			t.Fatalf("MOM report: %v", err)
		}
		for _, req := range reqs {
			if req.Type == batchreq.PBS_BATCH_Disconnect {
				continue
			}
			rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := batchreq.ReadReply(rc.r); err != nil {
				t.Fatalf("MOM report %s: no reply: %v", batchreq.RequestName(req.Type), err)
			}
		}
	})
}

// runAgainstServer runs a scenario's command as the scenario's user and
// compares what it printed and its exit status with the manifest.
func runAgainstServer(t *testing.T, ns *captureNamespace, dir string, sc *capture.Scenario, run clientRun, path string, norm *normalizer) string {
	_, _, cmd := userCommand(t, ns, dir, sc, run, path, shiftDateArgs(run.argv, sc.StartTime))
	stdout, stderr, ok := runUntil(t, cmd, run.stdin, 60*time.Second)
	if !ok {
		return "command did not finish within 60 s"
	}
	var diffs []string
	if got := cmd.ProcessState.ExitCode(); got != run.exit {
		diffs = append(diffs, "exit status "+strconv.Itoa(got)+", want "+strconv.Itoa(run.exit))
	}
	if d := textDiff("stdout", norm.apply(run.stdout), norm.apply(stdout)); d != "" {
		diffs = append(diffs, d)
	}
	if d := textDiff("stderr", norm.apply(run.stderr), norm.apply(stderr)); d != "" {
		diffs = append(diffs, d)
	}
	return strings.Join(diffs, "\n")
}

// shiftDateArgs returns the arguments of a command of a scenario started
// at startTime with the
// date of a "-a [[CC]YY]MMDDhhmm" option moved by as much time as has
// passed since the capture, so that it lies as far in the future as it
// did then (the server replay shifts the epochs the same way).
func shiftDateArgs(argv []string, startTime string) []string {
	args := append([]string(nil), argv[1:]...)
	start, err := time.ParseInLocation("2006-01-02T15:04:05", startTime, time.Local)
	if err != nil {
		return args
	}
	shift := time.Since(start)
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-a" {
			continue
		}
		if at, err := time.ParseInLocation("200601021504", args[i+1], time.UTC); err == nil {
			args[i+1] = at.Add(shift).Format("200601021504")
		}
	}
	return args
}

// syncOption reports whether a qsub command line asks for a sync set
// (-W synccount=N or -W syncwith=ID).
func syncOption(argv []string) bool {
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "-W" && (strings.HasPrefix(argv[i+1], "synccount=") || strings.HasPrefix(argv[i+1], "syncwith=")) {
			return true
		}
	}
	return false
}

// readCapture reads a capture file.
func readCapture(t *testing.T, path string) *capture.Capture {
	t.Helper()
	c, err := capture.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// qstatBColumns are the job_state letters of the count columns of qstat
// -B's server line, after Max and Tot: Que Run Hld Wat Trn Ext.
var qstatBColumns = []string{"Q", "R", "H", "W", "T", "E"}

// serverLine returns the line of qstat -B output that describes the
// capture server ("" if there is none).
func serverLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, captureHost+" ") {
			return l
		}
	}
	return ""
}

var countField = regexp.MustCompile(`\d+`)

// correctServerLine returns qstat -B output with the state counts of the
// capture server's line replaced by counts (by job_state letter), each
// right-aligned where the old count ended; output without such a line,
// or with no room for a count, is returned unchanged.
func correctServerLine(out string, counts map[string]int) string {
	line := serverLine(out)
	fields := countField.FindAllStringIndex(line, -1)
	if line == "" || len(fields) < 2+len(qstatBColumns) {
		return out
	}
	var b strings.Builder
	last := 0
	for i, letter := range qstatBColumns {
		f, prevEnd := fields[2+i], fields[1+i][1]
		v := strconv.Itoa(counts[letter])
		width := f[1] - prevEnd // the separating spaces and the count
		if len(v) >= width {
			return out
		}
		b.WriteString(line[last:prevEnd])
		b.WriteString(strings.Repeat(" ", width-len(v)))
		b.WriteString(v)
		last = f[1]
	}
	b.WriteString(line[last:])
	return strings.Replace(out, line, b.String(), 1)
}

func TestCorrectServerLine(t *testing.T) {
	head := "Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status    \n" +
		"----------------   ---   ---   ---   ---   ---   ---   ---   --- ----------\n"
	line := func(counts string) string { return head + captureHost + "                " + counts + " Idle      \n" }
	for _, tc := range []struct {
		name   string
		out    string
		counts map[string]int
		want   string
	}{
		{"moved between columns", line("   0     9     2     0     6     1     0     0"), map[string]int{"Q": 6, "H": 2, "W": 1},
			line("   0     9     6     0     2     1     0     0")},
		{"wider counts", line("   0     9     2     0     6     1     0     0"), map[string]int{"Q": 1234, "R": 5, "E": 10},
			line("   0     9  1234     5     0     0     0    10")},
		{"every column", line("   0    21     1     2     3     4     5     6"), map[string]int{"Q": 6, "R": 5, "H": 4, "W": 3, "T": 2, "E": 1},
			line("   0    21     6     5     4     3     2     1")},
		{"no room", line("   0     9     2     0     6     1     0     0"), map[string]int{"Q": 123456},
			line("   0     9     2     0     6     1     0     0")},
		{"no server line", head, map[string]int{"Q": 1}, head},
	} {
		if got := correctServerLine(tc.out, tc.counts); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
