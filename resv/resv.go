package resv

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reservation is one advance reservation as the server keeps it.
type Reservation struct {
	ID    string   // "R<n>"
	Owner string   // user who made it
	Users []string // users allowed to submit into it (-U), besides the owner

	Start time.Time
	End   time.Time

	// NodeCount is the number of nodes wanted (-n); Nodes, if set, names
	// them (a node list given to -n instead of a count).
	NodeCount int
	Nodes     []string
	Req       Requirements
	// Partition, if set, is the partition whose nodes the reservation
	// holds (plus_reserve -partition, seed 003 interface 8); its queue
	// is then in that partition, scheduled by the partition's scheduler.
	// Without one, the reservation holds nodes of no partition.
	Partition string

	Status
	// Change holds the new values of a pending modify (Pending ==
	// OpModify); nil otherwise.
	Change *Change
	// PendingSince is when the pending operation was requested.
	PendingSince time.Time

	Assigned []string  // nodes the server assigned
	Created  time.Time // when the reservation was made
	Usage    Usage
}

// Requirements are what every reserved node must offer (plus_reserve
// -mem, -ncpu, -arch, -os, -l, -sn).
type Requirements struct {
	MemBytes int64    // -mem: physical memory, 0 for any
	NCPU     int      // -ncpu: processors of the node, 0 for any
	Slots    int      // -sn: job slots (np) per node, 0 for any
	Arch     string   // -arch: the node's arch resource, "" for any
	OS       string   // -os: the node's opsys resource, "" for any
	Attrs    []Attr   // -l attr=value: a resource with that value, or a property (value "")
	Props    []string // node properties, from -l entries without a value
}

// Attr is one -l attr=value requirement.
type Attr struct{ Name, Value string }

// Change is what plus_modify asks for; zero fields keep the old values.
type Change struct {
	Start     time.Time
	End       time.Time
	NodeCount int
	Users     []string
	SetUsers  bool // Users replaces the list (even with none)
}

// Usage is what a reservation used, written in its end record.
type Usage struct {
	ActualStart time.Time // when it began running (zero if it never did)
	ActualEnd   time.Time // when it ended or was cancelled while running
	Jobs        int       // jobs that ran in it
	JobSeconds  int64     // node-seconds its jobs used (sum over jobs of nodes x run time)
}

// Duration is End - Start.
func (r *Reservation) Duration() time.Duration { return r.End.Sub(r.Start) }

// Wanted is the number of nodes wanted: the count, or the length of the
// node list.
func (r *Reservation) Wanted() int {
	if len(r.Nodes) > 0 {
		return len(r.Nodes)
	}
	return r.NodeCount
}

// NodeSeconds is the reserved node time: nodes wanted x duration.
func (r *Reservation) NodeSeconds() int64 {
	return int64(r.Wanted()) * int64(r.Duration()/time.Second)
}

// MayUse reports whether user may submit jobs into the reservation: its
// owner and its users.
func (r *Reservation) MayUse(user string) bool {
	return user == r.Owner || slices.Contains(r.Users, user)
}

// MayChange reports whether requester may modify, cancel, destroy,
// commit or abort the reservation: its owner, or a manager.
func (r *Reservation) MayChange(requester string, manager bool) bool {
	return manager || requester == r.Owner
}

// Apply applies a committed modify to the reservation.
func (r *Reservation) Apply(c *Change) {
	if !c.Start.IsZero() {
		r.Start = c.Start
	}
	if !c.End.IsZero() {
		r.End = c.End
	}
	if c.NodeCount > 0 {
		r.NodeCount = c.NodeCount
		r.Nodes = nil
	}
	if c.SetUsers {
		r.Users = slices.Clone(c.Users)
	}
}

// FormatID returns the id of reservation number n: "R<n>".
func FormatID(n int) string { return "R" + strconv.Itoa(n) }

// ParseID returns the number of a reservation id ("R123", also "r123" or
// "123").
func ParseID(s string) (int, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "R"), "r")
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || t == "" || t[0] == '+' || t[0] == '-' || len(t) > 9 {
		return 0, fmt.Errorf("bad reservation id %q: want R<number>", s)
	}
	return n, nil
}

// ValidationError lists everything wrong with a request.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "; ") }

// ErrInvalid is wrapped by every *ValidationError.
var ErrInvalid = errors.New("invalid reservation request")

