package load

import (
	"testing"
	"time"
)

func TestResultLine(t *testing.T) {
	r := &Result{Mode: "submit", OK: 4, Failed: 1, Elapsed: 2 * time.Second,
		Latencies: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 1500 * time.Millisecond}}
	want := "mode=submit ok=4 failed=1 elapsed=2.000s rate=2.0/s p50=2.00ms p99=3.00ms"
	if got := r.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := r.Percentile(1); got != 1500*time.Millisecond {
		t.Errorf("p100 = %v", got)
	}
	if got := (&Result{}).Percentile(0.5); got != 0 {
		t.Errorf("empty p50 = %v", got)
	}
}

func TestRunRejectsUnknownMode(t *testing.T) {
	if _, err := Run(Config{Mode: "nope", Dialer: &Dialer{}}); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestResourceList(t *testing.T) {
	l := ResourceList("nodes=1:ppn=2, walltime=01:00:00,,mem")
	want := []string{"nodes=1:ppn=2", "walltime=01:00:00", "mem="}
	if len(l) != len(want) {
		t.Fatalf("got %d entries: %+v", len(l), l)
	}
	for i, a := range l {
		if a.Name != "Resource_List" || !a.HasResource || a.Resource+"="+a.Value != want[i] {
			t.Errorf("entry %d = %+v, want Resource_List.%s", i, a, want[i])
		}
	}
}
