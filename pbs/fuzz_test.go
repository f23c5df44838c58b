package pbs

import (
	"strings"
	"testing"
)

// FuzzParseJobID checks that no operand makes ParseJobID panic and that
// an accepted id qualifies into one that parses back to itself.
func FuzzParseJobID(f *testing.F) {
	for _, s := range []string{"12", "12.vm", "5[].vm@other:15005", "5[1-3]", "{J3}", "12.", "@", "1.a@b@c", "9999.VM"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		t.Setenv("PBS_DEFAULT", "srv")
		j, err := ParseJobID(s)
		if err != nil {
			return
		}
		q := j.Qualified()
		back, err := ParseJobID(q)
		if err != nil {
			t.Fatalf("%q qualified to %q, which does not parse: %v", s, q, err)
		}
		if back.Qualified() != q {
			t.Fatalf("%q: qualified %q, then %q", s, q, back.Qualified())
		}
		if strings.ContainsAny(j.Server(), " @") {
			t.Fatalf("%q: server %q", s, j.Server())
		}
	})
}
