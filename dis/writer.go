package dis

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// AppendUint appends the canonical DIS encoding of an unsigned integer:
// the decimal digits preceded by '+', then by their count, then by the
// count's count, until the leftmost group is one character.
func AppendUint(dst []byte, v uint64) []byte {
	return appendInteger(dst, '+', v)
}

// AppendInt appends the canonical DIS encoding of a signed integer.
func AppendInt(dst []byte, v int64) []byte {
	if v < 0 {
		return appendInteger(dst, '-', uint64(-v))
	}
	return appendInteger(dst, '+', uint64(v))
}

// Wrap32 returns the value a C sender puts on the wire when it pushes a
// negative int through the unsigned encoder: its 32-bit two's complement
// (-1 becomes 4294967295).
func Wrap32(v int) uint64 { return uint64(uint32(int32(v))) }

func appendInteger(dst []byte, sign byte, v uint64) []byte {
	// The longest item is "220-18446744073709551615": 24 bytes. Build it
	// backwards: digits, sign, then the digit counts.
	var buf [32]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	n := len(buf) - i
	i--
	buf[i] = sign
	for n > 1 {
		start := i
		for c := n; c > 0; c /= 10 {
			i--
			buf[i] = byte('0' + c%10)
		}
		n = start - i
	}
	return append(dst, buf[i:]...)
}

// AppendString appends a counted string: its length, then its bytes.
func AppendString(dst []byte, s string) []byte {
	dst = AppendUint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendBytes appends a counted byte string (BSTR).
func AppendBytes(dst []byte, b []byte) []byte {
	dst = AppendUint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendReal appends a real number as a signed coefficient and a signed
// base-10 exponent, normalised to 15 significant digits with trailing
// zeros stripped, as the original's double encoder does. Infinity and NaN
// are ErrHugeVal and nothing is appended.
func AppendReal(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, ErrHugeVal
	}
	if f == 0 {
		return append(dst, "+0+0"...), nil
	}
	// 'e' formatting with 14 decimals gives exactly 15 significant digits.
	s := strconv.FormatFloat(math.Abs(f), 'e', 14, 64)
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText)
	digits := make([]byte, 0, 16)
	for i := 0; i < len(mant); i++ {
		if mant[i] != '.' {
			digits = append(digits, mant[i])
		}
	}
	exp -= len(digits) - 1
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	coef, _ := strconv.ParseInt(string(digits), 10, 64)
	if f < 0 {
		coef = -coef
	}
	dst = AppendInt(dst, coef)
	return AppendInt(dst, int64(exp)), nil
}

// Writer assembles one DIS message in memory and sends it to the
// underlying writer in a single Write when Flush is called, so that one
// message is one flush on the wire, as with the original library.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer that flushes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, 4096)}
}

// Reset drops any pending bytes and makes the Writer flush to w.
func (w *Writer) Reset(wr io.Writer) {
	w.w = wr
	w.buf = w.buf[:0]
}

// PutUint appends an unsigned integer to the pending message.
func (w *Writer) PutUint(v uint64) { w.buf = AppendUint(w.buf, v) }

// PutInt appends a signed integer to the pending message.
func (w *Writer) PutInt(v int64) { w.buf = AppendInt(w.buf, v) }

// PutString appends a counted string to the pending message.
func (w *Writer) PutString(s string) { w.buf = AppendString(w.buf, s) }

// PutBytes appends a counted byte string to the pending message.
func (w *Writer) PutBytes(b []byte) { w.buf = AppendBytes(w.buf, b) }

// PutRaw appends bytes verbatim (for the few non-DIS parts of the
// protocol, such as the scheduler's 4-byte command).
func (w *Writer) PutRaw(b []byte) { w.buf = append(w.buf, b...) }

// Pending returns the bytes assembled since the last Flush. The slice is
// only valid until the next call on the Writer.
func (w *Writer) Pending() []byte { return w.buf }

// Flush writes the pending message with one Write and empties the buffer.
func (w *Writer) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}
