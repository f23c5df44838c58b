package compattests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/capture"
	"gopbs/momproto"
	"gopbs/rpp"
)

// The multi-node suite replays the MOM ↔ MOM (IM over RPP) and task ↔ MOM
// (TM over TCP) traffic of captures 105 and 106 against a GoPBS pbs_mom
// running as host vm:
//
//   - as the sister of capture 105 (vm2 was mother superior there): the
//     captured IM_JOIN_JOB, IM_SPAWN_TASK, IM_OBIT_TASK and IM_KILL_JOB are
//     sent from a reserved port and every IM_ALL_OKAY must equal the
//     captured one; the spawned task's output ("vm\n") must reach the
//     mother superior's stdout port given in IM_JOIN_JOB;
//   - as the mother superior of capture 106: pbsdsh's captured TM
//     connections (TM_INIT, TM_SPAWN ×2, TM_OBIT ×2) are replayed and every
//     TM reply must equal the captured one.

// imMessages returns the RPP messages sent from one endpoint to another,
// in capture order.
func imMessages(t *testing.T, c *capture.Capture, from, to netip.AddrPort) [][]byte {
	t.Helper()
	var a rpp.Assembler
	var out [][]byte
	for _, d := range c.Datagrams {
		if d.Src != from || d.Dst != to {
			continue
		}
		p, err := rpp.Parse(d.Payload)
		if err != nil {
			t.Fatalf("frame %d: %v", d.Frame, err)
		}
		if r := a.Add(d.Src, d.Dst, p); r.Message != nil && !r.Retransmit {
			out = append(out, r.Message.Data)
		}
	}
	return out
}

// TestMomMultiNode replays captures 105 and 106.
func TestMomMultiNode(t *testing.T) {
	requireCaptures(t)
	const suite = "mom-multinode"
	// The MOM binds 127.0.0.1 only, so that the sister of the 106
	// scenario can have the same RM port on 127.0.0.2.
	m := startCaptureMom(t, "$check_poll_time 1\n", "GOPBS_MOM_ADDR=127.0.0.1")
	uid, gid := ensureUser(t, "alice")
	m.ns.home(t, "alice", uid, gid)

	results.run(t, suite, "105 sister: IM_JOIN_JOB, IM_SPAWN_TASK, IM_OBIT_TASK, IM_KILL_JOB answered IM_ALL_OKAY", "", func(t *testing.T) string {
		return replaySister(t, m, loadCapture(t, 105))
	})
	results.run(t, suite, "106 mother superior: pbsdsh's TM_INIT, TM_SPAWN, TM_OBIT", "", func(t *testing.T) string {
		return replayTM(t, m, loadCapture(t, 106))
	})
	results.run(t, suite, "106 mother superior: IM_JOIN_JOB, IM_SPAWN_TASK, IM_OBIT_TASK, IM_KILL_JOB to the sister vm2", "", func(t *testing.T) string {
		return replayMotherSuperior(t, m, loadCapture(t, 106))
	})
}

// capturedCookie returns the job cookie of the first TM request of c.
func capturedCookie(t *testing.T, c *capture.Capture) string {
	for _, conn := range c.Conns {
		if conn.Server.Port() == 15003 && bytes.HasPrefix(conn.Stream(true), []byte("+2+1")) {
			if req, _, err := momproto.DecodeTMRequest(conn.Stream(true)); err == nil {
				return req.Cookie
			}
		}
	}
	t.Fatal("no TM request in the capture")
	return ""
}

