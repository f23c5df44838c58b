package resv

import (
	"errors"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	loc := time.FixedZone("JST", 9*3600)
	now := time.Date(2026, 11, 27, 13, 30, 15, 500, loc)
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time { return time.Date(y, mo, d, h, mi, s, 0, loc) }
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-27T14:00:00", at(2026, 11, 27, 14, 0, 0)},
		{"2026-11-27T14:00", at(2026, 11, 27, 14, 0, 0)},
		{"2026-11-27 14:00", at(2026, 11, 27, 14, 0, 0)},
		{"2026-11-27 14:00:05", at(2026, 11, 27, 14, 0, 5)},
		{"2026/11/27 14:00", at(2026, 11, 27, 14, 0, 0)},
		{"2026-11-28", at(2026, 11, 28, 0, 0, 0)},
		{"2026-11-27T05:00:00Z", at(2026, 11, 27, 14, 0, 0)},
		{"2026-11-27T14:00:00+09:00", at(2026, 11, 27, 14, 0, 0)},
		{"14:00", at(2026, 11, 27, 14, 0, 0)},
		{"14:00:30", at(2026, 11, 27, 14, 0, 30)},
		{"13:00", at(2026, 11, 28, 13, 0, 0)}, // past today: tomorrow
		{"+1h", at(2026, 11, 27, 14, 30, 15)},
		{"+90", at(2026, 11, 27, 13, 31, 45)},
		{"+1h30m", at(2026, 11, 27, 15, 0, 15)},
		{"+2d", at(2026, 11, 29, 13, 30, 15)},
		{" now ", at(2026, 11, 27, 13, 30, 15)},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "tomorrow", "25:00", "14:60", "2026-13-01T00:00", "+", "+1x", "+h", "14", "+1h30", "1:2:3:4", "+99999999999999d"} {
		if _, err := ParseTime(bad, now); !errors.Is(err, ErrTimeSyntax) {
			t.Errorf("ParseTime(%q) error %v, want ErrTimeSyntax", bad, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"90", 90 * time.Second},
		{"1:30", 90 * time.Second},
		{"01:30:00", 90 * time.Minute},
		{"100:00:00", 100 * time.Hour},
		{"2h", 2 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"7d", 7 * 24 * time.Hour},
		{"1W", 7 * 24 * time.Hour},
	}
	for _, tc := range tests {
		got, err := ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "00:00:00", "-5", "1:60", "1:-1:00", "1h30", "h", "1.5h", "1:+2", "99999999999999999999"} {
		if _, err := ParseDuration(bad); !errors.Is(err, ErrTimeSyntax) {
			t.Errorf("ParseDuration(%q) error %v, want ErrTimeSyntax", bad, err)
		}
	}
	if got := FormatDuration(26*time.Hour + 61*time.Second); got != "26:01:01" {
		t.Errorf("FormatDuration = %q", got)
	}
}

// FuzzParseTime: the time syntax never panics, accepted relative times
// and durations are in range, and a parsed time printed with TimeLayout
// parses back to itself.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-11-27T14:00:00", "14:00", "+1h30m", "90", "1:30:00", "now", "2026/11/27 14:00", "+99999d", "7d"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 27, 13, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if at, err := ParseTime(s, now); err == nil {
			back, err := ParseTime(at.Format(TimeLayout), now)
			if err != nil || !back.Equal(at) {
				t.Fatalf("%q -> %v -> %v, %v", s, at, back, err)
			}
		}
		if d, err := ParseDuration(s); err == nil && (d <= 0 || d > maxDuration) {
			t.Fatalf("ParseDuration(%q) = %v out of range", s, d)
		}
	})
}
