// Package resc converts TORQUE resource values used by the MOM: sizes
// ("20mb", "4gw"), times ("01:00:00", "300") and the resources_used text forms
// ("00:01:02", "68072kb").
package resc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// WordSize is the size in bytes of a "w" (word) unit on 64-bit hosts.
const WordSize = 8

// ParseSize parses a size "<n>[k|m|g|t|p][b|w]" (case-insensitive) and returns
// its value in bytes. A bare number is bytes.
func ParseSize(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	n, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: %w", s, err)
	}
	suffix := t[i:]
	var shift uint
	if suffix != "" {
		switch suffix[0] {
		case 'k':
			shift = 10
		case 'm':
			shift = 20
		case 'g':
			shift = 30
		case 't':
			shift = 40
		case 'p':
			shift = 50
		}
		if shift != 0 {
			suffix = suffix[1:]
		}
	}
	mult := uint64(1)
	switch suffix {
	case "", "b":
	case "w":
		mult = WordSize
	default:
		return 0, fmt.Errorf("bad size unit in %q", s)
	}
	if n > math.MaxUint64>>shift/mult {
		return 0, fmt.Errorf("size %q overflows", s)
	}
	return n << shift * mult, nil
}

// ParseTime parses a TORQUE time value "[[HH:]MM:]SS[.frac]" and returns whole
// seconds (fractions are dropped).
func ParseTime(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty time")
	}
	if i := strings.IndexByte(t, '.'); i >= 0 {
		if _, err := strconv.ParseUint(t[i+1:], 10, 32); err != nil && t[i+1:] != "" {
			return 0, fmt.Errorf("bad time %q", s)
		}
		t = t[:i]
	}
	parts := strings.Split(t, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("bad time %q", s)
	}
	var total int64
	for _, p := range parts {
		if p == "" {
			return 0, fmt.Errorf("bad time %q", s)
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/3600 {
			return 0, fmt.Errorf("bad time %q", s)
		}
		if total > (math.MaxInt64-n)/60 {
			return 0, fmt.Errorf("time %q overflows", s)
		}
		total = total*60 + n
	}
	return total, nil
}

// FormatHMS formats seconds as TORQUE's "HH:MM:SS" (hours at least two digits).
func FormatHMS(secs int64) string {
	if secs < 0 {
		secs = 0
	}
	return fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
}

// FormatKB formats a byte count as "<n>kb", rounding up to whole kilobytes.
func FormatKB(bytes uint64) string {
	return strconv.FormatUint((bytes+1023)/1024, 10) + "kb"
}
