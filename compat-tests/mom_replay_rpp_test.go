package compattests

// This file holds TestMomReplayRPP, the MOM's RPP conversations replayed
// from the captures: the IS stream with the server (hello, status,
// GOODBYE) and the RM queries of momctl and pbs_sched, with the peers
// the test plays and the normalisation of IS and RM payloads.

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/internal/capture"
	"gopbs/momproto"
	"gopbs/rpp"
)

// rppPeer is one endpoint the test plays in an RPP exchange: the raw
// socket it uses and where the MOM is for it.
type rppPeer struct {
	conn   *net.UDPConn
	in     <-chan udpPacket
	mom    netip.AddrPort // where to send (learnt from the first datagram for the IS side)
	last   []byte         // last datagram received, to skip retransmissions
	played uint16         // the captured port this peer plays
}

// momKey is the open key the MOM chose for its IS stream, and the one the
// capture shows; packets carrying it compare as "KEY".
type rppReplay struct {
	t              *testing.T
	peers          []*rppPeer
	capturedKey    uint32
	capturedKeySet bool
	momKey         uint32
	momKeySet      bool
	diffs          []string
}

func (r *rppReplay) peerFor(port uint16) *rppPeer {
	for _, p := range r.peers {
		if p.played == port {
			return p
		}
	}
	return nil
}

// play goes through the captured datagrams in order: those the peers sent
// are sent as captured; those the MOM sent are awaited and compared.
func (r *rppReplay) play(dgs []capture.Datagram) {
	t := r.t
	for _, d := range dgs {
		if p := r.peerFor(d.Src.Port()); p != nil {
			if !p.mom.IsValid() {
				t.Fatalf("no MOM address known for the peer playing port %d", p.played)
			}
			if _, err := p.conn.WriteToUDPAddrPort(d.Payload, p.mom); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := r.peerFor(d.Dst.Port())
		if p == nil {
			continue // traffic the replay does not play
		}
		want, err := rpp.Parse(d.Payload)
		if err != nil {
			t.Fatalf("captured datagram: %v", err)
		}
		got, from := r.await(p)
		if !p.mom.IsValid() {
			p.mom = from
		}
		if w, g := r.describe(want, true), r.describe(got, false); w != g {
			r.diffs = append(r.diffs, fmt.Sprintf("MOM datagram differs:\n    want %s\n    got  %s", w, g))
			return
		}
	}
}

func (r *rppReplay) await(p *rppPeer) (rpp.Packet, netip.AddrPort) {
	r.t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case d, ok := <-p.in:
			if !ok {
				r.t.Fatal("socket closed")
			}
			if bytes.Equal(d.b, p.last) {
				continue // a retransmission
			}
			pk, err := rpp.Parse(d.b)
			if err != nil {
				r.t.Fatalf("MOM sent a bad datagram: %v", err)
			}
			if pk.Type == rpp.RPP_HELLO1 && r.momKeySet && pk.Seq == r.momKey {
				continue // HELLO1 retransmitted before we answered
			}
			p.last = d.b
			return pk, d.from
		case <-timeout:
			r.t.Fatal("timeout waiting for the MOM")
		}
	}
}

// describe renders a packet with its payload normalised.
func (r *rppReplay) describe(p rpp.Packet, captured bool) string {
	seq := strconv.FormatUint(uint64(p.Seq), 10)
	if p.Type == rpp.RPP_HELLO1 {
		if captured {
			r.capturedKey, r.capturedKeySet = p.Seq, true
		} else {
			r.momKey, r.momKeySet = p.Seq, true
		}
		seq = "KEY"
	} else if p.Type == rpp.RPP_ACK {
		if (captured && r.capturedKeySet && p.Seq == r.capturedKey) || (!captured && r.momKeySet && p.Seq == r.momKey) {
			seq = "KEY"
		}
	}
	return fmt.Sprintf("%s stream=%d seq=%s %s", p.Type, p.Stream, seq, normalizeMomPayload(p.Payload))
}

