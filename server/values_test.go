package server

import "testing"

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		typ  valueType
		in   string
		want string
		ok   bool
	}{
		{tLong, "+5", "5", true},
		{tLong, "-12", "-12", true},
		{tLong, "1x", "", false},
		{tBool, "TRUE", "True", true},
		{tBool, "n", "False", true},
		{tBool, "maybe", "", false},
		{tSize, "100MB", "100mb", true},
		{tSize, "1024", "1024b", true},
		{tSize, "0x10kb", "16kb", true},
		{tSize, "5w", "5w", true},
		{tSize, "5q", "", false},
		{tTime, "1:00:00", "01:00:00", true},
		{tTime, "90", "00:01:30", true},
		{tTime, "2:00:00:00", "48:00:00", true},
		{tTime, "00:00:00.6", "00:00:01", true},
		{tTime, "bogus", "", false},
		{tHold, "uo", "ou", true},
		{tHold, "n", "n", true},
		{tHold, "x", "", false},
		{tArst, "a, b ,c\\,d,", "a,b,c\\,d", true},
	}
	for _, tt := range tests {
		got, ok := decodeValue(tt.typ, tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("decodeValue(%d, %q) = %q, %v; want %q, %v", tt.typ, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCompareResource(t *testing.T) {
	if c, _ := compareResource(tTime, "01:00:00", "00:10:00"); c != 1 {
		t.Fatal("time compare")
	}
	if c, _ := compareResource(tSize, "1gb", "1024mb"); c != 0 {
		t.Fatal("size compare")
	}
}
