package resv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Record types of reservation lines in the accounting file. TORQUE's
// job records use A, C, D, E, Q, R, S and T; these letters are GoPBS's
// own and no TORQUE record uses them.
const (
	RecConfirmed = 'Y' // made (without -T) or its creation committed
	RecModified  = 'M' // a modify applied
	RecBegin     = 'B' // its start: it is running
	RecFinished  = 'F' // its end, with the usage
	RecCancelled = 'K' // cancelled (nodes released, record kept)
	RecDestroyed = 'X' // destroyed
)

// IsRecordType reports whether c is one of the reservation record letters.
func IsRecordType(c byte) bool {
	switch c {
	case RecConfirmed, RecModified, RecBegin, RecFinished, RecCancelled, RecDestroyed:
		return true
	}
	return false
}

// Record is one reservation line of the accounting file:
//
//	11/27/2026 14:00:00;Y;R12;owner=alice users=bob,carol start=1795788000 end=1795791600 duration=3600 nodect=2 nodes=n1+n2 mem=1073741824 ncpu=4 arch=x86_64 opsys=linux l=gpu=1,fast
//
// It has TORQUE's record layout (date and time, a type letter, the
// object id, then space-separated key=value pairs) so that tools reading
// accounting files by that layout skip it cleanly. Times are seconds
// since the epoch, as in job records; values holding spaces, quotes or
// backslashes are written as Go quoted strings. Keys with nothing to say
// are left out. F records add the usage: actual_start, actual_end (zero
// if it never ran), jobs and job_node_seconds.
type Record struct {
	Time  time.Time // when the event happened (the line's date)
	Type  byte      // Rec*
	ID    string
	Owner string
	Users []string
	Start time.Time
	End   time.Time
	// NodeCount is the number of nodes reserved; Nodes are the ones
	// assigned.
	NodeCount int
	Nodes     []string
	Req       Requirements
	Usage     Usage
}

// NewRecord returns the record of type typ for r at time at.
func NewRecord(typ byte, r *Reservation, at time.Time) *Record {
	return &Record{Time: at, Type: typ, ID: r.ID, Owner: r.Owner, Users: r.Users, Start: r.Start, End: r.End,
		NodeCount: r.Wanted(), Nodes: r.Assigned, Req: r.Req, Usage: r.Usage}
}

// NodeSeconds is the reserved node time of the record's window.
func (rec *Record) NodeSeconds() int64 {
	return int64(rec.NodeCount) * int64(rec.End.Sub(rec.Start)/time.Second)
}

const recTimeLayout = "01/02/2006 15:04:05"

func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\"\\\n\r;") || !strconv.CanBackquote(v) {
		return strconv.Quote(v)
	}
	return v
}

// Line returns the record as one accounting line, without newline. The
// date is in rec.Time's location, as the server writes in local time.
func (rec *Record) Line() string {
	var b strings.Builder
	b.WriteString(rec.Time.Format(recTimeLayout))
	b.WriteByte(';')
	b.WriteByte(rec.Type)
	b.WriteByte(';')
	b.WriteString(rec.ID)
	b.WriteByte(';')
	first := true
	kv := func(k, v string) {
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(quoteValue(v))
	}
	kv("owner", rec.Owner)
	if len(rec.Users) > 0 {
		kv("users", strings.Join(rec.Users, ","))
	}
	unix := func(t time.Time) string {
		if t.IsZero() {
			return "0"
		}
		return strconv.FormatInt(t.Unix(), 10)
	}
	kv("start", unix(rec.Start))
	kv("end", unix(rec.End))
	if !rec.Start.IsZero() && !rec.End.IsZero() {
		kv("duration", strconv.FormatInt(int64(rec.End.Sub(rec.Start)/time.Second), 10))
	}
	kv("nodect", strconv.Itoa(rec.NodeCount))
	if len(rec.Nodes) > 0 {
		kv("nodes", strings.Join(rec.Nodes, "+"))
	}
	q := rec.Req
	if q.MemBytes > 0 {
		kv("mem", strconv.FormatInt(q.MemBytes, 10))
	}
	if q.NCPU > 0 {
		kv("ncpu", strconv.Itoa(q.NCPU))
	}
	if q.Slots > 0 {
		kv("slots", strconv.Itoa(q.Slots))
	}
	if q.Arch != "" {
		kv("arch", q.Arch)
	}
	if q.OS != "" {
		kv("opsys", q.OS)
	}
	if l := q.LString(); l != "" {
		kv("l", l)
	}
	if rec.Type == RecFinished {
		kv("actual_start", unix(rec.Usage.ActualStart))
		kv("actual_end", unix(rec.Usage.ActualEnd))
		kv("jobs", strconv.Itoa(rec.Usage.Jobs))
		kv("job_node_seconds", strconv.FormatInt(rec.Usage.JobSeconds, 10))
	}
	return b.String()
}

// LString writes the -l requirements back as plus_reserve takes them:
// attr=value and property entries, comma-separated.
func (q *Requirements) LString() string {
	var parts []string
	for _, a := range q.Attrs {
		parts = append(parts, a.Name+"="+a.Value)
	}
	parts = append(parts, q.Props...)
	return strings.Join(parts, ",")
}

