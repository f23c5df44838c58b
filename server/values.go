package server

import (
	"math"
	"strings"

	pbsattr "gopbs/attr"
)

// The server keeps attribute values as their canonical text. The helpers
// below convert between that text and the decoded forms; the syntax rules
// themselves (spec 04 §1) are package attr's.

// decodeValue checks a value of type t as the server receives it and
// returns its canonical text form (spec 04 §1). ok is false for an illegal
// value (PBSE_BADATVAL). An empty value stays empty (it unsets).
func decodeValue(t pbsattr.Type, v string) (string, bool) {
	val, err := pbsattr.Parse(t, v)
	if err != nil {
		return "", false
	}
	return val.Encode(pbsattr.ModeServer), true
}

// combineValue applies a += or -= (batch operation INCR, INCR_OLD or
// DECR) with the canonical operand v to the canonical value old and
// returns the canonical result: numbers, times and sizes add or subtract,
// string arrays gain or lose elements, strings are appended to, booleans
// and bits are or-ed in or cleared (attr.Combine). ok is false when a
// value does not decode.
func combineValue(t pbsattr.Type, old, v string, op int) (string, bool) {
	o, err := pbsattr.Parse(t, old)
	if err != nil {
		return "", false
	}
	x, err := pbsattr.Parse(t, v)
	if err != nil {
		return "", false
	}
	r, err := pbsattr.Combine(o, x, pbsattr.Op(op))
	if err != nil {
		return "", false
	}
	return r.Encode(pbsattr.ModeServer), true
}

// parseBool decodes a boolean value (true/false, t/f, y/n, 1/0 in any
// case); ok is false for anything else.
func parseBool(v string) (b, ok bool) {
	val, err := pbsattr.Parse(pbsattr.TypeBool, v)
	return val.Bool(), err == nil && val.IsSet()
}

// isTrue reports whether a canonical boolean value is true.
func isTrue(v string) bool { return v == "True" }

// parseArst returns the elements of a string-array value (',' or newline
// separated, '\' escapes, blanks around elements and empty elements
// dropped).
func parseArst(v string) []string { return pbsattr.SplitArray(v) }

// encodeArst returns the canonical text of a string array: elements
// joined by ',' with special characters escaped.
func encodeArst(list []string) string { return pbsattr.JoinArray(list) }

// sizeBytes returns the number of bytes of a size value (a word counts
// attr.WordSize bytes); ok is false for an empty or illegal value.
func sizeBytes(v string) (int64, bool) {
	if v == "" {
		return 0, false
	}
	sz, err := pbsattr.ParseSize(v)
	if err != nil {
		return 0, false
	}
	return int64(min(sz.Bytes(), math.MaxInt64)), true
}

// parseTime parses a time value, [[[D:]H:]M:]S[.fff], into seconds.
func parseTime(v string) (int64, bool) {
	s, err := pbsattr.ParseTime(v)
	return s, err == nil
}

// Hold bits of a job: the values of attr.HoldBits, as untyped constants
// for the int the job keeps (TestHoldBits checks that they agree).
const (
	holdUser   = 1  // attr.HoldUser
	holdOther  = 2  // attr.HoldOther
	holdSystem = 4  // attr.HoldSystem
	holdArray  = 8  // attr.HoldArray
	holdSlot   = 16 // attr.HoldSlotLimit
)

// parseHold decodes Hold_Types letters into hold bits.
func parseHold(v string) (int, bool) {
	h, err := pbsattr.ParseHold(v)
	return int(h), err == nil
}

// formatHold returns the Hold_Types letters of hold bits ("n" for none).
func formatHold(h int) string { return pbsattr.HoldBits(h).String() }

// compareResource compares two canonical values of a resource: -1, 0, 1;
// ok is false when they cannot be compared. Numbers, times and sizes (in
// bytes) compare by value, every other type bytewise.
func compareResource(t pbsattr.Type, a, b string) (int, bool) {
	switch t {
	case pbsattr.TypeTime, pbsattr.TypeSize, pbsattr.TypeLong, pbsattr.TypeLongLong, pbsattr.TypeInteractive:
		x, err1 := pbsattr.Parse(t, a)
		y, err2 := pbsattr.Parse(t, b)
		if err1 != nil || err2 != nil || !x.IsSet() || !y.IsSet() {
			return 0, false
		}
		return pbsattr.Compare(x, y)
	}
	return strings.Compare(a, b), true
}
