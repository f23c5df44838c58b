package pbs

import (
	"errors"
	"fmt"
	"strings"

	"gopbs/batchreq"
)

// JobID is a parsed job id operand
// "seq[.parent_server[:port]][@current_server[:port]]" (spec 05 §1.1).
type JobID struct {
	Seq     string // digits, possibly with an array index "[...]"
	Parent  string // parent server as written, with ":port" if written
	Current string // server named after "@", as written

	// host is the server part Qualified uses, set by ResolveJobID: the
	// full host name of the parent (or default) server, with the port
	// written in the operand. Empty: the name as written, lower-cased.
	host string
}

// ErrBadJobID reports an operand that is not a job id.
var ErrBadJobID = errors.New("illegally formed job identifier")

// ParseJobID parses a job id operand.
func ParseJobID(s string) (JobID, error) {
	var j JobID
	rest, cur, hasAt := strings.Cut(s, "@")
	if hasAt {
		if cur == "" || !validServer(cur) {
			return j, ErrBadJobID
		}
		j.Current = cur
	}
	seq, parent, hasDot := strings.Cut(rest, ".")
	if seq == "" || !validSeq(seq) {
		return j, ErrBadJobID
	}
	j.Seq = seq
	if hasDot {
		if parent == "" || !validServer(parent) {
			return j, ErrBadJobID
		}
		j.Parent = parent
	}
	return j, nil
}

// maxSeqLen is the longest sequence part a job id may have (spec 05
// §1.1).
const maxSeqLen = 15

// validSeq reports whether s is a job id's sequence part: up to 15 digits
// and array brackets, starting with a digit.
func validSeq(s string) bool {
	if len(s) > maxSeqLen || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '[' && c != ']' {
			return false
		}
	}
	return true
}

func validServer(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c > '~' || c == '#' || c == '@' {
			return false
		}
	}
	return true
}

// ResolveJobID parses a job id operand and normalises its server part as
// TORQUE's clients do before sending it (spec 05 §1.1): the parent
// server's host name — the default server's when no parent was written —
// is replaced by its full, lower-cased name (FullHostName), keeping a
// ":port" written in the operand; with "@current_server" a written parent
// is used verbatim. A host name that cannot be resolved makes the operand
// an illegally formed job identifier (ErrBadJobID).
func ResolveJobID(s string) (JobID, error) {
	j, err := ParseJobID(s)
	if err != nil {
		return j, err
	}
	if j.Current != "" && j.Parent != "" {
		j.host = j.Parent
		return j, nil
	}
	name, port, hasPort := strings.Cut(j.Parent, ":")
	if j.Parent == "" {
		name, _, _ = strings.Cut(DefaultServer(), ":")
		hasPort = false
		if name == "" {
			return j, nil
		}
	}
	full, err := FullHostName(name)
	if err != nil {
		return j, fmt.Errorf("%w: %s: %w", ErrBadJobID, s, err)
	}
	if hasPort {
		full += ":" + port
	}
	j.host = full
	return j, nil
}

// Qualified returns the id as sent on the wire: seq + "." + the server
// part ResolveJobID computed or, for an id from ParseJobID, the parent
// server's name as written (lower-cased) — the default server's host when
// no parent was written.
func (j JobID) Qualified() string {
	if j.host != "" {
		return j.Seq + "." + j.host
	}
	parent := j.Parent
	if parent == "" {
		parent, _, _ = strings.Cut(DefaultServer(), ":")
	}
	if parent == "" {
		return j.Seq
	}
	return j.Seq + "." + strings.ToLower(parent)
}

// Server returns the server the request goes to: the "@" server, else the
// parent server, else "" (the default server).
func (j JobID) Server() string {
	if j.Current != "" {
		return j.Current
	}
	return j.parentServer()
}

// parentServer is the parent server to connect to. A parent written
// without a port that names the default server's host takes the default
// server's port, so that ids such as "12.srv" work when PBS_DEFAULT is
// "srv:15011" (with the standard port nothing changes). When the default
// list has several servers (a failover pair, docs/failover.md) a parent
// naming the host of any of them is the whole list (""), tried in turn:
// the servers of a pair share the name of their jobs' ids, and whichever
// is active serves them.
func (j JobID) parentServer() string {
	if j.Parent == "" || strings.Contains(j.Parent, ":") {
		return j.Parent
	}
	if list := ServerList(); strings.Contains(list, ",") {
		for _, s := range strings.Split(list, ",") {
			if host, _, _ := strings.Cut(strings.TrimSpace(s), ":"); strings.EqualFold(host, j.Parent) {
				return ""
			}
		}
	}
	def := DefaultServer()
	if host, _, hasPort := strings.Cut(def, ":"); hasPort && strings.EqualFold(host, j.Parent) {
		return def
	}
	return j.Parent
}

// LocateID is the id sent in the LocateJob request of a retry:
// "<id>@<parent>" or just the id when there is no parent.
func (j JobID) LocateID() string {
	id := j.Qualified()
	if j.Parent == "" {
		return id
	}
	return id + "@" + j.Parent
}

// ConnectError marks a failure to connect, as opposed to a refusal of the
// request by the server.
type ConnectError struct {
	Server string
	Err    error
}

func (e *ConnectError) Error() string {
	return "cannot connect to server " + e.Server + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ConnectError) Unwrap() error { return e.Err }

// WithLocate runs fn on a connection to the job's server with the
// qualified id. If the server answers PBSE_UNKJOBID it disconnects, asks
// the parent server where the job is (LocateJob on a second connection)
// and, if a location comes back, repeats fn there once. The error of the
// original request is returned when locating fails.
//
// connect makes the first connection (nil: Connect); the locate and retry
// connections use Connect.
func WithLocate(j JobID, connect func(string) (*Conn, error), fn func(c *Conn, id string) error) error {
	if connect == nil {
		connect = Connect
	}
	id := j.Qualified()
	c, err := connect(j.Server())
	if err != nil {
		return &ConnectError{Server: j.Server(), Err: err}
	}
	err = fn(c, id)
	c.Close()
	if Errno(err) != batchreq.PBSE_UNKJOBID {
		return err
	}
	loc, lerr := Locate(j)
	if lerr != nil || loc == "" {
		return err
	}
	c2, cerr := Connect(loc)
	if cerr != nil {
		return err
	}
	defer c2.Close()
	return fn(c2, id)
}

// Locate asks the job's parent server (the default server if none) where
// the job is.
func Locate(j JobID) (string, error) {
	c, err := Connect(j.parentServer())
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.LocateJob(j.LocateID())
}
