package compattests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStarvationEndToEnd is seed 004's starvation scenario with the real
// daemons: node localhost has two slots; a stream of one-slot jobs B(i)
// (8 s, walltime 10 s) arrives every 4 s, so one always ends while the
// other runs; job A asks for both slots with qsub -W reserve=y just after
// B(0) and B(1) started; a short job C (1 s, walltime 3 s) follows.
//
// With max_reservation A gets a reservation (estimated_start_time and
// estimated_exec_host in qstat -f, the MONITOR file sched_priv/schedule),
// starts no later than one scheduler cycle after its planned start, no
// B(i) queued after it starts before it, and C backfills into the gap
// before it. Without reservations (TORQUE's FIFO) the B(i) keep taking
// the free slot and A starves while the stream lasts.
func TestStarvationEndToEnd(t *testing.T) {
	c := newSchedCluster(t)
	c.qmgr("create queue resv queue_type = execution", "set queue resv enabled = true", "set queue resv started = true",
		"set server default_queue = resv")
	const iteration = 2 // scheduler_iteration, seconds
	for _, tc := range []struct {
		name        string
		schedConfig string
		reserve     bool
	}{
		{"reservation", "max_reservation: 4\nduration_offset: 0\nparams: MONITOR\n", true},
		{"fifo", "help_starving_jobs: false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.qmgr("set server scheduling = false", "set node localhost np = 2")
			c.startScheduler(tc.schedConfig, nil)
			c.accounting()
			c.qmgr("set server scheduling = true")
			bJob := func(i int) e2eJob {
				return e2eJob{name: fmt.Sprintf("B%d", i), user: i % 2, args: []string{"-l", "nodes=1:ppn=1,walltime=00:00:10"}, sleep: "8"}
			}
			var mu sync.Mutex
			order := []string{} // submission order after A
			names := map[string]string{}
			submit := func(j e2eJob) string {
				id := c.submit(j)
				mu.Lock()
				names[id] = j.name
				mu.Unlock()
				return id
			}
			submit(bJob(0))
			time.Sleep(4 * time.Second)
			submit(bJob(1))
			c.waitFor("B0 and B1 to run", 20*time.Second, func() bool { return c.runningCount() == 2 })
			aArgs := []string{"-l", "nodes=1:ppn=2,walltime=00:00:05"}
			if tc.reserve {
				aArgs = append(aArgs, "-W", "reserve=y")
			}
			a := submit(e2eJob{name: "A", args: aArgs, sleep: "3"})
			cJob := submit(e2eJob{name: "C", user: 1, args: []string{"-l", "nodes=1:ppn=1,walltime=00:00:03"}, sleep: "1"})
			var planned int64
			if tc.reserve {
				c.waitFor("A's reservation", 20*time.Second, func() bool {
					planned, _ = strconv.ParseInt(c.jobAttr(a, "estimated_start_time"), 10, 64)
					return planned > 0
				})
				if hosts := c.jobAttr(a, "estimated_exec_host"); hosts != "localhost:ppn=2" {
					t.Errorf("estimated_exec_host = %q, want localhost:ppn=2", hosts)
				}
				if got := c.jobAttr(a, "reserve"); got != "y" {
					t.Errorf("reserve = %q in qstat -f", got)
				}
			}
			// the stream goes on: B2... every 4 s
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 2; i < 9; i++ {
					select {
					case <-stop:
						return
					case <-time.After(4 * time.Second):
					}
					id := submit(bJob(i))
					mu.Lock()
					order = append(order, id)
					mu.Unlock()
				}
			}()
			started := map[string]time.Time{}
			var startOrder []string
			c.waitFor("A to start or the stream to end", 60*time.Second, func() bool {
				for _, r := range c.accounting() {
					if r.kind == "S" {
						if _, ok := started[r.id]; !ok {
							started[r.id] = time.Now()
							startOrder = append(startOrder, r.id)
						}
					}
				}
				mu.Lock()
				streamDone := len(order) == 7
				mu.Unlock()
				_, aStarted := started[a]
				return aStarted && tc.reserve || streamDone
			})
			close(stop)
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			pos := func(id string) int {
				for i, x := range startOrder {
					if x == id {
						return i
					}
				}
				return len(startOrder)
			}
			if !tc.reserve {
				overtook := 0
				for _, id := range order {
					if pos(id) < pos(a) {
						overtook++
					}
				}
				if overtook < 3 {
					t.Errorf("FIFO: only %d B jobs queued after A started before it (start order %v): A did not starve", overtook, startOrder)
				}
				return
			}
			if pos(a) == len(startOrder) {
				t.Fatalf("A never started (start order %v)", startOrder)
			}
			for _, id := range order {
				if pos(id) < pos(a) {
					t.Errorf("%s (queued after A) started before A: start order %v", names[id], startOrder)
				}
			}
			if pos(cJob) > pos(a) {
				t.Errorf("C did not backfill before A: start order %v", startOrder)
			}
			aStart := c.jobStartTime(a)
			if aStart > planned+iteration {
				t.Errorf("A started at %d, planned %d: later than one cycle (%d s)", aStart, planned, iteration)
			}
			sched, err := os.ReadFile(filepath.Join(c.schedHome, "sched_priv", "schedule"))
			if err != nil || !strings.Contains(string(sched), a+":1:RESERVING:"+strconv.FormatInt(planned, 10)+":5:H:localhost:slots:2.000000\n") ||
				!strings.Contains(string(sched), "::::::::\n") {
				t.Errorf("MONITOR file: %v\n%s", err, sched)
			}
			c.waitFor("the jobs to end", 60*time.Second, func() bool { return c.runningCount() == 0 && c.queuedCount() == 0 })
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
