package nas

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/sched/world"
)

// These tests run the NAS policy over simulated days: the harness's
// clock moves on in steps, jobs end when their walltime is over, and a
// cycle runs after each step.

// primeCfg: prime time 08:00–17:00 on weekdays, jobs of at most 1 node
// may run 2 hours in prime time, larger ones 1 hour.
const primeCfg = twoQueues + `ENFORCE_PRIME_TIME true
PRIME_TIME_START 08:00:00
PRIME_TIME_END 17:00:00
PRIME_TIME_WALLT_LIMIT 01:00:00
PRIME_TIME_SMALL_NODE_LIMIT 1
PRIME_TIME_SMALL_WALLT_LIMIT 00:05:00
`

func primeHarness(t *testing.T, extra string, now time.Time) *harness {
	h := newHarness(t, primeCfg+extra, 8, now)
	h.queue("submit", "resources_max.walltime=10:00:00")
	h.queue("small", "resources_max.walltime=00:10:00")
	h.queue("large", "resources_max.walltime=10:00:00")
	return h
}

// runUntil cycles every step until end and returns when each job
// started.
func (h *harness) runUntil(end time.Time, step time.Duration) map[string]time.Time {
	starts := map[string]time.Time{}
	for !h.w.Now.After(end) {
		for _, id := range started(h.cycle()) {
			starts[id] = h.w.Now
		}
		h.advance(step)
	}
	return starts
}

func TestPrimeTime(t *testing.T) {
	h := primeHarness(t, "", monday9.Add(6*time.Hour))                 // Monday 15:00
	long := h.job("submit", "a", "walltime=04:00:00", "nodes=1:ppn=2") // over the prime limit
	hour := h.job("submit", "a", "walltime=01:00:00", "nodes=1:ppn=2") // at the limit
	tiny := h.job("submit", "b", "walltime=00:05:00")                  // small job, small limit
	small := h.job("submit", "b", "walltime=00:10:00")                 // small job over the small limit
	starts := h.runUntil(monday9.Add(9*time.Hour), 15*time.Minute)     // to Monday 18:00
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 23, hh, mm, 0, 0, time.UTC) }
	want := map[string]time.Time{hour.ID: at(15, 0), tiny.ID: at(15, 0), long.ID: at(17, 0), small.ID: at(17, 0)}
	if !reflect.DeepEqual(starts, want) {
		t.Errorf("starts %v\nwant %v", starts, want)
	}
	if !h.logged(long.ID + ": " + CommentPrimeWallt) {
		t.Errorf("prime-time limit not logged: %q", h.logs)
	}
}

func TestPrimeTimeLargestFirst(t *testing.T) {
	h := primeHarness(t, "", monday9)
	h.node.NP = 4
	h.job("submit", "a", "walltime=00:30:00", "nodes=1:ppn=2")
	big := h.job("submit", "a", "walltime=00:30:00", "nodes=1:ppn=4")
	if got := started(h.cycle()); !reflect.DeepEqual(got, []string{big.ID}) {
		t.Errorf("prime time: started %v, want the largest job first", got)
	}
	// in non-prime time the oldest goes first
	h2 := primeHarness(t, "", monday9.Add(-3*time.Hour)) // 06:00
	h2.node.NP = 4
	small := h2.job("submit", "a", "walltime=00:30:00", "nodes=1:ppn=2")
	h2.job("submit", "a", "walltime=00:30:00", "nodes=1:ppn=4")
	if got := started(h2.cycle()); !reflect.DeepEqual(got, []string{small.ID}) {
		t.Errorf("non-prime time: started %v, want the oldest job first", got)
	}
}

func TestWeekendIsNonPrime(t *testing.T) {
	saturday := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	h := primeHarness(t, "", saturday)
	long := h.job("submit", "a", "walltime=04:00:00", "nodes=1:ppn=2")
	h.cycle()
	if long.State != 'R' {
		t.Errorf("Saturday 10:00 is prime time: %q", long.Comment)
	}
}