// normalIM re-encodes an IM request from a mother superior with the values
// that must differ between runs fixed: the event of the MOM's own requests
// (JOIN, KILL: a counter of the whole MOM, which had counted earlier jobs
// in the capture), the output ports and mtime of IM_JOIN_JOB, and the
// sister's name (the replay's sister is 127.0.0.2, the capture's vm2).
func normalIM(t *testing.T, b []byte) string {
	msg := mustIM(t, b)
	switch msg.Command {
	case momproto.IM_JOIN_JOB:
		msg.Event = 0
		jb := msg.Body.(*momproto.IMJoinJob)
		jb.StdoutPort, jb.StderrPort = 0, 0
		for i := range jb.Attrs {
			a := &jb.Attrs[i]
			a.Size = 0
			switch a.Name {
			case "exec_host":
				a.Value = strings.ReplaceAll(a.Value, "127.0.0.2", "vm2")
			case "mtime":
				a.Value = "<mtime>"
			}
		}
	case momproto.IM_KILL_JOB:
		msg.Event = 0
	}
	return string(msg.Append(nil))
}

// replayMotherSuperior launches capture 106's job (vm mother superior,
// vm2 sister) and plays the sister: every IM request of the MOM must equal
// the captured one (normalised) and gets the captured reply; pbsdsh's TM
// connections are replayed as in the TM scenario, which makes the MOM
// relay the spawn and obit of the task on vm2.
func replayMotherSuperior(t *testing.T, m *momUnderTest, c *capture.Capture) string {
	msAddr := netip.MustParseAddrPort("10.250.0.1:1022")
	sisterAddr := netip.MustParseAddrPort("10.250.0.2:15003")
	reqs, reps := imMessages(t, c, msAddr, sisterAddr), imMessages(t, c, sisterAddr, msAddr)
	if len(reqs) != 4 || len(reps) != 4 {
		t.Fatalf("capture 106: %d IM requests, %d replies; want 4 and 4", len(reqs), len(reps))
	}
	pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.2:%d", m.rmPort))
	if err != nil {
		t.Skipf("the sister's address: %v", err)
	}
	ep := rpp.NewEndpoint(pc, nil)
	defer ep.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	// The sister: each request is recorded and answered with the
	// captured reply (event as in the request); the spawned task's
	// output goes to the mother superior's stdout port ("vm2\n").
	got := make(chan []byte, 8)
	sisterDone := make(chan error, 1)
	go func() {
		s, err := ep.Accept(ctx)
		if err != nil {
			sisterDone <- err
			return
		}
		defer s.Close()
		var outPort, errPort int
		for i := 0; i < len(reqs); {
			b, err := s.Recv(ctx)
			if err != nil {
				sisterDone <- fmt.Errorf("request %d: %w", i+1, err)
				return
			}
			req, err := momproto.DecodeIM(b, nil)
			if err != nil {
				sisterDone <- err
				return
			}
			if req.Command == momproto.IM_POLL_JOB {
				// A usage poll ($check_poll_time), not in the capture.
				rep := &momproto.IMMessage{IMHeader: req.IMHeader, Body: &momproto.IMUsage{HasExiting: true}}
				rep.Command = momproto.IM_ALL_OKAY
				s.Send(rep.Append(nil))
				continue
			}
			got <- b
			switch body := req.Body.(type) {
			case *momproto.IMJoinJob:
				outPort, errPort = body.StdoutPort, body.StderrPort
			case *momproto.IMSpawnTask:
				for port, text := range map[int]string{outPort: "vm2\n", errPort: ""} {
					if oc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
						oc.Write([]byte(text))
						oc.Close()
					}
				}
			}
			cmd := req.Command
			rep, err := momproto.DecodeIM(reps[i], func(*momproto.IMHeader) int { return cmd })
			if err != nil {
				sisterDone <- fmt.Errorf("captured reply %d: %w", i+1, err)
				return
			}
			rep.Event = req.Event
			if err := s.Send(rep.Append(nil)); err != nil {
				sisterDone <- err
				return
			}
			i++
		}
		sisterDone <- nil
	}()

	cookie := capturedCookie(t, c)
	spool := filepath.Join(m.home, "spool", "41.vm.OU")
	os.Remove(spool) // left by the TM scenario's run of the same job
	launchRewritten(t, m, momConns(c, 15002)[0], sleepingLaunch("vm/0+127.0.0.2/0", cookie))
	diffs := replayTMConns(t, m, c)
	// The local task's and the sister's output are in the job's stdout.
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := os.ReadFile(spool)
		if strings.Contains(string(out), "vm\n") && strings.Contains(string(out), "vm2\n") || time.Now().After(deadline) {
			if len(out) != len("vm\nvm2\n") {
				diffs = append(diffs, fmt.Sprintf("job stdout %q, want the local task's \"vm\\n\" and the sister's \"vm2\\n\"", out))
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	killJob(t, m, "41.vm") // the end of the job: IM_KILL_JOB to the sister
	if err := <-sisterDone; err != nil {
		diffs = append(diffs, "sister: "+err.Error())
	}
	dismissJob(t, m)
	momForgets(t, m, "41.vm")
	close(got)
	i := 0
	for b := range got {
		if w, g := normalIM(t, reqs[i]), normalIM(t, b); w != g {
			diffs = append(diffs, fmt.Sprintf("%s:\n got %q\nwant %q", momproto.IMCommandName(mustIM(t, b).Command), g, w))
		}
		i++
	}
	if i != len(reqs) {
		diffs = append(diffs, fmt.Sprintf("%d IM requests, want %d", i, len(reqs)))
	}
	return strings.Join(diffs, "\n")
}

// replaySister plays the mother superior of capture 105 against the MOM.
func replaySister(t *testing.T, m *momUnderTest, c *capture.Capture) string {
	ms := netip.MustParseAddrPort("10.250.0.2:1023")
	sister := netip.MustParseAddrPort("10.250.0.1:15003")
	reqs, reps := imMessages(t, c, ms, sister), imMessages(t, c, sister, ms)
	if len(reqs) != 4 || len(reps) != 4 {
		t.Fatalf("capture 105: %d IM requests, %d replies; want 4 and 4", len(reqs), len(reps))
	}
	// The output ports of the mother superior: listeners of the test.
	var outputs [2]chan string
	var ports [2]int
	for i := range outputs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		outputs[i] = make(chan string, 1)
		go func() {
			ln.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
			c, err := ln.Accept()
			if err != nil {
				outputs[i] <- "(no connection: " + err.Error() + ")"
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			b, _ := io.ReadAll(c)
			outputs[i] <- string(b)
		}()
	}
	join, err := momproto.DecodeIM(reqs[0], nil)
	if err != nil {
		t.Fatalf("captured IM_JOIN_JOB: %v", err)
	}
	jb := join.Body.(*momproto.IMJoinJob)
	jb.StdoutPort, jb.StderrPort = ports[0], ports[1]
	reqs[0] = join.Append(nil)

	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, nil)
	defer ep.Close()
	s, err := ep.Open(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(m.rmPort)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var diffs []string
	for i, req := range reqs {
		what := "reply to " + momproto.IMCommandName(mustIM(t, req).Command)
		if err := s.Send(req); err != nil {
			t.Fatal(err)
		}
		got, err := s.Recv(ctx)
		if err != nil {
			diffs = append(diffs, what+": none: "+err.Error())
			break
		}
		want := reps[i]
		if mustIM(t, req).Command == momproto.IM_KILL_JOB {
			// The sister's usage differs from run to run.
			got, want = zeroIMUsage(t, got), zeroIMUsage(t, want)
		}
		if !bytes.Equal(got, want) {
			diffs = append(diffs, fmt.Sprintf("%s:\n got %q\nwant %q", what, got, want))
		}
		if i == 1 {
			// The task ran: its output reached the stdout port (capture
			// 105: "vm\n" from the sister to the demultiplexer); stderr
			// stayed empty.
			if out := <-outputs[0]; out != "vm\n" {
				diffs = append(diffs, fmt.Sprintf("task stdout at the mother superior's port: %q, want %q", out, "vm\n"))
			}
			if out := <-outputs[1]; out != "" {
				diffs = append(diffs, fmt.Sprintf("task stderr: %q, want nothing", out))
			}
		}
	}
	s.Close()
	// The sister's log lines for the job are the captured MOM's
	// (logs/round2-mom_logs.txt: vm was the sister of 39.vm).
	if d := sisterLogDiff(t, m, "39.vm"); d != "" {
		diffs = append(diffs, d)
	}
	// The sister has forgotten the job: another IM_KILL_JOB is refused.
	s2, err := ep.Open(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(m.rmPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.Send(reqs[3])
	if b, err := s2.Recv(ctx); err != nil || mustIM(t, b).Command != momproto.IM_ERROR {
		diffs = append(diffs, fmt.Sprintf("IM_KILL_JOB after the end of the job: %q %v, want IM_ERROR", b, err))
	}
	return strings.Join(diffs, "\n")
}

func mustIM(t *testing.T, b []byte) *momproto.IMMessage {
	t.Helper()
	msg, err := momproto.DecodeIM(b, func(*momproto.IMHeader) int { return momproto.IM_KILL_JOB })
	if err != nil {
		t.Fatalf("IM message %q: %v", b, err)
	}
	return msg
}

// zeroIMUsage re-encodes an IM_KILL_JOB reply with zero usage.
func zeroIMUsage(t *testing.T, b []byte) []byte {
	msg := mustIM(t, b)
	if u, ok := msg.Body.(*momproto.IMUsage); ok {
		u.CPUT, u.Mem, u.Vmem = 0, 0, 0
	}
	return msg.Append(nil)
}

// replayTM launches capture 106's job and replays pbsdsh's TM connections.
func replayTM(t *testing.T, m *momUnderTest, c *capture.Capture) string {
	launches := momConns(c, 15002)
	if len(launches) == 0 {
		t.Fatal("capture 106: no launch connection")
	}
	// Changes to the captured launch: the job's two virtual nodes are
	// both on this host (the capture's second one, vm2, was a sister: its
	// part is the 105 scenario); the job brings the cookie the captured
	// MOM made up (TORQUE's server sent none), which pbsdsh's requests
	// carry; the script only sleeps (the capture's ran pbsdsh, whose TM
	// traffic is replayed here instead).
	cookie := capturedCookie(t, c)
	launchRewritten(t, m, launches[0], sleepingLaunch("vm/0+vm/1", cookie))
	defer func() {
		killJob(t, m, "41.vm")
		dismissJob(t, m)
		momForgets(t, m, "41.vm")
	}()
	diffs := replayTMConns(t, m, c)
	// Both tasks ran hostname; their output is in the job's stdout.
	out, _ := os.ReadFile(filepath.Join(m.home, "spool", "41.vm.OU"))
	if string(out) != "vm\nvm\n" {
		diffs = append(diffs, fmt.Sprintf("job stdout %q, want the two tasks' \"vm\\n\"", out))
	}
	return strings.Join(diffs, "\n")
}

// replayTMConns replays capture c's TM connections (to port 15003, DIS
// from the start) to the MOM and returns their differences.
func replayTMConns(t *testing.T, m *momUnderTest, c *capture.Capture) []string {
	var diffs []string
	for _, conn := range c.Conns {
		if conn.Server.Port() != 15003 || !bytes.HasPrefix(conn.Stream(true), []byte("+2+1")) {
			continue
		}
		if d := replayTMConn(t, m, conn); d != "" {
			diffs = append(diffs, fmt.Sprintf("TM connection at frame %d: %s", conn.FirstFrame, d))
		}
	}
	return diffs
}

// replayTMConn sends a captured TM connection's requests and compares the
// replies, by event (the order of replies to different requests depends
// on when tasks end).
func replayTMConn(t *testing.T, m *momUnderTest, conn *capture.Conn) string {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", m.rmPort))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(conn.Stream(true)); err != nil {
		t.Fatal(err)
	}
	want := conn.Stream(false)
	got := make([]byte, 0, len(want))
	buf := make([]byte, 4096)
	for len(got) < len(want) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	var tr momproto.TMTracker
	for b := conn.Stream(true); len(b) > 0; {
		_, n, err := tr.DecodeRequest(b)
		if err != nil {
			t.Fatalf("captured TM request: %v", err)
		}
		b = b[n:]
	}
	split := func(b []byte) (map[int]string, error) {
		out := map[int]string{}
		for len(b) > 0 {
			rep, n, err := tr.DecodeReply(b)
			if err != nil {
				return out, err
			}
			out[rep.Event] = string(b[:n])
			b = b[n:]
		}
		return out, nil
	}
	wantBy, err := split(want)
	if err != nil {
		t.Fatalf("captured TM replies: %v", err)
	}
	gotBy, err := split(got)
	if err != nil {
		return fmt.Sprintf("replies %q: %v", got, err)
	}
	var events []int
	for e := range wantBy {
		events = append(events, e)
	}
	sort.Ints(events)
	var diffs []string
	for _, e := range events {
		if gotBy[e] != wantBy[e] {
			diffs = append(diffs, fmt.Sprintf("event %d: got %q, want %q", e, gotBy[e], wantBy[e]))
		}
	}
	if len(gotBy) != len(wantBy) {
		diffs = append(diffs, fmt.Sprintf("%d replies, want %d", len(gotBy), len(wantBy)))
	}
	return strings.Join(diffs, "; ")
}

// sleepingLaunch returns the rewrite of a captured multi-node launch
// that runs the job on the virtual nodes of execHost with the given
// cookie and a script that only sleeps.
func sleepingLaunch(execHost, cookie string) func(*batchreq.Request) {
	return func(req *batchreq.Request) {
		switch b := req.Body.(type) {
		case *batchreq.QueueJob:
			for i := range b.Attrs {
				if b.Attrs[i].Name == "exec_host" {
					b.Attrs[i].Value, b.Attrs[i].Size = execHost, 0
				}
			}
			b.Attrs = append(b.Attrs, batchreq.NewAttr("cookie", cookie))
		case *batchreq.JobFile:
			b.Data = []byte("#!/bin/sh\nsleep 30\n")
		}
	}
}

// momForgets waits until the MOM answers a StatusJob for id with
// PBSE_UNKJOBID: the job is purged, its id free for the next scenario.
func momForgets(t *testing.T, m *momUnderTest, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c := m.batchConn(t, 5*time.Second)
		rep, err := c.Try(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "PBS_Server", &batchreq.StatusReq{ID: id}))
		c.Close()
		if err == nil && rep.Code == batchreq.PBSE_UNKJOBID {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the MOM still has job %s", id)
}

// logLineNorm rewrites what differs between two MOM logs of one job: the
// time stamp and session ids.
var logLineNorm = (&normalizer{}).
	add(`^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;`, "<TIME>;").
	add(`sid( |=)\d+`, "sid$1<SID>")

// sisterLogDiff compares the MOM's log lines about job id with those of
// the captured MOM.
func sisterLogDiff(t *testing.T, m *momUnderTest, id string) string {
	dir := requireCaptures(t)
	want := jobLogLines(t, filepath.Join(dir, "logs", "round2-mom_logs.txt"), id)
	if len(want) != 3 {
		t.Fatalf("captured log: %d lines of %s, want 3", len(want), id)
	}
	logs, _ := filepath.Glob(filepath.Join(m.home, "mom_logs", "*"))
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for len(logs) > 0 {
		got = jobLogLines(t, logs[len(logs)-1], id)
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := textDiff("sister log of "+id, strings.Join(want, "\n"), strings.Join(got, "\n")); d != "" {
		return d
	}
	return ""
}

// jobLogLines returns the normalised lines of a log file whose object is
// the job id.
func jobLogLines(t *testing.T, file, id string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, ";"+id+";") {
			out = append(out, logLineNorm.apply(line))
		}
	}
	return out
}
