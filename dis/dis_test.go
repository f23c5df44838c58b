package dis

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEncodeUnsigned(t *testing.T) {
	cases := []struct {
		v    uint64
		wire string
	}{
		{0, "+0"}, {1, "+1"}, {9, "+9"}, {10, "2+10"}, {99, "2+99"}, {100, "3+100"},
		{12345, "5+12345"}, {1234567890, "210+1234567890"}, {4294967295, "210+4294967295"},
		{18446744073709551615, "220+18446744073709551615"},
	}
	for _, c := range cases {
		if got := string(AppendUint(nil, c.v)); got != c.wire {
			t.Errorf("AppendUint(%d) = %q, want %q", c.v, got, c.wire)
		}
		r := NewReader(strings.NewReader(c.wire))
		v, err := r.Uint64()
		if err != nil || v != c.v {
			t.Errorf("Uint64(%q) = %d, %v; want %d", c.wire, v, err, c.v)
		}
	}
}

func TestEncodeSigned(t *testing.T) {
	cases := []struct {
		v    int64
		wire string
	}{
		{0, "+0"}, {7, "+7"}, {-1, "-1"}, {-5, "-5"}, {-10, "2-10"},
		{-2147483648, "210-2147483648"}, {math.MinInt64, "219-9223372036854775808"},
		{15001, "5+15001"},
	}
	for _, c := range cases {
		if got := string(AppendInt(nil, c.v)); got != c.wire {
			t.Errorf("AppendInt(%d) = %q, want %q", c.v, got, c.wire)
		}
		v, err := NewReader(strings.NewReader(c.wire)).Int64()
		if err != nil || v != c.v {
			t.Errorf("Int64(%q) = %d, %v; want %d", c.wire, v, err, c.v)
		}
	}
}

func TestWrap32(t *testing.T) {
	if got := string(AppendUint(nil, Wrap32(-1))); got != "210+4294967295" {
		t.Fatalf("Wrap32(-1) encodes as %q", got)
	}
}

func TestDecodeUnsigned32(t *testing.T) {
	cases := []struct {
		wire string
		v    uint32
		err  error
	}{
		{"1+5", 5, nil},
		{"11+5", 5, nil},
		{"2+05", 5, nil},
		{"3+000", 0, nil},
		{"210+4294967295", 4294967295, nil},
		{"05", 0, ErrLeadZero},
		{"+a", 0, ErrNonDigit},
		{" +5", 0, ErrNonDigit},
		{"hello", 0, ErrNonDigit},
		{"-3", 0, ErrBadSign},
		{"-0", 0, ErrBadSign},
		{"211+12345678901", 0, ErrOverflow},
		{"210+4294967296", 0, ErrOverflow},
		{"", 0, ErrEOF},
		{"2", 0, ErrEOF},
		{"2+1", 0, ErrEOD},
		{"21", 0, ErrEOD},
		{"2+1x", 0, ErrNonDigit},
	}
	for _, c := range cases {
		v, err := NewReader(strings.NewReader(c.wire)).Uint32()
		if !errors.Is(err, c.err) || (err == nil && v != c.v) {
			t.Errorf("Uint32(%q) = %d, %v; want %d, %v", c.wire, v, err, c.v, c.err)
		}
	}
}

func TestDecodeSigned32(t *testing.T) {
	cases := []struct {
		wire string
		v    int32
		err  error
	}{
		{"-0", 0, nil},
		{"210-2147483648", math.MinInt32, nil},
		{"210+2147483647", math.MaxInt32, nil},
		{"210+2147483648", math.MaxInt32, ErrOverflow},
		{"210-2147483649", math.MinInt32, ErrOverflow},
		{"2-10", -10, nil},
	}
	for _, c := range cases {
		v, err := NewReader(strings.NewReader(c.wire)).Int32()
		if !errors.Is(err, c.err) || v != c.v {
			t.Errorf("Int32(%q) = %d, %v; want %d, %v", c.wire, v, err, c.v, c.err)
		}
	}
	if _, err := NewReader(strings.NewReader("219+9223372036854775808")).Int64(); !errors.Is(err, ErrOverflow) {
		t.Errorf("Int64 above max: %v", err)
	}
	if _, err := NewReader(strings.NewReader("221+100000000000000000000")).Uint64(); !errors.Is(err, ErrOverflow) {
		t.Errorf("Uint64 21 digits: %v", err)
	}
}

