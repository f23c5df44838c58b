package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestPluSTable is the seed's §3.3 table: every combination of
// round_robin, by_queue, sort_queues and strict_fifo with its PluS
// JobSortKey, and the four combinations of rr and bq that are refused.
func TestPluSTable(t *testing.T) {
	table := []struct {
		rr, bq, sq, sf bool
		want           string // "" for refused
	}{
		{false, false, false, false, "JobPriority"},
		{false, false, false, true, "SubmitTime"},
		{false, false, true, false, "QueuePriority, JobPriority"},
		{false, false, true, true, "QueuePriority, SubmitTime"},
		{false, true, false, false, "ByQueue, JobPriority"},
		{false, true, false, true, "ByQueue, SubmitTime"},
		{false, true, true, false, "QueuePriority, ByQueue, JobPriority"},
		{false, true, true, true, "QueuePriority, ByQueue, SubmitTime"},
		{true, false, false, false, "QueueRoundRobin, JobPriority"},
		{true, false, false, true, "QueueRoundRobin, SubmitTime"},
		{true, false, true, false, "QueuePriority, QueueRoundRobin, JobPriority"},
		{true, false, true, true, "QueuePriority, QueueRoundRobin, SubmitTime"},
		{true, true, false, false, ""},
		{true, true, false, true, ""},
		{true, true, true, false, ""},
		{true, true, true, true, ""},
	}
	for _, row := range table {
		f := FIFOFlags{RoundRobin: row.rr, ByQueue: row.bq, SortQueues: row.sq, StrictFIFO: row.sf}
		keys, err := JobSortKeyFor(f)
		if row.want == "" {
			if !errors.Is(err, ErrRoundRobinByQueue) {
				t.Errorf("%+v: %v, %v; want refused", f, keys, err)
			}
			continue
		}
		var names []string
		for _, k := range keys {
			names = append(names, string(k))
		}
		if got := strings.Join(names, ", "); err != nil || got != row.want {
			t.Errorf("%+v: %q, %v; want %q", f, got, err, row.want)
		}
		back, ok := FIFOFlagsFor(keys)
		if !ok || back != f {
			t.Errorf("FIFOFlagsFor(%q) = %+v, %v; want %+v", row.want, back, ok, f)
		}
		// The same line in sched_config sets the FIFO flags.
		c, errs, err := Parse(strings.NewReader("JobSortKey: "+row.want+"\n"), "sched_config")
		if err != nil || len(errs) != 0 {
			t.Fatalf("%q: %v %v", row.want, err, errs)
		}
		got := FIFOFlags{RoundRobin: c.RoundRobin[Prime], ByQueue: c.ByQueue[Prime], SortQueues: c.SortQueues[NonPrime], StrictFIFO: c.StrictFIFO[NonPrime]}
		if got != f {
			t.Errorf("JobSortKey: %s set %+v, want %+v", row.want, got, f)
		}
		wantSort := NoSort
		if !row.sf {
			wantSort = HighPriorityFirst
		}
		if c.SortBy != (Periodic[SortKey]{wantSort, wantSort}) {
			t.Errorf("JobSortKey: %s: sort_by %v", row.want, c.SortBy)
		}
	}
	for _, keys := range [][]JobSortKey{nil, {QueuePriority}, {ByQueue, QueuePriority, JobPriority}, {LeastCPURequested}, {JobPriority, SubmitTime}} {
		if f, ok := FIFOFlagsFor(keys); ok {
			t.Errorf("FIFOFlagsFor(%v) = %+v, not a table form", keys, f)
		}
	}
}

