package compattests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
	"gopbs/momproto"
	"gopbs/rpp"
)

// The MOM replay suite starts a GoPBS pbs_mom with the capture host name
// and plays both of its peers from the captures: pbs_server (the launch,
// polls, stage-out and delete connections to the batch port; the IS
// stream) and momctl (RM over RPP). Every MOM message is compared with the
// captured one after normalising the values that must differ (session
// ids, resource usage, memory sizes, load, the kernel, keys).

// momUnderTest is a GoPBS pbs_mom daemon plus the sockets that play its
// server.
type momUnderTest struct {
	home              string
	batchPort, rmPort int
	serverPort        int
	srvTCP            net.Listener
	srvUDP            *net.UDPConn
	cmd               *exec.Cmd // daemon's
	daemon            *e2e.Daemon
	ns                *captureNamespace
	serverDatagrams   chan udpPacket
}

type udpPacket struct {
	from netip.AddrPort
	b    []byte
	at   time.Time // when it was read
}

// startCaptureMom builds pbs_mom and runs it in the capture namespace
// (host name vm, /home of the capture users) with cfg as mom_priv/config
// and env (NAME=value) added to its environment.
func startCaptureMom(t *testing.T, cfg string, env ...string) *momUnderTest {
	t.Helper()
	ns := newCaptureNamespace(t)
	bin := e2e.Build(t, "pbs_mom").Path("pbs_mom")
	base := e2e.Dir(t)
	ports := e2e.FreePorts(t, 3)
	m := &momUnderTest{home: filepath.Join(base, "torque"), batchPort: ports[0], rmPort: ports[1], serverPort: ports[2],
		ns: ns, serverDatagrams: make(chan udpPacket, 256)}
	var err error
	if err := os.MkdirAll(filepath.Join(m.home, "mom_priv"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.home, "mom_priv", "config"), []byte("$pbsserver vm\n"+cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if m.srvTCP, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", m.serverPort)); err != nil {
		t.Fatal(err)
	}
	if m.srvUDP, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(m.serverPort)))); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(m.serverDatagrams)
		buf := make([]byte, 65536)
		for {
			n, from, err := m.srvUDP.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			m.serverDatagrams <- udpPacket{netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), bytes.Clone(buf[:n]), time.Now()}
		}
	}()
	args := append(append([]string(nil), env...), bin, "-D", "-d", m.home, "-M", strconv.Itoa(m.batchPort),
		"-R", strconv.Itoa(m.rmPort), "-S", strconv.Itoa(m.serverPort))
	// (cleanups run last first: this one after the daemon's stop)
	t.Cleanup(func() {
		m.srvTCP.Close()
		m.srvUDP.Close()
		if t.Failed() {
			if logs, _ := filepath.Glob(filepath.Join(m.home, "mom_logs", "*")); len(logs) > 0 {
				b, _ := os.ReadFile(logs[len(logs)-1])
				t.Logf("mom_logs:\n%s", b)
			}
		}
	})
	m.daemon = e2e.Start(t, "pbs_mom", ns.command("root", 0, 0, "/usr/bin/env", args...))
	m.cmd = m.daemon.Cmd
	m.daemon.WaitListening(t, fmt.Sprintf("127.0.0.1:%d", m.batchPort), 10*time.Second)
	return m
}

