// This file reads the words of one qmgr command (parser): names, the
// attribute list "name[.resource] OP value[,...]" and quoted values.

package main

import (
	"strings"

	"gopbs/batchreq"
	"gopbs/pbs"
)

// attrPrefix returns the attribute name a word starts with.
func attrPrefix(w string) string {
	if i := strings.IndexAny(w, "=+-."); i >= 0 {
		return w[:i]
	}
	return w
}

// parser reads the words of one command.
type parser struct {
	s   string
	pos int
}

func (p *parser) skipBlanks() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// word returns the next blank-delimited word.
func (p *parser) word() string {
	p.skipBlanks()
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ' ' && p.s[p.pos] != '\t' {
		p.pos++
	}
	return p.s[start:p.pos]
}

func isNameChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// attributes parses "attr[.res] [op value] {, ...}".
func (p *parser) attributes(obj int, verb string) ([]pbs.Attr, int, string) {
	var out []pbs.Attr
	for {
		p.skipBlanks()
		if p.pos >= len(p.s) {
			if len(out) > 0 {
				return nil, p.pos, "syntax error - checklist failed"
			}
			return out, 0, ""
		}
		start := p.pos
		for p.pos < len(p.s) && isNameChar(p.s[p.pos]) {
			p.pos++
		}
		a := pbs.Attr{Name: p.s[start:p.pos]}
		if p.pos < len(p.s) && p.s[p.pos] == '.' {
			p.pos++
			rs := p.pos
			for p.pos < len(p.s) && (isNameChar(p.s[p.pos]) || p.s[p.pos] == '-') {
				p.pos++
			}
			a.Resource = p.s[rs:p.pos]
		}
		if a.Name == "" || !knownAttrs[obj][a.Name] {
			return nil, p.pos, "Syntax error - cannot locate attribute"
		}
		p.skipBlanks()
		hasOp := false
		switch {
		case strings.HasPrefix(p.s[p.pos:], "+="):
			a.Op, hasOp = batchreq.INCR_OLD, true
			p.pos += 2
		case strings.HasPrefix(p.s[p.pos:], "-="):
			a.Op, hasOp = batchreq.DECR, true
			p.pos += 2
		case strings.HasPrefix(p.s[p.pos:], "="):
			a.Op, hasOp = batchreq.SET, true
			p.pos++
		}
		if hasOp {
			if verb == "unset" || verb == "list" || verb == "print" {
				return nil, p.pos, "syntax error - checklist failed"
			}
			p.skipBlanks()
			v, ok := p.value()
			if !ok {
				return nil, p.pos, "syntax error - checklist failed"
			}
			a.Value = v
		} else if verb == "set" || verb == "create" {
			return nil, p.pos, "syntax error - checklist failed"
		}
		out = append(out, a)
		p.skipBlanks()
		if p.pos >= len(p.s) {
			return out, 0, ""
		}
		if p.s[p.pos] != ',' {
			return nil, p.pos, "syntax error - checklist failed"
		}
		p.pos++
	}
}

// value reads a value: a quoted string or text up to a blank or comma.
func (p *parser) value() (string, bool) {
	if p.pos >= len(p.s) {
		return "", false
	}
	if c := p.s[p.pos]; c == '"' || c == '\'' {
		end := strings.IndexByte(p.s[p.pos+1:], c)
		if end < 0 {
			return "", false
		}
		v := p.s[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return v, true
	}
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ' ' && p.s[p.pos] != '\t' && p.s[p.pos] != ',' {
		p.pos++
	}
	return p.s[start:p.pos], p.pos > start
}
