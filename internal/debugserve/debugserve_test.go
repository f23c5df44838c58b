package debugserve

import "testing"

func TestLoopbackAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:6061", true},
		{"127.3.4.5:0", true},
		{"[::1]:6061", true},
		{"localhost:6061", false}, // names are not resolved
		{"0.0.0.0:6061", false},
		{":6061", false},
		{"10.1.2.3:6061", false},
		{"127.0.0.1", false},
		{"", false},
	} {
		if got := LoopbackAddr(tc.addr); got != tc.want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
