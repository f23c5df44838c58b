package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"gopbs/mom/jobexec"
	"gopbs/mom/sysinfo"
)

type fixedSource struct{ n Node }

func (f fixedSource) Node() Node { return f.n }

func TestNodeMetrics(t *testing.T) {
	m := New(fixedSource{Node{
		Name: "n1", Jobs: map[string]int{"running": 2, "exited": 1},
		Load: 1.5, HasLoad: true, PhysMem: 8 << 30, AvailMem: 5 << 30, TotalMem: 10 << 30, CPUs: 4,
	}}, "2.5.13")
	m.EnforcementKill("walltime 9 exceeded limit 5")
	m.EnforcementKill("pmem exceeded limit 1024")
	m.EnforcementKill("walltime")
	want := `
# HELP gopbs_mom_cpus Processors of the node (ncpus).
# TYPE gopbs_mom_cpus gauge
gopbs_mom_cpus 4
# HELP gopbs_mom_enforcement_kills_total Jobs killed for exceeding a limit, by the limit's resource (cput, pcput, vmem, pvmem, mem, pmem, walltime).
# TYPE gopbs_mom_enforcement_kills_total counter
gopbs_mom_enforcement_kills_total{resource="cput"} 0
gopbs_mom_enforcement_kills_total{resource="mem"} 0
gopbs_mom_enforcement_kills_total{resource="pcput"} 0
gopbs_mom_enforcement_kills_total{resource="pmem"} 1
gopbs_mom_enforcement_kills_total{resource="pvmem"} 0
gopbs_mom_enforcement_kills_total{resource="vmem"} 0
gopbs_mom_enforcement_kills_total{resource="walltime"} 2
# HELP gopbs_mom_info Always 1: the MOM's node name and version.
# TYPE gopbs_mom_info gauge
gopbs_mom_info{node="n1",version="2.5.13"} 1
# HELP gopbs_mom_jobs Jobs the MOM holds, by state (starting, running, suspended, exited).
# TYPE gopbs_mom_jobs gauge
gopbs_mom_jobs{state="exited"} 1
gopbs_mom_jobs{state="running"} 2
gopbs_mom_jobs{state="starting"} 0
gopbs_mom_jobs{state="suspended"} 0
# HELP gopbs_mom_load1 One-minute load average of the node (loadave).
# TYPE gopbs_mom_load1 gauge
gopbs_mom_load1 1.5
# HELP gopbs_mom_memory_bytes Memory of the node: physical (physmem), available (availmem: free memory and swap), total (totmem: memory and swap).
# TYPE gopbs_mom_memory_bytes gauge
gopbs_mom_memory_bytes{kind="available"} 5.36870912e+09
gopbs_mom_memory_bytes{kind="physical"} 8.589934592e+09
gopbs_mom_memory_bytes{kind="total"} 1.073741824e+10
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"gopbs_mom_cpus", "gopbs_mom_enforcement_kills_total", "gopbs_mom_info", "gopbs_mom_jobs",
		"gopbs_mom_load1", "gopbs_mom_memory_bytes"); err != nil {
		t.Error(err)
	}
}

// TestUnknownNode checks that what the source could not read is left out
// rather than exported as 0.
func TestUnknownNode(t *testing.T) {
	m := New(fixedSource{Node{Name: "n2"}}, "v")
	for name, want := range map[string]int{"gopbs_mom_load1": 0, "gopbs_mom_memory_bytes": 0, "gopbs_mom_cpus": 0, "gopbs_mom_jobs": 4, "gopbs_mom_info": 1} {
		if got := testutil.CollectAndCount(m.Registry(), name); got != want {
			t.Errorf("%s: %d series, want %d", name, got, want)
		}
	}
}

type jobList []jobexec.Status

func (l jobList) Jobs() []jobexec.Status { return l }

// TestNodeSource reads a node through the MOM's own resource monitor
// (sysinfo) from a made-up /proc.
func TestNodeSource(t *testing.T) {
	proc := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(proc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("loadavg", "0.75 0.50 0.25 1/100 4242\n")
	write("meminfo", "MemTotal:       16384 kB\nMemFree:         4096 kB\nSwapTotal:       2048 kB\nSwapFree:        1024 kB\n")
	write("cpuinfo", "processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nmodel name\t: x\n")
	src := NodeSource{
		Name: "n3",
		Jobs: jobList{{JobID: "1.s", State: jobexec.StateRunning}, {JobID: "2.s", State: jobexec.StateRunning}, {JobID: "3.s", State: jobexec.StateSuspended}},
		Sys:  &sysinfo.Collector{Proc: proc},
	}
	n := src.Node()
	if n.Name != "n3" || !n.HasLoad || n.Load != 0.75 || n.CPUs != 2 {
		t.Errorf("node %+v", n)
	}
	if n.PhysMem != 16384<<10 || n.AvailMem != 5120<<10 || n.TotalMem != 18432<<10 {
		t.Errorf("memory %d %d %d", n.PhysMem, n.AvailMem, n.TotalMem)
	}
	if n.Jobs["running"] != 2 || n.Jobs["suspended"] != 1 || len(n.Jobs) != 2 {
		t.Errorf("jobs %v", n.Jobs)
	}
	// An unreadable /proc: nothing but the name and the (empty) jobs.
	n = NodeSource{Name: "n4", Sys: &sysinfo.Collector{Proc: filepath.Join(proc, "missing")}}.Node()
	if n.HasLoad || n.PhysMem != 0 || n.CPUs != 0 || len(n.Jobs) != 0 {
		t.Errorf("unreadable proc: %+v", n)
	}
}

func TestKbytes(t *testing.T) {
	for _, c := range []struct {
		v    string
		code int
		want int64
	}{{"10kb", 0, 10240}, {"0kb", 0, 0}, {"10kb", 1, 0}, {"x", 0, 0}, {"-5kb", 0, 0}} {
		if got := kbytes(c.v, c.code); got != c.want {
			t.Errorf("kbytes(%q, %d) = %d, want %d", c.v, c.code, got, c.want)
		}
	}
}
