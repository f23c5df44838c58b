package main

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"gopbs/batchreq"
	"gopbs/internal/capture"
	"gopbs/internal/capture/capturetest"
	"gopbs/rpp"
)

// TestAllCaptures dissects every capture: nothing may stay undecoded,
// and the per-capture message counts must match the manifest's
// independent decode hints.
func TestAllCaptures(t *testing.T) {
	dir := capturetest.Dir(t)
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var total Stats
	raw := 0
	for _, s := range scenarios {
		c, err := capture.ReadFile(filepath.Join(dir, s.Pcap))
		if err != nil {
			t.Fatal(err)
		}
		var st Stats
		got := map[string]int{}
		for _, m := range Dump(c) {
			st.add(m)
			total.add(m)
			if m.Err != "" || m.Undecoded != 0 {
				t.Errorf("%s: %s", s.Pcap, Line(m))
			}
			switch {
			case m.Proto == "sched" && m.Kind == "command":
				got["SCHED_CMD"]++
			case (m.Proto == "batch" || m.Proto == "sched") && m.Kind == "request":
				got["REQ"]++
			case (m.Proto == "batch" || m.Proto == "sched") && m.Kind == "reply":
				got["REPLY"]++
			case m.Proto == "tm" && m.Kind == "request":
				got["TM"]++
			case m.Proto == "raw":
				raw++
			}
		}
		want := map[string]int{}
		for _, h := range s.TCPStreams {
			for _, seg := range h.Segments {
				if f := strings.Fields(seg); len(f) > 1 {
					want[strings.TrimSuffix(f[1], "(4-byte")]++
				}
			}
		}
		for _, k := range []string{"REQ", "REPLY", "SCHED_CMD", "TM"} {
			if got[k] != want[k] {
				t.Errorf("%s: %d %s messages, manifest hints list %d", s.Pcap, got[k], k, want[k])
			}
		}
		if st.RPPPackets != len(c.Datagrams) {
			t.Errorf("%s: %d RPP packets of %d datagrams", s.Pcap, st.RPPPackets, len(c.Datagrams))
		}
	}
	t.Log(total)
	if total.UndecodedBytes != 0 || total.Errors != 0 {
		t.Errorf("summary %v, want undecoded_bytes=0 errors=0", total)
	}
	if total.TCPMessages == 0 || total.RPPPackets == 0 || total.SchedCommands == 0 || raw == 0 {
		t.Errorf("some message class never seen: %v, raw %d", total, raw)
	}
}

