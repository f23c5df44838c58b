package nodesfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// Load returns the nodes the lines of the nodes file at path describe,
// in order (ParseLine); none if there is no file.
func Load(path string) ([]*state.Node, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nodes file: %w", err)
	}
	defer f.Close()
	var nodes []*state.Node
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		nodes = append(nodes, ParseLine(sc.Text())...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nodes file: %w", err)
	}
	return nodes, nil
}

// ParseLine returns the nodes one line of a nodes file describes, in the
// order it names them (none for a blank or comment line): a name, or a
// range "n[01-10]", with ":ts" for a time-shared node, then np=, gpus=,
// other node attributes as name=value, and properties. A node is not
// free until its MOM reports (spec 12 §9); its Order is the caller's to
// set.
func ParseLine(line string) []*state.Node {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return nil
	}
	var nodes []*state.Node
	fields := strings.Fields(line)
	for _, name := range expandNodeName(fields[0]) {
		ts := false
		if strings.HasSuffix(name, ":ts") {
			name, ts = strings.TrimSuffix(name, ":ts"), true
		}
		if name == "" {
			continue
		}
		n := &state.Node{Name: name, NP: 1, State: state.NodeStateUnreported, TimeShared: ts}
		var props []string
		for _, tok := range fields[1:] {
			k, v, ok := strings.Cut(tok, "=")
			switch {
			case ok && k == "np":
				if x, err := strconv.Atoi(v); err == nil && x > 0 {
					n.NP = x
				}
			case ok && k == "gpus":
				n.Attrs.Set(pbsattr.NodeGPUs, v)
			case ok:
				if idx := state.NodeDefs.Find(k); idx >= 0 {
					n.Attrs.Set(idx, v)
				}
			default:
				props = append(props, tok)
			}
		}
		if len(props) > 0 {
			n.Attrs.Set(pbsattr.NodeProperties, state.EncodeArst(props))
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// expandNodeName expands "n[01-10]" ranges.
func expandNodeName(name string) []string {
	i := strings.IndexByte(name, '[')
	j := strings.IndexByte(name, ']')
	if i < 0 || j < i {
		return []string{name}
	}
	lo, hi, ok := strings.Cut(name[i+1:j], "-")
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if !ok || err1 != nil || err2 != nil || b < a || b-a > 100000 {
		return []string{name}
	}
	var out []string
	for k := a; k <= b; k++ {
		out = append(out, name[:i]+fmt.Sprintf("%0*d", len(lo), k)+name[j+1:])
	}
	return out
}

// Line is node n's line in server_priv/nodes (spec 13): the name
// (":ts" for a time-shared node), np when above 1, gpus when set, then
// the properties.
func Line(n *state.Node) string {
	var b strings.Builder
	b.WriteString(n.Name)
	if n.TimeShared {
		b.WriteString(":ts")
	}
	if n.NP > 1 {
		b.WriteString(" np=" + strconv.Itoa(n.NP))
	}
	if g, _ := strconv.Atoi(n.Attrs.Get(pbsattr.NodeGPUs)); g > 0 {
		b.WriteString(" gpus=" + strconv.Itoa(g))
	}
	for _, p := range state.ParseArst(n.Attrs.Get(pbsattr.NodeProperties)) {
		b.WriteString(" " + p)
	}
	return b.String()
}

// Fresh returns the nodes of nodes that known does not hold, the first
// of each name, numbered in creation order by order: the nodes a nodes
// file (or one of its lines) adds to a node table.
func Fresh(nodes []*state.Node, known map[string]*state.Node, order *state.Order) []*state.Node {
	var out []*state.Node
	seen := map[string]bool{}
	for _, n := range nodes {
		if known[n.Name] != nil || seen[n.Name] {
			continue
		}
		seen[n.Name] = true
		n.Order = order.Next()
		out = append(out, n)
	}
	return out
}

// Lines returns the lines of the nodes file for a node table.
func Lines(nodes []*state.Node) []string {
	lines := make([]string, len(nodes))
	for i, n := range nodes {
		lines[i] = Line(n)
	}
	return lines
}
