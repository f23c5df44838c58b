package rpp

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCksumMatchesPOSIX(t *testing.T) {
	// Values printed by the POSIX cksum utility.
	tests := []struct {
		in   string
		want uint32
	}{
		{"", 4294967295},
		{"hello", 3287646509},
		{"123456789", 930766865},
	}
	for _, tt := range tests {
		if got := Cksum([]byte(tt.in)); got != tt.want {
			t.Errorf("Cksum(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// Datagrams of capture 24 (momctl -q loadave), spec 10 §2.3.
var captured = []struct {
	wire string
	want Packet
}{
	{"04000000000000037C017121AA", Packet{Type: RPP_HELLO1, Stream: 0, Seq: 0x37C}},
	{"050000000000000001342C5D52", Packet{Type: RPP_HELLO2, Stream: 0, Seq: 1}},
	{"01000000010000037C0C9B3502", Packet{Type: RPP_ACK, Stream: 1, Seq: 0x37C}},
	{"+1+1+2+7loadave0300000001000000003A41EF08", Packet{Type: RPP_EOD, Stream: 1, Seq: 0, Payload: []byte("+1+1+2+7loadave")}},
	{"+1+1+1030000000100000001FAEEEF87", Packet{Type: RPP_EOD, Stream: 1, Seq: 1, Payload: []byte("+1+1+1")}},
	{"060000000100000002413EC5CE", Packet{Type: RPP_GOODBYE, Stream: 1, Seq: 2}},
}

func TestParseCaptured(t *testing.T) {
	for _, tt := range captured {
		p, err := Parse([]byte(tt.wire))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.wire, err)
		}
		if p.Type != tt.want.Type || p.Stream != tt.want.Stream || p.Seq != tt.want.Seq || !bytes.Equal(p.Payload, tt.want.Payload) {
			t.Errorf("Parse(%q) = %v %q, want %v %q", tt.wire, p, p.Payload, tt.want, tt.want.Payload)
		}
		if err := p.Check(); err != nil {
			t.Errorf("Check(%q): %v", tt.wire, err)
		}
		if got := string(tt.want.Marshal()); got != tt.wire {
			t.Errorf("Marshal(%v) = %q, want %q", tt.want, got, tt.wire)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := "040000000000000037C017121AA"
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrShort},
		{"short", good[:25], ErrShort},
		{"lower-case hex", "040000000000000037c017121aa", ErrTrailer},
		{"blank in trailer", "04 000000000000037C017121AA", ErrTrailer},
		{"bad crc", "040000000000000037C017121AB", ErrCRC},
		{"payload changed", "x" + good, ErrCRC},
		{"too long", strings.Repeat("x", MaxPacket+1), ErrLong},
		{"unknown type", string(Packet{Type: 7}.Marshal()), ErrType},
		{"type zero", string(Packet{Type: 0}.Marshal()), ErrType},
	}
	for _, tt := range tests {
		if _, err := Parse([]byte(tt.in)); !errors.Is(err, tt.want) {
			t.Errorf("%s: Parse error %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	full := bytes.Repeat([]byte("a"), MaxPayload)
	tests := []struct {
		p  Packet
		ok bool
	}{
		{Packet{Type: RPP_DATA, Payload: full}, true},
		{Packet{Type: RPP_DATA, Payload: full[1:]}, false},
		{Packet{Type: RPP_EOD}, true},
		{Packet{Type: RPP_EOD, Payload: full}, true},
		{Packet{Type: RPP_ACK, Payload: []byte("x")}, false},
		{Packet{Type: RPP_HELLO1}, true},
		{Packet{Type: 9}, false},
	}
	for _, tt := range tests {
		if err := tt.p.Check(); (err == nil) != tt.ok {
			t.Errorf("Check(%v) = %v, want ok=%v", tt.p, err, tt.ok)
		}
	}
}

func TestTypeString(t *testing.T) {
	if RPP_GOODBYE.String() != "GOODBYE" || Type(0).String() != "TYPE(0)" || Type(200).String() != "TYPE(200)" {
		t.Errorf("names: %s %s %s", RPP_GOODBYE, Type(0), Type(200))
	}
}

func TestAssembler(t *testing.T) {
	a := netip.MustParseAddrPort("127.0.0.1:1020")
	b := netip.MustParseAddrPort("127.0.0.1:15003")
	var asm Assembler
	full := bytes.Repeat([]byte("x"), MaxPayload)
	steps := []struct {
		from, to netip.AddrPort
		p        Packet
		want     string // message data, "R" for retransmit, "" for nothing
		lost     uint32
	}{
		{a, b, Packet{Type: RPP_HELLO1, Stream: 0, Seq: 0x37c}, "", 0},
		{a, b, Packet{Type: RPP_HELLO1, Stream: 0, Seq: 0x37c}, "R", 0},
		{b, a, Packet{Type: RPP_HELLO2, Stream: 0, Seq: 1}, "", 0},
		{a, b, Packet{Type: RPP_DATA, Stream: 1, Seq: 0, Payload: full}, "", 0},
		{a, b, Packet{Type: RPP_DATA, Stream: 1, Seq: 0, Payload: full}, "R", 0},
		{a, b, Packet{Type: RPP_EOD, Stream: 1, Seq: 1, Payload: []byte("tail")}, string(full) + "tail", 0},
		{b, a, Packet{Type: RPP_EOD, Stream: 0, Seq: 0, Payload: []byte("reply")}, "reply", 0},
		{a, b, Packet{Type: RPP_EOD, Stream: 1, Seq: 1, Payload: []byte("tail")}, "R", 0},
		{a, b, Packet{Type: RPP_EOD, Stream: 1, Seq: 3, Payload: []byte("after a loss")}, "after a loss", 1},
		{a, b, Packet{Type: RPP_GOODBYE, Stream: 1, Seq: 4}, "", 0},
		{a, b, Packet{Type: RPP_GOODBYE, Stream: 1, Seq: 4}, "R", 0},
		// The stream is reopened with a new key: sequences restart.
		{a, b, Packet{Type: RPP_HELLO1, Stream: 0, Seq: 0x37d}, "", 0},
		{b, a, Packet{Type: RPP_HELLO2, Stream: 0, Seq: 1}, "", 0},
		{a, b, Packet{Type: RPP_EOD, Stream: 1, Seq: 0, Payload: []byte("new")}, "new", 0},
		{b, a, Packet{Type: RPP_ACK, Stream: 0, Seq: 0}, "", 0},
	}
	for i, s := range steps {
		res := asm.Add(s.from, s.to, s.p)
		got := ""
		switch {
		case res.Retransmit:
			got = "R"
		case res.Message != nil:
			got = string(res.Message.Data)
		}
		if got != s.want || res.Lost != s.lost {
			t.Errorf("step %d (%v): got %.20q lost %d, want %.20q lost %d", i, s.p, got, res.Lost, s.want, s.lost)
		}
	}
}

func TestFragments(t *testing.T) {
	for _, n := range []int{0, 1, MaxPayload - 1, MaxPayload, MaxPayload + 1, 6405, 2 * MaxPayload} {
		msg := bytes.Repeat([]byte("m"), n)
		pkts := Fragments(7, 10, msg)
		wantPkts := n/MaxPayload + 1
		if len(pkts) != wantPkts {
			t.Errorf("%d bytes: %d packets, want %d", n, len(pkts), wantPkts)
			continue
		}
		var asm Assembler
		from := netip.MustParseAddrPort("127.0.0.1:1")
		to := netip.MustParseAddrPort("127.0.0.1:2")
		for i, p := range pkts {
			if p.Seq != uint32(10+i) || p.Stream != 7 {
				t.Errorf("%d bytes: packet %d is %v", n, i, p)
			}
			if err := p.Check(); err != nil {
				t.Errorf("%d bytes: packet %d: %v", n, i, err)
			}
			q, err := Parse(p.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			res := asm.Add(from, to, q)
			if last := i == len(pkts)-1; last != (res.Message != nil) {
				t.Fatalf("%d bytes: packet %d completed a message: %v", n, i, res.Message != nil)
			} else if last && (!bytes.Equal(res.Message.Data, msg) || res.Message.Fragments != wantPkts || res.Message.FirstSeq != 10) {
				t.Errorf("%d bytes: reassembled %d bytes in %d fragments from seq %d", n, len(res.Message.Data), res.Message.Fragments, res.Message.FirstSeq)
			}
		}
	}
}