// TestLineFormat checks the exact lines of a small capture.
func TestLineFormat(t *testing.T) {
	dir := capturetest.Dir(t)
	c, err := capture.ReadFile(filepath.Join(dir, "24-momctl-q-loadave.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := Dump(c)
	want := []string{
		"01:21:00.070726 127.0.0.1:1020 > 127.0.0.1:15003 rpp packet HELLO1(4) stream=0 seq=892",
		"01:21:00.071227 127.0.0.1:15003 > 127.0.0.1:1020 rpp packet HELLO2(5) stream=0 seq=1",
		"01:21:00.071267 127.0.0.1:1020 > 127.0.0.1:15003 rpp packet ACK(1) stream=1 seq=892",
		"01:21:00.071270 127.0.0.1:1020 > 127.0.0.1:15003 rpp packet EOD(3) stream=1 seq=0 len=15 RM=RM_CMD_REQUEST lines=loadave",
		"01:21:00.071317 127.0.0.1:15003 > 127.0.0.1:1020 rpp packet ACK(1) stream=0 seq=0",
		"01:21:00.071384 127.0.0.1:15003 > 127.0.0.1:1020 rpp packet EOD(3) stream=0 seq=0 len=21 RM-reply=RM_RSP_OK answers=loadave=0.37",
	}
	if len(msgs) < len(want) {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, w := range want {
		if got := Line(msgs[i]); got != w {
			t.Errorf("line %d:\n got %s\nwant %s", i, got, w)
		}
	}
}

func TestLineQuotingAndErrors(t *testing.T) {
	ts := time.Date(2026, 11, 22, 1, 2, 3, 4005000, time.UTC)
	m := &Message{
		Time: ts, Src: netip.MustParseAddrPort("127.0.0.1:34128"), Dst: netip.MustParseAddrPort("127.0.0.1:15001"),
		Proto: "batch", Kind: "reply", Name: "DeleteJob", Number: 6,
		Fields: []Field{{"code", "15001"}, {"choice", "Text"}, {"text", `Unknown Job Id 9.vm`}, {"empty", ""}, {"q", `a"b`}},
		Err:    "re-encoding differs",
	}
	want := `01:02:03.004005 127.0.0.1:34128 > 127.0.0.1:15001 batch reply DeleteJob(6) code=15001 choice=Text text="Unknown Job Id 9.vm" empty="" q="a\"b" error="re-encoding differs"`
	if got := Line(m); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	u := &Message{Time: ts, Src: m.Src, Dst: m.Dst, Proto: "batch", Kind: "undecoded", Number: -1, Offset: 36, Undecoded: 7, Err: "batch request: boom"}
	want = `01:02:03.004005 127.0.0.1:34128 > 127.0.0.1:15001 batch undecoded offset=36 bytes=7 error="batch request: boom"`
	if got := Line(u); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// frame is one synthetic packet of a test capture.
type frame struct {
	src, dst string
	udp      bool
	syn      bool
	seq      uint32
	data     string
}

func writePcap(t *testing.T, frames []frame) string {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		src, dst := netip.MustParseAddrPort(f.src), netip.MustParseAddrPort(f.dst)
		eth := &layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		var l4 gopacket.SerializableLayer
		if f.udp {
			ip.Protocol = layers.IPProtocolUDP
			u := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
			_ = u.SetNetworkLayerForChecksum(ip)
			l4 = u
		} else {
			ip.Protocol = layers.IPProtocolTCP
			tc := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()), Seq: f.seq, SYN: f.syn, ACK: !f.syn, Window: 1000}
			_ = tc.SetNetworkLayerForChecksum(ip)
			l4 = tc
		}
		sb := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, l4, gopacket.Payload(f.data)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, int64(i)*1000), CaptureLength: len(sb.Bytes()), Length: len(sb.Bytes())}
		if err := w.WritePacket(ci, sb.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "synthetic.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUndecodedIsReported feeds broken traffic: every problem must be
// reported with its offset and counted, never crash.
func TestUndecodedIsReported(t *testing.T) {
	const cl, srv = "127.0.0.1:40000", "127.0.0.1:15001"
	req := "+2+1+0+5alice+0+0+0+0" // ... deliberately not a complete batch request
	good := string(rpp.Packet{Type: rpp.RPP_EOD, Stream: 1, Payload: []byte("+4+1+1")}.Marshal())
	bad := []byte(good)
	bad[len(bad)-1] ^= 1
	path := writePcap(t, []frame{
		{src: cl, dst: srv, syn: true, seq: 99},
		{src: cl, dst: srv, seq: 100, data: "+2+12+21+5alice+0+0+0" + req[:6] + "garbage!"},
		{src: "127.0.0.1:1022", dst: "127.0.0.1:15001", udp: true, data: good},
		{src: "127.0.0.1:1022", dst: "127.0.0.1:15001", udp: true, data: string(bad)},
		{src: "127.0.0.1:1022", dst: "127.0.0.1:15001", udp: true, data: string(rpp.Packet{Type: rpp.RPP_EOD, Stream: 1, Seq: 1, Payload: []byte("+4+1+9")}.Marshal())},
		{src: "127.0.0.1:41000", dst: "127.0.0.1:5555", syn: true, seq: 0},
		{src: "127.0.0.1:41000", dst: "127.0.0.1:5555", seq: 1, data: "hello"},
	})
	c, err := capture.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	var lines []string
	for _, m := range Dump(c) {
		st.add(m)
		lines = append(lines, Line(m))
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"batch request StatusServer(21) user=alice",
		"batch undecoded offset=21 bytes=14",
		"rpp packet EOD(3) stream=1 seq=0 len=6 IS=IS_HELLO",
		"rpp packet invalid offset=0 bytes=32 error=\"rpp: CRC mismatch",
		"rpp packet EOD(3) stream=1 seq=1 len=6 offset=4 bytes=2 error=\"IS command at offset 4: unknown command 9\"",
		"tcp undecoded offset=0 bytes=5 error=\"no protocol known for port 5555\"",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if st.UndecodedBytes != 14+len(bad)+2+5 || st.Errors != 4 {
		t.Errorf("stats %v", st)
	}
}

func TestRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage: pbsdump") {
		t.Errorf("no arguments: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"-summary", filepath.Join(t.TempDir(), "missing.pcap")}, &out, &errOut); code != 1 ||
		out.String() != "messages=0 tcp_messages=0 rpp_packets=0 sched_commands=0 undecoded_bytes=0 errors=1\n" {
		t.Errorf("missing file: exit %d, stdout %q", code, out.String())
	}
	dir := capturetest.Dir(t)
	files, err := capture.PcapFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(append([]string{"-summary"}, files...), &out, &errOut); code != 0 {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	re := regexp.MustCompile(`^messages=\d+ tcp_messages=\d+ rpp_packets=\d+ sched_commands=\d+ undecoded_bytes=0 errors=0\n$`)
	if !re.MatchString(out.String()) {
		t.Errorf("summary output %q", out.String())
	}
	for _, flag := range []string{"-json", "-v"} {
		out.Reset()
		if code := run([]string{flag, filepath.Join(dir, "105-multinode-job-pbsdsh.pcap")}, &out, &errOut); code != 0 || out.Len() == 0 {
			t.Errorf("%s: exit %d", flag, code)
		}
	}
}

// TestReservationRequests: GoPBS's own reservation requests and their
// replies are named and their fields shown.
func TestReservationRequests(t *testing.T) {
	const cl, srv = "127.0.0.1:40001", "127.0.0.1:15001"
	submit := batchreq.NewRequest(batchreq.PBS_BATCH_ResvSubmit, "alice", &batchreq.ResvSubmit{Flags: 1,
		Attrs: batchreq.AttrList{batchreq.NewAttr("resv_start", "100"), batchreq.NewAttr("resv_nodect", "2")}})
	status := batchreq.NewRequest(batchreq.PBS_BATCH_ResvStatus, "alice", &batchreq.ResvStatus{Owner: "bob", Expired: -1})
	cancel := batchreq.NewRequest(batchreq.PBS_BATCH_ResvCancel, "alice", &batchreq.ResvID{ID: "R7"})
	reqs := string(submit.Append(nil)) + string(status.Append(nil)) + string(cancel.Append(nil))
	replies := string(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, "R7").Append(nil)) +
		string((&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{
			{ObjType: batchreq.MGR_OBJ_RESV, Name: "R7", Attrs: batchreq.AttrList{batchreq.NewAttr("resv_state", "CONFIRMED")}}}}).Append(nil)) +
		string(batchreq.NullReply().Append(nil))
	path := writePcap(t, []frame{
		{src: cl, dst: srv, syn: true, seq: 99},
		{src: cl, dst: srv, seq: 100, data: reqs},
		{src: srv, dst: cl, seq: 500, data: replies},
	})
	c, err := capture.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var st Stats
	for _, m := range Dump(c) {
		st.add(m)
		lines = append(lines, Line(m))
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"batch request ResvSubmit(1000) user=alice flags=1 attrs=resv_start=100,resv_nodect=2",
		"batch request ResvStatus(1006) user=alice resv=\"\" owner=bob start=0 end=0 expired=-1",
		"batch request ResvCancel(1004) user=alice resv=R7 owner=\"\" flags=0",
		"batch reply ResvSubmit(1000) code=0 choice=Queue",
		"batch reply ResvStatus(1006) code=0 choice=Status",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if st.UndecodedBytes != 0 || st.Errors != 0 {
		t.Errorf("stats %v\n%s", st, text)
	}
}
