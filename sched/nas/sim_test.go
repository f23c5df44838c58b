package nas

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gopbs/sched/nas/config"
	"gopbs/sched/policy"
	"gopbs/sched/world"
)

// This file is the test harness: a world on one node of np VPs whose
// queues and jobs the tests describe, and a simulated clock. Each step
// runs one NAS cycle with the FIFO package's Simulator as the Actions
// (which records every call and allocates VPs), then carries the moves,
// runs and deletions out in the world, as the server would. Advancing
// the clock ends the running jobs whose walltime is over. Nothing
// sleeps.

// harness is a simulated batch system driven by a NAS Scheduler.
type harness struct {
	t     *testing.T
	s     *Scheduler
	w     *world.World
	node  *world.Node
	calls []string // every action of every cycle
	jobs  []*world.Job
	gone  map[*world.Job]bool // deleted or finished
	logs  []string
	ids   int
	// runErr makes RunJob of the named jobs fail.
	runErr map[string]error
}

// logRecorder collects log lines.
type logRecorder struct{ lines *[]string }

func (l logRecorder) Log(event int, class, object, text string) {
	*l.lines = append(*l.lines, object+": "+text)
}

// monday9 is Monday 2026-11-23 09:00 UTC: prime time in the tests.
var monday9 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func newHarness(t *testing.T, cfgText string, np int, now time.Time) *harness {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(cfgText), "config")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, gone: map[*world.Job]bool{}, node: &world.Node{Name: "n1", NP: np, State: world.NodeFree, MomOK: true, NCPUs: np, LoadAve: 0}}
	h.w = &world.World{Now: now, Server: world.FromServer("srv", nil), Nodes: []*world.Node{h.node}}
	h.s = New(cfg, logRecorder{&h.logs})
	h.s.Location = time.UTC
	return h
}

// queue adds a queue: attrs are "name=value" or "name.resource=value"
// attributes of StatusQue (queue_type defaults to Execution, started to
// True).
func (h *harness) queue(name string, attrs ...string) *world.Queue {
	list := []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}}
	for _, a := range attrs {
		k, v, _ := strings.Cut(a, "=")
		n, r, _ := strings.Cut(k, ".")
		list = append(list, world.Attr{Name: n, Resource: r, Value: v})
	}
	q := world.FromQueue(name, list)
	h.w.Queues = append(h.w.Queues, q)
	return q
}

func (h *harness) q(name string) *world.Queue {
	for _, q := range h.w.Queues {
		if q.Name == name {
			return q
		}
	}
	h.t.Fatalf("no queue %s", name)
	return nil
}

// job queues a job in queue; opts edit it (resources as "walltime=1:00:00").
func (h *harness) job(queue, user string, res ...string) *world.Job {
	h.ids++
	j := &world.Job{ID: fmt.Sprintf("%d.srv", h.ids), Queue: h.q(queue), State: 'Q', User: user, Group: user,
		QTime: h.w.Now, ETime: h.w.Now, CPUT: -1, Walltime: -1, Mem: -1, NCPUs: -1, NodeCt: -1, UsedCPUT: -1,
		Request: map[string]string{}}
	for _, r := range res {
		k, v, _ := strings.Cut(r, "=")
		j.Request[k] = v
		switch k {
		case "walltime":
			j.Walltime, _ = world.ParseDuration(v)
		case "nodes":
			j.Nodes = v
		case "ncpus":
			fmt.Sscan(v, &j.NCPUs)
		}
	}
	j.Queue.Jobs = append(j.Queue.Jobs, j)
	h.jobs = append(h.jobs, j)
	return j
}

// sync puts each job in the job list of its queue, as the server's next
// status replies would, without the deleted and finished ones.
func (h *harness) sync() {
	for _, q := range h.w.Queues {
		q.Jobs = q.Jobs[:0]
	}
	keep := h.jobs[:0]
	for _, j := range h.jobs {
		if h.gone[j] {
			continue
		}
		keep = append(keep, j)
		j.Queue.Jobs = append(j.Queue.Jobs, j)
	}
	h.jobs = keep
}

// find returns the job with id.
func (h *harness) find(id string) *world.Job {
	for _, q := range h.w.Queues {
		for _, j := range q.Jobs {
			if j.ID == id {
				return j
			}
		}
	}
	return nil
}

// cycle runs one cycle at the current time and applies its actions; it
// returns the calls of this cycle.
func (h *harness) cycle() []string {
	h.t.Helper()
	sim := policy.NewSimulator(h.w)
	sim.RunError = h.runErr
	act := &applier{Simulator: sim, h: h}
	h.s.Cycle(h.w, act)
	h.sync()
	h.calls = append(h.calls, sim.Calls...)
	return sim.Calls
}

// applier carries the Simulator's actions out in the world.
type applier struct {
	*policy.Simulator
	h *harness
}

// MoveJob checks that the queue exists; the policy sets the job's Queue
// and sync moves it between job lists after the cycle.
func (a *applier) MoveJob(j *world.Job, queue string) error {
	a.h.q(queue)
	return a.Simulator.MoveJob(j, queue)
}

func (a *applier) RunJob(j *world.Job, dest string) error {
	if err := a.Simulator.RunJob(j, dest); err != nil {
		return err
	}
	j.State, j.StartTime = 'R', a.h.w.Now
	return nil
}

func (a *applier) DeleteJob(j *world.Job, msg string) error {
	a.Simulator.DeleteJob(j, msg)
	a.h.gone[j] = true
	return nil
}

func (a *applier) SetComment(j *world.Job, text string) error {
	a.Simulator.SetComment(j, text)
	j.MTime = a.h.w.Now
	return nil
}

// advance moves the clock on by d, ending the running jobs whose
// walltime is over (freeing their VPs).
func (h *harness) advance(d time.Duration) {
	h.w.Now = h.w.Now.Add(d)
	for _, j := range h.jobs {
		if j.State == 'R' && !h.gone[j] && !j.StartTime.Add(j.Walltime).After(h.w.Now) {
			h.node.UsedSlots -= jobSize(j)
			h.gone[j] = true
		}
	}
	h.sync()
	if h.node.UsedSlots < 0 {
		h.node.UsedSlots = 0
	}
}

// started returns the ids of the jobs run by the recorded calls, in
// order.
func started(calls []string) []string {
	var out []string
	for _, c := range calls {
		if f := strings.Fields(c); len(f) == 2 && f[0] == "run" {
			out = append(out, f[1])
		}
	}
	return out
}

// has reports whether calls include one with prefix p.
func has(calls []string, p string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	return false
}

func (h *harness) logged(sub string) bool {
	for _, l := range h.logs {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}
