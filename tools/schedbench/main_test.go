package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseStateCount(t *testing.T) {
	const v = "Transit:0 Queued:10000 Held:0 Waiting:0 Running:8000 Exiting:0 "
	for _, tc := range []struct {
		value, state string
		want         int
		wantErr      bool
	}{
		{v, "Running", 8000, false},
		{v, "Queued", 10000, false},
		{v, "Transit", 0, false},
		{v, "Suspended", 0, true},
		{"Running:x", "Running", 0, true},
		{"", "Running", 0, true},
	} {
		got, err := parseStateCount(tc.value, tc.state)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseStateCount(%q, %q) = %d, %v; want %d, error %v", tc.value, tc.state, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"plain", "4242 (pbs_server) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 25 0 0 20 0 9 0 100 0 0", 1750 * time.Millisecond, false},
		{"name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 0 0", 70 * time.Millisecond, false},
		{"short", "7 (x) R 1 2 3", 0, true},
		{"no name", "7 x R", 0, true},
		{"bad number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a 4 0", 0, true},
	} {
		got, err := parseStatCPU(tc.stat)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: got %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNewCycles(t *testing.T) {
	rep, err := decodeCycles(strings.NewReader(`{"total":5,"cycles":[
		{"seq":3,"command":"new","start":"2026-11-22T10:00:00Z","seconds":0.5,"started":1},
		{"seq":5,"command":"time","start":"2026-11-22T10:00:20Z","seconds":0.4,"started":0},
		{"seq":4,"command":"cmd","start":"2026-11-22T10:00:10Z","seconds":1.6,"started":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := newCycles(rep, 3)
	if len(got) != 2 || got[0].Seq != 4 || got[0].Command != "cmd" || got[0].Seconds != 1.6 || got[1].Seq != 5 {
		t.Errorf("newCycles after 3: %+v", got)
	}
	if got := newCycles(rep, 5); len(got) != 0 {
		t.Errorf("newCycles after 5: %+v", got)
	}
	if _, err := decodeCycles(strings.NewReader("{")); err == nil {
		t.Error("truncated report decoded")
	}
}

func TestSummarize(t *testing.T) {
	cyc := func(secs ...float64) []cycle {
		var out []cycle
		for i, s := range secs {
			out = append(out, cycle{Seq: int64(i + 1), Seconds: s})
		}
		return out
	}
	w := &cpuWatch{marks: [][2]time.Duration{{time.Second, 2 * time.Second}, {3 * time.Second, 2500 * time.Millisecond}}}
	for _, tc := range []struct {
		name   string
		cycles []cycle
		w      *cpuWatch
		want   string
	}{
		{"none", nil, &cpuWatch{}, "summary: no cycle"},
		{"first only", cyc(1.5), &cpuWatch{}, "summary: first=1.500s"},
		{"odd", cyc(1.5, 0.5, 0.4, 0.45, 0.6), w,
			"summary: first=1.500s later: n=4 min=0.400s median=0.475s max=0.600s cpu/cycle: pbs_server=0.500s pbs_sched=0.125s"},
		{"no cpu", cyc(1.5, 0.5, 0.4, 0.45), &cpuWatch{},
			"summary: first=1.500s later: n=3 min=0.400s median=0.450s max=0.500s"},
	} {
		if got := summarize(tc.cycles, tc.w); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	base := config{bin: t.TempDir(), nodes: 10, np: 8, running: 80, queued: 10, cycles: 1, iteration: 1, clients: 1, profileSeconds: 1}
	for _, tc := range []struct {
		name string
		edit func(*config)
	}{
		{"no nodes", func(c *config) { c.nodes = 0 }},
		{"too many running", func(c *config) { c.running = 81 }},
		{"no queued", func(c *config) { c.queued = 0 }},
		{"zero iteration", func(c *config) { c.iteration = 0 }},
		{"missing binaries", func(*config) {}},
	} {
		c := base
		tc.edit(&c)
		if err := c.check(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestParseHWM(t *testing.T) {
	for _, tc := range []struct {
		status  string
		want    int64
		wantErr bool
	}{
		{"Name:\tpbs_sched\nVmPeak:\t 2051824 kB\nVmHWM:\t  242488 kB\nVmRSS:\t  200000 kB\n", 242488, false},
		{"Name:\tx\nVmRSS:\t 1 kB\n", 0, true},
		{"VmHWM:\t 12 MB\n", 0, true},
		{"VmHWM:\t x kB\n", 0, true},
	} {
		got, err := parseHWM(tc.status)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseHWM(%q) = %d, %v; want %d, error %v", tc.status, got, err, tc.want, tc.wantErr)
		}
	}
}
