package attr

import "strings"

// ACLKind tells how the entries of an ACL attribute are matched.
type ACLKind uint8

// ACL kinds.
const (
	ACLNone  ACLKind = iota // not an ACL
	ACLHost                 // host names, '*' wildcards (acl_hosts, submit_hosts, hostlist)
	ACLUser                 // user[@host] entries, '*' wildcards in the host part (acl_users, managers, operators, acl_roots)
	ACLGroup                // group names (acl_groups)
	ACLOther                // plain list (disallowed_types)
)

// globMatch matches name against pattern where '*' stands for any run of
// characters, case-insensitively.
func globMatch(pattern, name string) bool {
	if !strings.Contains(pattern, "*") {
		return strings.EqualFold(pattern, name)
	}
	p := strings.ToLower(pattern)
	n := strings.ToLower(name)
	parts := strings.Split(p, "*")
	if !strings.HasPrefix(n, parts[0]) {
		return false
	}
	n = n[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(n, mid)
		if i < 0 {
			return false
		}
		n = n[i+len(mid):]
	}
	return strings.HasSuffix(n, last) && len(n) >= len(last)
}

// MatchHost reports whether host is allowed by a host ACL: an entry that
// MatchHostEntry accepts.
func MatchHost(acl Value, host string) bool {
	for _, e := range acl.Elements() {
		if MatchHostEntry(e, host) {
			return true
		}
	}
	return false
}

// MatchHostEntry reports whether host matches one host ACL entry: a name
// equal to the host name (case-insensitive) or a pattern in which each '*'
// stands for any run of characters (e.g. *.example.com, node*).
func MatchHostEntry(entry, host string) bool { return globMatch(entry, host) }

// MatchUser reports whether user at host is allowed by a user ACL: an entry
// that MatchUserEntry accepts.
func MatchUser(acl Value, user, host string) bool {
	for _, e := range acl.Elements() {
		if MatchUserEntry(e, user, host) {
			return true
		}
	}
	return false
}

// MatchUserEntry reports whether user at host matches one user ACL entry,
// user[@host]: the user part must equal user (or be "*"); an entry without
// a host part matches any host, else the host part is matched like a host
// ACL entry (MatchHostEntry).
func MatchUserEntry(entry, user, host string) bool {
	u, h, hasHost := strings.Cut(entry, "@")
	if u != user && u != "*" {
		return false
	}
	return !hasHost || globMatch(h, host)
}

// MatchGroup reports whether group appears in a group ACL.
func MatchGroup(acl Value, group string) bool {
	for _, e := range acl.Elements() {
		if e == group {
			return true
		}
	}
	return false
}

// Contains reports whether the string array or ACL v has an element equal
// to s.
func (v Value) Contains(s string) bool {
	for _, e := range v.Elements() {
		if e == s {
			return true
		}
	}
	return false
}