func TestNonprimeDrain(t *testing.T) {
	h := primeHarness(t, "NONPRIME_DRAIN_SYS true\n", monday9.Add(-4*time.Hour)) // Monday 05:00
	crosses := h.job("submit", "a", "walltime=04:00:00", "nodes=1:ppn=2")        // would run into prime time
	fits := h.job("submit", "a", "walltime=02:00:00", "nodes=1:ppn=2")           // ends at 07:00
	legal := h.job("submit", "a", "walltime=01:00:00", "nodes=1:ppn=2")          // meets the prime limits
	starts := h.runUntil(monday9.Add(9*time.Hour), 30*time.Minute)
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 23, hh, mm, 0, 0, time.UTC) }
	want := map[string]time.Time{fits.ID: at(5, 0), legal.ID: at(5, 0), crosses.ID: at(17, 0)}
	if !reflect.DeepEqual(starts, want) {
		t.Errorf("starts %v\nwant %v", starts, want)
	}
	if !h.logged(crosses.ID + ": " + CommentNonprimeDrain) {
		t.Errorf("drain not logged: %q", h.logs)
	}
}

// scheduleOutput is the seed's example output of the schedule command,
// with PIGLET's times moved to the test week.
const scheduleOutput = `TURING       11/23/2026 16:00-19:00 11/23/2026  Administrative period 
						    (weekly turing downtime)
PIGLET       11/23/2026 12:00-14:00 11/23/2026  Install latest compiler.
PIGLET       11/24/2026 10:00-16:00 11/24/2026  Preventive maintenance
SLICKY       08/20/1998 09:00-09:00 08/21/1998  All day outage for power
                                                    supply and CPU board swap.
`

func TestParseSchedule(t *testing.T) {
	ps, errs := ParseSchedule([]byte(scheduleOutput+"BROKEN 1/2\npiglet 11/30/2026 25:00-26:00 11/30/2026 x\n"), "PIGLET", time.UTC)
	want := []Period{
		{Start: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC), Comment: "Install latest compiler."},
		{Start: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC), Comment: "Preventive maintenance"},
	}
	if !reflect.DeepEqual(ps, want) || len(errs) != 2 {
		t.Errorf("periods %+v, errors %v", ps, errs)
	}
	ps, _ = ParseSchedule([]byte(scheduleOutput), "slicky", time.UTC)
	if len(ps) != 1 || ps[0].End.Sub(ps[0].Start) != 24*time.Hour || ps[0].Comment != "All day outage for power supply and CPU board swap." {
		t.Errorf("SLICKY %+v", ps)
	}
}

// dedicatedHarness enforces dedicated time from a command that prints
// scheduleOutput (counting its runs), cached for an hour.
func dedicatedHarness(t *testing.T, now time.Time) (*harness, *int) {
	h := twoQueueHarness(t, "ENFORCE_DEDICATED_TIME true\nSYSTEM_NAME PIGLET\nDEDICATED_QUEUE ded\nMAX_DEDICATED_JOBS 2\nDEDICATED_TIME_CACHE_SECS 3600\n", 8)
	h.w.Now = now
	h.queue("ded")
	runs := 0
	h.s.Dedicated = &Dedicated{Command: "/bin/schedule", System: "PIGLET", CacheFor: time.Hour, Location: time.UTC,
		Run: func(ctx context.Context, cmd, arg string) ([]byte, error) {
			if cmd != "/bin/schedule" || arg != "PIGLET" {
				return nil, fmt.Errorf("ran %s %s", cmd, arg)
			}
			runs++
			return []byte(scheduleOutput), nil
		}}
	return h, &runs
}

