package server

import (
	pbsattr "gopbs/attr"
)

// access returns the attr access level of a requester: a manager has the
// operators' rights too.
func (p perm) access() pbsattr.Access {
	if p.svr {
		return pbsattr.AccessPrivileged
	}
	a := pbsattr.AccessUser
	if p.oper || p.mgr {
		a |= pbsattr.AccessOper
	}
	if p.mgr {
		a |= pbsattr.AccessMgr
	}
	return a
}

// writable reports whether the requester may write an attribute or
// resource with permissions ap.
func (p perm) writable(ap pbsattr.Perm) bool {
	return ap.Writable(p.access())
}