func loadCapture(t *testing.T, id int) *capture.Capture {
	t.Helper()
	dir := requireCaptures(t)
	names, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%d-*.pcap", id)))
	if len(names) != 1 {
		t.Skipf("capture %d not found", id)
	}
	c, err := capture.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// --- RPP replay -----------------------------------------------------------

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

// --- batch replay ---------------------------------------------------------

// normalizeReply decodes a batch reply and blanks session ids and usage.
func normalizeReply(b []byte) string {
	rep, err := batchreq.ReadReply(dis.NewReader(bytes.NewReader(b)))
	if err != nil {
		return fmt.Sprintf("undecodable %q: %v", b, err)
	}
	for i := range rep.Status {
		o := &rep.Status[i]
		// A first report (it carries session_id) includes resources_used
		// only if a MOM poll cycle happened to run between the launch and
		// the poll: timing, not protocol.
		if _, first := o.Attrs.Get("session_id"); first {
			o.Attrs = slices.DeleteFunc(o.Attrs, func(a batchreq.Attr) bool { return a.Name == "resources_used" })
		}
		blankValues(o.Attrs)
	}
	return strconv.Quote(string(rep.Append(nil)))
}

func blankValues(l batchreq.AttrList) {
	for j := range l {
		a := &l[j]
		if a.Name == "session_id" || a.Name == "resources_used" {
			a.Value, a.Size = "<V>", 0
		}
	}
}

// normalizeRequest does the same for a request the MOM sends.
func normalizeRequest(b []byte) string {
	req, err := batchreq.ReadRequest(dis.NewReader(bytes.NewReader(b)))
	if err != nil {
		return fmt.Sprintf("undecodable %q: %v", b, err)
	}
	if o, ok := req.Body.(*batchreq.JobObit); ok {
		blankValues(o.Attrs)
	}
	return strconv.Quote(string(req.Append(nil)))
}

// departLimitComment returns got, a MOM's request, without the comment a
// GoPBS MOM adds to the obit of a job it killed over a limit ("job killed:
// walltime 9 exceeded limit 5") when the captured request (want) has
// none, and records that deliberate difference.
func departLimitComment(t *testing.T, want, got []byte) []byte {
	req, err := batchreq.ReadRequest(dis.NewReader(bytes.NewReader(got)))
	if err != nil {
		return got
	}
	o, ok := req.Body.(*batchreq.JobObit)
	if !ok || o.ExitStatus != -10 {
		return got
	}
	if w, err := batchreq.ReadRequest(dis.NewReader(bytes.NewReader(want))); err == nil {
		if wo, ok := w.Body.(*batchreq.JobObit); ok {
			if _, has := wo.Attrs.Get("comment"); has {
				return got
			}
		}
	}
	for i, a := range o.Attrs {
		if a.Name == "comment" && strings.HasPrefix(a.Value, "job killed: ") {
			o.Attrs = append(o.Attrs[:i:i], o.Attrs[i+1:]...)
			results.depart(t, "the obit's comment "+strconv.Quote(a.Value),
				"seed 001 (Resource Limits: a job over a limit is aborted); GoPBS names the limit in the job's comment, README deliberate differences")
			return req.Append(nil)
		}
	}
	return got
}

// replayBatchConn plays the server side of one captured connection to the
// MOM's batch port from a privileged port and compares every reply.
func replayBatchConn(t *testing.T, m *momUnderTest, conn *capture.Conn) string {
	return replayBatchConnRewriting(t, m, conn, nil)
}

// replayBatchConnRewriting is replayBatchConn with each request passed
// through rewrite, when not nil, before it is sent; a request rewrite
// leaves alone (it returns false) is sent as captured.
func replayBatchConnRewriting(t *testing.T, m *momUnderTest, conn *capture.Conn, rewrite func(*batchreq.Request) bool) string {
	c := m.batchConn(t, 20*time.Second).NetConn()
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var got bytes.Buffer
	r := dis.NewReader(bufio.NewReader(io.TeeReader(c, &got)))
	var diffs []string
	for _, turn := range conn.Turns() {
		if turn.FromClient {
			if _, err := c.Write(rewriteRequests(turn.Data, rewrite)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got.Reset()
		if _, err := batchreq.ReadReply(r); err != nil {
			return fmt.Sprintf("no reply to the request before offset %d: %v", turn.Offset, err)
		}
		if w, g := normalizeReply(turn.Data), normalizeReply(got.Bytes()); w != g {
			diffs = append(diffs, fmt.Sprintf("reply differs:\n    want %s\n    got  %s", w, g))
		}
	}
	return strings.Join(diffs, "\n")
}

// rewriteRequests passes the requests data holds through rewrite and
// returns them encoded again if rewrite changed one, else data as it is
// (also when rewrite is nil or data is not whole requests).
func rewriteRequests(data []byte, rewrite func(*batchreq.Request) bool) []byte {
	if rewrite == nil {
		return data
	}
	in := dis.NewReader(bytes.NewReader(data))
	var reqs []*batchreq.Request
	changed := false
	for {
		req, err := batchreq.ReadRequest(in)
		if errors.Is(err, io.EOF) && len(reqs) > 0 {
			break
		}
		if err != nil {
			return data
		}
		changed = rewrite(req) || changed
		reqs = append(reqs, req)
	}
	if !changed {
		return data
	}
	var out []byte
	for _, req := range reqs {
		out = req.Append(out)
	}
	return out
}

// serveMomCall accepts the MOM's next connection to the server port,
// compares its request with the captured one, answers with the captured
// reply and checks that the MOM closes without Disconnect.
func serveMomCall(t *testing.T, m *momUnderTest, conn *capture.Conn, exact bool) string {
	m.srvTCP.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	c, err := m.srvTCP.Accept()
	if err != nil {
		return "the MOM did not connect to the server: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var diffs []string
	if p := c.RemoteAddr().(*net.TCPAddr).Port; p >= 1024 {
		diffs = append(diffs, fmt.Sprintf("MOM connected from port %d, not a privileged port", p))
	}
	want := conn.Stream(true)
	var got bytes.Buffer
	r := dis.NewReader(bufio.NewReader(io.TeeReader(c, &got)))
	if _, err := batchreq.ReadRequest(r); err != nil {
		return "reading the MOM's request: " + err.Error()
	}
	if exact {
		if !bytes.Equal(want, got.Bytes()) {
			diffs = append(diffs, fmt.Sprintf("request differs:\n    want %q\n    got  %q", want, got.Bytes()))
		}
	} else if w, g := normalizeRequest(want), normalizeRequest(departLimitComment(t, want, got.Bytes())); w != g {
		diffs = append(diffs, fmt.Sprintf("request differs:\n    want %s\n    got  %s", w, g))
	}
	if _, err := c.Write(conn.Stream(false)); err != nil {
		t.Fatal(err)
	}
	got.Reset()
	if n, err := c.Read(make([]byte, 64)); n != 0 || err != io.EOF {
		diffs = append(diffs, fmt.Sprintf("after the reply the MOM sent %d more bytes (%v) instead of closing", n, err))
	}
	return strings.Join(diffs, "\n")
}

// momConns returns the captured connections to or from the MOM and
// server daemons, in order.
func momConns(c *capture.Capture, port uint16) []*capture.Conn {
	var out []*capture.Conn
	for _, conn := range c.Conns {
		if conn.Server.Port() == port {
			out = append(out, conn)
		}
	}
	return out
}

// TestMomReplayJobs replays the job launch, the status polls and the end
// of job of captures 73 (full lifecycle, with the MOM's pre-obit and
// obit answered from the capture) and 35 (qrun of a long job).
func TestMomReplayJobs(t *testing.T) {
	requireCaptures(t)
	const suite = "mom-jobs"
	m := startCaptureMom(t, "$check_poll_time 1\n")
	uid, gid := ensureUser(t, "alice")
	m.ns.home(t, "alice", uid, gid)

	results.run(t, suite, "73 launch, poll, pre-obit, obit, stage-out and delete", "", func(t *testing.T) string {
		c := loadCapture(t, 73)
		toMom := momConns(c, 15002)
		var toServer []*capture.Conn
		for _, conn := range momConns(c, 15001) {
			if conn.Client.Port() == 970 { // the MOM's privileged port in the capture
				toServer = append(toServer, conn)
			}
		}
		if len(toMom) != 3 || len(toServer) != 2 {
			t.Fatalf("capture 73: %d connections to the MOM, %d from it", len(toMom), len(toServer))
		}
		var diffs []string
		add := func(what, d string) {
			if d != "" {
				diffs = append(diffs, what+": "+d)
			}
		}
		add("launch", replayBatchConn(t, m, toMom[0]))
		add("status poll", replayBatchConn(t, m, toMom[1]))
		add("pre-obit", serveMomCall(t, m, toServer[0], true))
		add("obit", serveMomCall(t, m, toServer[1], false))
		add("stage-out and delete", replayBatchConn(t, m, toMom[2]))
		if b, err := os.ReadFile(filepath.Join(m.ns.homes, "alice", "lifecycle.o13")); err != nil {
			add("output", "not delivered to /home/alice/lifecycle.o13: "+err.Error())
		} else {
			t.Logf("delivered stdout: %q", b)
		}
		return strings.Join(diffs, "\n")
	})

	results.run(t, suite, "35 qrun launch and first status poll", "", func(t *testing.T) string {
		c := loadCapture(t, 35)
		toMom := momConns(c, 15002)
		if len(toMom) != 2 {
			t.Fatalf("capture 35: %d connections to the MOM", len(toMom))
		}
		d := replayBatchConn(t, m, toMom[0])
		if d2 := replayBatchConn(t, m, toMom[1]); d2 != "" {
			d += "\n" + d2
		}
		return strings.TrimSpace(d)
	})
	// Job 9.vm of capture 35 is running now: the requests that reached it.
	results.run(t, suite, "57 qmsg to the running job", "", func(t *testing.T) string {
		return replayJobCapture(t, m, loadCapture(t, 57))
	})
	results.run(t, suite, "58 qsig SIGUSR1: the job dies, obit 266, stage-out and delete", "", func(t *testing.T) string {
		return replayJobCapture(t, m, loadCapture(t, 58))
	})
	killJob(t, m, "9.vm") // in case 58 did not end it

	// The launch of job 36.vm is not in the captures: launch 35's job
	// under that id, then replay suspend and resume.
	results.run(t, suite, "99 qsig suspend, 100 qsig resume of a running job", "", func(t *testing.T) string {
		launchAs(t, m, momConns(loadCapture(t, 35), 15002)[0], "9.vm", "36.vm")
		d := replayJobCapture(t, m, loadCapture(t, 99))
		if d2 := replayJobCapture(t, m, loadCapture(t, 100)); d2 != "" {
			d += "\n" + d2
		}
		killJob(t, m, "36.vm")
		dismissJob(t, m)
		return strings.TrimSpace(d)
	})

	results.run(t, suite, "62 qdel of a running job: SIGTERM, obit 271, stage-out and delete", "", func(t *testing.T) string {
		launchAs(t, m, momConns(loadCapture(t, 35), 15002)[0], "9.vm", "10.vm")
		return replayJobCapture(t, m, loadCapture(t, 62))
	})

	// Whole lifecycles, each launched and finished within its capture.
	for _, sc := range []struct {
		id   int
		name string
	}{
		{89, "89 job run (keep_completed)"},
		{94, "94 stage-in before the launch, stage-out and stage-in deletion after"},
		{95, "95 job with account and walltime"},
		{96, "96 walltime exceeded: killed, obit -10"},
		{84, "84 two jobs one after the other (afterany dependency)"},
		{85, "85 a job exiting 3, then its dependant"},
		{86, "86 two jobs, the second exiting 3 (beforeany)"},
		{88, "88 job of a sync-count test"},
	} {
		results.run(t, suite, sc.name, "", func(t *testing.T) string {
			c := loadCapture(t, sc.id)
			if sc.id == 94 {
				return replayStagingCapture(t, m, c, uid, gid)
			}
			return replayJobCapture(t, m, c)
		})
	}
}

// replayJobCapture replays, in capture order, every connection the server
// opened to the MOM's batch port and answers every connection the MOM
// opened to the server (pre-obit StatusJob compared exactly, JobObit
// normalised) with the captured replies. A job the capture's server
// polled while it ran is held until that poll is answered (holdPolledJobs).
func replayJobCapture(t *testing.T, m *momUnderTest, c *capture.Capture) string {
	holds := holdPolledJobs(t, c, m.ns.homes, "/home")
	var diffs []string
	for _, conn := range c.Conns {
		var d, what string
		switch {
		case conn.Server.Port() == 15002:
			what = "connection from the server at frame " + strconv.Itoa(conn.FirstFrame)
			d = replayBatchConnRewriting(t, m, conn, holds.rewrite)
			if err := holds.played(conn); err != nil {
				d = strings.TrimSpace(d + "\n" + err.Error())
			}
		case conn.Server.Port() == 15001 && conn.Client.Port() < 1024 && bytes.Contains(conn.Stream(true), []byte("+7pbs_mom")):
			req, err := batchreq.ReadRequest(dis.NewReader(bytes.NewReader(conn.Stream(true))))
			if err != nil {
				t.Fatalf("captured MOM request: %v", err)
			}
			what = batchreq.RequestName(req.Type) + " from the MOM"
			d = serveMomCall(t, m, conn, req.Type == batchreq.PBS_BATCH_StatusJob)
		default:
			continue
		}
		if d != "" {
			diffs = append(diffs, what+": "+d)
		}
	}
	return strings.Join(diffs, "\n")
}

// batchConn connects to the MOM's batch port from a reserved port, as
// the server does; the test fails when the MOM does not accept within
// limit, which also bounds each exchange.
func (m *momUnderTest) batchConn(t *testing.T, limit time.Duration) *batchconn.Conn {
	t.Helper()
	c := batchconn.DialReserved(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(m.batchPort)), limit)
	c.Timeout = limit
	return c
}

// killJob ends a replayed job that would otherwise run on, whatever the
// MOM answers.
func killJob(t *testing.T, m *momUnderTest, id string) {
	c := m.batchConn(t, 10*time.Second)
	defer c.Close()
	c.Try(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "PBS_Server", &batchreq.SignalJob{JobID: id, Signal: "SIGKILL"}))
}

// launchAs replays a captured launch connection with the job id from
// replaced by to (in the requests and the hashname), without comparing
// the replies beyond requiring success, and then polls the job as the
// server does right after a launch.
func launchAs(t *testing.T, m *momUnderTest, conn *capture.Conn, from, to string) {
	t.Helper()
	launchRewritten(t, m, conn, func(req *batchreq.Request) {
		switch b := req.Body.(type) {
		case *batchreq.QueueJob:
			b.JobID = to
			for i := range b.Attrs {
				if b.Attrs[i].Value == from {
					b.Attrs[i].Value, b.Attrs[i].Size = to, 0
				}
			}
		case *batchreq.JobFile:
			b.JobID = to
		case *batchreq.JobID:
			b.ID = to
		}
	})
	// The server's poll right after the launch, which learns session_id.
	p := m.batchConn(t, 20*time.Second)
	defer p.Close()
	p.Must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "PBS_Server", &batchreq.StatusReq{ID: to}))
}

