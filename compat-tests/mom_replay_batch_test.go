package compattests

// This file holds the replay of captured batch connections with the MOM:
// the server's connections to the MOM's batch port (replayBatchConn),
// the MOM's connections to the server answered from the capture
// (serveMomCall), a whole job capture in order (replayJobCapture), and
// the normalisation of the batch requests and replies compared.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
)

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