// ParseL reads plus_reserve's -l list: "attr=value,attr=value,prop".
// Entries with a value are resources, entries without one node
// properties.
func ParseL(s string) (attrs []Attr, props []string, err error) {
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, nil, fmt.Errorf("bad -l list %q: empty entry", s)
		}
		name, value, ok := strings.Cut(e, "=")
		switch {
		case !nameRE.MatchString(name):
			return nil, nil, fmt.Errorf("bad -l list %q: bad name %q", s, name)
		case ok && value == "":
			return nil, nil, fmt.Errorf("bad -l list %q: %s= has no value", s, name)
		case ok:
			attrs = append(attrs, Attr{Name: name, Value: value})
		default:
			props = append(props, name)
		}
	}
	return attrs, props, nil
}

// ErrNotReservation is returned by ParseRecord for a line that is not a
// reservation record (a job record, say); readers skip such lines.
var ErrNotReservation = errors.New("not a reservation record")

// ParseRecord reads one accounting line, parsing the date in loc.
func ParseRecord(line string, loc *time.Location) (*Record, error) {
	f := strings.SplitN(line, ";", 4)
	if len(f) != 4 || len(f[1]) != 1 || !IsRecordType(f[1][0]) {
		return nil, ErrNotReservation
	}
	rec := &Record{Type: f[1][0], ID: f[2]}
	var err error
	if rec.Time, err = time.ParseInLocation(recTimeLayout, f[0], loc); err != nil {
		return nil, fmt.Errorf("bad date %q", f[0])
	}
	if _, err := ParseID(rec.ID); err != nil || rec.ID[0] != 'R' {
		return nil, fmt.Errorf("bad reservation id %q", rec.ID)
	}
	pairs, err := splitPairs(f[3])
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		if seen[p[0]] {
			return nil, fmt.Errorf("key %s twice", p[0])
		}
		seen[p[0]] = true
		if err := rec.set(p[0], p[1]); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", p[0], p[1], err)
		}
	}
	for _, k := range []string{"owner", "start", "end", "nodect"} {
		if !seen[k] {
			return nil, fmt.Errorf("no %s", k)
		}
	}
	return rec, nil
}

func (rec *Record) set(k, v string) error {
	unix := func(t *time.Time) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return errors.New("not a time")
		}
		if n == 0 {
			*t = time.Time{}
		} else {
			*t = time.Unix(n, 0)
		}
		return nil
	}
	num := func(p *int) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<31 {
			return errors.New("not a count")
		}
		*p = n
		return nil
	}
	num64 := func(p *int64) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return errors.New("not a number")
		}
		*p = n
		return nil
	}
	list := func(sep string) []string {
		if v == "" {
			return nil
		}
		return strings.Split(v, sep)
	}
	switch k {
	case "owner":
		rec.Owner = v
	case "users":
		rec.Users = list(",")
	case "start":
		return unix(&rec.Start)
	case "end":
		return unix(&rec.End)
	case "duration":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return errors.New("not a number")
		}
	case "nodect":
		return num(&rec.NodeCount)
	case "nodes":
		rec.Nodes = list("+")
	case "mem":
		return num64(&rec.Req.MemBytes)
	case "ncpu":
		return num(&rec.Req.NCPU)
	case "slots":
		return num(&rec.Req.Slots)
	case "arch":
		rec.Req.Arch = v
	case "opsys":
		rec.Req.OS = v
	case "l":
		var err error
		rec.Req.Attrs, rec.Req.Props, err = ParseL(v)
		return err
	case "actual_start":
		return unix(&rec.Usage.ActualStart)
	case "actual_end":
		return unix(&rec.Usage.ActualEnd)
	case "jobs":
		return num(&rec.Usage.Jobs)
	case "job_node_seconds":
		return num64(&rec.Usage.JobSeconds)
	}
	return nil // keys of later versions are skipped
}

// splitPairs splits "k=v k=\"v w\"" into pairs.
func splitPairs(s string) ([][2]string, error) {
	var out [][2]string
	for s != "" {
		if s[0] == ' ' {
			s = s[1:]
			continue
		}
		eq := strings.IndexByte(s, '=')
		sp := strings.IndexByte(s, ' ')
		if eq <= 0 || (sp >= 0 && sp < eq) {
			return nil, fmt.Errorf("bad pair near %q", truncate(s))
		}
		k := s[:eq]
		s = s[eq+1:]
		var v string
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("bad quoted value near %q", truncate(s))
			}
			v, _ = strconv.Unquote(q)
			s = s[len(q):]
			if s != "" && s[0] != ' ' {
				return nil, fmt.Errorf("no space after quoted value near %q", truncate(s))
			}
		} else {
			end := strings.IndexByte(s, ' ')
			if end < 0 {
				end = len(s)
			}
			v, s = s[:end], s[end:]
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// LineError is a malformed reservation line of an accounting file.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadRecords reads the reservation records of an accounting file,
// skipping job records and other lines. A malformed reservation line is
// reported in bad (with its line number) and skipped; err is a read
// error.
func ReadRecords(r io.Reader, name string, loc *time.Location) (recs []*Record, bad []*LineError, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		rec, err := ParseRecord(sc.Text(), loc)
		switch {
		case errors.Is(err, ErrNotReservation):
		case err != nil:
			bad = append(bad, &LineError{File: name, Line: n, Err: err})
		default:
			recs = append(recs, rec)
		}
	}
	if err := sc.Err(); err != nil {
		return recs, bad, fmt.Errorf("reading %s: %w", name, err)
	}
	return recs, bad, nil
}