func TestStrings(t *testing.T) {
	cases := []struct{ s, wire string }{
		{"", "+0"}, {"a", "+1a"}, {"hello", "+5hello"},
		{"aaaaaaaaaaaa", "2+12aaaaaaaaaaaa"}, {"PBS_Server", "2+10PBS_Server"},
		{"summarize_arrays", "2+16summarize_arrays"},
	}
	for _, c := range cases {
		if got := string(AppendString(nil, c.s)); got != c.wire {
			t.Errorf("AppendString(%q) = %q, want %q", c.s, got, c.wire)
		}
		s, err := NewReader(strings.NewReader(c.wire)).Str()
		if err != nil || s != c.s {
			t.Errorf("Str(%q) = %q, %v", c.wire, s, err)
		}
	}
	r := NewReader(strings.NewReader("+3a\x00b+3a\x00b"))
	if _, err := r.Str(); !errors.Is(err, ErrNullStr) {
		t.Errorf("NUL in STR: %v", err)
	}
	if b, err := r.Bytes(); err != nil || string(b) != "a\x00b" {
		t.Errorf("NUL in BSTR: %q %v", b, err)
	}
	if _, err := NewReader(strings.NewReader("+5abc")).Str(); !errors.Is(err, ErrProto) {
		t.Errorf("short string: %v", err)
	}
	if _, err := NewReader(strings.NewReader("-3abc")).Str(); !errors.Is(err, ErrBadSign) {
		t.Errorf("negative length: %v", err)
	}
	if s, err := NewReader(strings.NewReader("2+33" + strings.Repeat("x", 33))).StrMax(33); err != nil || len(s) != 33 {
		t.Errorf("capacity is inclusive: %v", err)
	}
	if _, err := NewReader(strings.NewReader("2+34" + strings.Repeat("x", 34))).StrMax(33); !errors.Is(err, ErrOverflow) {
		t.Errorf("over capacity: %v", err)
	}
}

func TestHostileLengthBounded(t *testing.T) {
	r := NewReader(strings.NewReader("210+4000000000abc"))
	r.MaxString = 1 << 20
	if _, err := r.Str(); !errors.Is(err, ErrNoMalloc) {
		t.Fatalf("length over cap: %v", err)
	}
	// Under the cap but never sent: only what arrives is reserved.
	r = NewReader(strings.NewReader("8+50000000abc"))
	allocs := testing.AllocsPerRun(1, func() {
		r.Reset(strings.NewReader("8+50000000abc"))
		if _, err := r.Bytes(); !errors.Is(err, ErrProto) {
			t.Fatalf("short: %v", err)
		}
	})
	if allocs > 4 {
		t.Fatalf("allocs = %v", allocs)
	}
}

type timeoutReader struct{}

func (timeoutReader) Read([]byte) (int, error) { return 0, errTimeout }

var errTimeout = errors.New("i/o timeout")

func TestEOFVersusEOD(t *testing.T) {
	if _, err := NewReader(timeoutReader{}).Uint32(); !errors.Is(err, ErrEOD) {
		t.Errorf("timeout on first byte = %v, want EOD", err)
	}
	if _, err := NewReader(io.MultiReader(strings.NewReader("2+1"))).Uint32(); !errors.Is(err, ErrEOD) {
		t.Errorf("short value = %v", err)
	}
	_ = time.Second
}

func TestReal(t *testing.T) {
	cases := []struct {
		f    float64
		wire string
	}{{0, "+0+0"}, {1.5, "2+15-1"}, {100, "+1+2"}, {-2.25, "3-225-2"}}
	for _, c := range cases {
		b, err := AppendReal(nil, c.f)
		if err != nil || string(b) != c.wire {
			t.Errorf("AppendReal(%v) = %q, %v; want %q", c.f, b, err, c.wire)
		}
		f, err := NewReader(bytes.NewReader(b)).Real()
		if err != nil || f != c.f {
			t.Errorf("Real(%q) = %v, %v", b, f, err)
		}
	}
	if _, err := AppendReal(nil, math.Inf(1)); !errors.Is(err, ErrHugeVal) {
		t.Errorf("inf: %v", err)
	}
}

func TestWriterOneFlush(t *testing.T) {
	var out countingWriter
	w := NewWriter(&out)
	w.PutUint(2)
	w.PutUint(1)
	w.PutUint(21)
	w.PutString("alice")
	w.PutInt(-1)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.writes != 1 || out.String() != "+2+12+21+5alice-1" {
		t.Fatalf("writes=%d bytes=%q", out.writes, out.String())
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

func TestIntegerDecodeNoAlloc(t *testing.T) {
	data := []byte("210+4294967295")
	br := bytes.NewReader(data)
	r := NewReader(br)
	allocs := testing.AllocsPerRun(100, func() {
		br.Reset(data)
		r.Reset(br)
		if _, err := r.Uint32(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Uint32 allocates %v times", allocs)
	}
}

func TestDiscardBuffered(t *testing.T) {
	r := NewReader(strings.NewReader("+1+2+3"))
	if v, _ := r.Uint(); v != 1 {
		t.Fatal(v)
	}
	if n := r.DiscardBuffered(); n != 4 {
		t.Fatalf("discarded %d", n)
	}
	if _, err := r.Uint(); !errors.Is(err, ErrEOF) {
		t.Fatal(err)
	}
}

func BenchmarkReadUint32(b *testing.B) {
	benchmarkRead(b, "210+4294967295", func(r *Reader) error { _, err := r.Uint32(); return err })
}

func BenchmarkReadStr(b *testing.B) {
	benchmarkRead(b, "2+22Resource_List.walltime", func(r *Reader) error { _, err := r.Str(); return err })
}

// benchmarkRead measures read over 64 copies of the encoded item, read
// one after the other from a reused Reader.
func benchmarkRead(b *testing.B, item string, read func(*Reader) error) {
	data := []byte(strings.Repeat(item, 64))
	br := bytes.NewReader(data)
	r := NewReader(br)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(data)
		r.Reset(br)
		for range 64 {
			if err := read(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkAppendUint(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendUint(buf[:0], 1795310482)
	}
}
