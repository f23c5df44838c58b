package metrics

import (
	"strconv"
	"strings"

	"gopbs/mom/jobexec"
)

// JobLister lists the jobs a MOM holds (jobexec.Engine does).
type JobLister interface {
	Jobs() []jobexec.Status
}

// SysReader reads the node's resources as the MOM's resource monitor
// answers them (sysinfo.Collector does): LoadAverage, and Query of
// "physmem", "availmem", "totmem" ("1234kb") and "ncpus".
type SysReader interface {
	LoadAverage() (float64, error)
	Query(request string) (string, int)
}

// NodeSource is the Source of a running MOM: its engine's jobs and its
// node's resources.
type NodeSource struct {
	Name string
	Jobs JobLister
	Sys  SysReader
}

// Node implements Source.
func (s NodeSource) Node() Node {
	n := Node{Name: s.Name, Jobs: make(map[string]int)}
	if s.Jobs != nil {
		for _, j := range s.Jobs.Jobs() {
			n.Jobs[j.State.String()]++
		}
	}
	if s.Sys == nil {
		return n
	}
	if l, err := s.Sys.LoadAverage(); err == nil {
		n.Load, n.HasLoad = l, true
	}
	n.PhysMem = kbytes(s.Sys.Query("physmem"))
	n.AvailMem = kbytes(s.Sys.Query("availmem"))
	n.TotalMem = kbytes(s.Sys.Query("totmem"))
	if v, code := s.Sys.Query("ncpus"); code == 0 {
		n.CPUs, _ = strconv.Atoi(v)
	}
	return n
}

// kbytes converts a resource monitor answer such as "16384kb" to bytes,
// 0 when it failed (code non-zero) or is not such a size.
func kbytes(v string, code int) int64 {
	if code != 0 {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(v, "kb"), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n << 10
}
