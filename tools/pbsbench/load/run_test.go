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
