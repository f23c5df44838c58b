package jobfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func sample() *Job {
	j := &Job{Version: QSVersion, State: 4, Substate: 42, Svrflags: 1, Stime: 1763780000,
		ID: "12.vm", Prefix: "12.vm", Queue: "batch", Destin: "",
		Attrs: []Attr{
			{Name: "Job_Name", Value: "STDIN", Flags: FlagSet},
			{Name: "Resource_List", Resource: "walltime", Value: "01:00:00", Flags: FlagSet},
			{Name: "Resource_List", Resource: "nodes", Value: "1", Flags: FlagSet | FlagDefault},
			{Name: "Variable_List", Value: "PBS_O_HOME=/home/alice\nPBS_O_PATH=/bin:/usr/bin\n", Flags: FlagSet},
			{Name: "depend", Value: "afterok:1.vm@vm", Size: DependFieldSize, Flags: FlagSet},
		}}
	j.SetMom(Mom{ServerAddr: netip.MustParseAddr("10.1.2.3"), ExitStatus: -3, UID: 1000, GID: 100})
	return j
}

// TestLayout checks the offsets of spec 13 §6.1 and §2.1 in a marshalled
// file.
func TestLayout(t *testing.T) {
	b, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"qs_version", uint64(le.Uint32(b[0:])), 0x00020302},
		{"state", uint64(le.Uint32(b[4:])), 4},
		{"substate", uint64(le.Uint32(b[8:])), 42},
		{"svrflags", uint64(le.Uint32(b[12:])), 1},
		{"stime", le.Uint64(b[32:]), 1763780000},
		{"un_type", uint64(le.Uint32(b[2212:])), UnionMom},
		{"svraddr", le.Uint64(b[2216:]), 0x0a010203},
		{"exitstat", uint64(le.Uint32(b[2224:])), 0xfffffffd},
		{"exuid", uint64(le.Uint32(b[2228:])), 1000},
		{"exgid", uint64(le.Uint32(b[2232:])), 100},
		{"first tsize", uint64(le.Uint32(b[2240+64:])), 88 + 9 + 6},
		{"first flags", uint64(le.Uint32(b[2240+80:])), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	for _, f := range []struct {
		off int
		s   string
	}{{40, "12.vm\x00"}, {1087, "12.vm\x00"}, {1149, "batch\x00"}} {
		if !bytes.HasPrefix(b[f.off:], []byte(f.s)) {
			t.Errorf("offset %d: %q, want %q", f.off, b[f.off:f.off+len(f.s)], f.s)
		}
	}
	if !bytes.HasPrefix(b[2240+88:], []byte("Job_Name\x00STDIN\x00")) {
		t.Errorf("first record data %q", b[2240+88:2240+88+16])
	}
	// depend in its 2085-byte field (spec 13 §2.3).
	i := bytes.Index(b, []byte("depend\x00afterok"))
	if i < 0 || le.Uint32(b[i-88+64:]) != 88+7+2085 || le.Uint32(b[i-88+76:]) != 2085 {
		t.Errorf("depend record not in its fixed field")
	}
	// End marker: all zero but tsize -711.
	end := b[len(b)-88:]
	if int32(le.Uint32(end[64:])) != AttrEndMarker || bytes.Count(end, []byte{0}) != 84 {
		t.Errorf("end marker %x", end)
	}
}

func TestRoundTrip(t *testing.T) {
	for name, j := range map[string]*Job{
		"mom":      sample(),
		"with tm":  func() *Job { j := sample(); j.SetTM(TM{Stdout: 40001, Stderr: 40001, NextTaskID: 2}); return j }(),
		"no attrs": {Version: QSVersion, ID: "1.x", Prefix: "1.x", UnType: UnionExec},
	} {
		b, err := j.Marshal()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, j) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", name, got, j)
		}
		b2, _ := got.Marshal()
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: re-marshalled bytes differ", name)
		}
	}
}

