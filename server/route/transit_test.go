package route

import (
	"net"
	"strings"
	"testing"
)

// TestParseDestinationSelf: this server is named by its name (without a
// port or on its own port), localhost or a loopback address on its own
// port; anything else dialable is another server, at 15001 by default.
func TestParseDestinationSelf(t *testing.T) {
	self := Self{Name: "vm", Port: "16001"}
	for _, tc := range []struct {
		in, queue, addr string
		bad             bool
	}{
		{"batch", "batch", "", false},
		{"batch@vm", "batch", "", false},
		{"batch@VM:16001", "batch", "", false},
		{"batch@vm:1", "batch", "vm:1", false},
		{"batch@other", "batch", "other:15001", false},
		{"batch@localhost:16001", "batch", "", false},
		{"batch@127.0.0.1:16001", "batch", "", false},
		{"batch@[::1]:16001", "batch", "", false},
		{"batch@localhost", "batch", "localhost:15001", false},
		{"batch@h:99999", "batch", "", true},
		{"batch@*.org", "batch", "", true},
	} {
		d := ParseDestination(tc.in, self)
		if d.Queue != tc.queue || d.Addr != tc.addr || d.Bad != tc.bad {
			t.Errorf("ParseDestination(%q) = %+v, want queue %q addr %q bad %v", tc.in, d, tc.queue, tc.addr, tc.bad)
		}
	}
}

func TestRouteNumbers(t *testing.T) {
	for v, want := range map[string]int64{"": 0, "30": 30, "12abc": 12, "x1": 0} {
		if got := leadingNumber(v); got != want {
			t.Errorf("leadingNumber(%q) = %d, want %d", v, got, want)
		}
	}
}

// FuzzParseDestinationSelf: any destination parses without a panic into
// a queue that starts it and, for another server, a dialable host:port.
func FuzzParseDestinationSelf(f *testing.F) {
	for _, seed := range []string{"batch", "batch@vm", "batch@other:16001", "@", "q@[::1]:1", "q@:", "a@b@c", "q@h:p:q"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d := ParseDestination(in, Self{Name: "vm", Port: "16001"})
		if !strings.HasPrefix(in, d.Queue) {
			t.Fatalf("queue %q is not the start of %q", d.Queue, in)
		}
		if d.Addr != "" {
			if _, _, err := net.SplitHostPort(d.Addr); err != nil {
				t.Fatalf("address %q of %q: %v", d.Addr, in, err)
			}
			if d.Bad {
				t.Fatalf("%q: both an address and bad", in)
			}
		}
	})
}
