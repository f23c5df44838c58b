package rpp

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// FuzzEndpoint feeds arbitrary sequences of datagrams, from two peers, to
// an endpoint's packet handling: nothing may panic, and the stream table
// must stay consistent.
func FuzzEndpoint(f *testing.F) {
	f.Add(Packet{Type: RPP_HELLO1, Stream: 0, Seq: 0x37C}.Marshal(), Packet{Type: RPP_ACK, Stream: 0, Seq: 0x37C}.Marshal(),
		Packet{Type: RPP_EOD, Stream: 0, Seq: 0, Payload: []byte("+1+1+2+7loadave")}.Marshal())
	f.Add(Packet{Type: RPP_HELLO2, Stream: 0, Seq: 1}.Marshal(), Packet{Type: RPP_GOODBYE, Stream: 0, Seq: 0}.Marshal(),
		[]byte("junk"))
	f.Add(Packet{Type: RPP_HELLO1, Stream: 5, Seq: 1}.Marshal(), Packet{Type: RPP_DATA, Stream: 0, Seq: 3, Payload: make([]byte, MaxPayload)}.Marshal(),
		Packet{Type: RPP_HELLO1, Stream: 5, Seq: 2}.Marshal())
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Skip(err)
		}
		e := NewEndpoint(pc, &Options{Timeout: time.Hour, Window: 2})
		defer e.Close()
		peers := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9"), netip.MustParseAddrPort("127.0.0.1:10")}
		s, _ := e.Open(peers[1]) // one stream of our own, index 0
		for i, d := range [][]byte{a, b, c, a, c, b} {
			p, err := Parse(d)
			if err == nil {
				err = p.Check()
			}
			if err != nil {
				continue
			}
			e.mu.Lock()
			e.handle(peers[i%2], p)
			for idx, st := range e.streams {
				if st != nil && st.index != uint32(idx) {
					t.Fatalf("stream at %d has index %d", idx, st.index)
				}
			}
			e.mu.Unlock()
		}
		s.Send([]byte("x"))
		s.Close()
	})
}
