package admit

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/rootacl"
	"gopbs/server/state"
)

// userEntry is one User_List entry, "user[@host]".
type userEntry struct{ user, host string }

// userList parses a User_List value.
func userList(v string) []userEntry {
	var out []userEntry
	for _, e := range state.ParseArst(v) {
		u, h, _ := strings.Cut(strings.TrimSpace(e), "@")
		if u != "" {
			out = append(out, userEntry{u, h})
		}
	}
	return out
}

// ExecUser returns the user a job runs as on host (seed 001, Job
// Initiation): the User_List entry naming host, else the entry without a
// host, else the owner. host "" (not known yet) takes the entry without
// a host.
func ExecUser(j *state.Job, host string) string {
	list := userList(j.Attrs.Get(pbsattr.JobUserList))
	if host != "" {
		for _, e := range list {
			if e.host != "" && sameHost(e.host, host) {
				return e.user
			}
		}
	}
	for _, e := range list {
		if e.host == "" {
			return e.user
		}
	}
	return j.OwnerUser()
}

// sameHost reports whether two host names name the same host: equal
// (letter case aside) or one the short form of the other.
func sameHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	sa, _, _ := strings.Cut(a, ".")
	sb, _, _ := strings.Cut(b, ".")
	return strings.EqualFold(sa, sb) && (sa == a || sb == b)
}

// lookupRhosts returns the .rhosts file of a user and the user's uid.
func lookupRhosts(name string) (path string, uid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return "", 0, err
	}
	id, err := strconv.Atoi(u.Uid)
	if err != nil {
		return "", 0, fmt.Errorf("user %s: uid %q", name, u.Uid)
	}
	return filepath.Join(u.HomeDir, ".rhosts"), id, nil
}

// mayRunAs reports why owner (submitting from host) may not run a job as
// luser, or nil when it may (seed 001, Queue Job Request: "The job
// requires access to a user identifier that the client is not authorized
// to access"). The rule is the one of rsh: the same user name, or a line
// "<host> <owner>" in luser's ~/.rhosts, a file owned by luser (or root)
// that no one else may write; root is never reached that way.
func mayRunAs(rhosts func(string) (string, int, error), owner, host, luser string) error {
	if luser == owner {
		return nil
	}
	if luser == "root" {
		return fmt.Errorf("%s@%s may not run jobs as root", owner, host)
	}
	path, uid, err := rhosts(luser)
	if err != nil {
		return fmt.Errorf("no user %s: %w", luser, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s@%s may not run jobs as %s (no %s)", owner, host, luser, path)
	}
	defer f.Close()
	fi, err := f.Stat()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if err != nil || !ok || !fi.Mode().IsRegular() || (int(st.Uid) != uid && st.Uid != 0) || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s@%s may not run jobs as %s (%s is not %s's alone)", owner, host, luser, path, luser)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && !strings.HasPrefix(fields[0], "#") && sameHost(fields[0], host) && fields[1] == owner {
			return nil
		}
	}
	return fmt.Errorf("%s@%s may not run jobs as %s (not in %s)", owner, host, luser, path)
}

// CheckUserList refuses a job naming in its User_List a user its owner
// may not run as.
func (c *Checker) CheckUserList(j *state.Job) *batchreq.Reply {
	owner := j.OwnerUser()
	_, host, _ := strings.Cut(j.Owner(), "@")
	for _, e := range userList(j.Attrs.Get(pbsattr.JobUserList)) {
		if err := mayRunAs(lookupRhosts, owner, host, e.user); err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_BADUSER, "", err.Error())
		}
	}
	return nil
}

// CheckRoot refuses a job that would run as a superuser (its euser, a
// User_List entry or its owner being a uid-0 account) unless its owner is
// listed in the server's acl_roots: PBSE_BADUSER "root user <user> not
// allowed". It is called for a job entering an execution queue.
func (c *Checker) CheckRoot(j *state.Job) *batchreq.Reply {
	users := []string{ExecUser(j, "")}
	if eu := j.Attrs.Get(pbsattr.JobEuser); eu != "" {
		users = append(users, eu)
	}
	for _, e := range userList(j.Attrs.Get(pbsattr.JobUserList)) {
		users = append(users, e.user)
	}
	acl := state.ParseArst(c.st.Attrs().Get(pbsattr.SrvACLRoots))
	if err := rootacl.Check(acl, j.Owner(), users, rootacl.SystemUID); err != nil {
		return batchreq.ErrorReply(batchreq.PBSE_BADUSER, "", err.Error())
	}
	return nil
}
