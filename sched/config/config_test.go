package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestShipped(t *testing.T) {
	c, errs, err := Parse(strings.NewReader(Shipped), "sched_config")
	if err != nil || len(errs) != 0 {
		t.Fatalf("Parse(Shipped): %v %v", err, errs)
	}
	want := &Config{
		ByQueue:          Periodic[bool]{true, true},
		HelpStarvingJobs: Periodic[bool]{true, true},
		SortQueues:       Periodic[bool]{true, true},
		SortBy:           Periodic[SortKey]{ShortestJobFirst, ShortestJobFirst},
		MaxStarve:        24 * time.Hour,
		HalfLife:         24 * time.Hour,
		SyncTime:         time.Hour,
		UnknownShares:    10,
		LogFilter:        256,
		DedicatedPrefix:  "ded",
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Shipped parsed to\n%+v\nwant\n%+v", c, want)
	}
}

func TestDefaultsAreZero(t *testing.T) {
	c, errs, err := Parse(strings.NewReader("# nothing\n\n"), "x")
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	if !reflect.DeepEqual(c, &Config{}) {
		t.Errorf("empty file gave %+v", c)
	}
}

func TestStatements(t *testing.T) {
	tests := []struct {
		line  string
		check func(c *Config) bool
	}{
		{"round_robin: true", func(c *Config) bool { return c.RoundRobin == Periodic[bool]{true, true} }},
		{"round_robin TRUE prime", func(c *Config) bool { return c.RoundRobin == Periodic[bool]{true, false} }},
		{"strict_fifo:1 non_prime", func(c *Config) bool { return c.StrictFIFO == Periodic[bool]{false, true} }},
		{"fair_share: True NONE", func(c *Config) bool { return c.FairShare == Periodic[bool]{} }},
		{"load_balancing_rr: true", func(c *Config) bool { return c.LoadBalancingRR[Prime] }},
		{"sort_by: high_priority_first non_prime", func(c *Config) bool {
			return c.SortBy == Periodic[SortKey]{NoSort, HighPriorityFirst}
		}},
		{"max_starve: 1:30:00", func(c *Config) bool { return c.MaxStarve == 90*time.Minute }},
		{"half_life 3600", func(c *Config) bool { return c.HalfLife == time.Hour }},
		{"sync_time:\t5:00", func(c *Config) bool { return c.SyncTime == 5*time.Minute }},
		{"unknown_shares: 7", func(c *Config) bool { return c.UnknownShares == 7 }},
		{"dedicated_prefix: averyveryverylongprefix", func(c *Config) bool { return c.DedicatedPrefix == "averyveryverylo" }},
		{"ignore_queue: debug", func(c *Config) bool { return reflect.DeepEqual(c.IgnoreQueues, []string{"debug"}) }},
		{"smp_cluster_dist: pack", func(c *Config) bool { return c.SMPClusterDist == Periodic[SMPDist]{SMPPack, SMPPack} }},
		{"smp_cluster_dist: round_robin prime", func(c *Config) bool {
			return c.SMPClusterDist == Periodic[SMPDist]{SMPRoundRobin, SMPUnset}
		}},
		{"smp_cluster_dist lowest_load non_prime", func(c *Config) bool {
			return c.SMPClusterDist == Periodic[SMPDist]{SMPUnset, SMPLowestLoad}
		}},
		{`resources: "ncpus, mem, arch"`, func(c *Config) bool { return reflect.DeepEqual(c.Resources, []string{"ncpus", "mem", "arch"}) }},
		{"resources: walltime,ncpus", func(c *Config) bool { return reflect.DeepEqual(c.Resources, []string{"walltime", "ncpus"}) }},
		{`resources "mem"`, func(c *Config) bool { return reflect.DeepEqual(c.Resources, []string{"mem"}) }},
	}
	for _, tt := range tests {
		c, errs, err := Parse(strings.NewReader(tt.line), "f")
		if err != nil || len(errs) != 0 {
			t.Errorf("%q: errors %v %v", tt.line, err, errs)
			continue
		}
		if !tt.check(c) {
			t.Errorf("%q: wrong result %+v", tt.line, c)
		}
	}
}

func TestKeyQuirk(t *testing.T) {
	src := "sort_by: multi_sort\nkey: high_priority_first\nkey: shortest_job_first non_prime\nkey: largest_memory_first prime\n"
	c, errs, err := Parse(strings.NewReader(src), "f")
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	want := []SortKey{HighPriorityFirst, LargestMemoryFirst}
	if !reflect.DeepEqual(c.Keys[Prime], want) || !reflect.DeepEqual(c.Keys[NonPrime], want) {
		t.Errorf("keys = %v", c.Keys)
	}
}

func TestBadLines(t *testing.T) {
	src := "round_robin: maybe\nsmp_cluster_dist: spread\nresources: \"ncpus, mem\nsort_by: random\nby_queue true sometimes\nmax_starve: 1::2\nok_line_follows\nbackfill: true ALL\n"
	_, errs, err := Parse(strings.NewReader(src), "sched_config")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
	}
	if !reflect.DeepEqual(lines, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("error lines = %v", lines)
	}
	if got := errs[1].Error(); got != "Error reading line 2 of file sched_config" {
		t.Errorf("message = %q", got)
	}
}

