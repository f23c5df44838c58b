package handler

import (
	"gopbs/attr"
	"gopbs/server/state"
)

// Access returns attr's access level of the asker: privileged peers have
// every right, and a manager has the operators' rights too.
func (a *Asker) Access() attr.Access {
	if a.Privileged {
		return attr.AccessPrivileged
	}
	acc := attr.AccessUser
	if a.Operator || a.Manager {
		acc |= attr.AccessOper
	}
	if a.Manager {
		acc |= attr.AccessMgr
	}
	return acc
}

// Readable reports whether the asker may read an attribute or resource
// with permissions ap and flags af; isOwner is set when the asker owns
// the object (FlagPrivRead values are its owner's, operators' and
// managers'). FlagNoReport values are read by no one.
func (a *Asker) Readable(ap attr.Perm, af attr.Flag, isOwner bool) bool {
	if af&attr.FlagNoReport != 0 {
		return false
	}
	if af&attr.FlagPrivRead != 0 && !isOwner && !a.Operator && !a.Manager {
		return false
	}
	// what users may read, everyone may
	return ap&attr.ReadUser != 0 || ap.Readable(a.Access())
}

// Writable reports whether the asker may write an attribute or resource
// with permissions ap.
func (a *Asker) Writable(ap attr.Perm) bool { return ap.Writable(a.Access()) }

// SeesQueue reports whether the asker's slice holds queue q (every
// queue when it has none).
func (a *Asker) SeesQueue(q *state.Queue) bool {
	return a.Slice == nil || q != nil && a.Slice.Sees(q.Attrs.Get(attr.QueuePartition))
}

// SeesNode reports whether the asker's slice holds node n.
func (a *Asker) SeesNode(n *state.Node) bool {
	return a.Slice == nil || a.Slice.Sees(n.Attrs.Get(attr.NodePartition))
}
