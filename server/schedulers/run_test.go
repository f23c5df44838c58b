package schedulers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/server/store"
)

// fakeHost records what the Supervisor hands to the server.
type fakeHost struct {
	mu      sync.Mutex
	runs    map[string][]int // scheduler → commands asked for with Run
	stopped map[string]int   // scheduler → Stopped calls
}

func newFakeHost() *fakeHost {
	return &fakeHost{runs: map[string][]int{}, stopped: map[string]int{}}
}

func (h *fakeHost) Run(s *Sched, cmd int) {
	h.mu.Lock()
	h.runs[s.Name] = append(h.runs[s.Name], cmd)
	h.mu.Unlock()
}

func (h *fakeHost) Stopped(name string) {
	h.mu.Lock()
	h.stopped[name]++
	h.mu.Unlock()
}

func (h *fakeHost) Save(...store.Op)            {}
func (h *fakeHost) Logf(string, string, ...any) {}

func (h *fakeHost) count(name string, cmd int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.runs[name] {
		if c == cmd {
			n++
		}
	}
	return n
}

// TestSupervisorHandsOver drives two schedulers of another host (no
// process to start) through a fake server: each is handed to the
// server's link once with its first cycle, a change of its object asks
// for a "command" cycle, and scheduling set to false takes it from the
// link. (Their cycles, in parallel and never two of one at once, are
// the link's: server/link/sched TestSeveralSchedulersCycle.)
func TestSupervisorHandsOver(t *testing.T) {
	tab := NewTable(Env{Home: t.TempDir(), Host: "srv", User: "root", DefaultPort: 15004})
	for _, name := range []string{"s1", "s2"} {
		ch := tab.Manage(&batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: name,
			Attrs: batchreq.AttrList{batchreq.NewAttr("host", "other"), batchreq.NewAttr("partitions", "p"+name),
				batchreq.NewAttr("scheduling", "true")}}, nil)
		if ch.Reply != nil {
			t.Fatalf("create %s: %+v", name, ch.Reply)
		}
	}
	h := newFakeHost()
	sv := NewSupervisor(tab, h, RunConfig{Local: func(string) bool { return false }, Tick: 20 * time.Millisecond})
	sv.Start()
	defer sv.Stop(false)
	waitFor(t, "hand-over", func() bool {
		return h.count("s1", batchreq.SCH_SCHEDULE_FIRST) == 1 && h.count("s2", batchreq.SCH_SCHEDULE_FIRST) == 1
	})
	if ch := tab.Manage(&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: "s1",
		Attrs: batchreq.AttrList{batchreq.NewAttr("partitions", "ps1,px")}}, nil); ch.Reply != nil {
		t.Fatalf("set: %+v", ch.Reply)
	}
	sv.Changed("s1")
	waitFor(t, "command cycle", func() bool { return h.count("s1", batchreq.SCH_SCHEDULE_CMD) == 1 })
	if ch := tab.Manage(&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: "s2",
		Attrs: batchreq.AttrList{batchreq.NewAttr("scheduling", "false")}}, nil); ch.Reply != nil {
		t.Fatalf("set: %+v", ch.Reply)
	}
	sv.Changed("s2")
	waitFor(t, "s2 taken from the link", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.stopped["s2"] == 1
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.runs["s1"]); n != 2 {
		t.Errorf("s1 handed over %d times (%v), want first and command", n, h.runs["s1"])
	}
	if n := len(h.runs["s2"]); n != 1 || h.stopped["s1"] != 0 {
		t.Errorf("s2 runs %v, s1 stopped %d times", h.runs["s2"], h.stopped["s1"])
	}
	if st, _ := tab.Status("s2", batchreq.StatusNames("state"), Mirror{}); len(st) != 1 || st[0].Attrs[0].Value != StateDown {
		t.Errorf("status of s2: %+v", st)
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
	h := newFakeHost()
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
		if len(h.runs[name]) != 0 {
			t.Errorf("%s handed to the link: %v", name, h.runs[name])
		}
		h.mu.Unlock()
	}
}

// TestSupervisorUnpartitioned: a scheduler other than the default one
// without partition is started, shuts itself down after saying so (seed
// 003, interface 2), and is not started again until it has a partition.
func TestSupervisorUnpartitioned(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the Supervisor starts schedulers as their sched_user, root here: run as root")
	}
	home := t.TempDir()
	starts := filepath.Join(home, "starts")
	// The scheduler stand-in notes its start and exits, as pbs_sched does
	// at its first cycle when its object has no partition; once the file
	// stay exists (it has one) it goes on running.
	cmd := filepath.Join(home, "pbs_sched")
	stay := filepath.Join(home, "stay")
	script := "#!/bin/sh\necho started >> " + starts + "\n[ -f " + stay + " ] && exec sleep 600\nexit 0\n"
	if err := os.WriteFile(cmd, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tab := NewTable(Env{Home: home, Host: "srv", User: "root", DefaultPort: 15004})
	h := newFakeHost()
	sv := NewSupervisor(tab, h, RunConfig{Command: cmd, Tick: 20 * time.Millisecond, RestartDelay: time.Millisecond,
		Local: func(string) bool { return true }})
	sv.Start()
	defer sv.Stop(true)
	priv := filepath.Join(home, "sched_priv_s1")
	if err := os.MkdirAll(priv, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(priv, "sched_config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	manage := func(cmd int, attrs ...batchreq.Attr) {
		t.Helper()
		if ch := tab.Manage(&batchreq.Manage{Command: cmd, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: "s1", Attrs: attrs}, nil); ch.Reply != nil {
			t.Fatalf("manage s1: %+v", ch.Reply)
		}
		sv.Changed("s1")
	}
	startCount := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "started")
	}
	manage(batchreq.MGR_CMD_CREATE, batchreq.NewAttr("scheduling", "true"))
	waitFor(t, "the comment of a scheduler without partition", func() bool { return tab.Get("s1").Comment == CommentNoPartition })
	// A change that gives it no partition does not start it again.
	manage(batchreq.MGR_CMD_SET, batchreq.NewAttr("scheduler_iteration", "30"))
	if err := os.WriteFile(stay, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	manage(batchreq.MGR_CMD_SET, batchreq.NewAttr("partitions", "p1"))
	waitFor(t, "the start with a partition", func() bool { return startCount() >= 2 })
	if n := startCount(); n != 2 {
		t.Errorf("started %d times, want once without partition and once with", n)
	}
	if s := tab.Get("s1"); !s.Scheduling || s.Comment != "" {
		t.Errorf("scheduling turned off, or the comment kept: %+v", s)
	}
}
