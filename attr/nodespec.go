package attr

import (
	"strconv"
	"strings"
)

// NodeSpec is a parsed nodes resource (spec 12 §9.2):
//
//	spec    := element { "+" element } [ "#" global { "#" global } ]
//	element := ( count | nodename ) { ":" prop }
//	prop    := property-name | "ppn=" N | "procs=" N | "gpus=" N
type NodeSpec struct {
	Elements []NodeElement
	Globals  []string // words after '#': "shared" or properties
}

// NodeElement is one '+'-separated element of a node spec.
type NodeElement struct {
	Count      int      // number of nodes (1 when a node name is given)
	Name       string   // node name, or "" when the element starts with a count
	PPN        int      // virtual processors per node (default 1)
	GPUs       int      // GPUs per node
	Properties []string // required properties
}

// Shared reports whether the spec carries the #shared global.
func (s NodeSpec) Shared() bool {
	for _, g := range s.Globals {
		if g == "shared" {
			return true
		}
	}
	return false
}

// NodeCount returns the number of nodes requested (the nodect resource).
func (s NodeSpec) NodeCount() int64 {
	var n int64
	for _, e := range s.Elements {
		n += int64(e.Count)
	}
	return n
}

// ProcCount returns the number of processors requested, nodes × ppn summed
// over the elements (the nodes part of the procct resource).
func (s NodeSpec) ProcCount() int64 {
	var n int64
	for _, e := range s.Elements {
		n += int64(e.Count) * int64(e.PPN)
	}
	return n
}

// ParseNodeSpec parses and checks a nodes resource value. Syntax violations
// are PBSE_BADATVAL.
func ParseNodeSpec(text string) (NodeSpec, error) {
	bad := func(why string) (NodeSpec, error) {
		return NodeSpec{}, badValue("bad node spec " + strconv.Quote(text) + ": " + why)
	}
	var spec NodeSpec
	body, globals, hasGlobals := strings.Cut(text, "#")
	if hasGlobals {
		for _, g := range strings.Split(globals, "#") {
			if !isPropName(g) {
				return bad("bad global " + strconv.Quote(g))
			}
			spec.Globals = append(spec.Globals, g)
		}
	}
	for _, el := range strings.Split(body, "+") {
		parts := strings.Split(el, ":")
		e := NodeElement{Count: 1, PPN: 1}
		switch head := parts[0]; {
		case head == "":
			return bad("empty element")
		case isDigits(head):
			n, err := strconv.Atoi(head)
			if err != nil || n <= 0 {
				return bad("bad node count " + strconv.Quote(head))
			}
			e.Count = n
		case isPropName(head):
			e.Name = head
		default:
			return bad("bad node name " + strconv.Quote(head))
		}
		for _, p := range parts[1:] {
			key, val, isKV := strings.Cut(p, "=")
			if isKV && (key == "ppn" || key == "procs" || key == "gpus") {
				n, err := strconv.Atoi(val)
				if !isDigits(val) || err != nil {
					return bad("bad " + key + " value " + strconv.Quote(val))
				}
				if key == "gpus" {
					e.GPUs = n
				} else {
					e.PPN = n
				}
				continue
			}
			if !isPropName(p) {
				return bad("bad property " + strconv.Quote(p))
			}
			e.Properties = append(e.Properties, p)
		}
		spec.Elements = append(spec.Elements, e)
	}
	return spec, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isPropName reports whether s matches [A-Za-z][A-Za-z0-9._=-]*.
func isPropName(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '=' || c == '-') {
			return false
		}
	}
	return true
}
