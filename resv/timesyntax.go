package resv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrTimeSyntax is wrapped by every error of ParseTime and ParseDuration.
var ErrTimeSyntax = errors.New("bad time")

func timeErr(s, why string) error {
	return fmt.Errorf("%w %q: %s", ErrTimeSyntax, s, why)
}

// absLayouts are the absolute forms ParseTime accepts, tried in order.
// The seed shows none; GoPBS takes ISO 8601 with "T" or a space, with
// or without seconds and zone, and TORQUE's own date forms.
var absLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006/01/02 15:04:05",
	"2006/01/02 15:04",
	"2006-01-02",
}

// ParseTime reads a point in time as the plus_* commands take it (-s,
// -e), relative to now and in now's location:
//
//	2026-11-27T14:00:00Z, 2026-11-27T14:00+09:00   ISO 8601 with a zone
//	2026-11-27T14:00:00, 2026-11-27 14:00          ISO 8601, local time
//	2026/11/27 14:00[:05]                          the same with slashes
//	2026-11-27                                     midnight starting that day
//	14:00, 14:00:30                                today; tomorrow if already past
//	+90, +30s, +15m, +1h, +2d, +1h30m              now plus a duration
//	now                                            now
//
// Seconds are truncated to whole seconds.
func ParseTime(s string, now time.Time) (time.Time, error) {
	now = now.Truncate(time.Second)
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return time.Time{}, timeErr(s, "empty")
	case strings.EqualFold(t, "now"):
		return now, nil
	case t[0] == '+':
		d, err := parseUnits(t[1:])
		if err != nil {
			return time.Time{}, timeErr(s, err.Error())
		}
		return now.Add(d), nil
	}
	if hh, mm, ss, ok := clockTime(t); ok {
		at := time.Date(now.Year(), now.Month(), now.Day(), hh, mm, ss, 0, now.Location())
		if at.Before(now) {
			at = at.AddDate(0, 0, 1)
		}
		return at, nil
	}
	for _, layout := range absLayouts {
		at, err := time.ParseInLocation(layout, t, now.Location())
		if err == nil {
			return at, nil
		}
	}
	return time.Time{}, timeErr(s, "want an ISO 8601 date and time (2026-11-27T14:00), HH:MM[:SS] or +duration (+1h)")
}

// clockTime reads HH:MM or HH:MM:SS.
func clockTime(s string) (hh, mm, ss int, ok bool) {
	f := strings.Split(s, ":")
	if len(f) < 2 || len(f) > 3 {
		return 0, 0, 0, false
	}
	var v [3]int
	for i, p := range f {
		if len(p) == 0 || len(p) > 2 {
			return 0, 0, 0, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, 0, 0, false
		}
		v[i] = n
	}
	if v[0] > 23 || v[1] > 59 || v[2] > 59 {
		return 0, 0, 0, false
	}
	return v[0], v[1], v[2], true
}

// maxDuration bounds durations so that every sum with a time stays in range.
const maxDuration = 100 * 366 * 24 * time.Hour

// ParseDuration reads a reservation's duration (-D) or a relative time:
//
//	90                 seconds
//	1:30, 01:30:00     [[H]H:]MM:SS as TORQUE's walltime, i.e. 1:30 is 90 seconds
//	30s, 15m, 2h, 7d   a number and a unit; several in a row add (1h30m)
//
// A duration must be positive and under 100 years.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, timeErr(s, "empty duration")
	}
	var d time.Duration
	var err error
	if strings.Contains(t, ":") {
		d, err = parseClock(t)
	} else {
		d, err = parseUnits(t)
	}
	if err != nil {
		return 0, timeErr(s, err.Error())
	}
	if d <= 0 {
		return 0, timeErr(s, "a duration must be positive")
	}
	return d, nil
}

// parseClock reads [[H]H:]MM:SS with any number of hours.
func parseClock(s string) (time.Duration, error) {
	f := strings.Split(s, ":")
	if len(f) > 3 {
		return 0, errors.New("too many fields")
	}
	var total int64
	for i, p := range f {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || p[0] == '+' {
			return 0, fmt.Errorf("field %q is not a number", p)
		}
		if i > 0 && n > 59 {
			return 0, fmt.Errorf("field %q is over 59", p)
		}
		if total > int64(maxDuration/time.Second) {
			return 0, errors.New("too long")
		}
		total = total*60 + n
	}
	if total > int64(maxDuration/time.Second) {
		return 0, errors.New("too long")
	}
	return time.Duration(total) * time.Second, nil
}

var units = map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}

// parseUnits reads 90, 30s, 1h30m, 2d.
func parseUnits(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("no number")
	}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%q: a number must come first", s)
		}
		if i > 12 {
			return 0, errors.New("too long")
		}
		n, _ := strconv.ParseInt(s[:i], 10, 64)
		unit := time.Second
		s = s[i:]
		if s != "" {
			u, ok := units[s[0]|0x20]
			if !ok {
				return 0, fmt.Errorf("unknown unit %q (s, m, h, d, w)", s[:1])
			}
			unit = u
			s = s[1:]
		} else if total != 0 {
			return 0, errors.New("a unit must follow every number after the first")
		}
		if time.Duration(n) > maxDuration/unit {
			return 0, errors.New("too long")
		}
		total += time.Duration(n) * unit
		if total > maxDuration {
			return 0, errors.New("too long")
		}
	}
	return total, nil
}

// FormatDuration writes a duration as HH:MM:SS (hours may exceed 24),
// the form plus_status prints.
func FormatDuration(d time.Duration) string {
	sec := int64(d / time.Second)
	neg := ""
	if sec < 0 {
		neg, sec = "-", -sec
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", neg, sec/3600, sec/60%60, sec%60)
}

// TimeLayout is how the commands print times: ISO 8601 local time with
// its offset, which ParseTime reads back.
const TimeLayout = "2006-01-02T15:04:05Z07:00"
