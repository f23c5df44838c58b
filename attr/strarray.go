package attr

import "strings"

// parseArray splits the text form of a string array: elements separated by
// ',' or newline, a backslash escaping the next character, leading and
// trailing blanks (space, tab) of every element removed; elements left
// empty (such as after a trailing separator) are dropped.
func parseArray(text string) []string {
	var elems []string
	var b strings.Builder
	keep := 0 // length of b that must survive trailing-blank stripping
	start := true
	flush := func() {
		if s := b.String()[:max(keep, len(strings.TrimRight(b.String(), " \t")))]; s != "" {
			elems = append(elems, s)
		}
		b.Reset()
		keep = 0
		start = true
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text):
			i++
			b.WriteByte(text[i])
			keep = b.Len()
			start = false
		case c == ',' || c == '\n':
			flush()
		case start && (c == ' ' || c == '\t'):
			// leading blank
		default:
			b.WriteByte(c)
			start = false
		}
	}
	if b.Len() > 0 || !start {
		flush()
	}
	return elems
}

// SplitArray returns the elements of the text form of a string array, as
// the server decodes a string-array or ACL value it receives: elements
// separated by ',' or newline, a backslash escaping the next character,
// unescaped blanks around an element removed and empty elements dropped.
// It also reads the canonical encoding that JoinArray produces.
func SplitArray(text string) []string { return parseArray(text) }

// JoinArray returns the canonical encoding of a string array: the
// elements joined by commas, with double and single quotes, commas,
// backslashes and newlines escaped by a backslash (what Value.Str returns
// for string arrays and ACLs). Blanks are not escaped, so an element's
// trailing blanks do not survive SplitArray.
func JoinArray(elems []string) string { return joinEscaped(elems) }

// needsEscape reports whether c is escaped inside an encoded element.
func needsEscape(c byte) bool {
	return c == '"' || c == '\'' || c == ',' || c == '\\' || c == '\n'
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}

// joinEscaped returns the encoding of elems: each element with ", ', comma,
// backslash and newline preceded by a backslash, joined by ",".
func joinEscaped(elems []string) string {
	n := len(elems)
	for _, e := range elems {
		n += len(e)
	}
	b := make([]byte, 0, n)
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEscaped(b, e)
	}
	return string(b)
}

// splitEscaped is the inverse of joinEscaped.
func splitEscaped(s string) []string {
	if s == "" {
		return nil
	}
	elems := make([]string, 0, countElements(s))
	var b []byte
	plain := true // current element has no escapes: slice s directly
	begin := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if plain {
				b = append(b[:0], s[begin:i]...)
				plain = false
			}
			if i+1 < len(s) {
				i++
				b = append(b, s[i])
			}
		case ',':
			if plain {
				elems = append(elems, s[begin:i])
			} else {
				elems = append(elems, string(b))
			}
			begin, plain = i+1, true
		default:
			if !plain {
				b = append(b, s[i])
			}
		}
	}
	if plain {
		elems = append(elems, s[begin:])
	} else {
		elems = append(elems, string(b))
	}
	return elems
}

// countElements counts the elements of an encoded array.
func countElements(s string) int {
	if s == "" {
		return 0
	}
	n := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ',':
			n++
		}
	}
	return n
}

// saveArray converts an encoded array to the save encoding: every element
// (escaped) followed by a newline.
func saveArray(s string) string {
	if s == "" {
		return ""
	}
	b := make([]byte, 0, len(s)+1)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			b = append(b, '\\')
			if i+1 < len(s) {
				i++
				b = append(b, s[i])
			}
		case ',':
			b = append(b, '\n')
		default:
			b = append(b, s[i])
		}
	}
	return string(append(b, '\n'))
}

// VarLookup returns the value of the variable name in a Variable_List
// value (elements NAME=value) and whether it is present.
func VarLookup(v Value, name string) (string, bool) {
	for _, e := range v.Elements() {
		if k, val, ok := strings.Cut(e, "="); ok && k == name {
			return val, true
		} else if !ok && e == name {
			return "", true
		}
	}
	return "", false
}

// PrependElements returns the string array v with elems inserted at the
// front, the way the server puts PBS_O_QUEUE and PBS_O_HOST before the
// variables qsub sent. Empty elements are skipped.
func PrependElements(v Value, elems ...string) Value {
	var b []byte
	for _, e := range elems {
		if e == "" {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = appendEscaped(b, e)
	}
	if len(b) == 0 {
		return v
	}
	if v.s != "" {
		b = append(append(b, ','), v.s...)
	}
	t := v.typ
	if t == TypeNone {
		t = TypeStringArray
	}
	return Value{typ: t, s: string(b), flags: v.flags | FlagSet}
}
