package main

import (
	"gopbs/internal/capture/capturetest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// captureLogs returns the directory of the captured TORQUE logs, or skips.
func captureLogs(t *testing.T) string {
	t.Helper()
	logs := filepath.Join(capturetest.Dir(t), "logs")
	if _, err := os.Stat(filepath.Join(logs, "server_logs-20261122.log")); err != nil {
		t.Skip("captured logs (../shared/captures/logs) not available")
	}
	return logs
}

// captureHome builds a PBS_HOME holding the captured logs of 2026-11-22
// under their TORQUE names.
func captureHome(t *testing.T) string {
	t.Helper()
	logs := captureLogs(t)
	home := t.TempDir()
	for src, dst := range map[string]string{
		"server_logs-20261122.log": "server_logs",
		"mom_logs-20261122.log":    "mom_logs",
		"sched_logs-20261122.log":  "sched_logs",
		"accounting-20261122.txt":  filepath.Join("server_priv", "accounting"),
	} {
		b, err := os.ReadFile(filepath.Join(logs, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(home, dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, dst, "20261122"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte("vm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

var captureDay = time.Date(2026, 11, 22, 12, 0, 0, 0, time.Local)

func runTracejob(now time.Time, args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	status := run(args, &stdout, &stderr, now)
	return status, stdout.String(), stderr.String()
}

// countLines counts the lines of a captured log that name job 11.vm, as
// an independent reference.
func countLines(t *testing.T, file string) int {
	b, err := os.ReadFile(filepath.Join(captureLogs(t), file))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, ";11.vm;") || strings.Contains(l, " 11.vm ") {
			n++
		}
	}
	return n
}

var entryLine = regexp.MustCompile(`^(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d)  ([SMLA])  \S`)

func TestTraceCapturedJob(t *testing.T) {
	home := captureHome(t)
	status, stdout, stderr := runTracejob(captureDay, "-p", home, "-w", "0", "11")
	if status != 0 || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if !strings.HasPrefix(stdout, "Job: 11.vm\n\n") {
		t.Fatalf("header: %q", stdout[:min(40, len(stdout))])
	}
	counts := map[string]int{}
	last := ""
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")[2:] {
		m := entryLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q is not an entry", l)
		}
		// MM/DD/YYYY of one year sorts as text.
		if m[1] < last {
			t.Errorf("line %q out of time order", l)
		}
		last = m[1]
		counts[m[2]]++
	}
	want := map[string]int{
		"S": countLines(t, "server_logs-20261122.log"),
		"M": countLines(t, "mom_logs-20261122.log"),
		"L": countLines(t, "sched_logs-20261122.log"),
		"A": countLines(t, "accounting-20261122.txt"),
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("source %s: %d lines, want %d", k, counts[k], n)
		}
	}
	if want["S"] == 0 || want["M"] == 0 || want["A"] == 0 {
		t.Errorf("reference counts %v: the captured logs should mention 11.vm in server, MOM and accounting", want)
	}
	for _, line := range []string{
		"11/22/2026 01:23:02  S  Job Queued at request of alice@vm, owner = alice@vm, job name = longjob3, queue = batch\n",
		"11/22/2026 01:23:02  M  job 11.vm started, pid = 19028\n",
		"11/22/2026 01:23:02  A  Q    queue=batch\n",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("missing %q", line)
		}
	}

	// Wrapped at 80 columns, continuation lines indented to the message.
	_, wrapped, _ := runTracejob(captureDay, "-p", home, "-w", "80", "11.vm")
	for _, l := range strings.Split(strings.TrimSuffix(wrapped, "\n"), "\n") {
		if len(l) > 80 && strings.Contains(l[24:], " ") {
			t.Errorf("line longer than 80: %q", l)
		}
	}
	if !strings.Contains(wrapped, "\n                        name = longjob3, queue = batch\n") {
		t.Errorf("no indented continuation line:\n%s", wrapped)
	}
}

func TestTraceOptions(t *testing.T) {
	home := captureHome(t)
	sourcesOf := func(out string) string {
		seen := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if m := entryLine.FindStringSubmatch(l); m != nil {
				seen[m[2]] = true
			}
		}
		s := ""
		for _, k := range []string{"S", "M", "L", "A"} {
			if seen[k] {
				s += k
			}
		}
		return s
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-s"}, "MA"},
		{[]string{"-m"}, "SA"},
		{[]string{"-a"}, "SM"},
		{[]string{"-s", "-m", "-l"}, "A"},
	} {
		args := append([]string{"-p", home, "-w", "0"}, append(tc.args, "11")...)
		status, stdout, _ := runTracejob(captureDay, args...)
		if status != 0 || sourcesOf(stdout) != tc.want {
			t.Errorf("%q: status %d, sources %q, want %q", tc.args, status, sourcesOf(stdout), tc.want)
		}
	}
	// Days: the next day sees the logs only with -n 2.
	next := captureDay.AddDate(0, 0, 1)
	if status, _, stderr := runTracejob(next, "-p", home, "11"); status != 1 || !strings.Contains(stderr, "no log files") {
		t.Errorf("-n 1 next day: status %d, stderr %q", status, stderr)
	}
	if status, _, stderr := runTracejob(next, "-q", "-p", home, "11"); status != 1 || stderr != "" {
		t.Errorf("-q: status %d, stderr %q", status, stderr)
	}
	if status, _, _ := runTracejob(next, "-p", home, "-n", "2", "11"); status != 0 {
		t.Errorf("-n 2 next day: status %d", status)
	}
	// -f job drops the job-class (0008) lines: MOM's kill_task lines.
	_, all, _ := runTracejob(captureDay, "-p", home, "-w", "0", "11")
	_, filtered, _ := runTracejob(captureDay, "-p", home, "-w", "0", "-f", "job", "11")
	if !strings.Contains(all, "kill_task") || strings.Contains(filtered, "kill_task") || !strings.Contains(filtered, "A  Q    queue=batch") {
		t.Errorf("-f job did not drop exactly the job-class lines:\n%s", filtered)
	}
	// -c 1 keeps only messages seen once.
	_, once, _ := runTracejob(captureDay, "-p", home, "-w", "0", "-c", "1", "11")
	if strings.Contains(once, "Job Run at request of root@vm") || !strings.Contains(once, "Job Rerun at request") {
		t.Errorf("-c 1:\n%s", once)
	}
	// An unknown job.
	if status, stdout, stderr := runTracejob(captureDay, "-p", home, "999"); status != 1 || stdout != "" || stderr != "tracejob: no log lines for 999.vm\n" {
		t.Errorf("unknown job: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

func TestTraceUsage(t *testing.T) {
	for _, args := range [][]string{
		{}, {"1", "2"}, {"-x", "1"}, {"-n"}, {"-n", "0", "1"}, {"-w", "x", "1"},
		{"-f", "bogus", "1"}, {"-c", "0", "1"}, {"x.vm"}, {"1@vm"},
	} {
		status, stdout, stderr := runTracejob(captureDay, args...)
		if status != 2 || stdout != "" || !strings.HasSuffix(stderr, usageText) {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
		}
	}
}

func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		text, id string
		want     bool
	}{
		{"job 11.vm started", "11.vm", true},
		{"job 11.vm.", "11.vm", true},
		{"job 11.vm", "11.vm", true},
		{"job 111.vm started", "11.vm", false},
		{"job 11.vm2 started", "11.vm", false},
		{"job 11[1].vm started", "11.vm", false},
		{"job 11.vm started", "11", true},
		{"job 11 started", "11", false},
		{"job 211.vm started", "11", false},
	} {
		if got := mentions(tc.text, tc.id); got != tc.want {
			t.Errorf("mentions(%q, %q) = %v", tc.text, tc.id, got)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaaa bbbb cccc dddd eeee ffff gggg", 20)
	if strings.Join(got, "|") != "aaaa bbbb cccc dddd|eeee ffff gggg" {
		t.Errorf("wrap: %q", got)
	}
	if got := wrap(strings.Repeat("x", 45), 20); strings.Join(got, "|") != strings.Repeat("x", 20)+"|"+strings.Repeat("x", 20)+"|xxxxx" {
		t.Errorf("wrap without spaces: %q", got)
	}
	if got := wrap("short", 0); len(got) != 1 {
		t.Errorf("no wrap: %q", got)
	}
}

// syntheticHome builds a PBS_HOME with a small server log and accounting
// file of 2026-11-22 (no MOM or scheduler log) and server_name "vm".
func syntheticHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	files := map[string]string{
		"server_logs": "11/22/2026 10:00:00;0100;PBS_Server;Job;1.vm;enqueuing into batch, state 1 hop 1\n" +
			"11/22/2026 10:00:01;0008;PBS_Server;Job;1.vm;Job Modified at request of root@vm\n" +
			"11/22/2026 10:00:02;0008;PBS_Server;Job;1.vm;Job Modified at request of root@vm\n" +
			"11/22/2026 10:00:03;0001;PBS_Server;Svr;PBS_Server;LOG_ERROR::job 1.vm failed\n" +
			"11/22/2026 10:00:04;0008;PBS_Server;Job;2.vm;other job\n" +
			"11/22/2026 10:00:06;0004;PBS_Server;Job;1.vm;a message wrapped by -w 50 at its blanks\n",
		filepath.Join("server_priv", "accounting"): "11/22/2026 10:00:05;Q;1.vm;queue=batch\n",
	}
	for dir, content := range files {
		if err := os.MkdirAll(filepath.Join(home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, dir, "20261122"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte("vm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestTraceFilters covers -z, -f (class name and numeric mask), -w and
// the completion of a bare job id with the server name, on a small
// synthetic log.
func TestTraceFilters(t *testing.T) {
	t.Setenv("COLUMNS", "")
	home := syntheticHome(t)
	const (
		enq  = "11/22/2026 10:00:00  S  enqueuing into batch, state 1 hop 1\n"
		mod  = "11/22/2026 10:00:01  S  Job Modified at request of root@vm\n"
		mod2 = "11/22/2026 10:00:02  S  Job Modified at request of root@vm\n"
		fail = "11/22/2026 10:00:03  S  LOG_ERROR::job 1.vm failed\n"
		acct = "11/22/2026 10:00:05  A  Q    queue=batch\n"
		long = "11/22/2026 10:00:06  S  a message wrapped by -w 50 at its blanks\n"
	)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"1"}, enq + mod + mod2 + fail + acct + long},
		{[]string{"-z", "1.vm"}, enq + mod + fail + acct + long},
		{[]string{"-f", "job", "1"}, enq + fail + acct + long},
		{[]string{"-f", "0x9", "1"}, enq + acct + long},
		{[]string{"-f", "error", "-f", "256", "-a", "1"}, mod + mod2 + long},
		{[]string{"-c", "1", "1"}, enq + fail + acct + long},
		{[]string{"-w", "50", "-s", "1"}, acct},
		{[]string{"-w", "50", "-a", "-f", "0x109", "1"},
			"11/22/2026 10:00:06  S  a message wrapped by -w 50\n" +
				"                        at its blanks\n"},
	}
	for _, tt := range tests {
		args := append([]string{"-p", home}, tt.args...)
		status, stdout, stderr := runTracejob(captureDay, args...)
		if want := "Job: 1.vm\n\n" + tt.want; status != 0 || stdout != want || stderr != "" {
			t.Errorf("%q: status %d, stdout:\n%s\nstderr %q; want:\n%s", tt.args, status, stdout, stderr, want)
		}
	}
}

// TestTraceVerbose checks that -v names every file read or missing.
func TestTraceVerbose(t *testing.T) {
	home := syntheticHome(t)
	status, _, stderr := runTracejob(captureDay, "-v", "-p", home, "1")
	if status != 0 {
		t.Fatalf("status %d", status)
	}
	for _, want := range []string{
		"tracejob: reading " + filepath.Join(home, "server_logs", "20261122") + "\n",
		"tracejob: reading " + filepath.Join(home, "server_priv", "accounting", "20261122") + "\n",
		"tracejob: " + filepath.Join(home, "mom_logs", "20261122") + ": ",
		"tracejob: " + filepath.Join(home, "sched_logs", "20261122") + ": ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, _, quiet := runTracejob(captureDay, "-p", home, "1"); quiet != "" {
		t.Errorf("without -v: stderr %q", quiet)
	}
}
