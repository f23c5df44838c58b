package dis

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReader decodes arbitrary bytes as a mix of items; it must never
// panic, and every integer it accepts must re-encode to a form that decodes
// to the same value.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"+0", "2+10", "210+4294967295", "1+5", "11+5", "2+05", "05", "+5hello",
		"2-10", "220+18446744073709551615", "+3a\x00b", "8+50000000", "+2+1+21+5alice"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		r.MaxString = 1 << 16
		for i := 0; i < 64; i++ {
			var err error
			switch i % 4 {
			case 0:
				var v uint64
				v, err = r.Uint64()
				if err == nil {
					back, err2 := NewReader(bytes.NewReader(AppendUint(nil, v))).Uint64()
					if err2 != nil || back != v {
						t.Fatalf("round trip %d: %d %v", v, back, err2)
					}
				}
			case 1:
				var v int64
				v, err = r.Int64()
				if err == nil {
					back, err2 := NewReader(bytes.NewReader(AppendInt(nil, v))).Int64()
					if err2 != nil || back != v {
						t.Fatalf("round trip %d: %d %v", v, back, err2)
					}
				}
			case 2:
				var s string
				s, err = r.Str()
				if err == nil && len(s) > 1<<16 {
					t.Fatalf("string over cap: %d", len(s))
				}
			case 3:
				_, err = r.Bytes()
			}
			if err != nil {
				var de Error
				if !errors.As(err, &de) {
					t.Fatalf("untyped error %T %v", err, err)
				}
				return
			}
		}
	})
}

// FuzzUnsignedFastPath checks that parsing an integer item from the
// buffer gives what reading it byte by byte gives: the same sign, value,
// error and bytes consumed, for every width limit, including items cut
// off by the end of the buffered data.
func FuzzUnsignedFastPath(f *testing.F) {
	for _, s := range []string{"+0", "2+10", "210+4294967295", "210+4294967296", "1+5", "11+5", "2+05", "05",
		"+5hello", "2-10", "220+18446744073709551615", "220+18446744073709551616", "3+12", "221+1", "9", "1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, max := range []string{maxUint32Digits, maxUint64Digits} {
			fast := NewReader(bytes.NewReader(data))
			slow := NewReader(bytes.NewReader(data))
			for range 8 {
				fs, fv, ferr := fast.unsigned(max)
				ss, sv, serr := slow.readUnsigned(max)
				if fs != ss || fv != sv || !errors.Is(ferr, serr) || fast.Offset() != slow.Offset() {
					t.Fatalf("%q max %s: buffered (%c %d %v at %d), byte by byte (%c %d %v at %d)",
						data, max, fs, fv, ferr, fast.Offset(), ss, sv, serr, slow.Offset())
				}
				if ferr != nil {
					break
				}
			}
		}
	})
}
