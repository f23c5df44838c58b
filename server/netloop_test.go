package server

import (
	"bytes"
	"net"
	"runtime"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/server/store"
)

// connModes are the two ways a server serves its connections: the event
// loop (Linux) and a goroutine per connection (elsewhere, and the
// fallback). Each test below runs in both.
var connModes = []struct {
	name      string
	goroutine bool
}{
	{"loop", false},
	{"goroutine", true},
}

// modeServer starts a server on loopback in the given mode; tweak may
// change its configuration.
func modeServer(t *testing.T, goroutine bool, tweak func(*Config)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Home: t.TempDir(), ServerName: "vm", InitType: InitCreate, Listener: ln,
		AuthWait: 2 * time.Second, RequestTimeout: 500 * time.Millisecond, GoroutinePerConn: goroutine}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	return s
}

// usesLoop reports whether s serves its connections on the event loop.
func usesLoop(s *Server) bool { return s.tr.EventLoop() }

// TestConnModeServesSubmissions: the server runs the mode it was asked
// for, and a submission's Commit is answered only once the job is in the
// store (durable).
func TestConnModeServesSubmissions(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			s := modeServer(t, m.goroutine, nil)
			root := dialPrivileged(t, s.Addr())
			setupCluster(t, root)
			if want := !m.goroutine && runtime.GOOS == "linux"; usesLoop(s) != want {
				t.Fatalf("event loop in use: %v, want %v", usesLoop(s), want)
			}
			for i := 0; i < 20; i++ {
				id := mustSubmit(t, root, "root")
				v, err := s.store.Get(store.Jobs, id)
				if err != nil || v == nil {
					t.Fatalf("job %s acknowledged but not in the store: %v", id, err)
				}
			}
			// An authenticated unprivileged client, as qsub with pbs_iff.
			c := dialUser(t, s.Addr())
			authenticate(t, s, c, "alice")
			if p := submitAs(t, c, "alice", ""); p.Code != 0 {
				t.Fatalf("alice's submission: %d %q", p.Code, p.Text)
			}
		})
	}
}

// TestConnModeSplitAndPipelinedRequests: requests arriving in pieces are
// served once complete; requests sent back to back, including ones the
// loop hands to a goroutine, are all answered in order.
func TestConnModeSplitAndPipelinedRequests(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			s := modeServer(t, m.goroutine, nil)
			root := dialPrivileged(t, s.Addr())
			setupCluster(t, root)
			// A submission whose every request comes in two pieces.
			c := dialPrivileged(t, s.Addr())
			qj := batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: batchreq.AttrList{attr("Job_Name", "split")}})
			p := splitDo(t, c, qj.Append(nil))
			if p.Code != 0 {
				t.Fatalf("QueueJob: %d %q", p.Code, p.Text)
			}
			id := p.JobID
			for _, r := range []*batchreq.Request{
				batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{Data: bytes.Repeat([]byte("#\n"), 30000)}),
				batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
				batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
			} {
				if p := splitDo(t, c, r.Append(nil)); p.Code != 0 {
					t.Fatalf("%s: %d %q", batchreq.RequestName(r.Type), p.Code, p.Text)
				}
			}
			if st := statusAttr(t, c, id, "job_state"); st != "Q" {
				t.Fatalf("job %s: state %q", id, st)
			}
			// Back to back: a submission's first request, two statuses
			// (served off the loop) and the rest of the submission.
			var b []byte
			b = batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: batchreq.AttrList{attr("Job_Name", "piped")}}).Append(b)
			b = statusSvr("root").Append(b)
			b = batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}).Append(b)
			c.nc.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.nc.Write(b); err != nil {
				t.Fatal(err)
			}
			want := []int{batchreq.BATCH_REPLY_CHOICE_Queue, batchreq.BATCH_REPLY_CHOICE_Status, batchreq.BATCH_REPLY_CHOICE_Status}
			for i, choice := range want {
				p, err := batchreq.ReadReply(c.r)
				if err != nil || p.Code != 0 || p.Choice != choice {
					t.Fatalf("reply %d: %v %+v", i, err, p)
				}
				if i == 0 {
					id = p.JobID
				}
			}
			for _, r := range []*batchreq.Request{
				// Larger than the loop buffers: read off the loop.
				batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{Data: bytes.Repeat([]byte("#\n"), 40000)}),
				batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
				batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
			} {
				if p := c.do(r); p.Code != 0 {
					t.Fatalf("%s: %d %q", batchreq.RequestName(r.Type), p.Code, p.Text)
				}
			}
		})
	}
}

// splitDo sends b in two writes 20 ms apart and reads the reply.
func splitDo(t *testing.T, c *client, b []byte) *batchreq.Reply {
	t.Helper()
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(b[:len(b)/2]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	p, err := c.raw(b[len(b)/2:])
	if err != nil {
		t.Fatalf("reply: %v", err)
	}
	return p
}

// TestConnModeTimeouts: an idle connection is closed silently after
// IdleTimeout; one stalled inside a request is answered DISPROTO and
// closed after RequestTimeout; neither is cut early.
func TestConnModeTimeouts(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			s := modeServer(t, m.goroutine, func(c *Config) {
				c.IdleTimeout = 300 * time.Millisecond
				c.RequestTimeout = 400 * time.Millisecond
			})
			start := time.Now()
			idle := dialUser(t, s.Addr())
			stalled := dialPrivileged(t, s.Addr())
			req := statusSvr("root").Append(nil)
			stalled.nc.Write(req[:len(req)-2])
			// Neither is cut early.
			for _, c := range []*client{idle, stalled} {
				c.nc.SetReadDeadline(start.Add(150 * time.Millisecond))
				if n, err := c.nc.Read(make([]byte, 1)); err == nil {
					t.Fatalf("answered early (%d bytes)", n)
				} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					t.Fatalf("closed early: %v", err)
				}
			}
			idle.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := idle.nc.Read(make([]byte, 1)); err == nil {
				t.Fatalf("idle connection: %d bytes instead of a close", n)
			}
			stalled.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			p, err := batchreq.ReadReply(stalled.r)
			if err != nil || p.Code != batchreq.PBSE_DISPROTO {
				t.Fatalf("stalled request: %v %+v", err, p)
			}
			expectClosed(t, stalled)
			if d := time.Since(start); d < 300*time.Millisecond {
				t.Fatalf("timeouts after %v", d)
			}
		})
	}
}

// TestConnModeAuthenticateBeforeAccept: an AuthenticateUser naming a
// client connection the server has not accepted yet waits for it (the
// loop hands it to a goroutine) and succeeds once it arrives.
func TestConnModeAuthenticateBeforeAccept(t *testing.T) {
	for _, m := range connModes {
		t.Run(m.name, func(t *testing.T) {
			s := modeServer(t, m.goroutine, nil)
			// A free local port for the client connection-to-be.
			probe, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := probe.Addr().(*net.TCPAddr).Port
			probe.Close()
			iffc := dialPrivileged(t, s.Addr())
			iffc.nc.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := iffc.nc.Write(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, "alice", &batchreq.AuthenUser{Port: port}).Append(nil)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}}
			nc, err := d.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Skipf("client port %d taken meanwhile: %v", port, err)
			}
			p, err := batchreq.ReadReply(iffc.r)
			if err != nil || p.Code != 0 {
				t.Fatalf("AuthenticateUser: %v %+v", err, p)
			}
			c := &client{t: t, nc: nc, r: iffc.r}
			c.r.Reset(nc)
			if p := c.do(statusSvr("alice")); p.Code != 0 {
				t.Fatalf("status as alice: %d %q", p.Code, p.Text)
			}
		})
	}
}
