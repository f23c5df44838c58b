package timeplan

import (
	"strings"
	"testing"
	"time"
)

const sample = `HOLIDAYFILE_VERSION1
* comment line
YEAR    2013
  weekday   0600  1730
  saturday  none  all
  sunday    all   none
    1   Jan 1   New Year's Day
  359   Dec 25  Christmas
`

func TestIsPrime(t *testing.T) {
	h, err := ParseHolidays(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		when string
		want bool
	}{
		{"2013-06-11 05:59", false}, // Tuesday before prime
		{"2013-06-11 06:00", true},
		{"2013-06-11 17:29", true},
		{"2013-06-11 17:30", false},
		{"2013-06-15 12:00", false}, // Saturday: none
		{"2013-06-16 03:00", true},  // Sunday: all
		{"2013-01-01 12:00", false}, // holiday (Tuesday)
		{"2013-12-25 12:00", false}, // holiday
	}
	for _, tt := range tests {
		if got := h.IsPrime(at(tt.when)); got != tt.want {
			t.Errorf("IsPrime(%s) = %v, want %v", tt.when, got, tt.want)
		}
	}
	var none Holidays
	if !none.IsPrime(at("2013-06-15 12:00")) {
		t.Error("no YEAR line must mean always prime")
	}
}

func TestOvernightPrime(t *testing.T) {
	h, err := ParseHolidays(strings.NewReader("YEAR 2020\nweekday 2200 0600\n"))
	if err != nil {
		t.Fatal(err)
	}
	night := time.Date(2020, 3, 3, 23, 0, 0, 0, time.UTC)
	noon := time.Date(2020, 3, 3, 12, 0, 0, 0, time.UTC)
	if !h.IsPrime(night) || h.IsPrime(noon) {
		t.Error("prime window over midnight wrong")
	}
}

func TestBadHolidays(t *testing.T) {
	for _, s := range []string{"YEAR\n", "YEAR x\n", "weekday 0600\n", "weekday 6am 1700\n", "400 bad\n", "weekday 2500 0100\n"} {
		if _, err := ParseHolidays(strings.NewReader(s)); err == nil {
			t.Errorf("ParseHolidays(%q) succeeded", s)
		}
	}
}

func TestDedicated(t *testing.T) {
	d, err := ParseDedicated(strings.NewReader("# maintenance\n06/12/2013 08:00 06/12/2013 12:00\n06/10/2013 08:00 06/10/2013 09:00\n"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 {
		t.Fatalf("%d periods", len(d))
	}
	now := time.Date(2013, 6, 11, 0, 0, 0, 0, time.UTC)
	if _, in := d.Current(now); in {
		t.Error("not in dedicated time")
	}
	p, ok := d.Next(now)
	if !ok || p.Start.Day() != 12 {
		t.Errorf("Next = %v %v", p, ok)
	}
	in := time.Date(2013, 6, 12, 9, 0, 0, 0, time.UTC)
	if p, ok := d.Current(in); !ok || p.End.Hour() != 12 {
		t.Errorf("Current = %v %v", p, ok)
	}
	if _, err := ParseDedicated(strings.NewReader("06/12/2013 08:00\n"), time.UTC); err == nil {
		t.Error("short line accepted")
	}
}

func FuzzParseHolidays(f *testing.F) {
	f.Add(sample)
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHolidays(strings.NewReader(s))
		if err == nil {
			h.IsPrime(time.Unix(0, 0))
		}
		_, _ = ParseDedicated(strings.NewReader(s), time.UTC)
	})
}
