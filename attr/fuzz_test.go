package attr

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary text to every value parser. Parsing must never
// panic; a value that parses must encode to text that parses back to the
// same value (the canonical form is stable).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "0", "-1", "+12", "True", "n", "uos", "100mb", "0x10kb", "010k", "5w", "1:00:00",
		"2:00:00:00", "00:00:00.6", "a,b\\,c", " a , b ,", "x\\ ", "afterok:1.vm@vm",
		`after:1.a\:b@s`, "on:1", "synccount:2", "1:ppn=2+node01:bigmem#shared", "down,offline",
		"free", "Execution", "r", "time-shared", "PBS_O_HOME=/home/alice\nPBS_O_PATH=/bin\n",
	} {
		for ty := TypeLong; ty < numTypes; ty++ {
			f.Add(uint8(ty), s)
		}
	}
	f.Fuzz(func(t *testing.T, ty uint8, text string) {
		typ := Type(ty % uint8(numTypes))
		v, err := Parse(typ, text)
		if err != nil {
			if Code(err) == 0 {
				t.Fatalf("Parse(%v, %q): error without PBSE code: %v", typ, text, err)
			}
			return
		}
		if !v.IsSet() {
			return
		}
		if v.Type() != typ {
			t.Fatalf("Parse(%v, %q) returned type %v", typ, text, v.Type())
		}
		mode := ModeServer
		enc := v.Encode(mode)
		if typ == TypeStringArray || typ == TypeACL {
			for _, e := range v.Elements() {
				if strings.TrimLeft(e, " \t") != e || strings.TrimRight(e, " \t") != e || e == "" {
					return // blanks at element edges do not survive re-parsing
				}
			}
			// The save form must parse back too.
			w, err := Parse(typ, v.Encode(ModeSave))
			if err != nil || !w.Equal(v) {
				t.Fatalf("save form %q of %q: %v, %v (want %v)", v.Encode(ModeSave), text, w, err, v)
			}
		}
		w, err := Parse(typ, enc)
		if err != nil {
			t.Fatalf("Parse(%v, %q) = %q does not parse back: %v", typ, text, enc, err)
		}
		if !w.Equal(v) {
			t.Fatalf("Parse(%v, %q) = %q re-parses as %q", typ, text, enc, w.Encode(mode))
		}
		if c, _ := Compare(v, w); c != 0 {
			t.Fatalf("Compare of equal values %q = %d", enc, c)
		}
	})
}

// FuzzSetDecode applies arbitrary attribute entries to a job set and checks
// that the status encoding re-decodes to the same set.
func FuzzSetDecode(f *testing.F) {
	f.Add("Resource_List", "nodes", "2:ppn=4+vm", "Variable_List", "A=1,B=\\,2")
	f.Add("job_name", "", "x", "Hold_Types", "uo")
	f.Add("bogus", "r", "1", "depend", "afterok:1.vm")
	f.Fuzz(func(t *testing.T, n1, r1, v1, n2, v2 string) {
		s := NewSet(JobTable())
		_ = s.Decode(n1, r1, r1 != "", v1)
		_ = s.Decode(n2, "", false, v2)
		_ = s.ModifyText(n2, "", v1, OpIncr)
		// Escaped blanks at the edges of array elements are not escaped
		// again by the encoding (as in TORQUE), so the first reload may
		// strip them; from then on the encoding must be stable.
		reload := func(in *Set) (*Set, []Entry) {
			entries := in.AppendEntries(nil, &EncodeOptions{All: true, Mode: ModeServer})
			c := NewSet(JobTable())
			for _, e := range entries {
				if err := c.Load(e.Name, e.Resource, e.HasResource, e.Value); err != nil {
					t.Fatalf("re-load %s.%s=%q: %v", e.Name, e.Resource, e.Value, err)
				}
			}
			return c, entries
		}
		c, _ := reload(s)
		d, entries := reload(c)
		_, again := reload(d)
		if len(again) != len(entries) {
			t.Fatalf("re-encoded %d entries, want %d: %v vs %v", len(again), len(entries), again, entries)
		}
		for k := range again {
			a, b := again[k], entries[k]
			if a.Name != b.Name || a.Resource != b.Resource || a.Value != b.Value {
				t.Fatalf("entry %d: %+v vs %+v", k, a, b)
			}
		}
	})
}

// FuzzResourceRequests checks that any -l list either fails with a PBSE
// code or yields named resources.
func FuzzResourceRequests(f *testing.F) {
	for _, s := range []string{"walltime=00:05:00,nodes=1:ppn=1,mem=100mb", "other='a,b',x", "walltime=1-2", "nodes=2:procs=3+vm:procs=1", `a="`, ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		reqs, err := ParseResourceRequests(list)
		if err != nil {
			if Code(err) == 0 {
				t.Fatalf("error without code: %v", err)
			}
			return
		}
		for _, r := range reqs {
			if r.Name == "" {
				t.Fatalf("%q: empty name in %v", list, reqs)
			}
		}
	})
}
