package alloc

import "testing"

func TestAssignedAmounts(t *testing.T) {
	for _, tc := range []struct {
		res, v string
		n      int64
		out    string
	}{
		{"nodect", "2", 2, "2"},
		{"mem", "1gb", 1 << 30, "1048576kb"},
		{"vmem", "100b", 100, "100b"},
		{"mem", "0", 0, "0b"},
	} {
		n, ok := resourceAmount(tc.res, tc.v)
		if !ok || n != tc.n {
			t.Errorf("resourceAmount(%s, %s) = %d %v", tc.res, tc.v, n, ok)
		}
		if got := formatAmount(tc.res, n); got != tc.out {
			t.Errorf("formatAmount(%s, %d) = %q", tc.res, n, got)
		}
	}
	if _, ok := resourceAmount("ncpus", "x"); ok {
		t.Error("bad count accepted")
	}
}
