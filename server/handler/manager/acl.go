package manager

import (
	"slices"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/state"
)

// listKind says how the elements of a list-valued (ACL) attribute are
// checked when a manager sets them.
type listKind uint8

const (
	listPlain    listKind = iota // no element syntax: duplicates only
	listHosts                    // host names or wildcards (acl_hosts)
	listUserHost                 // user@host entries (managers, operators)
	listJobTypes                 // disallowed_types words
)

// aclLists maps the ACL attributes of servers and queues (spec 04 §1
// "acl" type) to the checks their elements get.
var aclLists = map[string]listKind{
	"acl_hosts":        listHosts,
	"acl_users":        listPlain,
	"acl_groups":       listPlain,
	"acl_roots":        listPlain,
	"hostlist":         listPlain,
	"managers":         listUserHost,
	"operators":        listUserHost,
	"disallowed_types": listJobTypes,
}

// checkACL checks the elements a Manager set or += puts into an ACL
// attribute (old is the current value, v the decoded new elements):
//
//   - disallowed_types accepts only the words of attr.DisallowedTypes, else
//     PBSE_BADDISALLOWTYPE (bad-attribute reply);
//   - acl_hosts elements and the host part of managers/operators entries
//     must be host names or '*' wildcards, and managers/operators entries
//     must be user@host; else PBSE_BADACLHOST "First bad host: <host>"
//     (the reply and LOG_ERROR line of the capture run's server log);
//   - no list may hold an element twice, either within the new value or,
//     for +=, one already present: PBSE_DUPLIST (bad-attribute reply).
//
// Host names are checked for their syntax only: whether a name resolves
// depends on the machine, not on the request.
func (r *request) checkACL(a *batchreq.Attr, v, old string) *batchreq.Reply {
	kind, ok := aclLists[strings.ToLower(a.Name)]
	if !ok {
		return nil
	}
	elems := state.ParseArst(v)
	for _, e := range elems {
		switch kind {
		case listJobTypes:
			if !slices.Contains(pbsattr.DisallowedTypes, e) {
				return batchreq.BadAttrReply(batchreq.PBSE_BADDISALLOWTYPE, a)
			}
		case listHosts:
			if !state.ValidHostPattern(e) {
				return r.badACLHost(e, e)
			}
		case listUserHost:
			user, host, found := strings.Cut(e, "@")
			if !found || user == "" || !state.ValidHostPattern(host) {
				return r.badACLHost(e, host)
			}
		}
	}
	seen := map[string]bool{}
	if a.Op == batchreq.INCR || a.Op == batchreq.INCR_OLD {
		for _, e := range state.ParseArst(old) {
			seen[aclKey(kind, e)] = true
		}
	}
	for _, e := range elems {
		k := aclKey(kind, e)
		if seen[k] {
			return batchreq.BadAttrReply(batchreq.PBSE_DUPLIST, a)
		}
		seen[k] = true
	}
	return nil
}

// aclKey is the form in which two elements of a list are the same: host
// names compare without regard to case.
func aclKey(kind listKind, e string) string {
	switch kind {
	case listHosts:
		return strings.ToLower(e)
	case listUserHost:
		user, host, _ := strings.Cut(e, "@")
		return user + "@" + strings.ToLower(host)
	}
	return e
}

// badACLHost logs and answers a host ACL entry that is not a host.
func (r *request) badACLHost(entry, host string) *batchreq.Reply {
	r.log.Logf(logline.EventError, logline.ClassServer, "PBS_Server",
		"LOG_ERROR::%s (%d) in manager_oper_chk, bad entry in acl: %s",
		batchreq.ErrorText(batchreq.PBSE_BADACLHOST), batchreq.PBSE_BADACLHOST, entry)
	return batchreq.ErrorReply(batchreq.PBSE_BADACLHOST, "", "First bad host: "+host)
}
