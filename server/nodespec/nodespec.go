// Package nodespec reads the nodes resource of a job (spec 12 §9.2):
// "+"-separated elements, each a count, a node name or a property, with
// ppn=/procs=, gpus= and further properties after ':', and properties
// for every element after '#'. Node allocation (the MOM link) and the
// feasibility check of admission (server/admit) walk the node table with
// it.
package nodespec

import (
	"slices"
	"strconv"
	"strings"

	"gopbs/attr"
	"gopbs/server/state"
)

// Default is default_node's default (spec 12 §9.2).
const Default = "1#shared"

// Element is one "+"-separated element of a node specification.
type Element struct {
	Count int      // nodes wanted
	Name  string   // a specific node, or ""
	PPN   int      // virtual processors on each
	Props []string // properties each must have
}

// Parse parses a nodes specification. A first token that is not a count
// is a node name when known reports it, else a property. It reports false
// for a specification that does not parse (a count or ppn below 1, an
// empty element, an unknown key=value).
func Parse(spec string, known func(string) bool) ([]Element, bool) {
	parts := strings.Split(spec, "#")
	var global []string
	for _, g := range parts[1:] {
		if g != "" && g != "shared" {
			global = append(global, g)
		}
	}
	var out []Element
	for _, el := range strings.Split(parts[0], "+") {
		if el == "" {
			return nil, false
		}
		toks := strings.Split(el, ":")
		e := Element{Count: 1, PPN: 1}
		first := toks[0]
		if n, err := strconv.Atoi(first); err == nil {
			if n <= 0 {
				return nil, false
			}
			e.Count = n
		} else if known(first) {
			e.Name = first
		} else {
			e.Props = append(e.Props, first)
		}
		for _, t := range toks[1:] {
			k, v, isKV := strings.Cut(t, "=")
			switch {
			case isKV && (k == "ppn" || k == "procs"):
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					return nil, false
				}
				e.PPN = n
			case isKV && k == "gpus":
			case isKV:
				return nil, false
			default:
				e.Props = append(e.Props, t)
			}
		}
		e.Props = append(e.Props, global...)
		out = append(out, e)
	}
	return out, true
}

// Offers reports whether node n, whatever its state and use, has what
// element e asks for: a cluster node (not time-shared) with e's name and
// properties (a node's own name counts as a property of it).
func Offers(n *state.Node, e Element) bool {
	if n.TimeShared || e.Name != "" && n.Name != e.Name {
		return false
	}
	if len(e.Props) == 0 {
		return true
	}
	props := state.ParseArst(n.Attrs.Get(attr.NodeProperties))
	for _, p := range e.Props {
		if p != n.Name && !slices.Contains(props, p) {
			return false
		}
	}
	return true
}
