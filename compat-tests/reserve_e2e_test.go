package compattests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/e2e"
)

// newMultiNodeSchedCluster is a schedCluster whose jobs run on several
// nodes, each with a pbs_mom of its own: node i is 127.0.0.(i+2), named
// in a hosts file that pbs_server, pbs_sched and the MOMs see in mount
// namespaces of their own (each MOM bound to its address with
// GOPBS_MOM_ADDR, all on the same ports). It returns when every node is
// free and has reported.
func newMultiNodeSchedCluster(t *testing.T, nodes []string, np int) *schedCluster {
	t.Helper()
	e2e.RequireNamespaces(t)
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	addr := func(i int) string { return fmt.Sprintf("127.0.0.%d", i+2) }
	for i := range nodes {
		l, err := net.Listen("tcp", addr(i)+":0")
		if err != nil {
			t.Skipf("loopback address %s not usable: %v", addr(i), err)
		}
		l.Close()
	}
	c := &schedCluster{t: t, acctSeen: map[string]int{}}
	for i, name := range schedE2EUsers {
		c.users[i] = e2e.User(t, name)
		c.users[i].MakeHome(t)
	}
	c.bin = e2e.Build(t, "pbs_server", "pbs_mom", "pbs_sched", "pbs_iff", "qsub", "qstat", "qmgr", "pbsnodes").Dir
	c.base = e2e.Dir(t)
	c.work = filepath.Join(c.base, "work")
	c.svHome, c.schedHome = filepath.Join(c.base, "server"), filepath.Join(c.base, "sched")
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(c.work, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	hosts := "127.0.0.1\tlocalhost\n"
	for i, n := range nodes {
		hosts += addr(i) + "\t" + n + "\n"
	}
	c.hosts = filepath.Join(c.base, "hosts")
	e2e.WriteFile(t, c.hosts, hosts)
	for _, h := range []string{c.svHome, c.schedHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	ports := e2e.FreePorts(t, 4)
	c.svPort, c.momPort, c.rmPort, c.schdPort = ports[0], ports[1], ports[2], ports[3]
	e2e.LogFilesOnFailure(t, 20000, filepath.Join(c.base, "*", "*_logs", "*"))
	ps := strconv.Itoa
	c.start("pbs_server", "-D", "-f", "-t", "create", "-d", c.svHome, "-p", ps(c.svPort), "-M", ps(c.momPort),
		"-R", ps(c.rmPort), "-S", "127.0.0.1:"+ps(c.schdPort), "-H", "localhost").WaitListening(t, c.addr(c.svPort), 10*time.Second)
	c.qmgr("set server scheduling = false", "set server scheduler_iteration = 2", "set server keep_completed = 0")
	for i, n := range nodes {
		c.qmgr(fmt.Sprintf("create node %s np=%d", n, np))
		home := filepath.Join(c.base, "mom-"+n)
		if err := e2e.MakeHome(home, "localhost"); err != nil {
			t.Fatal(err)
		}
		e2e.WriteFile(t, filepath.Join(home, "mom_priv", "config"), "$pbsserver localhost\n$status_update_time 2\n")
		c.startEnv("pbs_mom "+n, "pbs_mom", []string{"GOPBS_MOM_ADDR=" + addr(i)}, "-D", "-d", home, "-H", n,
			"-M", ps(c.momPort), "-R", ps(c.rmPort), "-S", ps(c.svPort))
	}
	for _, n := range nodes {
		c.waitFor("node "+n+" to be free", 30*time.Second, func() bool {
			out, _, _ := c.run(-1, "pbsnodes", n)
			return strings.Contains(out, "state = free") && strings.Contains(out, "opsys=")
		})
	}
	return c
}

// TestStarvationEndToEnd is seed 004's starvation scenario with the real
// daemons on three nodes of two slots: six one-slot jobs B0-B5 (walltime
// one hour) fill the cluster; A asks for all of it (nodes=3:ppn=2); a
// short C (walltime five minutes) and more B jobs (B6, B7, walltime two
// hours) queue behind it. The jobs run until the test ends them (a file each waits for), so
// nothing depends on how fast the machine is: every step waits for what
// the daemons report (accounting records, qstat -f), never for time.
//
// With max_reservation A gets a reservation on all three nodes at the
// predicted time (the last planned end of B0-B5: start_time + walltime,
// duration_offset 0), shown by qstat -f (estimated_start_time,
// estimated_exec_host) and the MONITOR file; when B0 and B1 end, C
// backfills into a free slot while B6 and B7, which fit too but would
// still run at A's planned start, are held with the reservation comment;
// the plan never gets later; A starts when its nodes are free, before any
// job queued after it but C. Without reservations (TORQUE's FIFO) B6
// takes a free slot while A waits: A starves.
func TestStarvationEndToEnd(t *testing.T) {
	nodes := []string{"nodea", "nodeb", "nodec"}
	c := newMultiNodeSchedCluster(t, nodes, 2)
	c.qmgr("create queue resv queue_type = execution", "set queue resv enabled = true", "set queue resv started = true",
		"set server default_queue = resv")
	for _, tc := range []struct {
		name        string
		schedConfig string
		reserve     bool
	}{
		{"reservation", "max_reservation: 10\nduration_offset: 0\nparams: MONITOR\n", true},
		{"fifo", "help_starving_jobs: false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.qmgr("set server scheduling = false")
			c.startScheduler(tc.schedConfig, nil)
			c.accounting()
			c.qmgr("set server scheduling = true")
			names := map[string]string{} // id → name
			ids := map[string]string{}   // name → id
			endFile := func(name string) string { return filepath.Join(c.work, "end."+tc.name+"."+name) }
			submit := func(name string, user int, args ...string) string {
				script := "#!/bin/sh\nwhile [ ! -e " + endFile(name) + " ]; do sleep 0.2; done\n"
				if name == "C" {
					script = "#!/bin/sh\nexit 0\n"
				}
				id := c.submit(e2eJob{name: tc.name + "-" + name, user: user, args: args, script: script})
				names[id], ids[name] = name, id
				return id
			}
			end := func(names ...string) {
				for _, n := range names {
					e2e.WriteFile(t, endFile(n), "")
				}
			}
			var startOrder []string // names, by S record
			started := func(name string) bool {
				for _, r := range c.accounting() {
					if r.kind == "S" && names[r.id] != "" {
						startOrder = append(startOrder, names[r.id])
					}
				}
				for _, n := range startOrder {
					if n == name {
						return true
					}
				}
				return false
			}
			pos := func(name string) int {
				for i, n := range startOrder {
					if n == name {
						return i
					}
				}
				return len(startOrder)
			}
			t.Cleanup(func() {
				end("A", "B0", "B1", "B2", "B3", "B4", "B5", "B6", "B7")
				c.waitFor("the jobs to end", 60*time.Second, func() bool { return c.runningCount() == 0 && c.queuedCount() == 0 })
			})

			hour := []string{"-l", "nodes=1:ppn=1,walltime=01:00:00"}
			for i := 0; i < 6; i++ {
				submit("B"+strconv.Itoa(i), i%2, hour...)
			}
			c.waitFor("B0-B5 to run", 30*time.Second, func() bool { return c.runningCount() == 6 })
			aArgs := []string{"-l", "nodes=3:ppn=2,walltime=01:00:00"}
			if tc.reserve {
				aArgs = append(aArgs, "-W", "reserve=y")
			}
			a := submit("A", 0, aArgs...)
			var planned int64
			if tc.reserve {
				c.waitFor("A's reservation", 30*time.Second, func() bool {
					planned, _ = strconv.ParseInt(c.jobAttr(a, "estimated_start_time"), 10, 64)
					return planned > 0
				})
				var predicted int64
				for i := 0; i < 6; i++ {
					predicted = max(predicted, c.jobStartTime(ids["B"+strconv.Itoa(i)])+3600)
				}
				if planned != predicted {
					t.Errorf("A planned at %d, want %d (the last end of B0-B5 by walltime)", planned, predicted)
				}
				if hosts := c.jobAttr(a, "estimated_exec_host"); hosts != "nodea:ppn=2+nodeb:ppn=2+nodec:ppn=2" {
					t.Errorf("estimated_exec_host = %q, want nodea:ppn=2+nodeb:ppn=2+nodec:ppn=2", hosts)
				}
				if got := c.jobAttr(a, "reserve"); got != "y" {
					t.Errorf("reserve = %q in qstat -f", got)
				}
			}
			submit("C", 1, "-l", "nodes=1:ppn=1,walltime=00:05:00")
			// two hours: B6 and B7 can never end before A's plan (at most
			// an hour away), even when they are looked at in the second
			// the last of B0-B5 started
			twoHours := []string{"-l", "nodes=1:ppn=1,walltime=02:00:00"}
			submit("B6", 0, twoHours...)
			submit("B7", 1, twoHours...)
			end("B0", "B1")
			if !tc.reserve {
				c.waitFor("B6 to start in a freed slot", 30*time.Second, func() bool { return started("B6") })
				if started("A") {
					t.Fatalf("FIFO: A started (start order %v)", startOrder)
				}
				return // A starves behind the stream; the clean-up ends it all
			}
			reserved := "Not Running: resources reserved for " + a + " until "
			c.waitFor("C to backfill and B6, B7 to be held for A", 30*time.Second, func() bool {
				if p, _ := strconv.ParseInt(c.jobAttr(a, "estimated_start_time"), 10, 64); p > planned {
					t.Fatalf("A's plan got later: %d, then %d", planned, p)
				}
				return started("C") && strings.HasPrefix(c.jobComment(ids["B6"]), reserved) &&
					strings.HasPrefix(c.jobComment(ids["B7"]), reserved)
			})
			if started("B6") || started("B7") {
				t.Fatalf("a B job queued after A started before it: start order %v", startOrder)
			}
			end("B2", "B3", "B4", "B5")
			c.waitFor("A to start", 30*time.Second, func() bool { return started("A") })
			if pos("B6") < pos("A") || pos("B7") < pos("A") || pos("C") > pos("A") {
				t.Errorf("start order %v: want C before A, and A before B6 and B7", startOrder)
			}
			if s := c.jobStartTime(a); s > planned {
				t.Errorf("A started at %d, after its plan %d", s, planned)
			}
			sched, err := os.ReadFile(filepath.Join(c.schedHome, "sched_priv", "schedule"))
			for _, n := range nodes {
				line := a + ":1:RESERVING:" + strconv.FormatInt(planned, 10) + ":3600:H:" + n + ":slots:2.000000\n"
				if err != nil || !strings.Contains(string(sched), line) {
					t.Errorf("MONITOR file lacks %q: %v\n%s", line, err, sched)
				}
			}
		})
	}
}

// jobAttr returns attribute name of job id as qstat -f prints it.
func (c *schedCluster) jobAttr(id, name string) string {
	out, _, _ := c.run(-1, "qstat", "-f", id)
	out = strings.ReplaceAll(out, "\n\t", "")
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" = "); ok {
			return v
		}
	}
	return ""
}

// jobStartTime returns the start_time of job id in seconds since the
// epoch (qstat -f prints it as a date).
func (c *schedCluster) jobStartTime(id string) int64 {
	v := c.jobAttr(id, "start_time")
	tm, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", v, time.Local)
	if err != nil {
		c.t.Fatalf("start_time of %s: %q", id, v)
	}
	return tm.Unix()
}

// runningCount and queuedCount count the jobs qstat lists running or
// queued.
func (c *schedCluster) runningCount() int { return c.countState("R") }
func (c *schedCluster) queuedCount() int  { return c.countState("Q") }

func (c *schedCluster) countState(state string) int {
	out, _, _ := c.run(-1, "qstat")
	n := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[len(f)-2] == state {
			n++
		}
	}
	return n
}