// Unwrap lets errors.Is(err, ErrInvalid) match.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Grace is how far in the past a start may be and still be taken as
// "now": the command's and the server's clocks, and the time between
// typing and arriving.
const Grace = time.Minute

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.@-]*$`)

// Validate checks a new reservation request at time now: the window (an
// end after the start, a start not in the past), the nodes (a positive
// count, or a list of distinct names), the users and the requirements.
// It returns a *ValidationError naming every problem, or nil.
func (r *Reservation) Validate(now time.Time) error {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	switch {
	case r.Start.IsZero():
		add("no start time")
	case r.Start.Before(now.Add(-Grace)):
		add("start %s is in the past (now %s)", r.Start.Format(TimeLayout), now.Format(TimeLayout))
	}
	switch {
	case r.End.IsZero():
		add("no end time or duration")
	case !r.Start.IsZero() && !r.End.After(r.Start):
		add("end %s is not after start %s", r.End.Format(TimeLayout), r.Start.Format(TimeLayout))
	case !r.Start.IsZero() && r.End.Sub(r.Start) > maxDuration:
		add("duration over 100 years")
	}
	switch {
	case len(r.Nodes) > 0:
		seen := map[string]bool{}
		for _, n := range r.Nodes {
			if !nameRE.MatchString(n) {
				add("bad node name %q", n)
			} else if seen[n] {
				add("node %s listed twice", n)
			}
			seen[n] = true
		}
	case r.NodeCount <= 0:
		add("number of nodes must be at least 1")
	}
	if r.Owner == "" {
		add("no owner")
	}
	for _, u := range r.Users {
		if !nameRE.MatchString(u) {
			add("bad user name %q", u)
		}
	}
	p = append(p, r.Req.problems()...)
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

func (q *Requirements) problems() []string {
	var p []string
	if q.MemBytes < 0 {
		p = append(p, "memory must not be negative")
	}
	if q.NCPU < 0 {
		p = append(p, "number of CPUs must not be negative")
	}
	if q.Slots < 0 {
		p = append(p, "number of slots must not be negative")
	}
	for _, a := range q.Attrs {
		if !nameRE.MatchString(a.Name) {
			p = append(p, fmt.Sprintf("bad attribute name %q", a.Name))
		}
	}
	for _, s := range q.Props {
		if !nameRE.MatchString(s) {
			p = append(p, fmt.Sprintf("bad node property %q", s))
		}
	}
	return p
}

// ValidateChange checks a plus_modify of r at time now: the resulting
// window must be valid, and a running reservation's start cannot move.
func (r *Reservation) ValidateChange(c *Change, now time.Time) error {
	next := *r
	next.Apply(c)
	var p []string
	if r.State == Running && !c.Start.IsZero() && !c.Start.Equal(r.Start) {
		p = append(p, "the start of a running reservation cannot change")
	}
	if !c.Start.IsZero() && r.State != Running && c.Start.Before(now.Add(-Grace)) {
		p = append(p, fmt.Sprintf("start %s is in the past (now %s)", c.Start.Format(TimeLayout), now.Format(TimeLayout)))
	}
	if !next.End.After(next.Start) {
		p = append(p, fmt.Sprintf("end %s is not after start %s", next.End.Format(TimeLayout), next.Start.Format(TimeLayout)))
	}
	if r.State == Running && !c.End.IsZero() && !c.End.After(now) {
		p = append(p, "the end of a running reservation must be in the future")
	}
	if c.NodeCount < 0 {
		p = append(p, "number of nodes must be at least 1")
	}
	for _, u := range c.Users {
		if !nameRE.MatchString(u) {
			p = append(p, fmt.Sprintf("bad user name %q", u))
		}
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// Overlaps reports whether the reservation's window overlaps [start, end).
func (r *Reservation) Overlaps(start, end time.Time) bool {
	return r.Start.Before(end) && start.Before(r.End)
}

// ParseMem reads a -mem value: a number of megabytes, or a number with
// a unit b, kb, mb, gb or tb (w for words is not taken), as TORQUE's
// size values. It returns bytes.
func ParseMem(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 15 {
		return 0, fmt.Errorf("bad memory size %q: want a number of megabytes or a size such as 512mb, 2gb", s)
	}
	n, _ := strconv.ParseInt(t[:i], 10, 64)
	shift := map[string]uint{"": 20, "b": 0, "kb": 10, "k": 10, "mb": 20, "m": 20, "gb": 30, "g": 30, "tb": 40, "t": 40}
	sh, ok := shift[t[i:]]
	if !ok {
		return 0, fmt.Errorf("bad memory size %q: unknown unit %q (b, kb, mb, gb, tb)", s, t[i:])
	}
	if n > (1<<62)>>sh {
		return 0, fmt.Errorf("bad memory size %q: too large", s)
	}
	return n << sh, nil
}