func TestUnions(t *testing.T) {
	j := sample()
	if m := j.Mom(); m.ServerAddr != netip.MustParseAddr("10.1.2.3") || m.ExitStatus != -3 || m.UID != 1000 || m.GID != 100 {
		t.Errorf("Mom() = %+v", m)
	}
	if e := j.Exec(); e.MomAddr != netip.MustParseAddr("10.1.2.3") || e.ExitStatus != -3 {
		t.Errorf("Exec() = %+v (exitstat shares the MOM member's offset)", e)
	}
	var z Job
	if m := z.Mom(); m.ServerAddr.IsValid() {
		t.Errorf("zero address decodes as %v, want invalid", m.ServerAddr)
	}
	if _, ok := z.TM(); ok {
		t.Error("TM found in a file without one")
	}
	z.SetMom(Mom{ServerAddr: netip.MustParseAddr("::1")})
	if m := z.Mom(); m.ServerAddr.IsValid() {
		t.Errorf("an IPv6 server address is stored as %v, want 0", m.ServerAddr)
	}
}

func TestMarshalErrors(t *testing.T) {
	for name, j := range map[string]*Job{
		"long id":     {ID: strings.Repeat("x", JobIDSize)},
		"long prefix": {ID: "1.x", Prefix: strings.Repeat("p", PrefixSize)},
		"long queue":  {ID: "1.x", Queue: strings.Repeat("q", QueueSize)},
		"nul":         {ID: "1\x00x"},
		"no name":     {ID: "1.x", Attrs: []Attr{{Value: "v"}}},
	} {
		if _, err := j.Marshal(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := make([]byte, FixedSize)
	copy(good, []byte{2, 3, 2, 0})
	good = AppendAttr(good, Attr{Name: "Job_Name", Value: "x", Flags: 1})
	good = AppendEndMarker(good)
	if _, err := Parse(good); err != nil {
		t.Fatalf("good file: %v", err)
	}
	corrupt := bytes.Clone(good)
	corrupt[FixedSize+68] = 50 // name length beyond the record
	for name, tc := range map[string]struct {
		b       []byte
		partial bool // the job decoded so far is returned
		short   bool // error wraps io.ErrUnexpectedEOF
	}{
		"empty":       {nil, false, false},
		"not torque":  {[]byte("+4abcd"), false, false},
		"short fixed": {good[:100], false, true},
		"no marker":   {good[:len(good)-88], true, true},
		"cut record":  {good[:FixedSize+90], true, true},
		"corrupt":     {corrupt, true, false},
	} {
		j, err := Parse(tc.b)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if (j != nil) != tc.partial || errors.Is(err, io.ErrUnexpectedEOF) != tc.short {
			t.Errorf("%s: job %v, err %v", name, j != nil, err)
		}
	}
	if _, err := Parse([]byte("+4abcd")); !errors.Is(err, ErrNotJobFile) {
		t.Errorf("not a job file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	b, _ := sample().Marshal()
	f.Add(b)
	f.Add(b[:FixedSize+100])
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := Parse(b)
		if err != nil {
			return
		}
		// Whatever parses re-encodes to a file that parses to the same job.
		out, err := j.Marshal()
		if err != nil {
			return // e.g. a name holding a NUL cannot be written back
		}
		j2, err := Parse(out)
		if err != nil || !reflect.DeepEqual(j, j2) {
			t.Fatalf("re-parse: %v\n%+v\n%+v", err, j, j2)
		}
	})
}

// FuzzParseAttrs checks the attribute records decoder at any offset: the
// end it reports is within the input, and the records it returns
// re-encode (AppendAttr) to no more bytes than they were read from (names
// are taken up to a NUL, so they can only shrink).
func FuzzParseAttrs(f *testing.F) {
	var b []byte
	b = AppendAttr(b, Attr{Name: "Job_Name", Value: "x", Flags: FlagSet})
	b = AppendAttr(b, Attr{Name: "Resource_List", Resource: "walltime", Value: "01:00:00", Flags: FlagSet | FlagModify})
	b = AppendAttr(b, Attr{Name: "depend", Value: "afterok:1.vm@vm", Size: DependFieldSize})
	f.Add(AppendEndMarker(b), 0)
	f.Add(b, 0)
	f.Add(append([]byte{1, 2, 3}, AppendEndMarker(nil)...), 3)
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		attrs, end, err := ParseAttrs(b, off)
		if err != nil {
			return
		}
		if end > len(b) || end < off+AttrHeaderSize {
			t.Fatalf("end %d for %d bytes from %d", end, len(b), off)
		}
		var again []byte
		for _, a := range attrs {
			again = AppendAttr(again, a)
		}
		again = AppendEndMarker(again)
		if len(again) > end-off {
			t.Fatalf("%d records re-encode to %d bytes, read from %d", len(attrs), len(again), end-off)
		}
	})
}
