package state

import (
	"gopbs/attr"
)

// Node state bits (spec 04 §8.1, order of the encoding).
const (
	NodeStateUnknown = 1 << iota
	NodeStateDown
	NodeStateOffline
	NodeStateReserve
	NodeStateJobExclusive
	NodeStateJobSharing
	NodeStateBusy
	// NodeStateNotReported marks a node whose MOM has not sent a status
	// since the node was created or the server started. TORQUE shows such
	// a node as offline ("down,offline" until its MOM's hello, "offline"
	// until its first status) and runs nothing there. It is the MOM's to
	// clear, not kept in the node's record.
	NodeStateNotReported
)

// NodeStateUnreported is the state of a node that has not reported: down
// until its MOM says hello, and not reported until its first status.
const NodeStateUnreported = NodeStateDown | NodeStateNotReported

// nodeStateBits gives attr's node state bit for each of the server's
// (bit i of the server's state is nodeStateBits[i]). The server keeps its
// own numbering because node records store it.
var nodeStateBits = [...]attr.NodeState{
	attr.NodeUnknown, attr.NodeDown, attr.NodeOffline, attr.NodeReserve,
	attr.NodeJob, attr.NodeJobShare, attr.NodeBusy,
}

// NodeStateToAttr converts the server's node state bits to attr's.
func NodeStateToAttr(s int) attr.NodeState {
	var st attr.NodeState
	for i, b := range nodeStateBits {
		if s&(1<<i) != 0 {
			st |= b
		}
	}
	if s&NodeStateNotReported != 0 {
		st |= attr.NodeOffline
	}
	return st
}

// NodeStateFromAttr converts attr's node state bits to the server's; bits
// the server does not keep are dropped.
func NodeStateFromAttr(st attr.NodeState) int {
	s := 0
	for i, b := range nodeStateBits {
		if st&b != 0 {
			s |= 1 << i
		}
	}
	return s
}

// FormatNodeState returns the state words of the server's node state bits
// ("free" for none).
func FormatNodeState(s int) string { return NodeStateToAttr(s).String() }

// Node is one compute node.
type Node struct {
	Name       string
	NP         int
	State      int
	TimeShared bool
	Attrs      Attrs // properties, status, note, gpus, gpu_status
	Order      int64
}