func TestBadResources(t *testing.T) {
	for _, line := range []string{`resources: ""`, `resources: "mem" extra`, `resources:`, `resourcesx: "mem"`} {
		c, errs, err := Parse(strings.NewReader(line), "f")
		if err != nil || len(errs) != 1 || c.Resources != nil {
			t.Errorf("%q: errors %v %v, resources %q", line, err, errs, c.Resources)
		}
	}
}

func TestLimitIgnoreQueues(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxIgnoreQueues+2; i++ {
		b.WriteString("ignore_queue q\n")
	}
	c, errs, _ := Parse(strings.NewReader(b.String()), "f")
	if len(c.IgnoreQueues) != MaxIgnoreQueues || len(errs) != 2 {
		t.Errorf("kept %d, errors %d", len(c.IgnoreQueues), len(errs))
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Shipped)
	f.Add("key: fair_share\nmax_starve 1:2:3:4")
	f.Add("resources: \"ncpus, mem\"\nsmp_cluster_dist: pack prime")
	f.Add("max_reservation: 20\ndefault_duration: 1:00:00 prime\nduration_offset 90\nparams: MONITOR,DURATION_OFFSET=30 non_prime")
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = Parse(strings.NewReader(s), "fuzz")
	})
}

func TestReservationKeys(t *testing.T) {
	tests := []struct {
		src   string
		check func(c *Config) bool
	}{
		{"max_reservation: 20", func(c *Config) bool { return c.MaxReservation == Periodic[int]{20, 20} }},
		{"max_reservation 5 non_prime", func(c *Config) bool { return c.MaxReservation == Periodic[int]{0, 5} }},
		{"default_duration: 2:00:00", func(c *Config) bool {
			return c.DefaultDuration == Periodic[time.Duration]{2 * time.Hour, 2 * time.Hour}
		}},
		{"default_duration: 600 prime", func(c *Config) bool { return c.DefaultDuration == Periodic[time.Duration]{10 * time.Minute, 0} }},
		{"default_duration: INFINITY", func(c *Config) bool { return c.DefaultDuration == Periodic[time.Duration]{} }},
		{"duration_offset: 1:30", func(c *Config) bool { return c.Offset(Prime) == 90*time.Second && c.Offset(NonPrime) == 90*time.Second }},
		{"duration_offset: 0 non_prime", func(c *Config) bool { return c.Offset(Prime) == time.Minute && c.Offset(NonPrime) == 0 }},
		{"params: MONITOR", func(c *Config) bool { return c.Monitor == Periodic[bool]{true, true} }},
		{"params: monitor=false", func(c *Config) bool { return c.Monitor == Periodic[bool]{} }},
		{"params: MONITOR,DURATION_OFFSET=120 prime", func(c *Config) bool {
			return c.Monitor == Periodic[bool]{true, false} && c.Offset(Prime) == 2*time.Minute && c.Offset(NonPrime) == time.Minute
		}},
		{"params: MONITOR\nparams: none non_prime", func(c *Config) bool { return c.Monitor == Periodic[bool]{true, false} }},
	}
	for _, tt := range tests {
		c, errs, err := Parse(strings.NewReader(tt.src), "f")
		if err != nil || len(errs) != 0 {
			t.Errorf("%q: errors %v %v", tt.src, err, errs)
			continue
		}
		if !tt.check(c) {
			t.Errorf("%q: wrong result %+v", tt.src, c)
		}
	}
}

func TestReservationDefaults(t *testing.T) {
	c, _, err := Parse(strings.NewReader(Shipped), "sched_config")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxReservation.At(Prime) != 0 || c.DefaultDuration.At(Prime) != 0 || c.Offset(Prime) != 60*time.Second || c.Monitor.At(Prime) {
		t.Errorf("defaults: max_reservation %v default_duration %v offset %v monitor %v",
			c.MaxReservation, c.DefaultDuration, c.Offset(Prime), c.Monitor)
	}
	if (&Config{}).Offset(NonPrime) != DefaultDurationOffset {
		t.Error("zero Config: offset is not the default")
	}
}

// TestBadReservationLines: a malformed value is reported with its line
// number and the key keeps its value (the default, or an earlier line's).
func TestBadReservationLines(t *testing.T) {
	src := "max_reservation: 3\nmax_reservation: -1\nmax_reservation: lots\ndefault_duration: 1::2\n" +
		"duration_offset: soon\nparams: MONITOR,VERBOSE\nparams: DURATION_OFFSET\nparams: MONITOR=perhaps\nmax_reservation 4 sometimes\n"
	c, errs, err := Parse(strings.NewReader(src), "sched_config")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("error lines = %v", lines)
	}
	if errs[0].Error() != "Error reading line 2 of file sched_config" {
		t.Errorf("message %q", errs[0].Error())
	}
	if c.MaxReservation != (Periodic[int]{3, 3}) || c.DefaultDuration != (Periodic[time.Duration]{}) ||
		c.Offset(Prime) != DefaultDurationOffset || c.Monitor != (Periodic[bool]{}) {
		t.Errorf("bad lines changed values: %+v", c)
	}
}
