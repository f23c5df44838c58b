package server

import (
	"strconv"
	"strings"
)

// decodeValue checks a value of type t as the server receives it and
// returns its canonical text form (spec 04 §1). ok is false for an illegal
// value (PBSE_BADATVAL).
func decodeValue(t valueType, v string) (string, bool) {
	switch t {
	case tLong:
		if v == "" {
			return "", true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatInt(n, 10), true
	case tBool:
		if v == "" {
			return "", true
		}
		b, ok := parseBool(v)
		if !ok {
			return "", false
		}
		if b {
			return "True", true
		}
		return "False", true
	case tChar:
		if v == "" {
			return "", true
		}
		return v[:1], true
	case tArst:
		return encodeArst(parseArst(v)), true
	case tSize:
		if v == "" {
			return "", true
		}
		n, mult, unit, ok := parseSize(v)
		if !ok {
			return "", false
		}
		return strconv.FormatInt(n, 10) + mult + unit, true
	case tTime:
		if v == "" {
			return "", true
		}
		s, ok := parseTime(v)
		if !ok {
			return "", false
		}
		return formatTime(s), true
	case tHold:
		h, ok := parseHold(v)
		if !ok {
			return "", false
		}
		return formatHold(h), true
	}
	return v, true
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "t", "1", "y":
		return true, true
	case "false", "f", "0", "n":
		return false, true
	}
	return false, false
}

// isTrue reports whether a canonical boolean value is true.
func isTrue(v string) bool { return v == "True" }

// parseArst splits a string-array value: ',' or newline separated, '\'
// escapes, each element trimmed of blanks, empty trailing element ignored.
func parseArst(v string) []string {
	var out []string
	var cur strings.Builder
	had := false
	flush := func() {
		s := strings.Trim(cur.String(), " \t")
		if s != "" || had {
			out = append(out, s)
		}
		cur.Reset()
		had = false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			cur.WriteByte(v[i])
			had = true
		case c == ',' || c == '\n':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		flush()
	}
	// drop empty elements
	res := out[:0]
	for _, s := range out {
		if s != "" {
			res = append(res, s)
		}
	}
	return res
}

// encodeArst joins elements with ',' escaping special characters.
func encodeArst(list []string) string {
	var b strings.Builder
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		for j := 0; j < len(s); j++ {
			switch s[j] {
			case '"', '\'', ',', '\\', '\n':
				b.WriteByte('\\')
			}
			b.WriteByte(s[j])
		}
	}
	return b.String()
}

// parseSize parses a size value: number (base auto-detected), optional
// multiplier k/m/g/t/p, optional b or w.
func parseSize(v string) (n int64, mult, unit string, ok bool) {
	for i := len(v); i >= 0; i-- {
		num, rest := v[:i], strings.ToLower(v[i:])
		if !isUnitTail(rest) {
			continue
		}
		if num == "" {
			if rest != "b" && rest != "w" {
				continue
			}
			num = "0"
		}
		x, err := strconv.ParseInt(num, 0, 64)
		if err != nil || x < 0 {
			continue
		}
		if rest != "" && strings.ContainsRune("kmgtp", rune(rest[0])) {
			mult, rest = rest[:1], rest[1:]
		}
		unit = "b"
		if rest == "w" {
			unit = "w"
		}
		return x, mult, unit, true
	}
	return 0, "", "", false
}

func isUnitTail(s string) bool {
	switch s {
	case "", "b", "w", "k", "m", "g", "t", "p", "kb", "mb", "gb", "tb", "pb", "kw", "mw", "gw", "tw", "pw":
		return true
	}
	return false
}

// sizeBytes returns a canonical size in bytes (a word counts 4 bytes).
func sizeBytes(v string) (int64, bool) {
	n, mult, unit, ok := parseSize(v)
	if !ok {
		return 0, false
	}
	shift := strings.Index("kmgtp", mult) + 1
	if mult == "" {
		shift = 0
	}
	n <<= 10 * shift
	if unit == "w" {
		n *= 4
	}
	return n, true
}

// parseTime parses [[[D:]H:]M:]S[.fff] into seconds.
func parseTime(v string) (int64, bool) {
	frac := ""
	if i := strings.IndexByte(v, '.'); i >= 0 {
		v, frac = v[:i], v[i+1:]
		for _, c := range frac {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
	}
	parts := strings.Split(v, ":")
	if len(parts) > 4 {
		return 0, false
	}
	mults := []int64{1, 60, 3600, 86400}
	var total int64
	for i := range parts {
		p := parts[len(parts)-1-i]
		if p == "" {
			p = "0"
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		total += n * mults[i]
	}
	if frac != "" && frac[0] >= '5' {
		total++
	}
	return total, true
}

func formatTime(s int64) string {
	return pad2(s/3600) + ":" + pad2(s%3600/60) + ":" + pad2(s%60)
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Hold bits.
const (
	holdUser   = 1
	holdOther  = 2
	holdSystem = 4
	holdArray  = 8
	holdSlot   = 16
)

func parseHold(v string) (int, bool) {
	h := 0
	for _, c := range v {
		switch c {
		case 'n':
			h = 0
		case 'u':
			h |= holdUser
		case 'o':
			h |= holdOther
		case 's':
			h |= holdSystem
		default:
			return 0, false
		}
	}
	return h, true
}

func formatHold(h int) string {
	if h == 0 {
		return "n"
	}
	var b strings.Builder
	if h&holdSystem != 0 {
		b.WriteByte('s')
	}
	if h&holdOther != 0 {
		b.WriteByte('o')
	}
	if h&holdUser != 0 {
		b.WriteByte('u')
	}
	return b.String()
}

// compareResource compares two canonical values of a resource: -1, 0, 1;
// ok is false when they cannot be compared.
func compareResource(t valueType, a, b string) (int, bool) {
	var x, y int64
	var ok1, ok2 bool
	switch t {
	case tTime:
		x, ok1 = parseTime(a)
		y, ok2 = parseTime(b)
	case tSize:
		x, ok1 = sizeBytes(a)
		y, ok2 = sizeBytes(b)
	case tLong:
		var e1, e2 error
		x, e1 = strconv.ParseInt(a, 10, 64)
		y, e2 = strconv.ParseInt(b, 10, 64)
		ok1, ok2 = e1 == nil, e2 == nil
	default:
		switch {
		case a < b:
			return -1, true
		case a > b:
			return 1, true
		}
		return 0, true
	}
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}
