package nodespec

import "testing"

func TestParseNodeSpec(t *testing.T) {
	known := func(n string) bool { return n == "vm" || n == "vm2" }
	for _, tc := range []struct {
		spec string
		want []Element
		ok   bool
	}{
		{"1", []Element{{Count: 1, PPN: 1}}, true},
		{"2:ppn=4", []Element{{Count: 2, PPN: 4}}, true},
		{"vm:ppn=2+vm2", []Element{{Count: 1, Name: "vm", PPN: 2}, {Count: 1, Name: "vm2", PPN: 1}}, true},
		{"bigmem:ib", []Element{{Count: 1, PPN: 1, Props: []string{"bigmem", "ib"}}}, true},
		{"1#shared", []Element{{Count: 1, PPN: 1}}, true},
		{"2#fast", []Element{{Count: 2, PPN: 1, Props: []string{"fast"}}}, true},
		{"1:procs=3", []Element{{Count: 1, PPN: 3}}, true},
		{"0", nil, false},
		{"1:ppn=0", nil, false},
		{"1:ppn=x", nil, false},
		{"1+", nil, false},
		{"1:foo=2", nil, false},
	} {
		got, ok := Parse(tc.spec, known)
		if ok != tc.ok {
			t.Errorf("%q: ok %v", tc.spec, ok)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %+v", tc.spec, got)
			continue
		}
		for i := range got {
			g, w := got[i], tc.want[i]
			if g.Count != w.Count || g.Name != w.Name || g.PPN != w.PPN || len(g.Props) != len(w.Props) {
				t.Errorf("%q element %d: %+v want %+v", tc.spec, i, g, w)
			}
		}
	}
}

// FuzzParse: any specification parses or is refused without a panic, and
// every element parsed asks for at least one node of at least one VP.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "2:ppn=4", "vm:ppn=2+vm2", "bigmem:ib#fast", "1#shared", "1:procs=3:gpus=1", "+", "::", "0", "#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		elems, ok := Parse(spec, func(n string) bool { return n == "vm" })
		if !ok {
			return
		}
		for _, e := range elems {
			if e.Count < 1 || e.PPN < 1 {
				t.Fatalf("%q: element %+v", spec, e)
			}
		}
	})
}