var (
	reNumber = regexp.MustCompile(`^\d+(\.\d+)?(kb)?$`)
	// Values that depend on the machine and the moment.
	volatileItems = map[string]bool{"uname": true, "sessions": true, "nsessions": true, "nusers": true,
		"idletime": true, "totmem": true, "availmem": true, "physmem": true, "ncpus": true, "loadave": true,
		"netload": true}
	reDiagVolatile = []*regexp.Regexp{
		regexp.MustCompile(`PID: \d+`),
		regexp.MustCompile(`\d+ seconds`),
		regexp.MustCompile(`\(\d+ blocks available\)`),
		regexp.MustCompile(`\(127\.0\.0\.1:\d+\)`),
		regexp.MustCompile(`'[^']*/spool/'`),
		regexp.MustCompile(`HomeDirectory: +\S+`),
		regexp.MustCompile(`Prolog: +\S+`),
	}
)

// normalizeMomPayload decodes an IS or RM payload and blanks what must
// differ; other payloads are shown quoted.
func normalizeMomPayload(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if proto, err := momproto.Protocol(b); err == nil && proto == momproto.IS_PROTOCOL {
		if m, err := momproto.DecodeIS(b); err == nil {
			items := make([]string, len(m.Status))
			for i, s := range m.Status {
				name, _, _ := strings.Cut(s, "=")
				if volatileItems[name] {
					s = name + "=<V>"
				}
				items[i] = s
			}
			return fmt.Sprintf("IS %s %v %q", momproto.ISCommandName(m.Command), m.Addrs, items)
		}
	}
	if rep, err := momproto.DecodeRMReply(b); err == nil && rep.Code >= 100 && len(rep.Answers) > 0 {
		ans := make([]string, len(rep.Answers))
		for i, a := range rep.Answers {
			name, val, ok := strings.Cut(a, "=")
			switch {
			case strings.HasPrefix(a, "\nHost:"):
				for _, re := range reDiagVolatile {
					a = re.ReplaceAllString(a, "<V>")
				}
			case ok && (reNumber.MatchString(val) || name == "uname"):
				a = name + "=<V>"
			}
			ans[i] = a
		}
		return fmt.Sprintf("RM reply %d %q", rep.Code, ans)
	}
	return strconv.Quote(string(b))
}

// newRMClient returns a peer playing momctl: a raw socket on a reserved
// port.
func newRMClient(t *testing.T, m *momUnderTest, played uint16) *rppPeer {
	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.(*net.UDPConn)
	t.Cleanup(func() { conn.Close() })
	ch := make(chan udpPacket, 64)
	go func() {
		defer close(ch)
		buf := make([]byte, 65536)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			ch <- udpPacket{from, bytes.Clone(buf[:n]), time.Now()}
		}
	}()
	return &rppPeer{conn: conn, in: ch, played: played,
		mom: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(m.rmPort))}
}

