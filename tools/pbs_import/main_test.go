package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/e2e"
)

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// torqueHome returns a copy of ../shared/torque-home (skipping the test,
// saying so, where it is absent) in a temporary directory.
func torqueHome(t *testing.T) string {
	t.Helper()
	src := filepath.Join(e2e.Shared(t), "torque-home")
	if _, err := os.Stat(filepath.Join(src, "server_priv")); err != nil {
		t.Skipf("no TORQUE home to import: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "torque")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// expected returns one of the files TORQUE's clients printed.
func expected(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2e.Shared(t), "torque-home", "expected", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runImport runs pbs_import in-process and returns its exit status and
// output.
func runImport(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// listFiles returns the files and directories under dir (relative), or
// nil if dir does not exist.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, rel)
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestRunningJobsRefused checks the default policy: the import names the
// running job and writes nothing.
func TestRunningJobsRefused(t *testing.T) {
	src := torqueHome(t)
	dst := filepath.Join(t.TempDir(), "gopbs")
	code, out, errs := runImport("-d", src, "-o", dst)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	if !strings.Contains(errs, "jobs were running when TORQUE stopped: 0.vm;") || !strings.Contains(errs, "-running=requeue") {
		t.Errorf("stderr %q does not name 0.vm and the way out", errs)
	}
	if files := listFiles(t, dst); files != nil {
		t.Errorf("refused import wrote %v", files)
	}
	// in place: the TORQUE home is left as it was
	before := listFiles(t, src)
	if code, _, _ := runImport("-d", src); code != 1 {
		t.Fatalf("in-place import: exit %d, want 1", code)
	}
	if after := listFiles(t, src); !slices.Equal(before, after) {
		t.Errorf("refused in-place import changed the home: %v -> %v", before, after)
	}
}

// TestImportTwiceRefused imports in place, then again.
func TestImportTwiceRefused(t *testing.T) {
	src := torqueHome(t)
	code, out, errs := runImport("-d", src, "-running", "keep")
	if code != 0 || !strings.Contains(out, "4 queues, 1 nodes, 14 jobs imported") || !strings.Contains(out, "jobs left running: 0.vm") {
		t.Fatalf("first import: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	db := filepath.Join(src, "server_priv", "serverdb.bolt")
	st, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runImport("-d", src, "-running", "keep")
	if code != 1 || out != "" || errs != "pbs_import: "+db+" already holds a GoPBS database: importing twice is refused\n" {
		t.Fatalf("second import: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if st2, err := os.Stat(db); err != nil || !st2.ModTime().Equal(st.ModTime()) || st2.Size() != st.Size() {
		t.Errorf("second import touched the database")
	}
}

// TestDamagedFileRefused damages one file of each kind: the import names
// it and writes nothing.
func TestDamagedFileRefused(t *testing.T) {
	for _, tc := range []struct {
		file   string
		damage func([]byte) []byte
	}{
		{"serverdb", func(b []byte) []byte { return b[:len(b)-40] }},
		{"queues/batch", func(b []byte) []byte { b[40+64] = 0x10; return b }}, // first record's size
		{"jobs/5.vm.JB", func(b []byte) []byte { return b[:3000] }},
		{"jobs/3.vm.TA", func(b []byte) []byte { b[2240+68] = 0xff; return b }}, // name length
		{"arrays/3.vm.AR", func(b []byte) []byte { b[0] = 9; return b }},        // version
		{"jobs/1.vm.JB", func(b []byte) []byte { return append(b[:2240+88], []byte("Hold_Types\x00x")...) }},
		// well formed, but a value TORQUE cannot have written
		{"jobs/4.vm.JB", func(b []byte) []byte {
			return bytes.Replace(b, []byte("Hold_Types\x00s\x00"), []byte("Hold_Types\x00x\x00"), 1)
		}},
		{"queues/short", func(b []byte) []byte { return bytes.Replace(b, []byte("00:10:00"), []byte("00:1x:00"), 1) }},
	} {
		t.Run(strings.ReplaceAll(tc.file, "/", "_"), func(t *testing.T) {
			src := torqueHome(t)
			path := filepath.Join(src, "server_priv", tc.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "gopbs")
			code, out, errs := runImport("-d", src, "-o", dst, "-running", "keep")
			if code != 1 || out != "" || !strings.HasPrefix(errs, "pbs_import: ") || !strings.Contains(errs, path+": ") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and an error naming %s", code, out, errs, path)
			}
			if files := listFiles(t, dst); files != nil {
				t.Errorf("import of a damaged home wrote %v", files)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-running", "later"}, {"extra"}, {"-x"}} {
		if code, out, _ := runImport(args...); code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2", args, code, out)
		}
	}
}

// cluster is a GoPBS server started on an imported home, in a namespace
// named like the TORQUE host (vm), with the clients to question it.
type cluster struct {
	t    *testing.T
	bins e2e.Programs
	home string
	env  []string
}

func startCluster(t *testing.T, home string) *cluster {
	t.Helper()
	e2e.RequireNamespaces(t)
	bins := e2e.Build(t, "pbs_server", "pbs_iff", "qstat", "qmgr", "pbsnodes", "qdel")
	ports := e2e.FreePorts(t, 4)
	ps := strconv.Itoa
	cmd := e2e.HostCommand(t, "vm", bins.Path("pbs_server"), "-D", "-d", home, "-p", ps(ports[0]), "-M", ps(ports[1]),
		"-R", ps(ports[2]), "-S", ps(ports[3]), "-a", "false", "-t", "warm")
	d := e2e.Start(t, "pbs_server", cmd)
	t.Cleanup(d.Stop)
	d.WaitListening(t, "127.0.0.1:"+ps(ports[0]), 30*time.Second)
	env := append(os.Environ(), "PBS_HOME="+home, "PBS_DEFAULT=vm:"+ps(ports[0]), "TZ=UTC")
	return &cluster{t: t, bins: bins, home: home, env: env}
}

// client runs a client command in the namespace and returns its stdout.
func (c *cluster) client(name string, args ...string) string {
	c.t.Helper()
	out, errs, err := c.run(name, args...)
	if err != nil {
		c.t.Fatalf("%s %v: %v, stderr %q", name, args, err, errs)
	}
	return out
}

// run runs a client command in the namespace.
func (c *cluster) run(name string, args ...string) (stdout, stderr string, err error) {
	c.t.Helper()
	cmd := e2e.HostCommand(c.t, "vm", c.bins.Path(name), args...)
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// A normalisation rewrites what legitimately differs between TORQUE's
// output before it stopped and GoPBS's after the import.
type normalisation struct {
	re   *regexp.Regexp
	repl string
}

var (
	// Times that depend on when the test runs: the running job's
	// remaining walltime, and comp_time of the completed job, which the
	// test moves to the present (shiftCompletion).
	timeRules = []normalisation{
		{regexp.MustCompile(`Walltime.Remaining = \d+`), "Walltime.Remaining = <seconds>"},
		{regexp.MustCompile(`<Remaining>\d+</Remaining>`), "<Remaining><seconds></Remaining>"},
		{regexp.MustCompile(`comp_time = .*`), "comp_time = <time>"},
		{regexp.MustCompile(`<comp_time>\d+</comp_time>`), "<comp_time><time></comp_time>"},
	}
	// What a node's MOM reports: no MOM answers in the test, so the node
	// is down and has no status.
	nodeRules = []normalisation{
		{regexp.MustCompile(`(?m)^     state = .*$`), "     state = <reported by the MOM>"},
		{regexp.MustCompile(`(?m)^     status = .*\n`), ""},
	}
)

func normalise(s string, rules []normalisation) string {
	for _, r := range rules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

// sortBlocks returns s with its blocks (split before each line matching
// start) in sorted order, the text before the first block first: TORQUE's
// files do not record the order in which queues were created, so GoPBS
// lists imported queues by name.
func sortBlocks(s string, start *regexp.Regexp) string {
	idx := start.FindAllStringIndex(s, -1)
	if len(idx) == 0 {
		return s
	}
	head := s[:idx[0][0]]
	var blocks []string
	for i, m := range idx {
		end := len(s)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		blocks = append(blocks, s[m[0]:end])
	}
	slices.Sort(blocks)
	return head + strings.Join(blocks, "")
}

// shiftCompletion moves the comp_time of completed job 9.vm (in its
// binary job file, same length) to now, so that keep_completed (3600 s)
// has not yet removed it when GoPBS starts.
func shiftCompletion(t *testing.T, home string) {
	t.Helper()
	path := filepath.Join(home, "server_priv", "jobs", "9.vm.JB")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte("comp_time\x001795770610\x00")
	if bytes.Count(b, old) != 1 {
		t.Fatalf("%s: comp_time record not found", path)
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	b = bytes.Replace(b, old, []byte("comp_time\x00"+now+"\x00"), 1)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func diffText(t *testing.T, what, want, got string) {
	t.Helper()
	if want == got {
		return
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("%s differs from TORQUE's at line %d:\nwant %q\ngot  %q", what, i+1, w, g)
			return
		}
	}
}

// TestImportedServerAnswersAsTorque imports ../shared/torque-home, keeping
// its running job, starts GoPBS on the result and compares what the
// clients print with what TORQUE's printed before it stopped, up to the
// normalisations above.
func TestImportedServerAnswersAsTorque(t *testing.T) {
	src := torqueHome(t)
	shiftCompletion(t, src)
	home := filepath.Join(e2e.Dir(t), "gopbs")
	if code, out, errs := runImport("-d", src, "-o", home, "-running", "keep"); code != 0 {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	c := startCluster(t, home)
	queueBlock := regexp.MustCompile(`(?m)^Queue: `)
	qmgrBlock := regexp.MustCompile(`(?m)^#\n# Create and define queue |^#\n# Set server attributes`)
	for _, tc := range []struct {
		file, cmd string
		args      []string
		fix       func(string) string
	}{
		{"qstat-f.txt", "qstat", []string{"-f"}, nil},
		{"qstat-f-t.txt", "qstat", []string{"-f", "-t"}, nil},
		{"qstat-x.txt", "qstat", []string{"-x"}, nil},
		{"qstat-Qf.txt", "qstat", []string{"-Qf"}, func(s string) string { return sortBlocks(s, queueBlock) }},
		{"qmgr-print-server.txt", "qmgr", []string{"-c", "print server"}, func(s string) string {
			// the server's section stays last
			i := strings.Index(s, "#\n# Set server attributes")
			if i < 0 {
				return s
			}
			return sortBlocks(s[:i], qmgrBlock) + s[i:]
		}},
		{"pbsnodes-a.txt", "pbsnodes", []string{"-a"}, func(s string) string { return normalise(s, nodeRules) }},
	} {
		want, got := normalise(expected(t, tc.file), timeRules), normalise(c.client(tc.cmd, tc.args...), timeRules)
		if tc.fix != nil {
			want, got = tc.fix(want), tc.fix(got)
		}
		diffText(t, strings.Join(append([]string{tc.cmd}, tc.args...), " "), want, got)
	}
}

// TestRequeuedRunningJob imports with -running=requeue: the running job
// is back in its queue, everything else about it as TORQUE had it.
func TestRequeuedRunningJob(t *testing.T) {
	src := torqueHome(t)
	home := filepath.Join(e2e.Dir(t), "gopbs")
	code, out, errs := runImport("-d", src, "-o", home, "-running", "requeue")
	if code != 0 || !strings.Contains(out, "requeued running jobs: 0.vm\n") {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	c := startCluster(t, home)
	got := c.client("qstat", "-f", "0.vm")
	want := expected(t, "qstat-f.txt")
	want = want[:strings.Index(want, "\nJob Id: 1.vm")+1]
	for _, r := range []normalisation{
		{regexp.MustCompile(`job_state = R`), "job_state = Q"},
		{regexp.MustCompile(`substate = 42`), "substate = 10"},
		{regexp.MustCompile(`(?m)^    (exec_host|session_id|Walltime.Remaining) = .*\n`), ""},
		{regexp.MustCompile(`(?m)^    mtime = .*$`), "    mtime = <time of the requeue>"},
	} {
		want = r.re.ReplaceAllString(want, r.repl)
	}
	got = regexp.MustCompile(`(?m)^    mtime = .*$`).ReplaceAllString(got, "    mtime = <time of the requeue>")
	diffText(t, "qstat -f 0.vm", want, got)
	if nodes := c.client("pbsnodes", "-a"); strings.Contains(nodes, "jobs =") {
		t.Errorf("the node still lists the requeued job:\n%s", nodes)
	}
	// The imported dependency is live: 4.vm (afterok:0.vm) is deleted with
	// 0.vm when 0.vm is deleted before it could run; both are kept
	// completed (keep_completed).
	before := c.client("qstat", "-f", "4.vm")
	c.client("qdel", "0.vm")
	for _, id := range []string{"0.vm", "4.vm"} {
		if out := c.client("qstat", "-f", id); !strings.Contains(out, "    job_state = C\n") {
			t.Errorf("qstat -f %s after qdel 0.vm:\n%s\nwant it completed (before:\n%s)", id, out, before)
		}
	}
	if out := c.client("qstat", "-f", "5.vm"); !strings.Contains(out, "    job_state = Q\n") {
		t.Errorf("qstat -f 5.vm: %s", out)
	}
}
