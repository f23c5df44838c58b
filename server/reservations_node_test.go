package server

import (
	"reflect"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/sched/config"
	"gopbs/sched/reservable"
	"gopbs/server/state"
)

// TestReservableNodeFromStatus: the reservability policy's node record
// takes the MOM's status (a TORQUE MOM's line from the captures) for
// arch, opsys, loadave, physmem and idletime, so that NodeSortKey's
// LowestLoadAverage, LargestPhysicalMemory and LongestIdleTime order by
// what the nodes report.
func TestReservableNodeFromStatus(t *testing.T) {
	node := func(name, status string, st int) *state.Node {
		n := &state.Node{Name: name, NP: 2, State: st}
		n.Attrs.Set(pbsattr.NodeProperties, "fast,big")
		n.Attrs.Set(pbsattr.NodeStatus, status)
		return n
	}
	got := reservableNode(node("vm", "opsys=linux,uname=Linux vm 6.1.0 #1 SMP x86_64,sessions=? 0,nsessions=? 0,nusers=0,idletime=223587,totmem=3076496kb,availmem=2806812kb,physmem=2026868kb,ncpus=2,loadave=0.25,netload=1434913226,state=free,arch=linux", 0), 1)
	if got.Name != "vm" || !got.IsAlive || got.NCPU != 2 || got.NRunJobs != 1 || got.OS != "linux" || got.Arch != "linux" ||
		got.LoadAvg != 0.25 || got.IdleSeconds != 223587 || got.PhysMem != 2026868<<10 ||
		!reflect.DeepEqual(got.Properties, []string{"fast", "big"}) || got.Resources["ncpus"] != "2" {
		t.Errorf("node record %+v", got)
	}
	if reservableNode(node("n2", "", state.NodeStateDown), 0).IsAlive {
		t.Error("a down node is alive")
	}
	nodes := []*reservable.Node{
		reservableNode(node("busy", "idletime=5,loadave=0.00", 0), 0),
		reservableNode(node("idle", "idletime=9000,loadave=0.00", 0), 0),
		reservableNode(node("mid", "idletime=600,loadave=0.00", 0), 0),
	}
	reservable.SortNodes(nodes, []config.NodeSortKey{config.LowestLoadAverage, config.LongestIdleTime})
	var order []string
	for _, n := range nodes {
		order = append(order, n.Name)
	}
	if !reflect.DeepEqual(order, []string{"idle", "mid", "busy"}) {
		t.Errorf("LongestIdleTime order %v", order)
	}
}
