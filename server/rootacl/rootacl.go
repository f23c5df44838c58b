// Package rootacl decides whether a job may run as the superuser: the
// server attribute acl_roots lists the owners (user@host entries, '*'
// wildcards in the host part) whose jobs may run with uid 0. A job that
// would run as a uid-0 account for an owner not listed is refused, and
// with acl_roots unset every such job is refused (spec 04 §6 attribute
// 11; issue 20).
package rootacl

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
)

// Refusal is the reason a job may not run as the superuser. Its message
// is the MSG part of the PBSE_BADUSER reply ("Bad UID for job execution
// MSG=root user root not allowed").
type Refusal struct {
	Owner string // the job's owner, user@host
	User  string // the uid-0 account the job would run as
}

// Error returns "root user <owner's user name> not allowed".
func (r *Refusal) Error() string {
	u, _, _ := strings.Cut(r.Owner, "@")
	return fmt.Sprintf("root user %s not allowed", u)
}

// UIDFunc returns the uid of a user name on this host; ok is false for a
// name the host does not know.
type UIDFunc func(name string) (uid int, ok bool)

// SystemUID looks name up in the host's user database.
func SystemUID(name string) (int, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, false
	}
	id, err := strconv.Atoi(u.Uid)
	if err != nil {
		return 0, false
	}
	return id, true
}

// IsSuperuser reports whether name is a uid-0 account: "root" always
// (whether or not this host knows it), else an account uidOf maps to 0.
func IsSuperuser(name string, uidOf UIDFunc) bool {
	if name == "root" {
		return true
	}
	if uidOf == nil {
		return false
	}
	id, ok := uidOf(name)
	return ok && id == 0
}

// Check returns a *Refusal when one of users (the accounts the job may
// run as: its User_List entries and the account it runs as where none
// names the execution host) is a superuser and owner ("user@host")
// matches no entry of acl (the elements of acl_roots); else nil.
func Check(acl []string, owner string, users []string, uidOf UIDFunc) error {
	for _, u := range users {
		if !IsSuperuser(u, uidOf) {
			continue
		}
		if Allowed(acl, owner) {
			return nil
		}
		return &Refusal{Owner: owner, User: u}
	}
	return nil
}

// Allowed reports whether owner ("user@host") matches an entry of acl:
// "user" for any host, "user@host" with '*' wildcards in the host part.
func Allowed(acl []string, owner string) bool {
	u, h, _ := strings.Cut(owner, "@")
	for _, e := range acl {
		if pbsattr.MatchUserEntry(strings.TrimSpace(e), u, h) {
			return true
		}
	}
	return false
}
