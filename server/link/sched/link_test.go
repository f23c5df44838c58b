package sched

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/server/monitor"
	"gopbs/server/pbslog"
)

// fakeSched is one scheduler of a fakeServer: its settings, and a
// listener that records the commands it is sent.
type fakeSched struct {
	on     bool
	events int64
	accum  time.Duration
	ln     net.Listener
	cmds   chan int
}

// fakeServer is the server as the link sees it, with a clock the test
// moves. A cycle's Serve waits until the test releases it (gate), so
// that the test sees which cycles are in progress at once.
type fakeServer struct {
	t *testing.T

	mu      sync.Mutex
	now     time.Time
	scheds  map[string]*fakeSched
	active  map[string]int
	twice   bool        // one scheduler had two cycles at once
	entered chan string // a cycle's Serve began
	served  chan string // a cycle's Serve ended
	gate    map[string]chan struct{}
	states  []string            // CycleState calls, "name active reached"
	jobs    map[string][]string // Unreachable's waiting jobs
}

func newFakeServer(t *testing.T) *fakeServer {
	return &fakeServer{t: t, now: time.Unix(1800000000, 0), scheds: map[string]*fakeSched{}, active: map[string]int{},
		entered: make(chan string, 100), served: make(chan string, 100), gate: map[string]chan struct{}{},
		jobs: map[string][]string{}}
}

// add adds a scheduler with scheduling on, listening on a loopback port
// (or, with dead, a port nothing listens on).
func (f *fakeServer) add(name string, dead bool) Scheduler {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	fs := &fakeSched{on: true, ln: ln, cmds: make(chan int, 100)}
	if dead {
		ln.Close()
	} else {
		f.t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				cmd, err := batchreq.ReadSchedCommand(nc)
				if err == nil {
					fs.cmds <- cmd
				}
				go func() { io.Copy(io.Discard, nc); nc.Close() }() // until the server closes
			}
		}()
	}
	f.mu.Lock()
	f.scheds[name] = fs
	f.gate[name] = make(chan struct{}, 100)
	f.mu.Unlock()
	return Scheduler{Name: name, Host: "127.0.0.1", Port: port}
}

func (f *fakeServer) sched(name string) *fakeSched {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scheds[name]
}

func (f *fakeServer) Scheduling(name string) (bool, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.scheds[name]; s != nil {
		return s.on, s.events
	}
	return false, 0
}
func (f *fakeServer) Iteration(string) int64 { return 600 }
func (f *fakeServer) Accumulation(name string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scheds[name].accum
}
func (f *fakeServer) ShuttingDown() bool { return false }
func (f *fakeServer) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}
func (f *fakeServer) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}
func (f *fakeServer) event(name string) {
	f.mu.Lock()
	f.scheds[name].events++
	f.mu.Unlock()
}
func (f *fakeServer) release(name string) { f.gate[name] <- struct{}{} }

func (f *fakeServer) CycleConn(name string, nc net.Conn, _ *Cycle) (Conn, bool) {
	return fakeConn{f, name, nc}, true
}
func (f *fakeServer) CycleState(name string, active, reached bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := name
	switch {
	case !reached:
		st += " down"
	case active:
		st += " scheduling"
	default:
		st += " idle"
	}
	f.states = append(f.states, st)
}
func (f *fakeServer) Unreachable(name string) (string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "p_" + name, f.jobs[name]
}

type fakeConn struct {
	f    *fakeServer
	name string
	nc   net.Conn
}

func (c fakeConn) Serve() {
	f := c.f
	f.mu.Lock()
	f.active[c.name]++
	if f.active[c.name] > 1 {
		f.twice = true
	}
	gate := f.gate[c.name]
	f.mu.Unlock()
	f.entered <- c.name
	<-gate
	f.mu.Lock()
	f.active[c.name]--
	f.mu.Unlock()
	c.nc.Close()
	f.served <- c.name
}