// launchRewritten replays a captured launch connection (QueueJob to
// Commit, then Disconnect) to the MOM with each request passed through
// rewrite first, without comparing the replies beyond requiring success.
func launchRewritten(t *testing.T, m *momUnderTest, conn *capture.Conn, rewrite func(*batchreq.Request)) {
	t.Helper()
	c := m.batchConn(t, 20*time.Second)
	defer c.Close()
	in := dis.NewReader(bytes.NewReader(conn.Stream(true)))
	committed := false
	for {
		req, err := batchreq.ReadRequest(in)
		if err != nil {
			if committed {
				return
			}
			t.Fatalf("captured launch: %v", err)
		}
		rewrite(req)
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			if _, err := c.NetConn().Write(req.Append(nil)); err != nil {
				t.Fatal(err)
			}
			return
		}
		c.Must(req)
		committed = req.Type == batchreq.PBS_BATCH_Commit
	}
}

// dismissJob answers the MOM's pre-obit for a killed job with
// PBSE_UNKJOBID, so that it forgets the job without an obit.
func dismissJob(t *testing.T, m *momUnderTest) {
	t.Helper()
	m.srvTCP.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
	c, err := m.srvTCP.Accept()
	if err != nil {
		t.Fatalf("no pre-obit from the MOM: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := batchreq.ReadRequest(dis.NewReader(bufio.NewReader(c))); err != nil {
		t.Fatal(err)
	}
	c.Write(batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "").Append(nil))
}

