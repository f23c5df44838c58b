package rpp

import (
	"bytes"
	"net/netip"
	"testing"
)

// FuzzParse checks that Parse never panics and that every datagram it
// accepts is rebuilt byte for byte by Marshal.
func FuzzParse(f *testing.F) {
	for _, c := range captured {
		f.Add([]byte(c.wire))
	}
	f.Add(Packet{Type: RPP_DATA, Stream: 0xFFFFFFFF, Seq: 7, Payload: bytes.Repeat([]byte("+1"), MaxPayload/2)}.Marshal())
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		_ = p.Check()
		_ = p.String()
		if err != nil {
			return
		}
		if got := p.Marshal(); !bytes.Equal(got, b) {
			t.Fatalf("Marshal(Parse(%q)) = %q", b, got)
		}
		var a Assembler
		from := netip.MustParseAddrPort("127.0.0.1:1")
		to := netip.MustParseAddrPort("127.0.0.1:2")
		for range 3 {
			a.Add(from, to, p)
		}
	})
}
