package cli

import (
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzGetopt checks that no argument list makes Getopt panic and that
// every option it returns is one of optstring's letters (or '?').
func FuzzGetopt(f *testing.F) {
	f.Add("-Qf -u alice 1.vm -- -x", "aQfu:")
	f.Add("-c", "+c:")
	f.Fuzz(func(t *testing.T, args, optstring string) {
		opts, _, _ := Getopt(strings.Fields(args), optstring, "prog", io.Discard)
		for _, o := range opts {
			if o.C != '?' && strings.IndexByte(optstring, o.C) < 0 {
				t.Fatalf("option %q not in %q", o.C, optstring)
			}
		}
	})
}

// FuzzParseDateTime checks that no -a operand makes ParseDateTime panic
// and that accepted ones are not in the past unless a full date was given.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"202611220321", "0321", "0321.30", "1231235959.59", "", "99999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 1, 21, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDateTime(s, now)
		if err != nil {
			return
		}
		main, _, _ := strings.Cut(s, ".")
		if len(main) < 10 && v < now.Unix()-61 {
			t.Fatalf("%q: %d is before now", s, v)
		}
	})
}
