package resc

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  bool
	}{
		{"20mb", 20 << 20, false},
		{"20MB", 20 << 20, false},
		{"1024", 1024, false},
		{"4kb", 4096, false},
		{"2k", 2048, false},
		{"3w", 24, false},
		{"1gw", 8 << 30, false},
		{"1tb", 1 << 40, false},
		{"mb", 0, true},
		{"5xb", 0, true},
		{"99999999999999999999pb", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"01:00:00", 3600, false},
		{"00:00:05", 5, false},
		{"300", 300, false},
		{"2:30", 150, false},
		{"1:00:00.5", 3600, false},
		{"1::0", 0, true},
		{"a", 0, true},
		{"1:2:3:4", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseTime(%q) = %d, %v", tc.in, got, err)
		}
	}
}

func TestFormat(t *testing.T) {
	if s := FormatHMS(3); s != "00:00:03" {
		t.Error(s)
	}
	if s := FormatHMS(100*3600 + 61); s != "100:01:01" {
		t.Error(s)
	}
	if s := FormatKB(0); s != "0kb" {
		t.Error(s)
	}
	if s := FormatKB(1025); s != "2kb" {
		t.Error(s)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("20mb")
	f.Add("01:00:00")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseSize(s)
		_, _ = ParseTime(s)
	})
}