func TestDedicatedTime(t *testing.T) {
	h, runs := dedicatedHarness(t, time.Date(2026, 11, 23, 10, 30, 0, 0, time.UTC))
	fits := h.job("submit", "a", "walltime=01:00:00")    // ends 11:30
	crosses := h.job("submit", "a", "walltime=02:00:00") // would end 12:30
	noWall := h.job("submit", "a")
	d1 := h.job("ded", "a", "walltime=01:00:00")
	d2 := h.job("ded", "a", "walltime=01:00:00")
	d3 := h.job("ded", "a", "walltime=01:00:00")
	dLong := h.job("ded", "a", "walltime=01:45:00") // at 13:00 would end 14:45
	starts := h.runUntil(time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC), 15*time.Minute)
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 23, hh, mm, 0, 0, time.UTC) }
	want := map[string]time.Time{
		fits.ID: at(10, 30), crosses.ID: at(14, 0),
		d1.ID: at(12, 0), d2.ID: at(12, 0), d3.ID: at(13, 0), // at most 2 in dedicated time
	}
	if !reflect.DeepEqual(starts, want) {
		t.Errorf("starts %v\nwant %v", starts, want)
	}
	if noWall.State != 'Q' || dLong.State != 'Q' {
		t.Errorf("job without walltime %c, long dedicated job %c", noWall.State, dLong.State)
	}
	// 19 cycles from 10:30 to 15:00, the command run once an hour
	if *runs != 5 {
		t.Errorf("dedicated time command ran %d times, want 5 (cached an hour)", *runs)
	}
	for _, want := range []string{crosses.ID + ": " + CommentDedicatedCross, d1.ID + ": " + CommentDedicatedOnly,
		noWall.ID + ": " + CommentNoWalltime, d3.ID + ": " + CommentMaxDedicated, dLong.ID + ": " + CommentDedicatedCross} {
		if !h.logged(want) {
			t.Errorf("not logged: %q", want)
		}
	}
}

func TestDedicatedCommandFailureKeepsLastAnswer(t *testing.T) {
	h, _ := dedicatedHarness(t, time.Date(2026, 11, 23, 11, 30, 0, 0, time.UTC))
	h.cycle()
	h.s.Dedicated.Run = func(context.Context, string, string) ([]byte, error) { return nil, fmt.Errorf("server down") }
	h.advance(2 * time.Hour) // 13:30, past the cache: the command fails
	j := h.job("submit", "a", "walltime=00:10:00")
	h.cycle()
	if j.State != 'Q' || !h.logged("dedicated time: server down") {
		t.Errorf("job %c ran in dedicated time known from the last answer; logs %q", j.State, h.logs)
	}
}

func TestDedicatedExecRunner(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "schedule")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 11/23/2026 12:00-14:00 11/23/2026 maintenance\"\n"), 0o755)
	d := &Dedicated{Command: script, System: "PIGLET", Location: time.UTC}
	ps, errs := d.Periods(monday9)
	if len(errs) != 0 || len(ps) != 1 || ps[0].Start.Hour() != 12 {
		t.Errorf("%+v %v", ps, errs)
	}
	d.Command = filepath.Join(dir, "missing")
	d.CacheFor = 0
	if ps, errs := d.Periods(monday9); len(errs) != 1 || len(ps) != 1 {
		t.Errorf("failed run: %+v %v", ps, errs)
	}
}

func TestWaitingJobDrainsItsQueue(t *testing.T) {
	// One 4-VP node. A 4-node job has waited past MAX_QUEUED_TIME while
	// 1-node jobs keep the node busy: it goes to the top and its queue
	// drains for it; without waiting-job support it would starve.
	h := twoQueueHarness(t, "MAX_QUEUED_TIME 01:00:00\n", 4)
	for i := 0; i < 3; i++ {
		r := h.job("large", "x", "walltime=01:00:00")
		r.State, r.StartTime = 'R', h.w.Now
		h.node.UsedSlots++
	}
	big := h.job("submit", "a", "walltime=01:00:00", "nodes=1:ppn=4")
	big.ETime = h.w.Now.Add(-2 * time.Hour)
	var smalls []string
	for i := 0; i < 6; i++ {
		smalls = append(smalls, h.job("submit", "b", "walltime=00:20:00").ID)
	}
	calls := h.cycle()
	if got := started(calls); len(got) != 0 {
		t.Errorf("started %v while draining for %s", got, big.ID)
	}
	if c := h.find(smalls[0]).Comment; c != CommentDrainingPrefix+big.ID {
		t.Errorf("small job comment %q", c)
	}
	starts := h.runUntil(h.w.Now.Add(3*time.Hour), 10*time.Minute)
	if starts[big.ID] != monday9.Add(time.Hour) {
		t.Errorf("waiting job started at %v, want when the queue emptied (%v); starts %v", starts[big.ID], monday9.Add(time.Hour), starts)
	}
	for _, id := range smalls {
		if s, ok := starts[id]; !ok || !s.After(starts[big.ID]) {
			t.Errorf("small job %s started %v, before the waiting job", id, s)
		}
	}
}

