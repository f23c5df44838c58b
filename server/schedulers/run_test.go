package schedulers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/server/store"
)

// fakeHost records cycles; each cycle lasts hold.
type fakeHost struct {
	hold   time.Duration
	events atomic.Int64

	mu      sync.Mutex
	cycles  map[string][]int // scheduler → commands
	active  map[string]int   // scheduler → cycles in progress
	overlap bool             // two schedulers cycled at once
	twice   bool             // one scheduler had two cycles at once
}

func (h *fakeHost) Cycle(s *Sched, cmd int) (int, bool) {
	h.mu.Lock()
	h.cycles[s.Name] = append(h.cycles[s.Name], cmd)
	h.active[s.Name]++
	if h.active[s.Name] > 1 {
		h.twice = true
	}
	n := 0
	for _, v := range h.active {
		n += v
	}
	if n > 1 {
		h.overlap = true
	}
	h.mu.Unlock()
	time.Sleep(h.hold)
	h.mu.Lock()
	h.active[s.Name]--
	h.mu.Unlock()
	return 0, true
}

func (h *fakeHost) Events([]string) int64       { return h.events.Load() }
func (h *fakeHost) Save(...store.Op)            {}
func (h *fakeHost) Logf(string, string, ...any) {}

func (h *fakeHost) count(name string, cmd int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.cycles[name] {
		if c == cmd {
			n++
		}
	}
	return n
}

