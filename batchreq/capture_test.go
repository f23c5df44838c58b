package batchreq

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/internal/capture/capturetest"
)

// captureStats counts what the capture walk checked.
type captureStats struct {
	requests, replies int
	schedCommands     int
	byType            map[int]int
	byChoice          map[int]int
	skipped           map[string]int // reason → connections
}

// TestCaptureRoundTrip decodes every batch message of every capture and
// requires re-encoding to reproduce the captured bytes exactly.
func TestCaptureRoundTrip(t *testing.T) {
	files := capturetest.PcapFiles(t)
	st := &captureStats{byType: map[int]int{}, byChoice: map[int]int{}, skipped: map[string]int{}}
	for _, f := range files {
		c, err := capture.ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		for _, conn := range c.Conns {
			name := fmt.Sprintf("%s frame %d %v->%v", filepath.Base(f), conn.FirstFrame, conn.Client, conn.Server)
			if err := checkConn(conn, st); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	t.Logf("checked %d requests and %d replies (+%d scheduler commands) in %d captures; skipped connections: %v",
		st.requests, st.replies, st.schedCommands, len(files), st.skipped)
	t.Logf("requests by type: %v", st.byType)
	t.Logf("replies by choice: %v", st.byChoice)
	if st.requests == 0 || st.replies == 0 {
		t.Error("no batch messages found in the captures")
	}
}

// checkConn round-trips one TCP connection if it carries batch traffic.
func checkConn(conn *capture.Conn, st *captureStats) error {
	var reqs, reps []byte
	// Requests to pbs_server are read as it reads them; requests to
	// pbs_mom with the reader that knows the MOM-only types.
	readReq := ReadServerRequest
	switch conn.Server.Port() {
	case PBS_MOM_SERVICE_PORT:
		readReq = ReadRequest
		fallthrough
	case PBS_BATCH_SERVICE_PORT:
		reqs, reps = conn.Stream(true), conn.Stream(false)
	case PBS_SCHEDULER_SERVICE_PORT:
		// pbs_server connects to the scheduler, writes the 4-byte
		// command, then answers the scheduler's requests on the same
		// socket.
		reqs, reps = conn.Stream(false), conn.Stream(true)
		if len(reps) < 4 {
			st.skipped["scheduler connection without command"]++
			return nil
		}
		if _, err := ReadSchedCommand(bytes.NewReader(reps)); err != nil {
			return err
		}
		st.schedCommands++
		reps = reps[4:]
	case PBS_MANAGER_SERVICE_PORT:
		st.skipped["RM/TM port 15003"]++
		return nil
	default:
		st.skipped["not a batch port"]++
		return nil
	}
	if conn.MissingC2S != 0 || conn.MissingS2C != 0 {
		st.skipped["bytes missing from capture"]++
		return nil
	}
	reqEnds, repEnds := turnEnds(conn, reqs, reps)
	if err := walk(reqs, reqEnds, func(r *dis.Reader) (appender, error) {
		q, err := readReq(r)
		if err == nil {
			st.requests++
			st.byType[q.Type]++
		}
		return q, err
	}); err != nil {
		return fmt.Errorf("requests: %w", err)
	}
	if err := walk(reps, repEnds, func(r *dis.Reader) (appender, error) {
		p, err := ReadReply(r)
		if err == nil {
			st.replies++
			st.byChoice[p.Choice]++
		}
		return p, err
	}); err != nil {
		return fmt.Errorf("replies: %w", err)
	}
	return nil
}

type appender interface{ Append([]byte) []byte }

// turnEnds returns, for the request and the reply stream, the offsets at
// which the sender stopped and the other side spoke (or the stream
// ended). Offsets are relative to the streams checkConn walks.
func turnEnds(conn *capture.Conn, reqs, reps []byte) (reqEnds, repEnds map[int64]bool) {
	ends := [2]map[int64]bool{{}, {}} // by FromClient: 0 server, 1 client
	streamLen := [2]int64{}
	for _, tn := range conn.Turns() {
		i := 0
		if tn.FromClient {
			i = 1
		}
		end := tn.Offset + int64(len(tn.Data))
		ends[i][end] = true
		streamLen[i] = max(streamLen[i], end)
	}
	// Requests travel client to server except on the scheduler port,
	// where the reply stream also lost its 4-byte command prefix.
	if conn.Server.Port() == PBS_SCHEDULER_SERVICE_PORT {
		shifted := map[int64]bool{}
		for e := range ends[1] {
			shifted[e-4] = true
		}
		return ends[0], shifted
	}
	return ends[1], ends[0]
}

// walk decodes consecutive messages from stream and compares each one's
// re-encoding with the bytes it was decoded from. Every message must end
// where its sender's turn ends: the protocol is lock-step, so a message
// that shares a turn with the next one was pipelined. (The double reply
// of delasync and AsyModifyJob would break this; no capture has one.)
func walk(stream []byte, ends map[int64]bool, read func(*dis.Reader) (appender, error)) error {
	r := dis.NewReader(bytes.NewReader(stream))
	for n := 1; ; n++ {
		start := r.Offset()
		if start == int64(len(stream)) {
			return nil
		}
		if n > 1 && !ends[start] {
			return fmt.Errorf("message %d at offset %d starts inside a turn (pipelined)", n, start)
		}
		m, err := read(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("message %d at offset %d: truncated", n, start)
			}
			return fmt.Errorf("message %d at offset %d (%.60q): %w", n, start, stream[start:], err)
		}
		orig := stream[start:r.Offset()]
		if enc := m.Append(nil); !bytes.Equal(enc, orig) {
			return fmt.Errorf("message %d at offset %d: re-encoded\n%q\nwant\n%q", n, start, enc, orig)
		}
	}
}
