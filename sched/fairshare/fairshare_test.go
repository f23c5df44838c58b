package fairshare

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const groups = `# name id parent shares
grp1 50 root 10
grp2 51 root 20
usr1 60 grp1 5
usr2 61 grp1 15
usr3 62 grp2 1
`

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPercentages(t *testing.T) {
	tr, err := Parse(strings.NewReader(groups), 10)
	if err != nil {
		t.Fatal(err)
	}
	// root children: unknown 10, grp1 10, grp2 20 → 1/4, 1/4, 1/2.
	tests := map[string]float64{"unknown": 0.25, "grp1": 0.25, "grp2": 0.5, "usr1": 0.0625, "usr2": 0.1875, "usr3": 0.5}
	for name, want := range tests {
		if got := tr.Node(name).Percent; !near(got, want) {
			t.Errorf("%s percent = %v, want %v", name, got, want)
		}
	}
	// An unlisted user lands in unknown.
	if n := tr.User("zed"); n.Parent != tr.Unknown || !near(n.Percent, 0.25) {
		t.Errorf("zed: parent %v percent %v", n.Parent.Name, n.Percent)
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"a 1 nosuch 5\n", "a 1 root\n", "a x root 5\n", "a 1 root 5\na 2 root 5\n", "a 1 root -1\n"} {
		if _, err := Parse(strings.NewReader(s), 10); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

func TestChargeAndPriority(t *testing.T) {
	tr, _ := Parse(strings.NewReader(groups), 10)
	tr.AddUsage("usr1", 100)
	tr.StartCycle()
	if got := tr.Node("grp1").Usage; got != 100 {
		t.Errorf("group usage = %v", got)
	}
	p1, p3 := tr.Node("usr1").Priority(), tr.Node("usr3").Priority()
	if !(p3 < p1) {
		t.Errorf("usr3 (no usage) must be more deserving: %v vs %v", p3, p1)
	}
	tr.Charge("usr3", 1000)
	if !(tr.Node("usr3").Priority() > p1) {
		t.Error("charge did not lower usr3's standing")
	}
	tr.StartCycle()
	if tr.Node("usr3").TempUsage != 0 {
		t.Error("StartCycle did not drop temporary charges")
	}
}

func TestDecayAndPersist(t *testing.T) {
	tr, _ := Parse(strings.NewReader(groups), 10)
	t0 := time.Unix(1_000_000, 0)
	tr.Decay(t0, time.Hour)
	tr.AddUsage("usr2", 80)
	tr.AddUsage("stranger", 8)
	if k := tr.Decay(t0.Add(150*time.Minute), time.Hour); k != 2 {
		t.Fatalf("halvings = %d", k)
	}
	if got := tr.Node("usr2").Usage; got != 20 {
		t.Errorf("usage after decay = %v", got)
	}
	var buf bytes.Buffer
	if err := tr.WriteUsage(&buf); err != nil {
		t.Fatal(err)
	}
	tr2, _ := Parse(strings.NewReader(groups), 10)
	if err := tr2.ReadUsage(&buf); err != nil {
		t.Fatal(err)
	}
	if tr2.Node("usr2").Usage != 20 || tr2.Node("stranger").Usage != 2 || tr2.Root.Usage != 22 {
		t.Errorf("reloaded usage wrong: %v %v %v", tr2.Node("usr2").Usage, tr2.Node("stranger").Usage, tr2.Root.Usage)
	}
	if !tr2.LastDecay.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("LastDecay = %v", tr2.LastDecay)
	}
	path := filepath.Join(t.TempDir(), "usage")
	if err := tr2.SaveUsageFile(path); err != nil {
		t.Fatal(err)
	}
	tr3 := New(10)
	if err := tr3.LoadUsageFile(path); err != nil || tr3.Node("usr2").Usage != 20 {
		t.Errorf("file round trip: %v", err)
	}
	if err := tr3.ReadUsage(strings.NewReader("x NaN\n")); err == nil {
		t.Error("NaN usage accepted")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(groups, "usr1 10\n#decay 5\n")
	f.Fuzz(func(t *testing.T, rg, usage string) {
		tr, err := Parse(strings.NewReader(rg), 10)
		if err != nil {
			return
		}
		_ = tr.ReadUsage(strings.NewReader(usage))
		tr.StartCycle()
		tr.Charge("someone", 5)
		for _, n := range tr.byName {
			_ = n.Priority()
		}
	})
}
