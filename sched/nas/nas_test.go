package nas

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/sched/nas/config"
	"gopbs/sched/world"
)

const twoQueues = "SUBMIT_QUEUE submit\nBATCH_QUEUES small,large\n"

// twoQueueHarness has a submit queue and two batch queues of different
// limits: small up to 10 minutes and 2 nodes, large up to 2 hours and 4
// nodes.
func twoQueueHarness(t *testing.T, extra string, np int) *harness {
	h := newHarness(t, twoQueues+extra, np, monday9)
	h.queue("submit", "resources_max.walltime=02:00:00", "resources_max.nodect=4")
	h.queue("small", "resources_max.walltime=00:10:00", "resources_max.nodect=2")
	h.queue("large", "resources_max.walltime=02:00:00", "resources_max.nodect=4")
	return h
}

func TestSubmitToBatchQueues(t *testing.T) {
	h := twoQueueHarness(t, "", 8)
	short := h.job("submit", "alice", "walltime=00:05:00")
	long := h.job("submit", "bob", "walltime=01:00:00")
	wide := h.job("submit", "bob", "walltime=00:05:00", "nodes=1:ppn=3")
	huge := h.job("submit", "carol", "walltime=05:00:00")
	calls := h.cycle()
	want := []string{
		"move 1.srv small", "comment 1.srv Started on Mon Nov 23 09:00:00 2026", "run 1.srv",
		"move 2.srv large", "comment 2.srv Started on Mon Nov 23 09:00:00 2026", "run 2.srv",
		"move 3.srv large", "comment 3.srv Started on Mon Nov 23 09:00:00 2026", "run 3.srv",
		"comment 4.srv " + MessageRejected, "delete 4.srv " + MessageRejected,
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls\n%q\nwant\n%q", calls, want)
	}
	if short.Queue.Name != "small" || long.Queue.Name != "large" || wide.Queue.Name != "large" || h.find(huge.ID) != nil {
		t.Errorf("queues %s %s %s", short.Queue.Name, long.Queue.Name, wide.Queue.Name)
	}
	if !h.logged("4.srv: " + MessageRejected) {
		t.Errorf("rejection not logged: %q", h.logs)
	}
}

func TestSpecialQueueJumpsTheLine(t *testing.T) {
	h := twoQueueHarness(t, "SPECIAL_QUEUE special\nMAX_JOBS 1\n", 1)
	h.queue("special")
	h.job("submit", "alice", "walltime=00:05:00")
	h.job("submit", "bob", "walltime=00:05:00")
	h.w.Now = h.w.Now.Add(time.Minute)
	sp := h.job("special", "carol", "walltime=00:05:00")
	calls := h.cycle()
	if got := started(calls); !reflect.DeepEqual(got, []string{sp.ID}) {
		t.Fatalf("started %v, want the special job only (calls %q)", got, calls)
	}
	if sp.Comment != "Started on Mon Nov 23 09:01:00 2026"+SpecialSuffix || sp.Queue.Name != "small" {
		t.Errorf("special job: queue %s comment %q", sp.Queue.Name, sp.Comment)
	}
}

func TestSpecialSkipsPolicyChecks(t *testing.T) {
	h := twoQueueHarness(t, "SPECIAL_QUEUE special\nMAX_JOBS 1\nMAX_USER_RUN_JOBS 1\n", 4)
	h.queue("special")
	running := h.job("small", "alice", "walltime=00:05:00")
	running.State = 'R'
	normal := h.job("submit", "alice", "walltime=00:05:00")
	sp1 := h.job("special", "alice", "walltime=00:05:00")
	sp2 := h.job("special", "alice", "walltime=00:05:00")
	calls := h.cycle()
	if got := started(calls); !reflect.DeepEqual(got, []string{sp1.ID, sp2.ID}) {
		t.Errorf("started %v, want both special jobs", got)
	}
	if normal.Comment != CommentMaxJobs {
		t.Errorf("normal job comment %q", normal.Comment)
	}
}

func TestExternalQueuesRunInPlace(t *testing.T) {
	h := twoQueueHarness(t, "EXTERNAL_QUEUES meta\n", 2)
	h.queue("meta", "resources_max.walltime=01:00:00")
	e1 := h.job("meta", "alice", "walltime=00:30:00")
	s1 := h.job("submit", "bob", "walltime=00:05:00")
	e2 := h.job("meta", "alice", "walltime=00:30:00")
	calls := h.cycle()
	if got := started(calls); !reflect.DeepEqual(got, []string{s1.ID, e1.ID}) {
		t.Errorf("started %v (calls %q)", got, calls)
	}
	if has(calls, "move "+e1.ID) || e1.Queue.Name != "meta" {
		t.Errorf("external job moved: %q", calls)
	}
	if e2.State != 'Q' || e2.Comment != CommentNoRoom {
		t.Errorf("second external job %c %q", e2.State, e2.Comment)
	}
}

