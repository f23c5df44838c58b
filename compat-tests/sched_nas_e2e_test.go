package compattests

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNASSchedulerEndToEnd runs pbs_sched with a NAS scheduler
// configuration (seed 000) in sched_priv/config, beside the FIFO sample
// sched_config, against a real pbs_server and pbs_mom: a submit queue
// and two batch queues of different walltime limits, and a special
// queue. First in TEST_ONLY mode, which must change nothing; then, after
// SIGHUP re-reads the configuration without TEST_ONLY, the jobs move from
// the submit queue to the batch queue they fit and run, the special job
// first; the job too big for any batch queue is rejected. Last,
// HIGH_SYSTIME holds a job back while the MOM's site-defined systime
// resource is high.
func TestNASSchedulerEndToEnd(t *testing.T) {
	c := newSchedCluster(t)
	queue := func(name string, attrs ...string) []string {
		cmds := []string{"create queue " + name + " queue_type = execution"}
		for _, a := range append([]string{"enabled = true", "started = true"}, attrs...) {
			cmds = append(cmds, "set queue "+name+" "+a)
		}
		return cmds
	}
	var setup []string
	setup = append(setup, queue("submit", "resources_max.walltime = 03:00:00")...)
	setup = append(setup, queue("small", "resources_max.walltime = 00:05:00")...)
	setup = append(setup, queue("large", "resources_max.walltime = 01:00:00")...)
	setup = append(setup, queue("special")...)
	c.qmgr(setup...)
	c.qmgr("set server scheduling = false", "set node localhost np = 1")

	const nasConfig = `# the NAS scheduler (seed 000)
SUBMIT_QUEUE      submit
BATCH_QUEUES      small,large
SPECIAL_QUEUE     special
MAX_USER_RUN_JOBS 4
`
	c.startScheduler("round_robin: False all\n", map[string]string{"config": nasConfig + "TEST_ONLY true\n"})
	logs := func() string {
		files, _ := filepath.Glob(filepath.Join(c.schedHome, "sched_logs", "*"))
		var b strings.Builder
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.Write(data)
		}
		return b.String()
	}
	if !strings.Contains(logs(), "NAS scheduler policy, configuration") {
		t.Fatalf("pbs_sched did not choose the NAS policy:\n%s", logs())
	}

	short := c.submit(e2eJob{name: "short", queue: "submit", args: []string{"-l", "walltime=00:02:00"}, sleep: "1"})
	long := c.submit(e2eJob{name: "long", queue: "submit", args: []string{"-l", "walltime=00:30:00"}, sleep: "1"})
	huge := c.submit(e2eJob{name: "huge", queue: "submit", args: []string{"-l", "walltime=02:00:00"}})
	vip := c.submit(e2eJob{name: "vip", user: 1, queue: "special", args: []string{"-l", "walltime=00:02:00"}, sleep: "3"})
	c.accounting() // forget the records so far

	// TEST_ONLY: every decision logged, nothing changed.
	c.qmgr("set server scheduling = true")
	c.waitFor("the TEST_ONLY decisions", 30*time.Second, func() bool {
		l := logs()
		return strings.Contains(l, vip+";TEST_ONLY: would move the job to queue small and run it") &&
			strings.Contains(l, huge+";TEST_ONLY: would delete the job") &&
			strings.Contains(l, long+";TEST_ONLY: would set comment: Not Running: Not enough nodes available")
	})
	c.qmgr("set server scheduling = false")
	for id, queue := range map[string]string{short: "submit", long: "submit", huge: "submit", vip: "special"} {
		out, _, _ := c.run(-1, "qstat", "-f", id)
		if !strings.Contains(out, "job_state = Q") || !strings.Contains(out, "queue = "+queue) || strings.Contains(out, "comment = ") {
			t.Errorf("TEST_ONLY changed job %s:\n%s", id, out)
		}
	}
	if recs := c.accounting(); len(recs) != 0 {
		t.Errorf("TEST_ONLY: accounting records %v", recs)
	}

	// SIGHUP re-reads the configuration: now for real.
	cfgPath := filepath.Join(c.schedHome, "sched_priv", "config")
	if err := os.WriteFile(cfgPath, []byte(nasConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	c.sched.Signal(syscall.SIGHUP)
	c.waitFor("the configuration to be re-read", 10*time.Second, func() bool {
		return strings.Count(logs(), "NAS scheduler policy, configuration") == 2
	})
	c.qmgr("set server scheduling = true")
	names := map[string]string{short: "short", long: "long", huge: "huge", vip: "vip"}
	var started []string
	queueOf := map[string]string{}
	ended := map[string]string{}
	vipComment := ""
	c.waitFor("the jobs to run and the big one to be rejected", 60*time.Second, func() bool {
		if vipComment == "" {
			vipComment = c.jobComment(vip)
		}
		for _, line := range c.accountingLines() {
			f := strings.SplitN(line, ";", 4)
			if len(f) < 4 || names[f[2]] == "" {
				continue
			}
			switch f[1] {
			case "S":
				started = append(started, names[f[2]])
				for _, kv := range strings.Fields(f[3]) {
					if q, ok := strings.CutPrefix(kv, "queue="); ok {
						queueOf[names[f[2]]] = q
					}
				}
			case "E", "D":
				ended[names[f[2]]] = f[1]
			}
		}
		return len(ended) == 4
	})
	c.qmgr("set server scheduling = false")
	if want := []string{"vip", "short", "long"}; strings.Join(started, " ") != strings.Join(want, " ") {
		t.Errorf("start order %v, want %v (the special job first)", started, want)
	}
	if want := map[string]string{"vip": "small", "short": "small", "long": "large"}; !equalMaps(queueOf, want) {
		t.Errorf("jobs ran in queues %v, want %v", queueOf, want)
	}
	if ended["huge"] != "D" {
		t.Errorf("the too-big job ended with %q, want deleted (D)", ended["huge"])
	}
	l := logs()
	for _, want := range []string{huge + ";Job rejected: it cannot fit on any execution queue",
		vip + ";Moved to queue small", short + ";Moved to queue small", long + ";Moved to queue large"} {
		if !strings.Contains(l, want) {
			t.Errorf("not in the scheduler log: %q", want)
		}
	}
	if !strings.HasPrefix(vipComment, "Started on ") || !strings.HasSuffix(vipComment, " (special access job)") {
		t.Errorf("special job comment %q", vipComment)
	}

	// HIGH_SYSTIME reads the MOM resource systime, which a site defines
	// as a shell resource in mom_priv/config: at 50% no job starts, at
	// 10% it does.
	momConfig := filepath.Join(c.momHome, "mom_priv", "config")
	base, err := os.ReadFile(momConfig)
	if err != nil {
		t.Fatal(err)
	}
	setSystime := func(pct string) {
		if err := os.WriteFile(momConfig, append(append([]byte{}, base...), "systime !echo "+pct+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		c.mom.Signal(syscall.SIGHUP)
	}
	setSystime("50")
	if err := os.WriteFile(cfgPath, []byte(nasConfig+"HIGH_SYSTIME 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.sched.Signal(syscall.SIGHUP)
	c.waitFor("the configuration to be re-read", 10*time.Second, func() bool {
		return strings.Count(logs(), "NAS scheduler policy, configuration") == 3
	})
	sys := c.submit(e2eJob{name: "sys", queue: "submit", args: []string{"-l", "walltime=00:02:00"}})
	c.qmgr("set server scheduling = true")
	c.waitFor("the system-time comment", 30*time.Second, func() bool {
		return c.jobComment(sys) == "Not Running: System CPU time is above HIGH_SYSTIME"
	})
	setSystime("10")
	c.waitFor("the job to run once system time is low", 30*time.Second, func() bool {
		for _, line := range c.accountingLines() {
			if f := strings.SplitN(line, ";", 4); len(f) >= 3 && f[1] == "S" && f[2] == sys {
				return true
			}
		}
		return false
	})
	c.qmgr("set server scheduling = false")
}

// accountingLines returns the lines of the server's accounting files not
// returned before (by this or accounting).
func (c *schedCluster) accountingLines() []string {
	files, _ := filepath.Glob(filepath.Join(c.svHome, "server_priv", "accounting", "*"))
	sort.Strings(files)
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		lines = lines[:len(lines)-1]
		out = append(out, lines[min(c.acctSeen[f], len(lines)):]...)
		c.acctSeen[f] = len(lines)
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
