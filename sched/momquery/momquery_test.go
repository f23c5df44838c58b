package momquery

import (
	"testing"

	"gopbs/sched/world"
)

func TestApplyCapturedAnswer(t *testing.T) {
	// Answer of capture 72 (max_load/ideal_load not configured).
	n := &world.Node{Name: "vm"}
	Apply(n, []string{"ncpus=2", "arch=linux", "physmem=24731708kb", "loadave=0.21", "max_load=? 15201", "ideal_load=? 15201"})
	if !n.MomOK || n.NCPUs != 2 || n.Arch != "linux" || n.PhysMem != 24731708<<10 || n.LoadAve != 0.21 || n.MaxLoad != 2 || n.IdealLoad != 2 {
		t.Errorf("node = %+v", n)
	}
	m := &world.Node{}
	Apply(m, []string{"ncpus=? 15201", "arch=x", "physmem=bad", "loadave=?", "max_load=3.5", "ideal_load=1.5"})
	if m.NCPUs != 1 || m.LoadAve != -1 || m.MaxLoad != 3.5 || m.IdealLoad != 1.5 || m.PhysMem != 0 {
		t.Errorf("fallbacks = %+v", m)
	}
	e := &world.Node{}
	Apply(e, nil)
	if e.NCPUs != 1 || e.MaxLoad != 1 {
		t.Errorf("empty = %+v", e)
	}
}
