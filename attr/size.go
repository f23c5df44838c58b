package attr

import (
	"math/bits"
	"strconv"
)

const (
	sizeShiftMask = 0x07
	sizeWords     = 0x80
)

// WordSize is the number of bytes the server counts for one word when it
// compares sizes of different units (sizeof(int) on the reference build,
// spec 04 §1).
const WordSize = 4

// Size is a size value as TORQUE keeps it: a number, a binary multiplier
// given as a shift (0, 10, 20, 30, 40 or 50 for none, k, m, g, t, p) and a
// unit of bytes or words. Sizes are not normalised: 2048kb stays 2048kb.
type Size struct {
	Num   uint64
	Shift uint8 // 0, 10, 20, 30, 40 or 50
	Words bool  // unit is words (w) rather than bytes (b)
}

var sizeLetters = [...]string{"", "k", "m", "g", "t", "p"}

// ParseSize decodes a size: an integer in C strtol syntax with base
// auto-detection (0x… hexadecimal, leading-0 octal), optionally followed by
// one multiplier k, m, g, t or p (powers of 1024) and optionally by the unit
// b or w, all case-insensitive. As with strtol, a missing number counts as
// 0 (a bare "b" is 0b). Anything else is PBSE_BADATVAL.
func ParseSize(text string) (Size, error) {
	bad := func() (Size, error) { return Size{}, badValue("bad size " + strconv.Quote(text)) }
	s := text
	// strtol skips leading white space and takes a sign.
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '+' {
		s = s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexDigit(s[2]) >= 0:
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	var n uint64
	digits := 0
	overflow := false
	for len(s) > 0 {
		d := hexDigit(s[0])
		if d < 0 || uint64(d) >= base {
			break
		}
		hi, lo := bits.Mul64(n, base)
		lo, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 || lo > 1<<63-1 {
			overflow = true
		}
		n = lo
		digits++
		s = s[1:]
	}
	if digits == 0 {
		// strtol converted nothing: the number is 0 and the suffix is
		// the whole text, so "b" is 0b and "kb" is 0kb (a bare unit).
		s = text
	}
	if overflow {
		n = 1<<63 - 1 // strtol saturates at LONG_MAX
	}
	sz := Size{Num: n}
	if len(s) > 0 {
		switch s[0] | 0x20 {
		case 'k':
			sz.Shift = 10
		case 'm':
			sz.Shift = 20
		case 'g':
			sz.Shift = 30
		case 't':
			sz.Shift = 40
		case 'p':
			sz.Shift = 50
		}
		if sz.Shift != 0 {
			s = s[1:]
		}
	}
	if len(s) > 0 {
		switch s[0] | 0x20 {
		case 'b':
		case 'w':
			sz.Words = true
		default:
			return bad()
		}
		s = s[1:]
	}
	if len(s) > 0 {
		return bad()
	}
	return sz, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// String returns the server's encoding: number, lower-case multiplier
// letter (none for ×1) and b or w, e.g. 100mb, 2048kb, 0b, 5w.
func (s Size) String() string {
	return string(s.AppendText(make([]byte, 0, 24)))
}

// AppendText appends the encoding of s to dst.
func (s Size) AppendText(dst []byte) []byte {
	dst = strconv.AppendUint(dst, s.Num, 10)
	if i := int(s.Shift / 10); i < len(sizeLetters) {
		dst = append(dst, sizeLetters[i]...)
	}
	if s.Words {
		return append(dst, 'w')
	}
	return append(dst, 'b')
}

// bytes128 returns the size in bytes as a 128-bit number (hi, lo), counting
// a word as WordSize bytes.
func (s Size) bytes128() (hi, lo uint64) {
	n := s.Num
	mult := uint64(1)
	if s.Words {
		mult = WordSize
	}
	hi, lo = bits.Mul64(n, mult)
	sh := uint(s.Shift)
	if sh == 0 {
		return hi, lo
	}
	return hi<<sh | lo>>(64-sh), lo << sh
}

// Bytes returns the size in bytes (words counted as WordSize bytes),
// saturating at the largest uint64.
func (s Size) Bytes() uint64 {
	hi, lo := s.bytes128()
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// Cmp compares two sizes by their byte counts and returns -1, 0 or +1.
func (s Size) Cmp(t Size) int {
	ah, al := s.bytes128()
	bh, bl := t.bytes128()
	switch {
	case ah < bh || ah == bh && al < bl:
		return -1
	case ah > bh || ah == bh && al > bl:
		return 1
	}
	return 0
}

// common converts a and b to the same unit and the smaller multiplier, the
// way TORQUE adds and subtracts sizes.
func commonSize(a, b Size) (Size, Size) {
	if a.Words != b.Words {
		// Mixed units: count in bytes.
		if a.Words {
			a.Num, a.Words = a.Num*WordSize, false
		}
		if b.Words {
			b.Num, b.Words = b.Num*WordSize, false
		}
	}
	for a.Shift > b.Shift {
		a.Num <<= 10
		a.Shift -= 10
	}
	for b.Shift > a.Shift {
		b.Num <<= 10
		b.Shift -= 10
	}
	return a, b
}

// Add returns a+b in the smaller multiplier of the two.
func (s Size) Add(t Size) Size {
	a, b := commonSize(s, t)
	a.Num += b.Num
	return a
}

// Sub returns s−t in the smaller multiplier of the two, or zero if t > s.
func (s Size) Sub(t Size) Size {
	a, b := commonSize(s, t)
	if b.Num > a.Num {
		a.Num = 0
	} else {
		a.Num -= b.Num
	}
	return a
}
