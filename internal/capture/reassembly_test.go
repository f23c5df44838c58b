package capture

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// seg describes one synthetic TCP segment or UDP datagram.
type seg struct {
	fromClient bool
	udp        bool
	sport      uint16 // overrides the client port when non-zero
	syn, ack   bool
	fin        bool
	seq        uint32
	data       string
}

// writePcap builds an Ethernet pcap of the segments between 127.0.0.1:40000
// (client) and 127.0.0.1:15001.
func writePcap(t *testing.T, segs []seg) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 0)
	for i, s := range segs {
		cport, sport := layers.TCPPort(40000), layers.TCPPort(15001)
		if s.sport != 0 {
			cport = layers.TCPPort(s.sport)
		}
		src, dst := cport, sport
		if !s.fromClient {
			src, dst = sport, cport
		}
		eth := &layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, SrcIP: net.IPv4(127, 0, 0, 1), DstIP: net.IPv4(127, 0, 0, 1)}
		var l4 gopacket.SerializableLayer
		if s.udp {
			ip.Protocol = layers.IPProtocolUDP
			u := &layers.UDP{SrcPort: layers.UDPPort(src), DstPort: layers.UDPPort(dst)}
			if err := u.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			l4 = u
		} else {
			ip.Protocol = layers.IPProtocolTCP
			tc := &layers.TCP{SrcPort: src, DstPort: dst, Seq: s.seq, SYN: s.syn, ACK: s.ack, FIN: s.fin, Window: 1000}
			if err := tc.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			l4 = tc
		}
		sb := gopacket.NewSerializeBuffer()
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopacket.SerializeLayers(sb, opts, eth, ip, l4, gopacket.Payload(s.data)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(sb.Bytes()), Length: len(sb.Bytes())}
		if err := w.WritePacket(ci, sb.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestReassembly(t *testing.T) {
	const c, s = 1000, 5000 // initial sequence numbers
	segs := []seg{
		{fromClient: true, syn: true, seq: c},
		{syn: true, ack: true, seq: s},
		{fromClient: true, ack: true, seq: c + 1, data: "+2+1"},
		{fromClient: true, ack: true, seq: c + 9, data: "world"}, // out of order
		{fromClient: true, ack: true, seq: c + 5, data: "hell"},  // fills the gap
		{fromClient: true, ack: true, seq: c + 1, data: "+2+1"},  // retransmission
		{fromClient: true, ack: true, seq: c + 12, data: "ldXY"}, // overlaps "world"
		{ack: true, seq: s + 1, data: "reply"},
		{udp: true, fromClient: true, data: "udp-payload"},
		{fromClient: true, ack: true, fin: true, seq: c + 16},
		{ack: true, fin: true, seq: s + 6},
		// The same 4-tuple reused by a new connection.
		{fromClient: true, syn: true, seq: 9000},
		{fromClient: true, ack: true, seq: 9001, data: "again"},
		// A connection whose SYN was not captured: the daemon port is
		// the server even though it sends first.
		{sport: 41000, ack: true, seq: 7, data: "from-server"},
		{sport: 41000, fromClient: true, ack: true, seq: 70, data: "from-client"},
	}
	capt, err := Read(bytes.NewReader(writePcap(t, segs)))
	if err != nil {
		t.Fatal(err)
	}
	if capt.LinkType != uint32(layers.LinkTypeEthernet) || capt.Frames != len(segs) || capt.Other != 0 {
		t.Fatalf("link %d frames %d other %d", capt.LinkType, capt.Frames, capt.Other)
	}
	if len(capt.Conns) != 3 {
		t.Fatalf("%d connections, want 3", len(capt.Conns))
	}
	first := capt.Conns[0]
	if got := string(first.Stream(true)); got != "+2+1hellworldXY" {
		t.Errorf("client stream %q", got)
	}
	if got := string(first.Stream(false)); got != "reply" {
		t.Errorf("server stream %q", got)
	}
	if !first.SYN || first.Client.Port() != 40000 || first.Server.Port() != 15001 || !first.ClientFIN || !first.ServerFIN {
		t.Errorf("first connection: %+v", first)
	}
	turns := first.Turns()
	if len(turns) != 2 || string(turns[0].Data) != "+2+1hellworldXY" || turns[1].FromClient {
		t.Errorf("turns: %+v", turns)
	}
	if got := string(capt.Conns[1].Stream(true)); got != "again" {
		t.Errorf("reused 4-tuple: %q", got)
	}
	third := capt.Conns[2]
	if third.SYN || third.Server.Port() != 15001 || third.Client.Port() != 41000 ||
		string(third.Stream(false)) != "from-server" || string(third.Stream(true)) != "from-client" {
		t.Errorf("connection without SYN: %+v", third)
	}
	if len(capt.Datagrams) != 1 || string(capt.Datagrams[0].Payload) != "udp-payload" ||
		capt.Datagrams[0].Src.Port() != 40000 || capt.Datagrams[0].Frame != 9 {
		t.Errorf("datagrams: %+v", capt.Datagrams)
	}
}

func TestGapIsReported(t *testing.T) {
	segs := []seg{
		{fromClient: true, syn: true, seq: 0},
		{fromClient: true, ack: true, seq: 1, data: "abc"},
		{fromClient: true, ack: true, seq: 10, data: "xyz"}, // bytes 3..8 never captured
	}
	capt, err := Read(bytes.NewReader(writePcap(t, segs)))
	if err != nil {
		t.Fatal(err)
	}
	conn := capt.Conns[0]
	if conn.MissingC2S != 6 || string(conn.Stream(true)) != "abcxyz" || len(conn.Turns()) != 2 {
		t.Errorf("missing %d stream %q turns %d", conn.MissingC2S, conn.Stream(true), len(conn.Turns()))
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	if _, err := Read(bytes.NewReader([]byte("not a pcap file at all, really not"))); err == nil {
		t.Error("no error for a non-pcap stream")
	}
	if _, err := Read(bytes.NewReader(nil)); err == nil {
		t.Error("no error for an empty stream")
	}
}

func TestSharedDirFrom(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "repo")
	sub := filepath.Join(mod, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := sharedDirFrom(sub); ok {
		t.Error("found a captures dir that does not exist")
	}
	caps := filepath.Join(root, "shared", "captures")
	if err := os.MkdirAll(caps, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, ok := sharedDirFrom(sub); !ok || got != caps {
		t.Errorf("sharedDirFrom = %q, %v; want %q", got, ok, caps)
	}
}

func TestHugeRecordIsRefused(t *testing.T) {
	hdr := []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0}
	rec := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 'x'}
	if _, err := Read(bytes.NewReader(append(hdr, rec...))); err == nil {
		t.Error("a 2 GiB record was accepted")
	}
}