func TestTestOnlyChangesNothing(t *testing.T) {
	h := twoQueueHarness(t, "TEST_ONLY true\n", 4)
	a := h.job("submit", "alice", "walltime=00:05:00")
	h.job("submit", "bob", "walltime=05:00:00")
	h.job("submit", "carol", "walltime=00:05:00", "nodes=1:ppn=4")
	st := h.s.Cycle(h.w, nil) // any action would panic on the nil Actions
	if st.Started != 1 || a.State != 'Q' || a.Queue.Name != "submit" || a.Comment != "" {
		t.Errorf("stats %+v, job %c in %s %q", st, a.State, a.Queue.Name, a.Comment)
	}
	for _, want := range []string{"1.srv: TEST_ONLY: would move the job to queue small and run it",
		"2.srv: " + MessageRejected, "2.srv: TEST_ONLY: would set comment: " + MessageRejected, "2.srv: TEST_ONLY: would delete the job",
		"3.srv: " + CommentNoRoom, "3.srv: TEST_ONLY: would set comment: " + CommentNoRoom} {
		if !h.logged(want) {
			t.Errorf("not logged: %q in %q", want, h.logs)
		}
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name, cfg string
		load      float64
		want      int // jobs started of three 1-node jobs (two users) on 8 VPs
		comment   string
	}{
		{"no limits", "", 0, 3, ""},
		{"MAX_JOBS", "MAX_JOBS 2\n", 0, 2, CommentMaxJobs},
		{"MAX_USER_RUN_JOBS", "MAX_USER_RUN_JOBS 1\n", 0, 2, CommentUserLimit},
		{"load under target", "TARGET_LOAD_PCT 50\nTARGET_LOAD_VARIANCE -10%,+10%\n", 0, 3, ""},
		{"load at target", "TARGET_LOAD_PCT 50\nTARGET_LOAD_VARIANCE -10%,+10%\n", 4.5, 0, CommentLoad},
		{"load target with MIN_JOBS", "TARGET_LOAD_PCT 50\nTARGET_LOAD_VARIANCE -10%,+10%\nMIN_JOBS 2\n", 4.5, 2, CommentLoad},
		{"below the band: a job may overshoot", "TARGET_LOAD_PCT 50\nTARGET_LOAD_VARIANCE -0%,+0%\n", 3.5, 1, CommentLoad},
		{"inside the band: no overshoot", "TARGET_LOAD_PCT 50\nTARGET_LOAD_VARIANCE -10%,+0%\n", 3.5, 0, CommentLoad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := twoQueueHarness(t, tt.cfg, 8)
			h.node.LoadAve = tt.load
			h.job("submit", "alice", "walltime=00:05:00")
			h.job("submit", "alice", "walltime=00:05:00")
			last := h.job("submit", "bob", "walltime=00:05:00")
			if tt.name == "MAX_USER_RUN_JOBS" {
				last = h.find("2.srv")
			}
			calls := h.cycle()
			if got := len(started(calls)); got != tt.want {
				t.Errorf("started %d, want %d (calls %q)", got, tt.want, calls)
			}
			if tt.comment != "" && last.Comment != tt.comment {
				t.Errorf("comment %q, want %q", last.Comment, tt.comment)
			}
		})
	}
}

func TestIllegalSizesRejected(t *testing.T) {
	h := twoQueueHarness(t, "SMALL_JOB_MAX 1\nWALLT_LIMIT_SMALL_JOB 00:30:00\nWALLT_LIMIT_LARGE_JOB 01:30:00\n", 8)
	okSmall := h.job("submit", "a", "walltime=00:20:00")
	badSmall := h.job("submit", "a", "walltime=01:00:00")
	okLarge := h.job("submit", "a", "walltime=01:00:00", "nodes=1:ppn=2")
	badLarge := h.job("submit", "a", "walltime=01:45:00", "nodes=1:ppn=2")
	calls := h.cycle()
	if got := started(calls); !reflect.DeepEqual(got, []string{okLarge.ID, okSmall.ID}) && !reflect.DeepEqual(got, []string{okSmall.ID, okLarge.ID}) {
		t.Errorf("started %v", got)
	}
	for _, j := range []string{badSmall.ID, badLarge.ID} {
		if !has(calls, "delete "+j+" "+MessageIllegalSize) {
			t.Errorf("%s not rejected: %q", j, calls)
		}
	}
}

