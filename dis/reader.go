package dis

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"unsafe"
)

// DefaultMaxString is the largest counted string a Reader accepts unless
// its MaxString field says otherwise. A longer length is refused with
// ErrNoMalloc before any memory is reserved for it.
const DefaultMaxString = 64 << 20

// chunk is how much payload the Reader reserves at a time while reading a
// counted string, so that a peer announcing a huge length but sending few
// bytes cannot make it allocate the announced size.
const chunk = 32 << 10

// Maximum decimal digit strings of the integer types the protocol uses.
const (
	maxUint32Digits = "4294967295"
	maxUint64Digits = "18446744073709551615"
)

// Reader decodes DIS items from a byte stream.
//
// Integers are decoded without allocation. The zero value is not usable;
// create Readers with NewReader.
type Reader struct {
	br *bufio.Reader
	// MaxString caps the length of any counted string; 0 means
	// DefaultMaxString.
	MaxString int
	off       int64
}

// NewReader returns a Reader that reads from r. If r is already a
// *bufio.Reader it is used directly.
func NewReader(r io.Reader) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 16<<10)
	}
	return &Reader{br: br}
}

// Reset discards all state and makes the Reader read from r.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	r.off = 0
}

// Offset reports how many bytes the Reader has consumed since it was
// created or reset.
func (r *Reader) Offset() int64 { return r.off }

// Buffered reports how many bytes have been received but not yet consumed.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// DiscardBuffered drops bytes that were received but not consumed, as the
// original server does before decoding each request (it never pipelines).
// It returns the number of bytes dropped.
func (r *Reader) DiscardBuffered() int {
	n, _ := r.br.Discard(r.br.Buffered())
	r.off += int64(n)
	return n
}

// first reads the first byte of an item or count group. A clean end of
// stream here is ErrEOF; anything else that fails is ErrEOD.
func (r *Reader) first() (byte, error) {
	c, err := r.br.ReadByte()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, ErrEOF
		}
		return 0, ErrEOD
	}
	r.off++
	return c, nil
}

// digits reads n more bytes into dst, each of which must be an ASCII digit.
func (r *Reader) digits(dst []byte) error {
	for i := range dst {
		c, err := r.br.ReadByte()
		if err != nil {
			return ErrEOD
		}
		r.off++
		if c < '0' || c > '9' {
			return ErrNonDigit
		}
		dst[i] = c
	}
	return nil
}

// fits reports whether the digit string d (which may carry leading zeros)
// is no greater than max, using the width-then-lexicographic rule of the
// original decoder.
func fits(d []byte, max string) bool {
	if len(d) != len(max) {
		return len(d) < len(max)
	}
	return string(d) <= max
}

// unsigned decodes one integer item and returns its sign ('+' or '-') and
// magnitude. max is the digit string of the largest magnitude accepted.
// An item wholly received is parsed from the buffer (parseUnsigned);
// anything else, malformed items included, byte by byte (readUnsigned),
// which defines the errors and how much of the stream they consume.
func (r *Reader) unsigned(max string) (byte, uint64, error) {
	if b, _ := r.br.Peek(r.br.Buffered()); len(b) > 0 {
		if sign, v, n := parseUnsigned(b, max); n > 0 {
			r.br.Discard(n)
			r.off += int64(n)
			return sign, v, nil
		}
	}
	return r.readUnsigned(max)
}

// parseUnsigned parses a well-formed integer item at the start of b and
// returns its sign, magnitude and length; n is 0 if b does not start
// with a complete, valid item that fits max.
func parseUnsigned(b []byte, max string) (sign byte, v uint64, n int) {
	w, i := 1, 0 // width of the next group, its offset in b
	for {
		if w > len(max) || i+w > len(b) {
			return 0, 0, 0
		}
		if c := b[i]; c == '+' || c == '-' {
			d := b[i+1:]
			if len(d) < w {
				return 0, 0, 0
			}
			d = d[:w]
			if !allDigits(d) || !fits(d, max) {
				return 0, 0, 0
			}
			for _, x := range d {
				v = v*10 + uint64(x-'0')
			}
			return c, v, i + 1 + w
		}
		d := b[i : i+w]
		if d[0] < '1' || d[0] > '9' || !allDigits(d) || !fits(d, max) {
			return 0, 0, 0
		}
		i += w
		w = 0
		for _, x := range d {
			w = w*10 + int(x-'0')
			if w > len(max) {
				return 0, 0, 0
			}
		}
	}
}

