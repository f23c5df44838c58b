package state

import (
	"math"
	"strconv"
	"strings"

	"gopbs/attr"
)

// The server keeps attribute values as their canonical text. The helpers
// below convert between that text and the decoded forms; the syntax rules
// themselves (spec 04 §1) are package attr's.

// DecodeValue checks a value of type t as the server receives it and
// returns its canonical text form (spec 04 §1). ok is false for an illegal
// value (PBSE_BADATVAL). An empty value stays empty (it unsets).
func DecodeValue(t attr.Type, v string) (string, bool) {
	val, err := attr.Parse(t, v)
	if err != nil {
		return "", false
	}
	return val.Encode(attr.ModeServer), true
}

// CombineValue applies a += or -= (batch operation INCR, INCR_OLD or
// DECR) with the canonical operand v to the canonical value old and
// returns the canonical result: numbers, times and sizes add or subtract,
// string arrays gain or lose elements, strings are appended to, booleans
// and bits are or-ed in or cleared (attr.Combine). ok is false when a
// value does not decode.
func CombineValue(t attr.Type, old, v string, op int) (string, bool) {
	o, err := attr.Parse(t, old)
	if err != nil {
		return "", false
	}
	x, err := attr.Parse(t, v)
	if err != nil {
		return "", false
	}
	r, err := attr.Combine(o, x, attr.Op(op))
	if err != nil {
		return "", false
	}
	return r.Encode(attr.ModeServer), true
}

// ParseBool decodes a boolean value (true/false, t/f, y/n, 1/0 in any
// case); ok is false for anything else.
func ParseBool(v string) (b, ok bool) {
	val, err := attr.Parse(attr.TypeBool, v)
	return val.Bool(), err == nil && val.IsSet()
}

// IsTrue reports whether a canonical boolean value is true.
func IsTrue(v string) bool { return v == "True" }

// ParseArst returns the elements of a string-array value (',' or newline
// separated, '\' escapes, blanks around elements and empty elements
// dropped).
func ParseArst(v string) []string { return attr.SplitArray(v) }

// EncodeArst returns the canonical text of a string array: elements
// joined by ',' with special characters escaped.
func EncodeArst(list []string) string { return attr.JoinArray(list) }

// SizeBytes returns the number of bytes of a size value (a word counts
// attr.WordSize bytes); ok is false for an empty or illegal value.
func SizeBytes(v string) (int64, bool) {
	if v == "" {
		return 0, false
	}
	sz, err := attr.ParseSize(v)
	if err != nil {
		return 0, false
	}
	return int64(min(sz.Bytes(), math.MaxInt64)), true
}

// ParseTime parses a time value, [[[D:]H:]M:]S[.fff], into seconds.
func ParseTime(v string) (int64, bool) {
	s, err := attr.ParseTime(v)
	return s, err == nil
}

// Hold bits of a job: the values of attr.HoldBits, as untyped constants
// for the int the job keeps (TestHoldBits checks that they agree).
const (
	HoldUser      = 1  // attr.HoldUser
	HoldOther     = 2  // attr.HoldOther
	HoldSystem    = 4  // attr.HoldSystem
	HoldArray     = 8  // attr.HoldArray
	HoldSlotLimit = 16 // attr.HoldSlotLimit
)

// ParseHold decodes Hold_Types letters into hold bits.
func ParseHold(v string) (int, bool) {
	h, err := attr.ParseHold(v)
	return int(h), err == nil
}

// FormatHold returns the Hold_Types letters of hold bits ("n" for none).
func FormatHold(h int) string { return attr.HoldBits(h).String() }

// CompareResource compares two canonical values of a resource: -1, 0, 1;
// ok is false when they cannot be compared. Numbers, times and sizes (in
// bytes) compare by value, every other type bytewise.
func CompareResource(t attr.Type, a, b string) (int, bool) {
	switch t {
	case attr.TypeTime, attr.TypeSize, attr.TypeLong, attr.TypeLongLong, attr.TypeInteractive:
		x, err1 := attr.Parse(t, a)
		y, err2 := attr.Parse(t, b)
		if err1 != nil || err2 != nil || !x.IsSet() || !y.IsSet() {
			return 0, false
		}
		return attr.Compare(x, y)
	}
	return strings.Compare(a, b), true
}

// MatchUserACL reports whether user@host matches an entry of a user ACL
// (attr.MatchUserEntry: "user" matches any host, "user@host" may have '*'
// wildcards in the host part).
func MatchUserACL(acl []string, who string) bool {
	u, h, _ := strings.Cut(who, "@")
	for _, e := range acl {
		if attr.MatchUserEntry(e, u, h) {
			return true
		}
	}
	return false
}

// NameChar reports whether b may begin a queue name (a letter or a
// digit; host names are made of these, '-', '_' and '.').
func NameChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// ValidHostPattern reports whether h is a host name (letters, digits,
// '-', '_' and '.'-separated labels) in which '*' may stand for any part,
// as host ACL entries are written.
func ValidHostPattern(h string) bool {
	if h == "" || h[0] == '.' || h[len(h)-1] == '.' || strings.Contains(h, "..") {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(NameChar(c) || c == '-' || c == '_' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// NodeCount returns the number of nodes of a node specification
// ("2:ppn=4+n1#excl": 3).
func NodeCount(spec string) int {
	if i := strings.IndexByte(spec, '#'); i >= 0 {
		spec = spec[:i]
	}
	total := 0
	for _, el := range strings.Split(spec, "+") {
		first, _, _ := strings.Cut(el, ":")
		if n, err := strconv.Atoi(first); err == nil && n > 0 {
			total += n
		} else {
			total++
		}
	}
	return total
}

// ParseArrayRequest parses a job_array_request: indexes in request order
// and the slot limit (0 if none).
func ParseArrayRequest(r string) ([]int, int, bool) {
	limit := 0
	if i := strings.IndexByte(r, '%'); i >= 0 {
		n, err := strconv.Atoi(r[i+1:])
		if err != nil || n <= 0 {
			return nil, 0, false
		}
		limit, r = n, r[:i]
	}
	seen := map[int]bool{}
	var out []int
	for _, tok := range strings.Split(r, ",") {
		lo, hi, isRange := strings.Cut(tok, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 99999 {
			return nil, 0, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 99999 {
				return nil, 0, false
			}
		}
		for k := a; k <= b; k++ {
			if seen[k] {
				return nil, 0, false
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, limit, len(out) > 0
}

// JobIDSeq returns the sequence part of a job id ("12" of "12.srv" and
// of "12[].srv").
func JobIDSeq(id string) string {
	if i := strings.IndexAny(id, ".["); i >= 0 {
		return id[:i]
	}
	return id
}

// SplitEscaped splits s on sep; a backslash escapes the byte after it.
func SplitEscaped(s string, sep byte) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			cur.WriteByte(s[i+1])
			i++
			continue
		}
		if s[i] == sep {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(s[i])
	}
	return append(out, cur.String())
}
