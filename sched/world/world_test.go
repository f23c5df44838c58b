package world

import (
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512", 512, true}, {"16432940kb", 16432940 << 10, true}, {"2gb", 2 << 30, true},
		{"1MB", 1 << 20, true}, {"3kw", 3 * 8 << 10, true}, {"4w", 32, true}, {"1tb", 1 << 40, true},
		{"", 0, false}, {"kb", 0, false}, {"5xb", 0, false}, {"99999999999pb", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseSize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseSize(%q) = %d %v, want %d %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"01:00:00", time.Hour, true}, {"00:05:00", 5 * time.Minute, true}, {"90", 90 * time.Second, true},
		{"1:30", 90 * time.Second, true}, {"1:2:3:4", 0, false}, {"x", 0, false}, {"1:x:3", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseDuration(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseDuration(%q) = %v %v", tt.in, got, ok)
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"4", 4, true}, {"100mb", 100 << 20, true}, {"01:00:00", 3600, true}, {"1.5", 1.5, true},
		{"linux", 0, false}, {"", 0, false}, {"NaN", 0, false}, {"1:x", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseAmount(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseAmount(%q) = %v %v, want %v %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFromCapturedObjects(t *testing.T) {
	// Attributes as in the StatusQue / SelStat / StatusNode replies of
	// capture 72.
	q := FromQueue("batch", []Attr{
		{Name: "queue_type", Value: "Execution"},
		{Name: "resources_default", Resource: "nodes", Value: "1"},
		{Name: "resources_assigned", Resource: "nodect", Value: "0"},
		{Name: "enabled", Value: "True"}, {Name: "started", Value: "True"},
		{Name: "max_user_run", Value: "3"},
		{Name: "resources_max", Resource: "mem", Value: "4gb"},
	})
	if !q.Execution() || !q.Started || q.MaxUserRun != 3 || q.MaxRunning != Unlimited ||
		q.Resources.Assigned.NodeCt != 0 || q.Resources.Max.Mem != 4<<30 || q.Resources.Available.Mem != -1 {
		t.Errorf("queue %+v", q)
	}
	j := FromJob("12.vm", q, []Attr{
		{Name: "job_state", Value: "Q"}, {Name: "Priority", Value: "0"}, {Name: "qtime", Value: "1795310669"},
		{Name: "Resource_List", Resource: "neednodes", Value: "1"},
		{Name: "Resource_List", Resource: "nodect", Value: "1"},
		{Name: "Resource_List", Resource: "nodes", Value: "1"},
		{Name: "Resource_List", Resource: "walltime", Value: "01:00:00"},
		{Name: "euser", Value: "alice"}, {Name: "egroup", Value: "alice"},
		{Name: "resources_used", Resource: "cput", Value: "00:00:07"},
	})
	if j.State != 'Q' || j.User != "alice" || j.Nodes != "1" || j.NodeCt != 1 || j.Walltime != time.Hour ||
		j.QTime.Unix() != 1795310669 || j.CPUT != -1 || j.UsedCPUT != 7*time.Second || j.Mem != -1 {
		t.Errorf("job %+v", j)
	}
	k := FromJob("13.vm", q, []Attr{{Name: "etime", Value: "1795310600"}, {Name: "ctime", Value: "1795310500"},
		{Name: "mtime", Value: "1795310700"}, {Name: "interactive", Value: "True"}, {Name: "Account_Name", Value: "proj1"},
		{Name: "start_time", Value: "x"}})
	if k.ETime.Unix() != 1795310600 || k.CTime.Unix() != 1795310500 || k.MTime.Unix() != 1795310700 || !k.Interactive ||
		k.Account != "proj1" || !k.StartTime.IsZero() {
		t.Errorf("job times %+v", k)
	}
	n := FromNode("vm", []Attr{{Name: "state", Value: "job-exclusive,busy"}, {Name: "np", Value: "2"},
		{Name: "ntype", Value: "cluster"}, {Name: "jobs", Value: "0/12.vm, 1/13.vm"}, {Name: "properties", Value: "big,fast"}})
	if n.NP != 2 || n.UsedSlots != 2 || !n.JobExclusive || n.TimeShared || !n.Up() || !n.HasProperty("fast") || !n.HasProperty("vm") {
		t.Errorf("node %+v", n)
	}
	if FromNode("x", []Attr{{Name: "state", Value: "down"}}).Up() {
		t.Error("down node is up")
	}
	s := FromServer("vm", []Attr{{Name: "max_running", Value: "10"}, {Name: "tokens", Value: "lic:4,other:2.5"}, {Name: "default_queue", Value: "batch"}})
	if s.MaxRunning != 10 || s.MaxGroupRun != Unlimited || s.Tokens["other"] != 2.5 || s.DefaultQueue != "batch" {
		t.Errorf("server %+v", s)
	}
}

func FuzzParsers(f *testing.F) {
	f.Add("16432940kb")
	f.Add("01:00:00")
	f.Add("job-exclusive,busy")
	f.Fuzz(func(t *testing.T, s string) {
		ParseSize(s)
		ParseDuration(s)
		ParseNodeState(s)
		ParseTokens(s)
		FromJob("1", nil, []Attr{{Name: "Resource_List", Resource: "mem", Value: s}, {Name: "job_state", Value: s}, {Name: "qtime", Value: s}})
		FromNode("n", []Attr{{Name: "jobs", Value: s}, {Name: "properties", Value: s}, {Name: "np", Value: s}})
	})
}
