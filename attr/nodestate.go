package attr

import (
	"strconv"
	"strings"
)

// NodeState is the state bit set of a node (spec 10 §5.5).
type NodeState uint16

// Node state bits; a node with none of them is free.
const (
	NodeOffline    NodeState = 0x001
	NodeDown       NodeState = 0x002
	NodeDeleted    NodeState = 0x004 // never shown
	NodeReserve    NodeState = 0x008
	NodeJob        NodeState = 0x010 // job-exclusive
	NodeJobShare   NodeState = 0x020 // job-sharing
	NodeBusy       NodeState = 0x040
	NodeUnknown    NodeState = 0x100 // state-unknown
	NodeNeedsHello NodeState = 0x200 // server-internal, never shown
	NodeStateFree  NodeState = 0
	nodeStateShown           = NodeUnknown | NodeDown | NodeOffline | NodeReserve | NodeJob | NodeJobShare | NodeBusy
)

// nodeStateWords lists the state words in encoding order (spec 04 §8.1).
var nodeStateWords = [...]struct {
	word string
	bit  NodeState
}{
	{"state-unknown", NodeUnknown},
	{"down", NodeDown},
	{"offline", NodeOffline},
	{"reserve", NodeReserve},
	{"job-exclusive", NodeJob},
	{"job-sharing", NodeJobShare},
	{"busy", NodeBusy},
}

// String returns the comma list of the set state words in the order
// state-unknown, down, offline, reserve, job-exclusive, job-sharing, busy,
// or "free" when none is set.
func (st NodeState) String() string {
	if st&nodeStateShown == 0 {
		return "free"
	}
	var b strings.Builder
	for _, w := range nodeStateWords {
		if st&w.bit != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(w.word)
		}
	}
	return b.String()
}

// ParseNodeState decodes a comma list of state words (the words of String
// plus "free"). "free" together with another word is PBSE_MUTUALEX; an
// unknown word is PBSE_BADNDATVAL.
func ParseNodeState(text string) (NodeState, error) {
	var st NodeState
	free := false
	n := 0
	for _, w := range strings.Split(text, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		n++
		if w == "free" {
			free = true
			continue
		}
		found := false
		for _, d := range nodeStateWords {
			if d.word == w {
				st |= d.bit
				found = true
				break
			}
		}
		if !found {
			return 0, &Error{Code: pbseBadNdAtVal, Reason: "unknown node state " + strconv.Quote(w)}
		}
	}
	if free && n > 1 {
		return 0, &Error{Code: pbseMutualEx, Reason: "free combined with another state"}
	}
	return st, nil
}
