package running

import "testing"

func TestHostsSpec(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"vm/0", "vm"},
		{"vm/0+vm/1+vm2/0", "vm:ppn=2+vm2"},
		{"vm2/1+vm/0+vm2/0", "vm2:ppn=2+vm"},
		{"", ""},
	} {
		if got := hostsSpec(tc.in); got != tc.want {
			t.Errorf("hostsSpec(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRequeueOnExit(t *testing.T) {
	for _, tc := range []struct {
		exit      int
		rerunable bool
		want      bool
	}{{0, true, false}, {-1, true, false}, {-3, false, true}, {-4, true, true}, {-4, false, false}, {-5, false, true}, {-10, true, false}, {271, true, false}} {
		if got := requeueOnExit(tc.exit, tc.rerunable); got != tc.want {
			t.Errorf("requeueOnExit(%d, %v) = %v", tc.exit, tc.rerunable, got)
		}
	}
}

func TestFilePrefix(t *testing.T) {
	for _, tc := range []struct{ id, want string }{{"13.vm", "13.vm"}, {"14[0].vm", "14-0.vm"}, {"14[].vm", "14.vm"}} {
		if got := filePrefix(tc.id); got != tc.want {
			t.Errorf("filePrefix(%s) = %q", tc.id, got)
		}
	}
}
