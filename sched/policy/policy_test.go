// Tests of the cycle as a whole (policy.go): comments and the order of
// requests on the wire, deletion of jobs that can never run, run
// failures and log messages; and the world builders and helpers the
// package's tests share.

package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/world"
)

var now = time.Date(2026, 11, 22, 1, 24, 0, 0, time.UTC)

// builder makes synthetic worlds.
type builder struct{ w *world.World }

func newWorld(nodes, np int) *builder {
	w := &world.World{Now: now, Server: world.FromServer("srv", nil)}
	for i := 0; i < nodes; i++ {
		w.Nodes = append(w.Nodes, &world.Node{Name: "n" + string(rune('a'+i)), NP: np, State: world.NodeFree})
	}
	return &builder{w}
}

func (b *builder) queue(name string, prio int) *world.Queue {
	q := world.FromQueue(name, []world.Attr{{Name: "queue_type", Value: "Execution"}, {Name: "started", Value: "True"}})
	q.Priority = prio
	b.w.Queues = append(b.w.Queues, q)
	return q
}

type jobOpt func(*world.Job)

func user(u string) jobOpt  { return func(j *world.Job) { j.User, j.Group = u, u+"grp" } }
func group(g string) jobOpt { return func(j *world.Job) { j.Group = g } }
func nodes(s string) jobOpt { return func(j *world.Job) { j.Nodes = s } }
func cput(s int) jobOpt     { return func(j *world.Job) { j.CPUT = time.Duration(s) * time.Second } }
func wall(s int) jobOpt     { return func(j *world.Job) { j.Walltime = time.Duration(s) * time.Second } }
func prio(p int) jobOpt     { return func(j *world.Job) { j.Priority = p } }
func mem(m int64) jobOpt    { return func(j *world.Job) { j.Mem = m } }
func ncpus(n int64) jobOpt  { return func(j *world.Job) { j.NCPUs = n } }
func state(s byte) jobOpt   { return func(j *world.Job) { j.State = s } }
func queued(ago time.Duration) jobOpt {
	return func(j *world.Job) { j.QTime = now.Add(-ago) }
}

func (b *builder) job(q *world.Queue, id string, opts ...jobOpt) *world.Job {
	j := world.FromJob(id, q, []world.Attr{{Name: "job_state", Value: "Q"}})
	j.User, j.Group, j.Nodes = "alice", "users", "1"
	j.QTime = now.Add(-time.Minute)
	for _, o := range opts {
		o(j)
	}
	q.Jobs = append(q.Jobs, j)
	return j
}

func parseConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	c, errs, err := config.Parse(strings.NewReader(src), "sched_config")
	if err != nil || len(errs) != 0 {
		t.Fatalf("config: %v %v", err, errs)
	}
	return c
}

func runCycle(t *testing.T, s *Scheduler, b *builder) (*Simulator, Stats) {
	t.Helper()
	sim := NewSimulator(b.w)
	st := s.Cycle(b.w, sim)
	return sim, st
}

func started(sim *Simulator) []string {
	var out []string
	for _, c := range sim.Calls {
		if f := strings.Fields(c); f[0] == "run" && !strings.Contains(c, "(") {
			out = append(out, f[1])
		}
	}
	return out
}

func TestCommentsAndWireOrder(t *testing.T) {
	b := newWorld(1, 1)
	q := b.queue("batch", 0)
	b.job(q, "12.vm")
	b.job(q, "13.vm")
	s := New(&config.Config{}, nil)
	s.Location = time.UTC
	sim, st := runCycle(t, s, b)
	want := []string{
		"query 12.vm nodes=1",
		"comment 12.vm Job started on Sun Nov 22 at 01:24",
		"run 12.vm",
		"query 13.vm nodes=1",
		"comment 13.vm " + CommentNodes,
	}
	if !reflect.DeepEqual(sim.Calls, want) {
		t.Errorf("calls\n%q\nwant\n%q", sim.Calls, want)
	}
	if st.Started != 1 || st.Comments != 2 {
		t.Errorf("stats %+v", st)
	}
	// Next cycle: unchanged comment is not sent again.
	b.w.Queues[0].Jobs = b.w.Queues[0].Jobs[1:]
	sim2 := NewSimulator(b.w)
	s.Cycle(b.w, sim2)
	if want := []string{"query 13.vm nodes=1"}; !reflect.DeepEqual(sim2.Calls, want) {
		t.Errorf("second cycle calls %q", sim2.Calls)
	}
}

func TestNeverRunDeleted(t *testing.T) {
	b := newWorld(1, 2)
	q := b.queue("batch", 0)
	b.job(q, "huge", nodes("1:ppn=16"))
	sim, st := runCycle(t, New(&config.Config{}, nil), b)
	if st.Deleted != 1 || sim.Calls[len(sim.Calls)-1] != "delete huge "+MessageNeverRun {
		t.Errorf("calls %q", sim.Calls)
	}
}

func TestRunFailure(t *testing.T) {
	b := newWorld(1, 1)
	q := b.queue("batch", 0)
	j := b.job(q, "1")
	sim := NewSimulator(b.w)
	sim.RunError = map[string]error{"1": errors.New("Execution server rejected request")}
	New(&config.Config{}, nil).Cycle(b.w, sim)
	if j.Comment != "Not Running - PBS Error: Execution server rejected request" {
		t.Errorf("comment %q", j.Comment)
	}
}

type memLog struct{ lines []string }

func (m *memLog) Log(event int, class, object, text string) {
	m.lines = append(m.lines, class+";"+object+";"+text)
}

func TestLogMessages(t *testing.T) {
	b := newWorld(1, 1)
	q := b.queue("batch", 0)
	b.job(q, "1.vm")
	b.job(q, "2.vm")
	l := &memLog{}
	runCycle(t, New(&config.Config{}, l), b)
	want := []string{"Job;1.vm;Job Run", "Job;2.vm;" + LogNodes}
	if !reflect.DeepEqual(l.lines, want) {
		t.Errorf("log %q", l.lines)
	}
}

func req(name, value string) jobOpt {
	return func(j *world.Job) {
		if j.Request == nil {
			j.Request = map[string]string{}
		}
		j.Request[name] = value
	}
}

func slicesContain(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
