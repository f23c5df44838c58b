package jobexec

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// Credentials identify the user a job runs as.
type Credentials struct {
	Name   string
	UID    uint32
	GID    uint32 // egroup (or the primary group)
	Groups []uint32
	Home   string
	Shell  string // login shell from the password file
}

// LookupFunc resolves an execution user and group (empty group = primary).
type LookupFunc func(userName, group string) (*Credentials, error)

// LookupUser resolves a user from the password database (/etc/passwd for the
// login shell, os/user for ids and supplementary groups).
func LookupUser(userName, group string) (*Credentials, error) {
	u, err := user.Lookup(userName)
	if err != nil {
		return nil, fmt.Errorf("lookup user %q: %w", userName, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("lookup user %q: non-numeric ids", userName)
	}
	c := &Credentials{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	if group != "" {
		g, err := user.LookupGroup(group)
		if err != nil {
			if n, nerr := strconv.ParseUint(group, 10, 32); nerr == nil {
				c.GID = uint32(n)
			} else {
				return nil, fmt.Errorf("lookup group %q: %w", group, err)
			}
		} else if n, err := strconv.ParseUint(g.Gid, 10, 32); err == nil {
			c.GID = uint32(n)
		}
	}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if n, err := strconv.ParseUint(s, 10, 32); err == nil {
				c.Groups = append(c.Groups, uint32(n))
			}
		}
	}
	c.Shell = loginShell("/etc/passwd", userName)
	if c.Shell == "" {
		c.Shell = "/bin/sh"
	}
	return c, nil
}

// loginShell returns the 7th field of the user's passwd line.
func loginShell(passwd, name string) string {
	f, err := os.Open(passwd)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 7 && fields[0] == name {
			return fields[6]
		}
	}
	return ""
}

// lookupGroupName returns the name of a group id, or the number as text.
func lookupGroupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}
