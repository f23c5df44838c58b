package server

import (
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		typ  pbsattr.Type
		in   string
		want string
		ok   bool
	}{
		{pbsattr.TypeLong, "+5", "5", true},
		{pbsattr.TypeLong, "-12", "-12", true},
		{pbsattr.TypeLong, "1x", "", false},
		{pbsattr.TypeBool, "TRUE", "True", true},
		{pbsattr.TypeBool, "n", "False", true},
		{pbsattr.TypeBool, "maybe", "", false},
		{pbsattr.TypeSize, "100MB", "100mb", true},
		{pbsattr.TypeSize, "1024", "1024b", true},
		{pbsattr.TypeSize, "0x10kb", "16kb", true},
		{pbsattr.TypeSize, "5w", "5w", true},
		{pbsattr.TypeSize, "5q", "", false},
		{pbsattr.TypeTime, "1:00:00", "01:00:00", true},
		{pbsattr.TypeTime, "90", "00:01:30", true},
		{pbsattr.TypeTime, "2:00:00:00", "48:00:00", true},
		{pbsattr.TypeTime, "00:00:00.6", "00:00:01", true},
		{pbsattr.TypeTime, "bogus", "", false},
		{pbsattr.TypeHold, "uo", "ou", true},
		{pbsattr.TypeHold, "n", "n", true},
		{pbsattr.TypeHold, "x", "", false},
		{pbsattr.TypeStringArray, "a, b ,c\\,d,", "a,b,c\\,d", true},
		{pbsattr.TypeACL, "root@vm, *@*.example.com", "root@vm,*@*.example.com", true},
		{pbsattr.TypeHold, "", "", true},
		{pbsattr.TypeString, "", "", true},
		{pbsattr.TypeInteractive, "1", "1", true}, // kept as the number; True/False only in status
		{pbsattr.TypeQueueType, "e", "Execution", true},
		{pbsattr.TypeQueueType, "x", "", false},
		{pbsattr.TypeNodeSpec, "2:ppn=4+vm", "2:ppn=4+vm", true},
		{pbsattr.TypeNodeSpec, "2:ppn=4++", "", false},
	}
	for _, tt := range tests {
		got, ok := state.DecodeValue(tt.typ, tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("decodeValue(%v, %q) = %q, %v; want %q, %v", tt.typ, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCompareResource(t *testing.T) {
	tests := []struct {
		typ  pbsattr.Type
		a, b string
		cmp  int
		ok   bool
	}{
		{pbsattr.TypeTime, "01:00:00", "00:10:00", 1, true},
		{pbsattr.TypeTime, "00:10:00", "600", 0, true},
		{pbsattr.TypeSize, "1gb", "1024mb", 0, true},
		{pbsattr.TypeSize, "4b", "1w", 0, true},
		{pbsattr.TypeSize, "1kb", "1025b", -1, true},
		{pbsattr.TypeLong, "10", "9", 1, true},
		{pbsattr.TypeLongLong, "-1", "1", -1, true},
		{pbsattr.TypeLong, "x", "1", 0, false},
		{pbsattr.TypeSize, "", "1kb", 0, false},
		{pbsattr.TypeString, "abc", "abd", -1, true},
		{pbsattr.TypeBool, "True", "False", 1, true}, // other types: bytewise
	}
	for _, tt := range tests {
		cmp, ok := state.CompareResource(tt.typ, tt.a, tt.b)
		if cmp != tt.cmp || ok != tt.ok {
			t.Errorf("compareResource(%v, %q, %q) = %d, %v; want %d, %v", tt.typ, tt.a, tt.b, cmp, ok, tt.cmp, tt.ok)
		}
	}
}

func TestSizeBytes(t *testing.T) {
	tests := []struct {
		in string
		n  int64
		ok bool
	}{{"2kb", 2048, true}, {"3w", 12, true}, {"1mb", 1 << 20, true}, {"", 0, false}, {"1q", 0, false}, {"16777216pb", 1<<63 - 1, true}}
	for _, tt := range tests {
		if n, ok := state.SizeBytes(tt.in); n != tt.n || ok != tt.ok {
			t.Errorf("sizeBytes(%q) = %d, %v; want %d, %v", tt.in, n, ok, tt.n, tt.ok)
		}
	}
}

// TestCombineValue checks qmgr's += and -= on the stored text values.
func TestCombineValue(t *testing.T) {
	tests := []struct {
		typ         pbsattr.Type
		old, v      string
		op          int
		want        string
		wantOK      bool
		description string
	}{
		{pbsattr.TypeLong, "5", "3", batchreq.INCR, "8", true, "numbers add"},
		{pbsattr.TypeLong, "", "3", batchreq.DECR, "-3", true, "from unset"},
		{pbsattr.TypeLong, "5", "3", batchreq.INCR_OLD, "8", true, "qmgr's +="},
		{pbsattr.TypeACL, "a@vm,b@vm", "c@vm,a@vm", batchreq.INCR, "a@vm,b@vm,c@vm", true, "lists gain new elements"},
		{pbsattr.TypeACL, "a@vm,b@vm", "a@vm", batchreq.DECR, "b@vm", true, "lists lose elements"},
		{pbsattr.TypeStringArray, "a", "a", batchreq.DECR, "", true, "emptied list unsets"},
		{pbsattr.TypeTime, "01:00:00", "00:30:00", batchreq.INCR, "01:30:00", true, "times add"},
		{pbsattr.TypeSize, "1gb", "512mb", batchreq.DECR, "512mb", true, "sizes subtract in the smaller unit"},
		{pbsattr.TypeString, "ab", "cd", batchreq.INCR, "abcd", true, "strings append"},
		{pbsattr.TypeLong, "x", "1", batchreq.INCR, "", false, "old value does not decode"},
	}
	for _, tt := range tests {
		got, ok := state.CombineValue(tt.typ, tt.old, tt.v, tt.op)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: combineValue(%v, %q, %q, %d) = %q, %v; want %q, %v", tt.description, tt.typ, tt.old, tt.v, tt.op, got, ok, tt.want, tt.wantOK)
		}
	}
}

// FuzzDecodeValue checks that decoding never panics and that the canonical
// text the server stores decodes to itself (the server re-decodes stored
// values for += and -= and for comparisons). String arrays are left out of
// the second property: an element's escaped trailing blank is not escaped
// again in the canonical text (spec 04 §1), so it does not survive.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{"", "5", "-12", "True", "n", "100MB", "0x10kb", "1:00:00", "2:00:00:00.6",
		"uo", "a, b ,c\\,d,", "e", "2:ppn=4+vm#shared", "afterok:1.vm@vm", "down,offline", "time-shared"} {
		for t := pbsattr.TypeLong; t <= pbsattr.TypeNodeSpec; t++ {
			f.Add(uint8(t), s)
		}
	}
	f.Fuzz(func(t *testing.T, typ uint8, text string) {
		vt := pbsattr.Type(typ)
		v, ok := state.DecodeValue(vt, text)
		if !ok || vt == pbsattr.TypeStringArray || vt == pbsattr.TypeACL {
			return
		}
		again, ok := state.DecodeValue(vt, v)
		if !ok || again != v {
			t.Errorf("type %v: %q decodes to %q, which decodes to %q, %v", vt, text, v, again, ok)
		}
	})
}
