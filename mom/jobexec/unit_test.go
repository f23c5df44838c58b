package jobexec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/momlog"
	"gopbs/mom/procfs"
)

func unitEngine(t *testing.T, cfgText string) *Engine {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{Home: t.TempDir(), Host: "node1.example.com", Config: cfg, Log: momlog.Discard(), StarterPath: "/bin/false"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func TestParseVariableList(t *testing.T) {
	got := ParseVariableList(`PBS_O_QUEUE=batch,PBS_O_HOST=vm,X=a\,b,EMPTY=,NOEQ,,Y=c=d`)
	want := []Var{{"PBS_O_QUEUE", "batch"}, {"PBS_O_HOST", "vm"}, {"X", "a,b"}, {"EMPTY", ""}, {"NOEQ", ""}, {"Y", "c=d"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
}

func TestParseExecHost(t *testing.T) {
	v, err := ParseExecHost("B/1+B/0+A/1")
	if err != nil || !reflect.DeepEqual(v, []Vnode{{"B", 1}, {"B", 0}, {"A", 1}}) {
		t.Errorf("%v %v", v, err)
	}
	for _, bad := range []string{"/1", "a/x", "a/-1", "a/0++b/1"} {
		if _, err := ParseExecHost(bad); err == nil {
			t.Errorf("ParseExecHost(%q) accepted", bad)
		}
	}
	if nn, ppn := nodesCounts("2:ppn=4+node3"); nn != 2 || ppn != 4 {
		t.Errorf("nodesCounts = %d %d", nn, ppn)
	}
	if nn, ppn := nodesCounts("node1"); nn != 1 || ppn != 1 {
		t.Errorf("nodesCounts = %d %d", nn, ppn)
	}
}

func TestPlanOutput(t *testing.T) {
	e := unitEngine(t, "$nospool_dir_list /scratch/*\n")
	cred := &Credentials{Home: "/home/alice"}
	spool := e.home + "/spool/"
	tests := []struct {
		name    string
		mod     func(j *Job)
		out, er string
		joined  byte
	}{
		{"default", func(j *Job) {}, spool + "12.srv.OU", spool + "12.srv.ER", 0},
		{"join", func(j *Job) { j.JoinPath = "oe" }, spool + "12.srv.OU", spool + "12.srv.ER", 'o'},
		{"keep", func(j *Job) { j.KeepFiles = "oe"; j.Name = "a/run" }, "/home/alice/run.o12", "/home/alice/run.e12", 0},
		{"keep array", func(j *Job) { j.ID = "12[3].srv"; j.KeepFiles = "o" }, "/home/alice/run-3.o12", spool + "12.srv.ER", 0},
		{"devnull", func(j *Job) { j.OutputPath = "h:/dev/null" }, "", spool + "12.srv.ER", 0},
		{"nospool", func(j *Job) { j.Variables = []Var{{"PBS_O_WORKDIR", "/scratch/a/b"}} }, "/final/o", "/final/e", 0},
		{"nospool vars", func(j *Job) {
			j.Variables = []Var{{"PBS_O_WORKDIR", "/scratch/a"}}
			j.OutputPath = "h:$HOME/$PBS_JOBID.out"
		}, "/home/alice/12.srv.out", "/final/e", 0},
	}
	for _, tc := range tests {
		j := &Job{ID: "12.srv", Prefix: "12.srv", Name: "run", OutputPath: "h:/final/o", ErrorPath: "h:/final/e"}
		tc.mod(j)
		of := e.planOutput(j, cred)
		if of.outPath != tc.out || of.errPath != tc.er || of.joined != tc.joined {
			t.Errorf("%s: %+v", tc.name, of)
		}
	}
}

func TestSelectShell(t *testing.T) {
	e := unitEngine(t, "")
	cred := &Credentials{Shell: "/bin/bash"}
	tests := map[string]string{
		"":                                  "/bin/bash",
		"/bin/zsh":                          "/bin/zsh",
		"/bin/ksh@node2,/bin/zsh":           "/bin/zsh",
		"/bin/zsh,/bin/ksh@node1":           "/bin/ksh",
		"/bin/csh@node1.example.com,/bin/x": "/bin/csh",
		"/bin/ksh@other":                    "/bin/bash",
	}
	for list, want := range tests {
		if got := e.selectShell(&Job{ShellPathList: list}, cred); got != want {
			t.Errorf("selectShell(%q) = %q, want %q", list, got, want)
		}
	}
}

func TestComputeLimits(t *testing.T) {
	e := unitEngine(t, "$cputmult 2\n$enforce mem off\n$enforce vmem off\n")
	j := &Job{Resources: []Resource{{"pcput", "100"}, {"cput", "00:10:00"}, {"mem", "20mb"}, {"vmem", "1gb"},
		{"pvmem", "2gb"}, {"file", "1kb"}, {"walltime", "01:00:00"}, {"nice", "5"}, {"nodes", "1"}}}
	ls, err := e.computeLimits(j, 1)
	if err != nil {
		t.Fatal(err)
	}
	lim := map[int]uint64{}
	for _, r := range ls.rlimits {
		lim[r.Resource] = r.Cur
	}
	if lim[unix.RLIMIT_CPU] != 50+2*45 || lim[unix.RLIMIT_DATA] != 20<<20 || lim[unix.RLIMIT_RSS] != 20<<20 ||
		lim[unix.RLIMIT_FSIZE] != 1024 || lim[unix.RLIMIT_AS] < 1<<30 {
		t.Errorf("rlimits %v", lim)
	}
	if ls.walltime != 3600 || ls.cput != 600 || ls.mem != 20<<20 || ls.vmem != 1<<30 || ls.nice != 5 {
		t.Errorf("limits %+v", ls)
	}
	// mem on a multi-node job is not an rlimit.
	ls, _ = e.computeLimits(&Job{Resources: []Resource{{"mem", "20mb"}}}, 2)
	if len(ls.rlimits) != 0 {
		t.Errorf("multi-node mem rlimits %v", ls.rlimits)
	}
	// mem alone does not limit the address space (capture 97).
	ls, _ = e.computeLimits(&Job{Resources: []Resource{{"mem", "20mb"}}}, 1)
	for _, r := range ls.rlimits {
		if r.Resource == unix.RLIMIT_AS {
			t.Error("mem set RLIMIT_AS")
		}
	}
	// Enforced by kill (the default), memory limits are no rlimits:
	// an allocation past them must not fail before the job is killed.
	e.SetConfig(config.Default())
	ls, _ = e.computeLimits(&Job{Resources: []Resource{{"mem", "20mb"}, {"pmem", "10mb"}, {"vmem", "1gb"}, {"pcput", "5"}}}, 1)
	if len(ls.rlimits) != 1 || ls.rlimits[0].Resource != unix.RLIMIT_CPU || ls.mem != 20<<20 || ls.pmem != 10<<20 || ls.vmem != 1<<30 {
		t.Errorf("enforced limits: rlimits %v, %+v", ls.rlimits, ls)
	}
	if _, err := e.computeLimits(&Job{Resources: []Resource{{"walltime", "x"}}}, 1); err == nil {
		t.Error("bad walltime accepted")
	}
	c := *e.conf()
	c.IgnWalltime = true
	e.SetConfig(&c)
	if ls, _ := e.computeLimits(&Job{Resources: []Resource{{"walltime", "5"}}}, 1); ls.walltime != 0 {
		t.Error("$ignwalltime ignored")
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]int{"SIGKILL": 9, "term": 15, "SIGusr1": 10, "NULL": 0, "12": 12, "sigcont": 18} {
		if s, err := ParseSignal(in); err != nil || int(s) != want {
			t.Errorf("ParseSignal(%q) = %d, %v", in, s, err)
		}
	}
	for _, bad := range []string{"SIGFOO", "-1", "65", ""} {
		if _, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q) accepted", bad)
		}
	}
}

func TestTaskRecordRoundTrip(t *testing.T) {
	rec := TaskRecord{JobID: "17.srv", ParentNode: 0, ParentTask: 0, TaskID: 1, Status: TaskExited, SessionID: 16978, ExitStatus: -10}
	path := t.TempDir() + "/17.srv.TK"
	if err := WriteTaskRecord(path, rec); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadTaskFile(path)
	if err != nil || len(recs) != 1 || recs[0] != rec {
		t.Errorf("%+v %v", recs, err)
	}
	var bad TaskRecord
	if err := bad.UnmarshalBinary(make([]byte, 10)); err == nil {
		t.Error("short record accepted")
	}
}

func FuzzParsers(f *testing.F) {
	f.Add("PBS_O_HOST=vm,A=b\\,c", "vm/0+vm/1")
	f.Fuzz(func(t *testing.T, vars, execHost string) {
		_ = ParseVariableList(vars)
		_, _ = ParseExecHost(execHost)
		_, _ = ParseSignal(vars)
		_, _ = nodesCounts(execHost)
	})
}

func TestIsLocalHost(t *testing.T) {
	for _, tc := range []struct {
		host, self string
		want       bool
	}{
		{"vm", "vm", true},
		{"VM", "vm", true},
		{"vm", "vm.example.org", true},
		{"vm.example.org", "vm", true},
		{"vm.example.org", "vm.example.org", true},
		{"localhost", "vm", true},
		{"localhost.localdomain", "vm", true},
		{"127.0.0.1", "vm", true},
		{"::1", "vm", true},
		{"10.0.0.1", "vm", false},
		{"vm2", "vm", false},
		{"other.example.org", "vm.example.org", false},
		{"", "vm", false},
	} {
		if got := IsLocalHost(tc.host, tc.self); got != tc.want {
			t.Errorf("IsLocalHost(%q, %q) = %v, want %v", tc.host, tc.self, got, tc.want)
		}
	}
}

// fakeProc writes a /proc tree holding the given processes (pid, state)
// of session sid and returns its root.
func fakeProc(t *testing.T, sid int, procs map[int]byte) string {
	t.Helper()
	root := t.TempDir()
	for pid, state := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (sleep) %c 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
			pid, state, sid, sid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestKillWalksOverZombies: a SIGTERM or SIGKILL delivery walks a session
// left with zombies six times, logging each (captures 58, 62, 96, 101);
// other signals walk it once.
func TestKillWalksOverZombies(t *testing.T) {
	const sid = 999990 // zombies are never signalled: no real process is hit
	root := fakeProc(t, sid, map[int]byte{999991: 'Z', 999992: 'Z'})
	for _, tc := range []struct {
		sig   syscall.Signal
		walks int
	}{{syscall.SIGTERM, killIdleWalks}, {syscall.SIGKILL, killIdleWalks}, {syscall.SIGUSR1, 1}, {syscall.SIGTSTP, 1}} {
		var buf bytes.Buffer
		e, err := New(Options{Home: t.TempDir(), Host: "vm", Log: momlog.NewWriter(&buf, "pbs_mom", logline.EventAll),
			Proc: procfs.FS{Root: root}, StarterPath: "/bin/false"})
		if err != nil {
			t.Fatal(err)
		}
		r := &runningJob{job: &Job{ID: "31.vm"}, sid: sid, state: StateRunning}
		if n := e.killSession(r, tc.sig); n != 0 {
			t.Errorf("sig %d: %d live processes found", tc.sig, n)
		}
		e.Close()
		for _, pid := range []int{999991, 999992} {
			line := fmt.Sprintf(";0008;   pbs_mom;Job;31.vm;kill_task: not killing process (pid=%d/state=Z) with sig %d\n", pid, tc.sig)
			if n := strings.Count(buf.String(), line); n != tc.walks {
				t.Errorf("sig %d: %d walks over zombie %d, want %d:\n%s", tc.sig, n, pid, tc.walks, buf.String())
			}
		}
	}
}
