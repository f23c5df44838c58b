package server

import (
	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// aclMatchUser reports whether user@host matches an entry of a user ACL
// (state.MatchUserACL).
func aclMatchUser(acl []string, who string) bool { return state.MatchUserACL(acl, who) }

// hostMatch reports whether host matches a host ACL entry: the same name
// without regard to case, or a pattern with '*' wildcards
// (attr.MatchHostEntry).
func hostMatch(pattern, host string) bool { return pbsattr.MatchHostEntry(pattern, host) }
