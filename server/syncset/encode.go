package syncset

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The encoded table is text, one record a line:
//
//	gopbs-syncset 1
//	set <master id> <count>
//	member <job@server> <cost> <released 0|1> <ready 0|1>   (the set's members, master first)
//	wait <local job id> <master job@server>
//	msg <seq> <to server> <op> <owner or -> <parent> <child> <cost>
//
// Job ids hold no white space.
const header = "gopbs-syncset 1"

// Encode returns the table in its stored form.
func (t *Table) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(header + "\n")
	for _, master := range t.Masters() {
		s := t.sets[master]
		fmt.Fprintf(&b, "set %s %d\n", master, s.Count)
		for _, m := range s.Members {
			fmt.Fprintf(&b, "member %s %d %d %d\n", m.Job, m.Cost, bit(m.Released), bit(m.Ready))
		}
	}
	jobs := make([]string, 0, len(t.waiting))
	for j := range t.waiting {
		jobs = append(jobs, j)
	}
	slices.Sort(jobs)
	for _, j := range jobs {
		fmt.Fprintf(&b, "wait %s %s\n", j, t.waiting[j])
	}
	for _, m := range t.outbox {
		owner := m.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(&b, "msg %d %s %d %s %s %s %d\n", m.Seq, m.To, m.Op, owner, m.Parent, m.Child, m.Cost)
	}
	return b.Bytes()
}

// Decode replaces the table with the stored form b (nil or empty: an
// empty table). A malformed record is an error naming its line; the
// table is then left unchanged.
func (t *Table) Decode(b []byte) error {
	var nt Table
	if len(b) == 0 {
		*t = nt
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	line := 0
	var cur *Set
	bad := func(why string) error { return fmt.Errorf("syncset: line %d: %s", line, why) }
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if text != header {
				return bad("unknown header")
			}
			continue
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "set":
			if len(f) != 3 {
				return bad("set needs a master and a count")
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || n < 0 {
				return bad("bad count")
			}
			if _, dup := nt.sets[f[1]]; dup {
				return bad("set repeated")
			}
			if nt.sets == nil {
				nt.sets = map[string]*Set{}
			}
			cur = &Set{Count: n}
			nt.sets[f[1]] = cur
		case "member":
			if cur == nil || len(f) != 5 {
				return bad("member outside a set or malformed")
			}
			cost, err := strconv.ParseInt(f[2], 10, 64)
			rel, ok1 := parseBit(f[3])
			rdy, ok2 := parseBit(f[4])
			if err != nil || !ok1 || !ok2 || cur.find(f[1]) >= 0 {
				return bad("bad member")
			}
			cur.Members = append(cur.Members, Member{Job: f[1], Cost: cost, Released: rel, Ready: rdy})
		case "wait":
			if len(f) != 3 {
				return bad("wait needs a job and a master")
			}
			nt.Await(f[1], f[2])
		case "msg":
			if len(f) != 8 {
				return bad("malformed message")
			}
			seq, err1 := strconv.ParseUint(f[1], 10, 64)
			op, err2 := strconv.Atoi(f[3])
			cost, err3 := strconv.ParseInt(f[7], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil || seq <= nt.lastSeq {
				return bad("bad message")
			}
			owner := f[4]
			if owner == "-" {
				owner = ""
			}
			nt.lastSeq = seq
			nt.outbox = append(nt.outbox, Message{Seq: seq, To: f[2], Op: op, Owner: owner, Parent: f[5], Child: f[6], Cost: cost})
		default:
			return bad("unknown record " + strconv.Quote(f[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("syncset: %w", err)
	}
	if line == 0 {
		return fmt.Errorf("syncset: no header")
	}
	for m, s := range nt.sets {
		if len(s.Members) == 0 {
			return fmt.Errorf("syncset: set %s has no master member", m)
		}
	}
	*t = nt
	return nil
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func parseBit(s string) (bool, bool) {
	switch s {
	case "0":
		return false, true
	case "1":
		return true, true
	}
	return false, false
}