func TestWaitingThresholds(t *testing.T) {
	h := twoQueueHarness(t, "MAX_QUEUED_TIME 02:00:00\nINTERACTIVE_LONG_WAIT 00:30:00\n", 4)
	c := &cycle{s: h.s, now: monday9}
	mk := func(age, wall time.Duration, interactive bool) *candidate {
		return &candidate{job: &world.Job{Interactive: interactive}, eligible: monday9.Add(-age), wall: wall}
	}
	tests := []struct {
		cd   *candidate
		want bool
	}{
		{mk(3*time.Hour, 0, false), true},
		{mk(time.Hour, 0, false), false},
		{mk(time.Hour, 20*time.Minute, true), true},  // 30 min + 20 min walltime
		{mk(40*time.Minute, time.Hour, true), false}, // needs 1 h 30
		{&candidate{job: &world.Job{}}, false},       // no eligible time
	}
	for i, tt := range tests {
		if got := c.isWaiting(tt.cd); got != tt.want {
			t.Errorf("%d: waiting %v", i, got)
		}
	}
	h.s.Config.MaxQueuedTime, h.s.Config.InteractiveLongWait = 0, 0 // "00:00:00 disables"
	if c.isWaiting(mk(100*time.Hour, 0, false)) || c.isWaiting(mk(100*time.Hour, 0, true)) {
		t.Error("zero options do not disable waiting")
	}
}

func TestWaitingOrder(t *testing.T) {
	h := twoQueueHarness(t, "SMALL_QUEUED_TIME 01:00:00\n", 4)
	c := &cycle{s: h.s, now: monday9}
	old, young := monday9.Add(-5*time.Hour), monday9.Add(-3*time.Hour)
	a := &candidate{size: 4, wall: 30 * time.Minute, eligible: young}
	b := &candidate{size: 2, wall: 30 * time.Minute, eligible: old}
	d := &candidate{size: 2, wall: 20 * time.Minute, eligible: young}
	e := &candidate{size: 1, wall: 3 * time.Hour, eligible: old}
	f := &candidate{size: 1, wall: 2 * time.Hour, eligible: young}
	g := &candidate{size: 1, wall: 2 * time.Hour, eligible: old}
	for _, tt := range []struct {
		x, y *candidate
		want bool
		why  string
	}{
		{a, b, true, "both under: largest first"},
		{b, d, true, "both under, same size: oldest first"},
		{e, a, true, "over against under: longest walltime first"},
		{a, e, false, "under against over"},
		{e, f, true, "both over: same size, oldest first"},
		{f, g, false, "both over, same size and walltime: oldest first"},
	} {
		if got := c.waitingLess(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: %v", tt.why, got)
		}
	}
	// Over a whole list: the jobs over SMALL_QUEUED_TIME first (largest,
	// then oldest; e and g tie and keep their order), then the others.
	cands := []*candidate{d, f, a, g, b, e}
	for _, cd := range cands {
		cd.waiting = true
	}
	c.order(cands)
	if want := []*candidate{g, e, f, a, b, d}; !reflect.DeepEqual(cands, want) {
		t.Errorf("order %v, want %v", cands, want)
	}
}