func TestRunFailureMovesBack(t *testing.T) {
	h := twoQueueHarness(t, "", 4)
	j := h.job("submit", "alice", "walltime=00:05:00")
	h.runErr = map[string]error{j.ID: errors.New("Execution server rejected request")}
	calls := h.cycle()
	want := []string{"move 1.srv small", "comment 1.srv Started on Mon Nov 23 09:00:00 2026", "run 1.srv  (refused)",
		"comment 1.srv " + CommentRunFailedPrefix + "Execution server rejected request", "move 1.srv submit"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %q", calls)
	}
	if j.Queue.Name != "submit" || j.State != 'Q' {
		t.Errorf("job in %s state %c", j.Queue.Name, j.State)
	}
}

func TestLazyComments(t *testing.T) {
	h := twoQueueHarness(t, "MAX_JOBS 1\n", 4)
	r := h.job("small", "x", "walltime=01:00:00")
	r.State, r.StartTime = 'R', h.w.Now
	j := h.job("submit", "alice", "walltime=00:05:00")
	j.Comment, j.MTime = "an old comment", h.w.Now.Add(-time.Minute)
	h.s.lastRun = h.w.Now.Add(-30 * time.Second) // queued before the last cycle
	j.QTime = h.w.Now.Add(-time.Hour)
	if calls := h.cycle(); has(calls, "comment") {
		t.Errorf("comment rewritten after 1 minute: %q", calls)
	}
	h.advance(MinCommentAge) // the running job (1 hour) goes on
	if calls := h.cycle(); !has(calls, "comment 2.srv "+CommentMaxJobs) {
		t.Errorf("comment not rewritten after MinCommentAge: %q", calls)
	}
	// a job queued after the last cycle gets its comment at once
	h.advance(time.Second)
	k := h.job("submit", "bob", "walltime=00:05:00")
	k.Comment, k.MTime = "x", h.w.Now
	if calls := h.cycle(); !has(calls, "comment "+k.ID+" "+CommentMaxJobs) {
		t.Errorf("new job not commented: %q", calls)
	}
	// a job without a comment gets one at once; the same comment is never sent again
	if calls := h.cycle(); has(calls, "comment") {
		t.Errorf("unchanged comments sent: %q", calls)
	}
}

func TestFragmentation(t *testing.T) {
	// 8 nodes in the queue, at most 2 jobs: fragment size 4.
	cfg := "SUBMIT_QUEUE submit\nBATCH_QUEUES big\nAVOID_FRAGMENTATION true\n"
	tests := []struct {
		name    string
		running []string // walltimes of running 1-node jobs
		size    string   // nodes of the candidate
		wall    string
		want    bool // runs
	}{
		{"empty queue", nil, "1", "01:00:00", true},
		{"at least a fragment", []string{"01:00:00"}, "1:ppn=4", "05:00:00", true},
		{"fragmented, ends before the queue empties", []string{"01:00:00"}, "1", "00:30:00", true},
		{"fragmented, outlasts the queue", []string{"01:00:00"}, "1", "02:00:00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, cfg, 16, monday9)
			h.queue("submit")
			h.queue("big", "resources_available.nodect=8", "max_running=3")
			h.q("big").MaxRunning = 2
			for _, w := range tt.running {
				r := h.job("big", "x", "walltime="+w)
				r.State, r.StartTime = 'R', h.w.Now
			}
			j := h.job("submit", "a", "walltime="+tt.wall, "nodes="+tt.size)
			h.cycle()
			if ran := j.State == 'R'; ran != tt.want {
				t.Errorf("ran %v, want %v (comment %q)", ran, tt.want, j.Comment)
			}
			if !tt.want && j.Comment != CommentFragment+"big" {
				t.Errorf("comment %q", j.Comment)
			}
		})
	}
}

func TestFakeMachineMult(t *testing.T) {
	h := newHarness(t, "SUBMIT_QUEUE submit\nBATCH_QUEUES b\nFAKE_MACHINE_MULT 4\n", 16, monday9)
	h.queue("submit")
	h.queue("b", "resources_available.nodect=2")
	j := h.job("submit", "a", "walltime=00:10:00", "nodes=1:ppn=8")
	h.cycle()
	if j.State != 'R' {
		t.Errorf("8-node job does not fit 2 nodes × 4: %q", j.Comment)
	}
}

