package nodesfile

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// TestParseLine: names, ranges, time-shared nodes, np, gpus, node
// attributes and properties, and what Line writes back for them.
func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line  string
		names []string
		lines []string
	}{
		{"", nil, nil},
		{"   # comment", nil, nil},
		{"vm np=2", []string{"vm"}, []string{"vm np=2"}},
		{"n[08-10] np=4 fast big", []string{"n08", "n09", "n10"}, []string{"n08 np=4 fast big", "n09 np=4 fast big", "n10 np=4 fast big"}},
		{"ts:ts gpus=2", []string{"ts"}, []string{"ts:ts gpus=2"}},
		{"x np=0 note=hello", []string{"x"}, []string{"x"}},
		{"bad[3-1] np=2", []string{"bad[3-1]"}, []string{"bad[3-1] np=2"}},
		{":ts", nil, nil},
	} {
		nodes := ParseLine(tc.line)
		var names []string
		for _, n := range nodes {
			names = append(names, n.Name)
			if n.State != state.NodeStateUnreported {
				t.Errorf("%q: node %s state %d, want unreported", tc.line, n.Name, n.State)
			}
		}
		if strings.Join(names, ",") != strings.Join(tc.names, ",") {
			t.Errorf("%q: nodes %v, want %v", tc.line, names, tc.names)
		}
		if got := Lines(nodes); strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
			t.Errorf("%q: lines %q, want %q", tc.line, got, tc.lines)
		}
	}
	if n := ParseLine("x note=hello"); len(n) != 1 || n[0].Attrs.Get(pbsattr.NodeNote) != "hello" {
		t.Errorf("note= not kept: %+v", n)
	}
}

// TestLoad: a missing file holds no nodes; an administrator's file gives
// its nodes in order.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if nodes, err := Load(filepath.Join(dir, "none")); err != nil || nodes != nil {
		t.Fatalf("missing file: %v, %v", nodes, err)
	}
	path := filepath.Join(dir, "nodes")
	os.WriteFile(path, []byte("# cluster\nn[1-2] np=2\n\nbig:ts gpus=1 fat\n"), 0o644)
	nodes, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Lines(nodes), "|"); got != "n1 np=2|n2 np=2|big:ts gpus=1 fat" {
		t.Errorf("loaded %q", got)
	}
}

// FuzzParseLine: no line makes the parser panic; every node it gives has
// a name and at least one VP, and the line written for it parses back to
// the same node line.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"vm np=2", "n[01-10] np=4 fast", "ts:ts gpus=2", "# c", "x[1-]", "[0-99999]", "a note=x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, n := range ParseLine(line) {
			if n.Name == "" || n.NP < 1 {
				t.Fatalf("%q: node %+v", line, n)
			}
			l := Line(n)
			back := ParseLine(l)
			if strings.ContainsAny(n.Name, "#[") || strings.HasPrefix(n.Name, "#") {
				continue // a name the line form cannot carry back
			}
			if len(back) != 1 || Line(back[0]) != l {
				t.Fatalf("%q: line %q reads back as %v", line, l, Lines(back))
			}
		}
	})
}

// TestFresh: the nodes a file adds are those the table lacks, each name
// once, numbered in creation order from where the order stands.
func TestFresh(t *testing.T) {
	known := map[string]*state.Node{"n2": {Name: "n2"}}
	var order state.Order
	order.Recovered(4)
	var listed []*state.Node
	for _, l := range []string{"n[1-3] np=2", "n1 big", "n4"} {
		listed = append(listed, ParseLine(l)...)
	}
	var got []string
	for _, n := range Fresh(listed, known, &order) {
		got = append(got, n.Name+"@"+strconv.FormatInt(n.Order, 10)+" "+Line(n))
	}
	if want := []string{"n1@5 n1 np=2", "n3@6 n3 np=2", "n4@7 n4"}; !slices.Equal(got, want) {
		t.Errorf("fresh nodes %q, want %q", got, want)
	}
	if order.Peek() != 8 {
		t.Errorf("order stands at %d, want 8", order.Peek())
	}
}
