package link

import (
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"

	"gopbs/rpp"
)

// TestGarbageClientPort sends junk to the MOM's own RPP client port (the
// reserved UDP port its IS stream to the server uses; TestGarbage covers
// the batch and RM ports): raw bytes, well-framed packets for streams
// that do not exist, HELLO1s and data around junk messages, from
// ordinary and reserved ports. The IS stream must go on carrying status
// and the resource monitor must still answer.
func TestGarbageClientPort(t *testing.T) {
	requireRoot(t)
	srv := newFakeServer(t)
	tm := startMom(t, srv, "$status_update_time 1\n")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	is, _ := acceptIS(t, ctx, srv.ep)
	client := is.RemoteAddr()

	rng := rand.New(rand.NewPCG(6, 2))
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var datagrams [][]byte
	for range 200 {
		datagrams = append(datagrams, junk(rng.IntN(300)))
	}
	for typ := rpp.RPP_ACK; typ <= rpp.RPP_GOODBYE; typ++ {
		for _, stream := range []uint32{0, 1, 7, 0xFFFFFFFF} {
			for _, seq := range []uint32{0, 1, 0x37F, 0xFFFFFFFF} {
				datagrams = append(datagrams, rpp.Packet{Type: typ, Stream: stream, Seq: seq, Payload: junk(rng.IntN(40))}.Marshal())
			}
		}
	}
	senders := []net.PacketConn{}
	for range 3 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		senders = append(senders, pc)
	}
	if pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1")); err == nil {
		defer pc.Close()
		senders = append(senders, pc)
	}
	to := net.UDPAddrFromAddrPort(client)
	for i, d := range datagrams {
		senders[i%len(senders)].WriteTo(d, to)
	}
	// Junk messages inside proper streams opened to the client port.
	for range 10 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 20 * time.Millisecond, Retry: 5})
		st, _ := ep.Open(client)
		st.Send(junk(rng.IntN(500)))
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		st.Flush(sctx)
		scancel()
		ep.Close()
	}

	// The IS stream still carries status.
	if status := recvStatus(t, ctx, is); !contains(status, "opsys=linux") {
		t.Errorf("status after the junk: %q", status)
	}
	if got := rmQuery(t, tm.rmUDP, "version"); len(got) != 1 || got[0] != "version=2.5.13" {
		t.Errorf("RM after the junk: %q", got)
	}
}