func TestPastUsageAndAllocations(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "allocations"), []byte("# account node-hours\nproj1 2\ndefault 1\n"), 0o644)
	h := twoQueueHarness(t, "SORT_BY_PAST_USAGE true\nENFORCE_ALLOCATION true\nSCHED_ACCT_DIR "+dir+"\n", 1)
	alloc, err := ReadAllocations(filepath.Join(dir, "allocations"))
	if err != nil {
		t.Fatal(err)
	}
	h.s.Allocations = alloc
	h.s.UsagePath = filepath.Join(dir, "usage")
	h.s.Usage.Users["heavy"] = 100
	heavy := h.job("submit", "heavy", "walltime=01:00:00")
	light := h.job("submit", "light", "walltime=01:00:00")
	light.Account = "proj1"
	if got := started(h.cycle()); !reflect.DeepEqual(got, []string{light.ID}) {
		t.Fatalf("started %v, want the light user's job first", got)
	}
	h.advance(time.Hour)
	if got := started(h.cycle()); !reflect.DeepEqual(got, []string{heavy.ID}) {
		t.Fatalf("started %v", got)
	}
	// proj1 has used 1 of its 2 node-hours; heavy's group used its
	// default 1: a second job of each account
	h.advance(time.Hour)
	more := h.job("submit", "light", "walltime=01:30:00")
	more.Account = "proj1"
	again := h.job("submit", "heavy", "walltime=00:10:00")
	h.cycle()
	if more.Comment != CommentAllocation+"proj1" || again.Comment != CommentAllocation+"heavy" {
		t.Errorf("comments %q %q", more.Comment, again.Comment)
	}
	u, err := ReadUsage(h.s.UsagePath)
	if err != nil || u.Accounts["proj1"] != 1 || u.Users["light"] != 1 || u.Users["heavy"] != 101 {
		t.Errorf("saved usage %+v %v", u, err)
	}
	// an account without allocation and no default
	delete(h.s.Allocations, DefaultAccount)
	h.advance(time.Hour)
	h.cycle()
	if again.Comment != CommentNoAllocation+"heavy" {
		t.Errorf("comment %q", again.Comment)
	}
}

func TestUsageDecay(t *testing.T) {
	u := NewUsage()
	u.Decay(monday9, 0.5, 0.25)
	u.Charge("alice", "proj", 8)
	u.Decay(monday9.Add(48*time.Hour), 0.5, 0.25)
	if u.Users["alice"] != 2 || u.Accounts["proj"] != 0.5 {
		t.Errorf("after two days %+v", u)
	}
	path := filepath.Join(t.TempDir(), "usage")
	if err := u.Save(path); err != nil {
		t.Fatal(err)
	}
	v, err := ReadUsage(path)
	if err != nil || v.Users["alice"] != 2 || v.Accounts["proj"] != 0.5 || !v.Stamp.Equal(monday9.Add(48*time.Hour)) {
		t.Errorf("read back %+v %v", v, err)
	}
	os.WriteFile(path, []byte("user alice lots\n"), 0o644)
	if _, err := ReadUsage(path); err == nil {
		t.Error("bad usage file accepted")
	}
	os.WriteFile(path, []byte("proj1 2 3\n"), 0o644)
	if _, err := ReadAllocations(path); err == nil {
		t.Error("bad allocations file accepted")
	}
}

// FuzzParsers feeds arbitrary text to the parsers of the files the policy
// reads: the dedicated time command's output, the usage file and the
// allocations file. None may panic; what they accept must be sane.
func FuzzParsers(f *testing.F) {
	f.Add(scheduleOutput)
	f.Add("time 1795310600\nuser alice 12.5\naccount proj1 3.25\n")
	f.Add("# account node-hours\nproj1 1000\ndefault 10 # others\n")
	f.Add("PIGLET 02/30/2026 25:00-1:00 13/01/2026\n user -1 NaN\n")
	f.Fuzz(func(t *testing.T, text string) {
		ps, _ := ParseSchedule([]byte(text), "PIGLET", time.UTC)
		for i, p := range ps {
			if !p.End.After(p.Start) || i > 0 && p.Start.Before(ps[i-1].Start) {
				t.Fatalf("period %d %+v", i, p)
			}
		}
		if u, err := ParseUsage(strings.NewReader(text)); err == nil {
			for _, v := range u.Users {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("usage %v", v)
				}
			}
		}
		if a, err := ParseAllocations(strings.NewReader(text)); err == nil {
			for _, v := range a {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("allocation %v", v)
				}
			}
		}
	})
}