// deleteJob sends a DeleteJob from the server, whatever its outcome.
func deleteJob(t *testing.T, m *momUnderTest, id string) {
	c := m.batchConn(t, 10*time.Second)
	defer c.Close()
	c.Try(batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "PBS_Server", &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}))
}

// replayStagingCapture replays capture 94: a stage-in (CopyFiles before
// the job), the launch, the first poll, the pre-obit and obit, then the
// stage-out, the deletion of the staged-in file and DeleteJob; and
// checks what the job made of the staged-in file.
func replayStagingCapture(t *testing.T, m *momUnderTest, c *capture.Capture, uid, gid int) string {
	// The stage-in source of the capture, owned by alice.
	home := filepath.Join(m.ns.homes, "alice")
	in := filepath.Join(home, "in.txt")
	if err := os.WriteFile(in, []byte("staged in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(in, uid, gid); err != nil {
		t.Fatal(err)
	}
	d := replayJobCapture(t, m, c)
	// The job wrote the staged-in text upper-cased to out.txt in its
	// home, which the stage-out left in place (same path).
	if b, err := os.ReadFile(filepath.Join(home, "out.txt")); err != nil || string(b) != "STAGED IN\n" {
		d = strings.TrimSpace(fmt.Sprintf("%s\nthe job's out.txt holds %q (%v), want %q", d, b, err, "STAGED IN\n"))
	}
	return d
}