// TestPluSKeys parses the seed's sample sched_conf (§3.2) and the lines
// that must be refused.
func TestPluSKeys(t *testing.T) {
	sample := `# Scheduler Config file SAMPLE
NodeSortKey:    LowestLoadAverage, LongestIdleTime
JobSortKey:     QueuePriority, JobPriority
#
OwnersOrder:    studentA,studentB
GroupsOrder:    professors, doctors, masters
HostsOrder:     apgrid.org, hpcc.org
`
	c, errs, err := Parse(strings.NewReader(sample), "sched_conf")
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	want := &PluS{JobSortKey: []JobSortKey{QueuePriority, JobPriority},
		NodeSortKey: []NodeSortKey{LowestLoadAverage, LongestIdleTime},
		OwnersOrder: []string{"studentA", "studentB"}, GroupsOrder: []string{"professors", "doctors", "masters"},
		HostsOrder: []string{"apgrid.org", "hpcc.org"}, jobSortLine: 3}
	if !reflect.DeepEqual(c.PluS, want) {
		t.Errorf("PluS %+v\nwant %+v", c.PluS, want)
	}
	if !c.SortQueues[Prime] || c.ByQueue[Prime] || c.RoundRobin[Prime] || c.StrictFIFO[Prime] {
		t.Errorf("flags %+v", c)
	}
	// Keys that are not of the table are kept and leave the FIFO flags.
	c, errs, _ = Parse(strings.NewReader("by_queue true\nJobSortKey: OwnersName, LeastCPURequested\nOwnersOrder: a\n"), "x")
	if len(errs) != 0 || !c.ByQueue[Prime] || !reflect.DeepEqual(c.PluS.JobSortKey, []JobSortKey{OwnersName, LeastCPURequested}) {
		t.Errorf("non-table keys: %+v %v", c.PluS, errs)
	}
	if got := c.PluS.JobOrder(); !reflect.DeepEqual(got, []JobSortKey{OwnersName, LeastCPURequested}) {
		t.Errorf("JobOrder %v", got)
	}
	// Queue keys in a list outside the table choose the queue order.
	c, errs, _ = Parse(strings.NewReader("by_queue true\nJobSortKey: QueuePriority, QueueRoundRobin, MostNodeRequested\n"), "x")
	if len(errs) != 0 || c.ByQueue[Prime] || !c.RoundRobin[NonPrime] || !c.SortQueues[Prime] ||
		!reflect.DeepEqual(c.PluS.JobOrder(), []JobSortKey{MostNodeRequested}) {
		t.Errorf("queue keys: %+v %v", c.PluS, errs)
	}
	c, _, _ = Parse(strings.NewReader("JobSortKey: QueuePriority, ByQueue, JobPriority\n"), "x")
	if c.PluS.JobOrder() != nil {
		t.Errorf("a table form has job order %v", c.PluS.JobOrder())
	}
	for _, tc := range []struct {
		file, reason string
		line         int
	}{
		{"JobSortKey: QueueRoundRobin, ByQueue, JobPriority\n", "QueueRoundRobin and ByQueue: rr and bq must not be specified at the same time", 1},
		{"JobSortKey: Fastest\n", "unknown JobSortKey Fastest", 1},
		{"JobSortKey: JobPriority, JobPriority\n", "JobSortKey JobPriority given twice", 1},
		{"JobSortKey: SubmitTime, JobPriority\n", "SubmitTime before JobPriority leaves JobPriority without effect", 1},
		{"JobSortKey: QueuePriority,,JobPriority\n", `empty item in " QueuePriority,,JobPriority"`, 1},
		{"NodeSortKey: Random\n", "unknown NodeSortKey Random", 1},
		{"NodeSortKey: NodeName, NodeName\n", "NodeSortKey NodeName given twice", 1},
		{"# c\nJobSortKey: OwnersName, JobPriority\n", "JobSortKey OwnersName needs OwnersOrder", 2},
		{"JobSortKey: OwnersGroup\nOwnersOrder: a\n", "JobSortKey OwnersGroup needs GroupsOrder", 1},
		{"JobSortKey: OwnersHost\n", "JobSortKey OwnersHost needs HostsOrder", 1},
		{"HostsOrder:\n", `empty item in ""`, 1},
	} {
		c, errs, err := Parse(strings.NewReader(tc.file), "sched_config")
		if err != nil || len(errs) != 1 || errs[0].Reason != tc.reason || errs[0].Line != tc.line {
			t.Errorf("%q: %v %+v, want line %d %q", tc.file, err, errs, tc.line, tc.reason)
			continue
		}
		if c.RoundRobin[Prime] || c.StrictFIFO[Prime] || c.SortQueues[Prime] {
			t.Errorf("%q: refused line changed the flags", tc.file)
		}
	}
}

// FuzzParsePluS: any sched_config with PluS keys parses without panic;
// an accepted JobSortKey is either a table form whose flags map back to
// it, or a list the table does not cover.
func FuzzParsePluS(f *testing.F) {
	f.Add("JobSortKey: QueuePriority, ByQueue, JobPriority\nNodeSortKey: LowestLoadAverage\n")
	f.Add("JobSortKey: OwnersName, SubmitTime\nOwnersOrder: a, b\nGroupsOrder: g\nHostsOrder: h.org\n")
	f.Add("JobSortKey: QueueRoundRobin, ByQueue\nby_queue: true\n")
	f.Fuzz(func(t *testing.T, file string) {
		c, _, err := Parse(strings.NewReader(file), "fuzz")
		if err != nil || c.PluS == nil {
			return
		}
		if fl, ok := FIFOFlagsFor(c.PluS.JobSortKey); ok {
			keys, err := JobSortKeyFor(fl)
			if err != nil || !reflect.DeepEqual(keys, c.PluS.JobSortKey) {
				t.Fatalf("%v -> %+v -> %v, %v", c.PluS.JobSortKey, fl, keys, err)
			}
		}
	})
}
