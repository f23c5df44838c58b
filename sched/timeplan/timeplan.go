// Package timeplan reads the scheduler's calendar files: holidays (prime
// and non-prime time) and dedicated_time (dedicated periods).
package timeplan

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Boundary is one end of a prime-time window within a day: a time of day
// in minutes, or one of the words all and none.
type Boundary struct {
	Minutes int
	All     bool
	None    bool
}

// DayRule gives the start of prime time and the start of non-prime time
// for one kind of day.
type DayRule struct {
	PrimeStart    Boundary
	NonPrimeStart Boundary
	Set           bool
}

// Holidays is the content of sched_priv/holidays.
type Holidays struct {
	// Year is the YEAR line; 0 means no YEAR line, in which case it is
	// always prime time.
	Year     int
	Weekday  DayRule
	Saturday DayRule
	Sunday   DayRule
	// Days holds the holidays as days of the year (1–366).
	Days map[int]bool
}

// ReadHolidays parses the holidays file at path. A missing file gives
// empty Holidays (always prime time) and no error.
func ReadHolidays(path string) (*Holidays, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return &Holidays{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read holidays: %w", err)
	}
	defer f.Close()
	return ParseHolidays(f)
}

// ParseHolidays reads a holidays file.
func ParseHolidays(r io.Reader) (*Holidays, error) {
	h := &Holidays{Days: map[int]bool{}}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "*") || strings.HasPrefix(f[0], "#") ||
			strings.HasPrefix(f[0], "HOLIDAYFILE_VERSION") {
			continue
		}
		var rule *DayRule
		switch strings.ToLower(f[0]) {
		case "year":
			if len(f) < 2 {
				return nil, fmt.Errorf("holidays line %d: YEAR without a year", n)
			}
			y, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, fmt.Errorf("holidays line %d: bad year %q", n, f[1])
			}
			h.Year = y
			continue
		case "weekday":
			rule = &h.Weekday
		case "saturday":
			rule = &h.Saturday
		case "sunday":
			rule = &h.Sunday
		}
		if rule != nil {
			if len(f) < 3 {
				return nil, fmt.Errorf("holidays line %d: %s needs two times", n, f[0])
			}
			p, err1 := parseBoundary(f[1])
			np, err2 := parseBoundary(f[2])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("holidays line %d: bad time in %q", n, sc.Text())
			}
			*rule = DayRule{PrimeStart: p, NonPrimeStart: np, Set: true}
			continue
		}
		day, err := strconv.Atoi(f[0])
		if err != nil || day < 1 || day > 366 {
			return nil, fmt.Errorf("holidays line %d: bad day of year %q", n, f[0])
		}
		h.Days[day] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read holidays: %w", err)
	}
	return h, nil
}

func parseBoundary(s string) (Boundary, error) {
	switch strings.ToLower(s) {
	case "all":
		return Boundary{All: true}, nil
	case "none":
		return Boundary{None: true}, nil
	}
	if len(s) != 4 {
		return Boundary{}, fmt.Errorf("bad time %q", s)
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v/100 > 24 || v%100 > 59 {
		return Boundary{}, fmt.Errorf("bad time %q", s)
	}
	return Boundary{Minutes: v/100*60 + v%100}, nil
}

// IsPrime reports whether t (interpreted in its own location) is in prime
// time.
func (h *Holidays) IsPrime(t time.Time) bool {
	if h == nil || h.Year == 0 {
		return true
	}
	if h.Days[t.YearDay()] {
		return false
	}
	var rule DayRule
	switch t.Weekday() {
	case time.Saturday:
		rule = h.Saturday
	case time.Sunday:
		rule = h.Sunday
	default:
		rule = h.Weekday
	}
	if !rule.Set {
		return true
	}
	p, np := rule.PrimeStart, rule.NonPrimeStart
	switch {
	case p.All || np.None:
		return !p.None
	case p.None || np.All:
		return false
	}
	now := t.Hour()*60 + t.Minute()
	if p.Minutes <= np.Minutes {
		return now >= p.Minutes && now < np.Minutes
	}
	// Prime time runs over midnight.
	return now >= p.Minutes || now < np.Minutes
}

// Period is one dedicated period, [Start, End).
type Period struct {
	Start, End time.Time
}

// MaxDedicated is the number of dedicated_time entries honoured.
const MaxDedicated = 50

// Dedicated is the content of sched_priv/dedicated_time, in file order.
type Dedicated []Period

// ReadDedicated parses the dedicated_time file at path in location loc. A
// missing file gives no periods.
func ReadDedicated(path string, loc *time.Location) (Dedicated, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read dedicated_time: %w", err)
	}
	defer f.Close()
	return ParseDedicated(f, loc)
}

// ParseDedicated reads lines "MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM".
func ParseDedicated(r io.Reader, loc *time.Location) (Dedicated, error) {
	var d Dedicated
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("dedicated_time line %d: want start and end date and time", n)
		}
		const layout = "01/02/2006 15:04"
		s, err1 := time.ParseInLocation(layout, f[0]+" "+f[1], loc)
		e, err2 := time.ParseInLocation(layout, f[2]+" "+f[3], loc)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("dedicated_time line %d: bad date in %q", n, sc.Text())
		}
		if len(d) < MaxDedicated {
			d = append(d, Period{Start: s, End: e})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read dedicated_time: %w", err)
	}
	return d, nil
}

// Current returns the dedicated period containing now, if any.
func (d Dedicated) Current(now time.Time) (Period, bool) {
	for _, p := range d {
		if !now.Before(p.Start) && now.Before(p.End) {
			return p, true
		}
	}
	return Period{}, false
}

// Next returns the dedicated period that contains now or is the earliest
// one still to come.
func (d Dedicated) Next(now time.Time) (Period, bool) {
	var best Period
	found := false
	for _, p := range d {
		if !p.End.After(now) {
			continue
		}
		if !found || p.Start.Before(best.Start) {
			best, found = p, true
		}
	}
	return best, found
}