// udpDatagrams returns the captured datagrams touching the given ports.
func udpDatagrams(c *capture.Capture, ports ...uint16) []capture.Datagram {
	var out []capture.Datagram
	for _, d := range c.Datagrams {
		for _, p := range ports {
			if d.Src.Port() == p || d.Dst.Port() == p {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// TestMomReplayRPP replays the IS stream of a server (re)start (capture
// 77), momctl -C with the status it forces (26), the periodic status (75)
// and the momctl queries (24, 25, 23) against one GoPBS pbs_mom.
func TestMomReplayRPP(t *testing.T) {
	requireCaptures(t)
	const suite = "mom-rpp"
	m := startCaptureMom(t, "$status_update_time 10\n")
	server := &rppPeer{conn: m.srvUDP, in: m.serverDatagrams, played: 15001}
	is := &rppReplay{t: t, peers: []*rppPeer{server}}

	results.run(t, suite, "77 IS hello, cluster addresses and first status", "", func(t *testing.T) string {
		is.t = t
		c := loadCapture(t, 77)
		is.play(udpDatagrams(c, 15001))
		return strings.Join(is.diffs, "\n")
	})
	if !server.mom.IsValid() {
		t.Fatal("the MOM never opened its IS stream")
	}
	// From now on the server side acknowledges every status the MOM
	// sends, whenever a scenario reads from it.
	maxSeq := uint32(1)
	var lastStatus []byte
	readIS := func(t *testing.T, timeout time.Duration) (rpp.Packet, time.Time, bool) {
		select {
		case d := <-server.in:
			p, err := rpp.Parse(d.b)
			if err != nil {
				t.Fatalf("MOM sent a bad datagram: %v", err)
			}
			if p.Type == rpp.RPP_EOD {
				ack := rpp.Packet{Type: rpp.RPP_ACK, Stream: p.Stream, Seq: p.Seq}
				server.conn.WriteToUDPAddrPort(ack.Marshal(), d.from)
				if bytes.Equal(d.b, lastStatus) || p.Seq <= maxSeq {
					return rpp.Packet{}, d.at, true // retransmission
				}
				lastStatus, maxSeq = d.b, p.Seq
			}
			return p, d.at, true
		case <-time.After(timeout):
			return rpp.Packet{}, time.Time{}, false
		}
	}
	drain := func(t *testing.T) {
		for {
			if _, _, ok := readIS(t, 0); !ok {
				return
			}
		}
	}
	nextStatus := func(t *testing.T, after time.Time) rpp.Packet {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			p, at, ok := readIS(t, time.Until(deadline))
			if ok && p.Type == rpp.RPP_EOD && at.After(after) {
				return p
			}
		}
		t.Fatal("no IS_STATUS from the MOM")
		return rpp.Packet{}
	}
	firstEOD := func(dgs []capture.Datagram) rpp.Packet {
		for _, d := range dgs {
			if p, err := rpp.Parse(d.Payload); err == nil && p.Type == rpp.RPP_EOD && d.Dst.Port() == 15001 {
				return p
			}
		}
		return rpp.Packet{}
	}
	compareStatus := func(want, got rpp.Packet) string {
		want.Seq = got.Seq
		if w, g := is.describe(want, true), is.describe(got, false); w != g {
			return fmt.Sprintf("IS_STATUS differs:\n    want %s\n    got  %s", w, g)
		}
		return ""
	}

	rmScenario := func(id int, name string, forcesStatus bool, clientPort ...uint16) {
		port := uint16(1020) // momctl's reserved port in the captures
		if len(clientPort) > 0 {
			port = clientPort[0]
		}
		results.run(t, suite, name, "", func(t *testing.T) string {
			c := loadCapture(t, id)
			client := newRMClient(t, m, port)
			r := &rppReplay{t: t, peers: []*rppPeer{client}}
			began := time.Now()
			r.play(udpDatagrams(c, port))
			if forcesStatus && len(r.diffs) == 0 {
				want := firstEOD(udpDatagrams(c, 15001))
				if d := compareStatus(want, nextStatus(t, began)); d != "" {
					r.diffs = append(r.diffs, "forced "+d)
				}
			}
			return strings.Join(r.diffs, "\n")
		})
	}
	rmScenario(26, "26 momctl -C (cycle) and the IS_STATUS it forces", true)
	results.run(t, suite, "75 periodic IS_STATUS", "", func(t *testing.T) string {
		c := loadCapture(t, 75)
		want := firstEOD(udpDatagrams(c, 15001))
		if want.Type == 0 {
			t.Skip("capture 75 has no status")
		}
		return compareStatus(want, nextStatus(t, time.Now()))
	})
	rmScenario(24, "24 momctl -q loadave", false)
	rmScenario(25, "25 momctl -q physmem ncpus arch uname", false)
	rmScenario(71, "71 pbs_sched's node query (ncpus arch physmem loadave max_load ideal_load)", false, 1021)
	// Before capture 23 the server's last request to the MOM had been a
	// DeleteJob: reproduce that history.
	killJob(t, m, "1.vm")
	deleteJob(t, m, "1.vm")
	rmScenario(23, "23 momctl -d 3", false)

	results.run(t, suite, "76 server GOODBYE (qterm): MOM acknowledges and says GOODBYE", "", func(t *testing.T) string {
		c := loadCapture(t, 76)
		var want []rpp.Packet
		for _, d := range udpDatagrams(c, 15001) {
			if p, err := rpp.Parse(d.Payload); err == nil && d.Dst.Port() == 15001 && p.Type != rpp.RPP_HELLO1 {
				want = append(want, p)
			}
		}
		if len(want) != 2 {
			t.Fatalf("capture 76: %d MOM datagrams before its new HELLO1, want ACK and GOODBYE", len(want))
		}
		time.Sleep(200 * time.Millisecond) // let the momctl streams finish closing
		drain(t)
		// The server said IS_CLUSTER_ADDRS (seq 0) only: its GOODBYE is seq 1.
		bye := rpp.Packet{Type: rpp.RPP_GOODBYE, Stream: 0, Seq: 1}
		server.conn.WriteToUDPAddrPort(bye.Marshal(), server.mom)
		var got []rpp.Packet
		deadline := time.Now().Add(10 * time.Second)
		for len(got) < 2 && time.Now().Before(deadline) {
			if p, _, ok := readIS(t, time.Until(deadline)); ok && p.Type != 0 && p.Type != rpp.RPP_EOD {
				got = append(got, p)
			}
		}
		if len(got) < 2 {
			return fmt.Sprintf("MOM answered the GOODBYE with %v", got)
		}
		want[1].Seq = maxSeq + 1 // its GOODBYE follows its last message
		var diffs []string
		for i := range want {
			if w, g := want[i].String(), got[i].String(); w != g {
				diffs = append(diffs, fmt.Sprintf("MOM datagram differs:\n    want %s\n    got  %s", w, g))
			}
		}
		ack := rpp.Packet{Type: rpp.RPP_ACK, Stream: got[1].Stream, Seq: got[1].Seq}
		server.conn.WriteToUDPAddrPort(ack.Marshal(), server.mom)
		return strings.Join(diffs, "\n")
	})
	results.run(t, suite, "77 after qterm: MOM reopens, says hello, gets cluster addresses, sends status", "", func(t *testing.T) string {
		c := loadCapture(t, 77)
		again := &rppReplay{t: t, peers: []*rppPeer{server}}
		again.play(udpDatagrams(c, 15001))
		return strings.Join(again.diffs, "\n")
	})
	results.run(t, suite, "103 MOM shutdown: GOODBYE on the IS stream, the server's GOODBYE acknowledged", "", func(t *testing.T) string {
		// The reopened stream has carried IS_HELLO (seq 0) and one
		// status (seq 1) so far.
		maxSeq = 1
		drain(t)
		if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		next := func() rpp.Packet {
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if p, _, ok := readIS(t, time.Until(deadline)); ok && p.Type != 0 && p.Type != rpp.RPP_EOD {
					return p
				}
			}
			t.Fatal("the MOM sent nothing")
			return rpp.Packet{}
		}
		var diffs []string
		check := func(want, got rpp.Packet) {
			if want.String() != got.String() {
				diffs = append(diffs, fmt.Sprintf("MOM datagram differs:\n    want %s\n    got  %s", want, got))
			}
		}
		bye := next()
		check(rpp.Packet{Type: rpp.RPP_GOODBYE, Stream: 0, Seq: maxSeq + 1}, bye)
		server.conn.WriteToUDPAddrPort(rpp.Packet{Type: rpp.RPP_ACK, Stream: 0, Seq: bye.Seq}.Marshal(), server.mom)
		server.conn.WriteToUDPAddrPort(rpp.Packet{Type: rpp.RPP_GOODBYE, Stream: 0, Seq: 1}.Marshal(), server.mom)
		check(rpp.Packet{Type: rpp.RPP_ACK, Stream: 0, Seq: 1}, next())
		return strings.Join(diffs, "\n")
	})
}
