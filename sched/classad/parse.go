package classad

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Attr is one attribute of an ad: its name as written, its expression as
// written in the file, the expression translated for the evaluator, and
// the attributes it refers to (lower case).
type Attr struct {
	Name string
	Line int
	Src  string
	expr string
	refs []string
}

// parser reads tokens into attributes, translating each expression into
// the evaluator's syntax fully parenthesised, so that the evaluator's
// operator precedence never matters.
type parser struct {
	toks []token
	pos  int
	refs map[string]bool
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) errorf(format string, a ...any) error {
	return &SyntaxError{Line: p.peek().line, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) isOp(s string) bool { t := p.peek(); return t.kind == tOp && t.text == s }

func (p *parser) expect(s string) error {
	if !p.isOp(s) {
		return p.errorf("want %q, found %s", s, describe(p.peek()))
	}
	p.next()
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return strconv.Quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// maxDepth bounds the nesting of expressions, so that hostile input
// cannot exhaust the stack.
const maxDepth = 200

func (p *parser) expr(depth int) (string, error) {
	if depth > maxDepth {
		return "", p.errorf("expression nested too deeply")
	}
	cond, err := p.binary(0, depth)
	if err != nil || !p.isOp("?") {
		return cond, err
	}
	p.next()
	yes, err := p.expr(depth + 1)
	if err != nil {
		return "", err
	}
	if err := p.expect(":"); err != nil {
		return "", err
	}
	no, err := p.expr(depth + 1)
	if err != nil {
		return "", err
	}
	return "(" + cond + " ? " + yes + " : " + no + ")", nil
}

// levels are the binary operators from the loosest binding to the
// tightest, with what each becomes.
var levels = []map[string]string{
	{"||": "||"},
	{"&&": "&&"},
	{"==": "==", "!=": "!=", "=?=": "==", "=!=": "!="},
	{"<": "<", "<=": "<=", ">": ">", ">=": ">="},
	{"+": "+", "-": "-"},
	{"*": "*", "/": "/", "%": "%"},
}

func (p *parser) binary(level, depth int) (string, error) {
	if level == len(levels) {
		return p.unary(depth)
	}
	left, err := p.binary(level+1, depth)
	if err != nil {
		return "", err
	}
	for {
		t := p.peek()
		op, ok := levels[level][t.text]
		if t.kind != tOp || !ok {
			return left, nil
		}
		p.next()
		right, err := p.binary(level+1, depth+1)
		if err != nil {
			return "", err
		}
		left = "(" + left + " " + op + " " + right + ")"
	}
}

func (p *parser) unary(depth int) (string, error) {
	if depth > maxDepth {
		return "", p.errorf("expression nested too deeply")
	}
	if t := p.peek(); t.kind == tOp && (t.text == "!" || t.text == "-" || t.text == "+") {
		p.next()
		x, err := p.unary(depth + 1)
		if err != nil {
			return "", err
		}
		return "(" + t.text + x + ")", nil
	}
	x, err := p.primary(depth)
	if err != nil {
		return "", err
	}
	for {
		switch {
		case p.isOp("."):
			p.next()
			f := p.next()
			if f.kind != tIdent {
				return "", p.errorf("want a field name after '.', found %s", describe(f))
			}
			x = x + "[" + strconv.Quote(strings.ToLower(f.text)) + "]"
		case p.isOp("["):
			p.next()
			i, err := p.expr(depth + 1)
			if err != nil {
				return "", err
			}
			if err := p.expect("]"); err != nil {
				return "", err
			}
			x = x + "[" + i + "]"
		default:
			return x, nil
		}
	}
}

func (p *parser) primary(depth int) (string, error) {
	t := p.next()
	switch t.kind {
	case tNumber:
		return number(t)
	case tString:
		return strconv.Quote(t.text), nil
	case tIdent:
		lower := strings.ToLower(t.text)
		if p.isOp("(") {
			p.next()
			f, ok := functions[lower]
			if !ok {
				return "", &SyntaxError{t.line, fmt.Sprintf("unknown function %s", t.text)}
			}
			args, err := p.items(")", depth)
			if err != nil {
				return "", err
			}
			if len(args) < f.min || len(args) > f.max {
				return "", &SyntaxError{t.line, fmt.Sprintf("%s takes %s, not %d", t.text, f.arity(), len(args))}
			}
			return "fn_" + lower + "(" + strings.Join(append([]string{ctxVar}, args...), ", ") + ")", nil
		}
		switch lower {
		case "true", "false":
			return lower, nil
		case "undefined", "error":
			return "", &SyntaxError{t.line, fmt.Sprintf("%s literals are not supported", strings.ToUpper(lower))}
		}
		p.refs[lower] = true
		return "v_" + lower, nil
	case tOp:
		switch t.text {
		case "(":
			x, err := p.expr(depth + 1)
			if err != nil {
				return "", err
			}
			return "(" + x + ")", p.expect(")")
		case "{":
			items, err := p.items("}", depth)
			if err != nil {
				return "", err
			}
			return "[" + strings.Join(items, ", ") + "]", nil
		case "[":
			return "", &SyntaxError{t.line, "nested records are not supported inside expressions"}
		}
	}
	return "", &SyntaxError{t.line, fmt.Sprintf("want an expression, found %s", describe(t))}
}

// items reads comma-separated expressions up to the closing token.
func (p *parser) items(closing string, depth int) ([]string, error) {
	var items []string
	if p.isOp(closing) {
		p.next()
		return nil, nil
	}
	for {
		x, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if p.isOp(",") {
			p.next()
			continue
		}
		if err := p.expect(closing); err != nil {
			return nil, err
		}
		return items, nil
	}
}

// number writes a numeric literal in the evaluator's form: integers as
// they are, reals with a decimal point.
func number(t token) (string, error) {
	if !strings.ContainsAny(t.text, ".eE") {
		if _, err := strconv.ParseInt(t.text, 10, 64); err != nil {
			return "", &SyntaxError{t.line, fmt.Sprintf("integer %s out of range", t.text)}
		}
		return t.text, nil
	}
	f, err := strconv.ParseFloat(t.text, 64)
	if err != nil {
		return "", &SyntaxError{t.line, fmt.Sprintf("bad number %s", t.text)}
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s, nil
}

// parseAd reads "[ name = expr; ... ]".
func parseAd(src string) ([]*Attr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if err := p.expect("["); err != nil {
		return nil, err
	}
	var attrs []*Attr
	seen := map[string]int{}
	for !p.isOp("]") {
		name := p.next()
		if name.kind != tIdent {
			return nil, &SyntaxError{name.line, fmt.Sprintf("want an attribute name, found %s", describe(name))}
		}
		lower := strings.ToLower(name.text)
		if line, dup := seen[lower]; dup {
			return nil, &SyntaxError{name.line, fmt.Sprintf("attribute %s already defined on line %d", name.text, line)}
		}
		seen[lower] = name.line
		if err := p.expect("="); err != nil {
			return nil, err
		}
		start := p.pos
		p.refs = map[string]bool{}
		x, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		a := &Attr{Name: name.text, Line: name.line, Src: joinTokens(toks[start:p.pos]), expr: x}
		for r := range p.refs {
			a.refs = append(a.refs, r)
		}
		sort.Strings(a.refs)
		attrs = append(attrs, a)
		if p.isOp(";") {
			p.next()
			continue
		}
		if !p.isOp("]") {
			return nil, p.errorf("want ';' or ']' after attribute %s, found %s", name.text, describe(p.peek()))
		}
	}
	p.next()
	if t := p.peek(); t.kind != tEOF {
		return nil, &SyntaxError{t.line, fmt.Sprintf("text after the closing ']': %s", describe(t))}
	}
	return attrs, nil
}

func joinTokens(toks []token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		if t.kind == tString {
			b.WriteString(strconv.Quote(t.text))
		} else {
			b.WriteString(t.text)
		}
	}
	return b.String()
}