// TestSupervisorCycles drives two schedulers of another host (no
// process to start) through a fake server: each gets its first cycle, a
// "new" cycle for job events, the two run in parallel, and neither ever
// has two cycles at once.
func TestSupervisorCycles(t *testing.T) {
	tab := NewTable(Env{Home: t.TempDir(), Host: "srv", User: "root", DefaultPort: 15004})
	for _, name := range []string{"s1", "s2"} {
		ch := tab.Manage(&batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: name,
			Attrs: batchreq.AttrList{batchreq.NewAttr("host", "other"), batchreq.NewAttr("partitions", "p"+name),
				batchreq.NewAttr("scheduling", "true")}}, nil)
		if ch.Reply != nil {
			t.Fatalf("create %s: %+v", name, ch.Reply)
		}
	}
	h := &fakeHost{hold: 200 * time.Millisecond, cycles: map[string][]int{}, active: map[string]int{}}
	sv := NewSupervisor(tab, h, RunConfig{Local: func(string) bool { return false }, Tick: 20 * time.Millisecond})
	sv.Start()
	defer sv.Stop(false)
	waitFor(t, "first cycles", func() bool {
		return h.count("s1", batchreq.SCH_SCHEDULE_FIRST) == 1 && h.count("s2", batchreq.SCH_SCHEDULE_FIRST) == 1
	})
	for i := 0; i < 5; i++ {
		h.events.Add(1)
		sv.Poke()
		time.Sleep(30 * time.Millisecond)
	}
	waitFor(t, "new cycles", func() bool {
		return h.count("s1", batchreq.SCH_SCHEDULE_NEW) >= 1 && h.count("s2", batchreq.SCH_SCHEDULE_NEW) >= 1
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.twice {
		t.Error("a scheduler had two cycles at once")
	}
	if !h.overlap {
		t.Error("the two schedulers never cycled at the same time")
	}
	// five pokes during 200 ms cycles collapse into few cycles
	if n := len(h.cycles["s1"]); n > 4 {
		t.Errorf("s1 ran %d cycles for one start and five events: %v", n, h.cycles["s1"])
	}
	if st, _ := tab.Status("s1", batchreq.StatusNames("state"), Mirror{}); len(st) != 1 {
		t.Errorf("status of s1: %+v", st)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSliceAndRules(t *testing.T) {
	var none *Slice
	def := &Slice{Name: DefaultName, Default: true}
	s1 := &Slice{Name: "s1", parts: map[string]bool{"p1": true}}
	for _, tc := range []struct {
		v    *Slice
		p    string
		want bool
	}{{none, "p1", true}, {none, "", true}, {def, "", true}, {def, "p1", false}, {s1, "p1", true}, {s1, "p2", false}, {s1, "", false}} {
		if got := tc.v.Sees(tc.p); got != tc.want {
			t.Errorf("%v.Sees(%q) = %v", tc.v, tc.p, got)
		}
	}
	qp := func(q string) (string, bool) {
		return map[string]string{"q1": "p1", "q2": ""}[q], q == "q1" || q == "q2"
	}
	for _, tc := range []struct {
		u    NodeUpdate
		code int
	}{
		{NodeUpdate{NewPart: "p1", NewQueue: "q1", QueuePart: qp}, 0},
		{NodeUpdate{OldPart: "p1", NewPart: "p2", OldQueue: "q1", NewQueue: "q1", QueuePart: qp}, batchreq.PBSE_QUE_NOT_IN_PART},
		{NodeUpdate{OldPart: "p2", NewPart: "p2", NewQueue: "q1", QueuePart: qp}, batchreq.PBSE_PART_NOT_IN_QUE},
		{NodeUpdate{NewQueue: "q3", QueuePart: qp}, batchreq.PBSE_UNKQUE},
		{NodeUpdate{NewPart: "p9", QueuePart: qp}, 0},
	} {
		p := CheckNode(tc.u)
		if code := 0; p != nil {
			code = p.Code
			if code != tc.code {
				t.Errorf("CheckNode(%+v) = %d, want %d", tc.u, code, tc.code)
			}
		} else if tc.code != 0 {
			t.Errorf("CheckNode(%+v) = ok, want %d", tc.u, tc.code)
		}
	}
	for _, tc := range []struct {
		u    QueueUpdate
		code int
	}{
		{QueueUpdate{OldRoute: true, NewRoute: true, NewPart: "p1"}, batchreq.PBSE_ROUTE_QUE_NO_PART},
		{QueueUpdate{OldPart: "p1", NewPart: "p1", NewRoute: true}, batchreq.PBSE_CANNOT_SET_ROUTE},
		{QueueUpdate{OldPart: "p1", NewPart: "p2", NodeParts: []string{"p1"}}, batchreq.PBSE_INVALID_PART_QUE},
		{QueueUpdate{NewPart: "p1", NodeParts: []string{"p1"}}, 0},
	} {
		p := CheckQueue(tc.u)
		switch {
		case p == nil && tc.code != 0:
			t.Errorf("CheckQueue(%+v) = ok, want %d", tc.u, tc.code)
		case p != nil && p.Code != tc.code:
			t.Errorf("CheckQueue(%+v) = %d, want %d", tc.u, p.Code, tc.code)
		}
	}
}

// TestSupervisorRefusesBadDirectories: a scheduler whose sched_priv
// fails the checks is not started; its comment says why and its
// scheduling goes off (seed 003, interface 2).
func TestSupervisorRefusesBadDirectories(t *testing.T) {
	home := t.TempDir()
	tab := NewTable(Env{Home: home, Host: "srv", User: "root", DefaultPort: 15004})
	h := &fakeHost{cycles: map[string][]int{}, active: map[string]int{}}
	sv := NewSupervisor(tab, h, RunConfig{Command: "/nonexistent/pbs_sched", Tick: 20 * time.Millisecond})
	sv.Start()
	defer sv.Stop(false)
	if err := os.MkdirAll(filepath.Join(home, "empty"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ priv, comment string }{
		{filepath.Join(home, "missing"), CommentPrivChecks + ": "},
		{filepath.Join(home, "empty"), CommentPrivAccess},
	} {
		name := "s" + strconv.Itoa(len(tc.priv))
		ch := tab.Manage(&batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: name,
			Attrs: batchreq.AttrList{batchreq.NewAttr("sched_priv", tc.priv), batchreq.NewAttr("partitions", "p"+name),
				batchreq.NewAttr("scheduling", "true")}}, nil)
		if ch.Reply != nil {
			t.Fatalf("create %s: %+v", name, ch.Reply)
		}
		sv.Changed(name)
		waitFor(t, name+" refused", func() bool {
			s := tab.Get(name)
			return !s.Scheduling && strings.HasPrefix(s.Comment, tc.comment)
		})
		h.mu.Lock()
		if len(h.cycles[name]) != 0 {
			t.Errorf("%s cycled: %v", name, h.cycles[name])
		}
		h.mu.Unlock()
	}
}
