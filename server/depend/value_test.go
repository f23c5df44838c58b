package depend

import (
	"strings"
	"testing"
)

// TestParseDepend checks the depend values a client may send: attr's
// syntax and combination rules (spec 12 §6.1), server names filled in.
func TestParseDepend(t *testing.T) {
	tests := []struct {
		in   string
		want string // Format of the result; "!" for refused
	}{
		{"", ""},
		{"afterok:1.vm", "afterok:1.vm@vm"},
		{"afterok:1.vm:2.vm@other,afterok:3.vm", "afterok:1.vm@vm:2.vm@other:3.vm@vm"},
		{"on:2", "on:2"},
		{"synccount:3", "synccount:3"},
		{"syncwith:4.vm", "syncwith:4.vm@vm"},
		{"afterokarray:21[].vm", "afterokarray:21[].vm@vm"},
		{"afterok:12", "!"},    // neither a '.' nor a server
		{"afterok", "!"},       // no argument
		{"sometime:1.vm", "!"}, // unknown type
		{"on:x", "!"},          // count expected
		{"syncwith:1.vm,afterok:2.vm", "!"},
		{"syncwith:1.vm:2.vm", "!"},
		{"synccount:1,synccount:2", "!"},
		{"afterokarray:1[].vm,afterok:2.vm", "!"},
	}
	for _, tt := range tests {
		deps, ok := Parse(tt.in, "vm")
		got := Format(deps)
		if !ok {
			got = "!"
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParse: no depend value crashes the parser, and what it accepts
// formats to a value it accepts again as the same entries (unless an
// argument holds a backslash, which Format does not escape).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "afterok:1.vm", "afterok:1.vm:2.vm@other,afterok:3.vm", "on:2", "synccount:3",
		"syncwith:4.vm", "afterokarray:21[][2].vm", "before:1.a\\:b", "afterok:12", "sometime:1.vm", "on:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		deps, ok := Parse(v, "vm")
		if !ok {
			return
		}
		text := Format(deps)
		if strings.Contains(text, "\\") {
			return
		}
		again, ok := ParseRaw(text, "vm")
		if !ok {
			t.Fatalf("Format(Parse(%q)) = %q, refused by ParseRaw", v, text)
		}
		if got := Format(again); got != text {
			t.Fatalf("Format(ParseRaw(%q)) = %q", text, got)
		}
	})
}