func newLink(t *testing.T, f *fakeServer, scheds ...Scheduler) (*Link, string) {
	logPath := filepath.Join(t.TempDir(), "server_log")
	lg, err := pbslog.NewLoggerFile(logPath, "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	l := New(f, lg, "srv", monitor.Discard{}, scheds...)
	done := make(chan struct{})
	t.Cleanup(func() { close(done); lg.Close() })
	l.Start(done)
	return l, logPath
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}

// idle waits until no cycle is being started or served; with nothing
// pending no cycle can start after it.
func idle(t *testing.T, l *Link) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pending := false
		for _, sc := range l.list() {
			sc.mu.Lock()
			pending = pending || sc.busy || sc.pending != batchreq.SCH_SCHEDULE_NULL
			sc.mu.Unlock()
		}
		if !pending {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the link never became idle")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSeveralSchedulersCycle: the link runs the cycles of the default
// scheduler and of two schedulers of partitions, one worker each: the
// three are in their cycles at the same time, a scheduler never has two
// cycles at once, job events during a cycle make one more cycle after
// it, and a job event reaches only the schedulers whose partitions it
// is in.
func TestSeveralSchedulersCycle(t *testing.T) {
	f := newFakeServer(t)
	l, _ := newLink(t, f, f.add(DefaultName, false)) // the default's first cycle
	s1, s2 := f.add("s1", false), f.add("s2", false)
	l.Run(s1, batchreq.SCH_SCHEDULE_FIRST)
	l.Run(s2, batchreq.SCH_SCHEDULE_FIRST)
	in := map[string]bool{}
	for len(in) < 3 {
		in[recv(t, f.entered, "cycle")] = true // all three in a cycle at once: each waits for release
	}
	for _, n := range []string{DefaultName, "s1", "s2"} {
		if cmd := recv(t, f.sched(n).cmds, n+" command"); cmd != batchreq.SCH_SCHEDULE_FIRST {
			t.Errorf("%s: command %d, want first", n, cmd)
		}
	}
	// job events of s1's partitions while all three cycle
	f.event("s1")
	l.Notify(batchreq.SCH_SCHEDULE_NEW)
	f.event("s1")
	l.Notify(batchreq.SCH_SCHEDULE_NEW)
	for _, n := range []string{DefaultName, "s1", "s2"} {
		f.release(n)
		recv(t, f.served, "end of a cycle")
	}
	// one more cycle for the default (TORQUE's trigger) and for s1
	// (its events), none for s2
	for _, n := range []string{DefaultName, "s1"} {
		if cmd := recv(t, f.sched(n).cmds, n+" second command"); cmd != batchreq.SCH_SCHEDULE_NEW {
			t.Errorf("%s: second command %d, want new", n, cmd)
		}
		f.release(n)
	}
	idle(t, l)
	if n := len(f.sched("s2").cmds); n != 0 {
		t.Errorf("s2 was sent %d more commands for events not in its partitions", n)
	}
	if n := len(f.sched("s1").cmds) + len(f.sched(DefaultName).cmds); n != 0 {
		t.Errorf("%d more commands: two triggers during a cycle make one cycle", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.twice {
		t.Error("a scheduler had two cycles at once")
	}
	if !l.Serves("s1") || l.Active() {
		t.Errorf("serves s1 %v, default active %v", l.Serves("s1"), l.Active())
	}
}

// TestJobAccumulation: with job_accumulation_time, a cycle asked for by
// job events waits that long (in the server's clock) for more of them,
// and then one cycle takes them all; other cycles go at once.
func TestJobAccumulation(t *testing.T) {
	f := newFakeServer(t)
	l, _ := newLink(t, f)
	s1 := f.add("s1", false)
	l.Run(s1, batchreq.SCH_SCHEDULE_FIRST)
	recv(t, f.entered, "first cycle")
	f.release("s1")
	recv(t, f.served, "end of the first cycle")
	if cmd := recv(t, f.sched("s1").cmds, "command"); cmd != batchreq.SCH_SCHEDULE_FIRST {
		t.Fatalf("command %d", cmd)
	}
	idle(t, l)
	f.mu.Lock()
	f.scheds["s1"].accum = 30 * time.Second
	f.mu.Unlock()

	f.event("s1") // a job queued at t0
	l.Notify(batchreq.SCH_SCHEDULE_NEW)
	l.Tick()
	f.advance(20 * time.Second)
	f.event("s1") // another at t0+20 s
	l.Notify(batchreq.SCH_SCHEDULE_NEW)
	f.event("s1") // one the tick finds at t0+29 s
	f.advance(9 * time.Second)
	l.Tick()
	idle(t, l)
	if n := len(f.sched("s1").cmds); n != 0 {
		t.Fatalf("%d cycles before job_accumulation_time passed", n)
	}
	f.advance(time.Second) // t0+30 s
	l.Tick()
	if cmd := recv(t, f.sched("s1").cmds, "accumulated cycle"); cmd != batchreq.SCH_SCHEDULE_NEW {
		t.Errorf("command %d, want new", cmd)
	}
	f.release("s1")
	recv(t, f.served, "end of the accumulated cycle")
	f.advance(time.Second)
	l.Tick()
	idle(t, l)
	if n := len(f.sched("s1").cmds); n != 0 {
		t.Errorf("%d more cycles: the three events make one", n)
	}
	// a change of the object asks at once
	l.Request("s1", batchreq.SCH_SCHEDULE_CMD)
	if cmd := recv(t, f.sched("s1").cmds, "command cycle"); cmd != batchreq.SCH_SCHEDULE_CMD {
		t.Errorf("command %d, want command", cmd)
	}
	f.release("s1")
	recv(t, f.served, "end of the command cycle")
}

// TestUnreachablePartitionScheduler: a scheduler of partitions that
// cannot be reached is DOWN, and the server log names its partitions
// and, once per outage, each job waiting in them (seed 003, interface
// 4); Remove takes it from the link.
func TestUnreachablePartitionScheduler(t *testing.T) {
	f := newFakeServer(t)
	l, logPath := newLink(t, f)
	s1 := f.add("s1", true)
	f.mu.Lock()
	f.jobs["s1"] = []string{"1.srv", "2.srv"}
	f.mu.Unlock()
	l.Run(s1, batchreq.SCH_SCHEDULE_FIRST)
	idle(t, l)
	f.mu.Lock()
	f.jobs["s1"] = []string{"1.srv", "2.srv", "3.srv"}
	f.mu.Unlock()
	f.event("s1")
	l.Notify(batchreq.SCH_SCHEDULE_NEW)
	idle(t, l)
	l.Remove("s1")
	if l.Serves("s1") {
		t.Error("s1 still served after Remove")
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for line, want := range map[string]int{
		"Could not contact Scheduler s1 - port":                          2,
		"Unable to reach scheduler associated with partition p_s1":       2,
		";Job;1.srv;Unable to reach scheduler associated with job 1.srv": 1,
		";Job;2.srv;Unable to reach scheduler associated with job 2.srv": 1,
		";Job;3.srv;Unable to reach scheduler associated with job 3.srv": 1,
	} {
		if n := strings.Count(log, line); n != want {
			t.Errorf("%q %d times, want %d:\n%s", line, n, want, log)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if want := []string{"s1 scheduling", "s1 down", "s1 scheduling", "s1 down"}; strings.Join(f.states, ",") != strings.Join(want, ",") {
		t.Errorf("states %v, want %v", f.states, want)
	}
}