func TestQueueSanity(t *testing.T) {
	h := newHarness(t, "SUBMIT_QUEUE submit\nBATCH_QUEUES small,missing\nSPECIAL_QUEUE route\n", 4, monday9)
	h.queue("submit", "resources_max.walltime=00:30:00")
	h.queue("small", "resources_max.walltime=01:00:00")
	h.queue("route", "queue_type=Route")
	h.job("submit", "a", "walltime=00:05:00")
	calls := h.cycle()
	var ps config.Problems
	if !errors.As(h.s.Fatal(), &ps) || len(ps) != 3 || len(calls) != 0 {
		t.Fatalf("fatal %v, calls %q", h.s.Fatal(), calls)
	}
	for _, want := range []string{"BATCH_QUEUES queue missing does not exist", "SPECIAL_QUEUE queue route is a Route queue",
		"submit queue submit has resources_max.walltime 00:30:00, below the batch queues' 01:00:00"} {
		if !h.logged("Queue Sanity: "+want) || !h.logged("suggestion: ") {
			t.Errorf("not logged: %q in %q", want, h.logs)
		}
	}
	if h.cycle(); len(h.calls) != 0 {
		t.Errorf("acted after a fatal problem: %q", h.calls)
	}
}

func TestRestartAction(t *testing.T) {
	for _, action := range []string{"NONE", "RESUBMIT", "RERUN"} {
		h := twoQueueHarness(t, "SCHED_RESTART_ACTION "+action+"\n", 4)
		left := h.job("large", "a", "walltime=01:00:00")
		calls := h.cycle()
		switch action {
		case "NONE":
			if len(calls) != 0 || left.State != 'Q' {
				t.Errorf("NONE: %q", calls)
			}
		case "RESUBMIT":
			if !reflect.DeepEqual(calls, []string{"move 1.srv submit", "move 1.srv large",
				"comment 1.srv Started on Mon Nov 23 09:00:00 2026", "run 1.srv"}) {
				t.Errorf("RESUBMIT: %q", calls)
			}
		case "RERUN":
			if !reflect.DeepEqual(calls, []string{"run 1.srv"}) {
				t.Errorf("RERUN: %q", calls)
			}
		}
		if !h.logged("SCHED_RESTART_ACTION " + action) {
			t.Errorf("%s not logged: %q", action, h.logs)
		}
		// only once, after start
		if calls := h.cycle(); action != "RESUBMIT" && has(calls, "move") {
			t.Errorf("%s applied twice: %q", action, calls)
		}
	}
}

func TestNodemaskHasNoEffect(t *testing.T) {
	h := twoQueueHarness(t, "", 4)
	h.q("small").Resources.Max.Values["nodemask"] = "255"
	j := h.job("submit", "a", "walltime=00:05:00", "nodemask=15")
	h.cycle()
	h.cycle()
	if j.State != 'R' || !h.logged("queue small: nodemask has no effect on this platform") ||
		!h.logged("1.srv: nodemask request has no effect on this platform") {
		t.Errorf("state %c, logs %q", j.State, h.logs)
	}
	n := 0
	for _, l := range h.logs {
		if strings.Contains(l, "queue small: nodemask") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("queue nodemask noted %d times", n)
	}
}

func TestHighSystime(t *testing.T) {
	h := twoQueueHarness(t, "HIGH_SYSTIME 30\nSPECIAL_QUEUE special\n", 8)
	h.queue("special")
	// no MOM reports systime: noted once, not applied
	j1 := h.job("submit", "a", "walltime=00:05:00")
	h.cycle()
	h.cycle()
	if j1.State != 'R' || !h.logged("HIGH_SYSTIME: no MOM reports systime") {
		t.Fatalf("job %c, logs %q", j1.State, h.logs)
	}
	h.node.SysTime, h.node.HasSysTime = 45, true
	j2 := h.job("submit", "a", "walltime=00:05:00")
	sp := h.job("special", "a", "walltime=00:05:00")
	h.cycle()
	if j2.State != 'Q' || j2.Comment != CommentSystime || sp.State != 'R' {
		t.Errorf("over HIGH_SYSTIME: job %c %q, special %c", j2.State, j2.Comment, sp.State)
	}
	h.node.SysTime = 20
	h.cycle()
	if j2.State != 'R' {
		t.Errorf("under HIGH_SYSTIME: job %c %q", j2.State, j2.Comment)
	}
}

func TestHighSystimeOfAQueuesExechost(t *testing.T) {
	h := newHarness(t, "SUBMIT_QUEUE submit\nBATCH_QUEUES fast@n1,slow\nHIGH_SYSTIME 30\n", 8, monday9)
	h.queue("submit")
	h.queue("fast")
	h.queue("slow")
	other := &world.Node{Name: "n2", NP: 8, State: world.NodeFree, MomOK: true, NCPUs: 8, SysTime: 0, HasSysTime: true}
	h.w.Nodes = append(h.w.Nodes, other)
	h.node.SysTime, h.node.HasSysTime = 50, true // average 25: under the limit
	j := h.job("submit", "a", "walltime=00:05:00")
	h.cycle()
	if j.State != 'R' || j.Queue.Name != "slow" {
		t.Errorf("job %c in %s; fast@n1 has n1 over HIGH_SYSTIME", j.State, j.Queue.Name)
	}
}