func allDigits(d []byte) bool {
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// readUnsigned is unsigned reading one byte at a time.
func (r *Reader) readUnsigned(max string) (byte, uint64, error) {
	var buf [20]byte
	w := 1
	for {
		c, err := r.first()
		if err != nil {
			return 0, 0, err
		}
		switch {
		case c == '+' || c == '-':
			if w > len(max) {
				return 0, 0, ErrOverflow
			}
			d := buf[:w]
			if err := r.digits(d); err != nil {
				return 0, 0, err
			}
			if !fits(d, max) {
				return 0, 0, ErrOverflow
			}
			var v uint64
			for _, x := range d {
				v = v*10 + uint64(x-'0')
			}
			return c, v, nil
		case c >= '1' && c <= '9':
			if w > len(max) {
				return 0, 0, ErrOverflow
			}
			d := buf[:w]
			d[0] = c
			if err := r.digits(d[1:]); err != nil {
				return 0, 0, err
			}
			if !fits(d, max) {
				return 0, 0, ErrOverflow
			}
			// The next group is this wide; wider than the type's
			// maximum can only overflow, so stop here.
			n := 0
			for _, x := range d {
				n = n*10 + int(x-'0')
				if n > len(max) {
					return 0, 0, ErrOverflow
				}
			}
			w = n
		case c == '0':
			return 0, 0, ErrLeadZero
		default:
			return 0, 0, ErrNonDigit
		}
	}
}

// Uint32 decodes an unsigned 32-bit integer (the "U" of the grammars).
func (r *Reader) Uint32() (uint32, error) {
	sign, v, err := r.unsigned(maxUint32Digits)
	if err != nil {
		return 0, err
	}
	if sign == '-' {
		return 0, ErrBadSign
	}
	return uint32(v), nil
}

// Uint decodes an unsigned 32-bit integer and returns it as an int, the
// form most callers want for counts, types and enums.
func (r *Reader) Uint() (int, error) {
	v, err := r.Uint32()
	return int(v), err
}

// Uint64 decodes an unsigned 64-bit ("long") integer.
func (r *Reader) Uint64() (uint64, error) {
	sign, v, err := r.unsigned(maxUint64Digits)
	if err != nil {
		return 0, err
	}
	if sign == '-' {
		return 0, ErrBadSign
	}
	return v, nil
}

// Int32 decodes a signed 32-bit integer (the "S" of the grammars). A value
// out of range yields the type's limit together with ErrOverflow.
func (r *Reader) Int32() (int32, error) {
	v, err := r.Int64()
	if err != nil {
		return int32(v), err
	}
	switch {
	case v > math.MaxInt32:
		return math.MaxInt32, ErrOverflow
	case v < math.MinInt32:
		return math.MinInt32, ErrOverflow
	}
	return int32(v), nil
}

// Int decodes a signed 32-bit integer and returns it as an int.
func (r *Reader) Int() (int, error) {
	v, err := r.Int32()
	return int(v), err
}

// Int64 decodes a signed 64-bit integer. A value out of range yields the
// type's limit together with ErrOverflow.
func (r *Reader) Int64() (int64, error) {
	sign, v, err := r.unsigned(maxUint64Digits)
	if err != nil {
		return 0, err
	}
	if sign == '-' {
		if v > 1<<63 {
			return math.MinInt64, ErrOverflow
		}
		return int64(-v), nil
	}
	if v > math.MaxInt64 {
		return math.MaxInt64, ErrOverflow
	}
	return int64(v), nil
}

// length reads a counted string's length. limit is the largest accepted
// length (ErrOverflow above it, negative for none); the Reader's MaxString
// caps every string (ErrNoMalloc above it).
func (r *Reader) length(limit int) (int, error) {
	n, err := r.Uint32()
	if err != nil {
		return 0, err
	}
	max := r.MaxString
	if max <= 0 {
		max = DefaultMaxString
	}
	if limit >= 0 && int64(n) > int64(limit) {
		return 0, ErrOverflow
	}
	if int64(n) > int64(max) {
		return 0, ErrNoMalloc
	}
	return int(n), nil
}

// readN appends exactly n payload bytes to dst, reserving memory only as
// the bytes actually arrive. A short read is ErrProto.
func (r *Reader) readN(dst []byte, n int) ([]byte, error) {
	for left := n; left > 0; {
		step := min(left, chunk)
		start := len(dst)
		dst = growLen(dst, step)
		got, err := io.ReadFull(r.br, dst[start:])
		r.off += int64(got)
		if err != nil {
			return dst[:start+got], ErrProto
		}
		left -= step
	}
	return dst, nil
}

func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, len(b)+n+len(b)/4)
	copy(nb, b)
	return nb
}

// Str decodes a counted string in which NUL bytes are forbidden (the
// "STR" of the grammars).
func (r *Reader) Str() (string, error) { return r.str(-1) }

// StrMax decodes a counted string of at most capacity bytes; a longer one
// is ErrOverflow, as for the fixed-size fields of the original.
func (r *Reader) StrMax(capacity int) (string, error) { return r.str(capacity) }

func (r *Reader) str(limit int) (string, error) {
	n, err := r.length(limit)
	if err != nil || n == 0 {
		return "", err
	}
	b, err := r.readN(make([]byte, 0, min(n, chunk)), n)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", ErrNullStr
	}
	// b is never written again, so it can back the string directly.
	return unsafe.String(&b[0], len(b)), nil
}

// Bytes decodes a counted string whose payload may hold any byte, NUL
// included (the "BSTR" of the grammars: script chunks, credentials).
func (r *Reader) Bytes() ([]byte, error) {
	n, err := r.length(-1)
	if err != nil {
		return nil, err
	}
	return r.readN(make([]byte, 0, min(n, chunk)), n)
}

// AppendBytes decodes a BSTR and appends its payload to dst.
func (r *Reader) AppendBytes(dst []byte) ([]byte, error) {
	n, err := r.length(-1)
	if err != nil {
		return dst, err
	}
	return r.readN(dst, n)
}

// Real decodes a real number: a signed coefficient followed by a signed
// base-10 exponent. The batch protocol itself never uses reals.
func (r *Reader) Real() (float64, error) {
	coef, err := r.Int64()
	if err != nil {
		return 0, err
	}
	exp, err := r.Int32()
	if err != nil {
		return 0, err
	}
	return float64(coef) * math.Pow10(int(exp)), nil
}
