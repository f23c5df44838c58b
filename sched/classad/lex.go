package classad

import (
	"fmt"
	"strconv"
	"strings"
)

// tokKind is the kind of a token.
type tokKind int

const (
	tIdent tokKind = iota + 1
	tNumber
	tString
	tOp // punctuation and operators
	tEOF
)

// token is one lexical element of a ClassAd.
type token struct {
	kind tokKind
	text string // identifier, number literal, operator, or the decoded string
	line int
}

// SyntaxError is a malformed ClassAd, with the line it was found on.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ops are the operators and punctuation, longest first.
var ops = []string{
	"=?=", "=!=", "==", "!=", "<=", ">=", "&&", "||",
	"[", "]", "{", "}", "(", ")", ";", ",", ".", "?", ":", "=", "<", ">", "!", "+", "-", "*", "/", "%",
}

// lex splits src into tokens, dropping comments (// to the end of the
// line, /* ... */ and # to the end of the line).
func lex(src string) ([]token, error) {
	var toks []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' || strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &SyntaxError{line, "unterminated comment"}
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += 2 + end + 2
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			toks = append(toks, token{tIdent, src[i:j], line})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			text := src[i:j]
			if _, err := strconv.ParseFloat(text, 64); err != nil || j < len(src) && isIdentStart(src[j]) {
				return nil, &SyntaxError{line, fmt.Sprintf("bad number %q", src[i:min(j+1, len(src))])}
			}
			toks = append(toks, token{tNumber, text, line})
			i = j
		case c == '"':
			s, n, err := readString(src[i:])
			if err != nil {
				return nil, &SyntaxError{line, err.Error()}
			}
			toks = append(toks, token{tString, s, line})
			i += n
		default:
			matched := false
			for _, op := range ops {
				if strings.HasPrefix(src[i:], op) {
					toks = append(toks, token{tOp, op, line})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				return nil, &SyntaxError{line, fmt.Sprintf("unexpected character %q", rune(c))}
			}
		}
	}
	return append(toks, token{tEOF, "", line}), nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

// readString reads a double-quoted string with ClassAd's escapes (\" \\
// \n \t \r) from the start of s, returning it and the bytes it took.
func readString(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			return b.String(), i + 1, nil
		case '\n':
			return "", 0, fmt.Errorf("newline in string")
		case '\\':
			i++
			if i == len(s) {
				return "", 0, fmt.Errorf("unterminated string")
			}
			switch s[i] {
			case '"', '\\', '\'':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				return "", 0, fmt.Errorf("unknown escape \\%c in string", s[i])
			}
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}
