//go:build linux

package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// The pre-encoded requests, completed with a port or a job id, are the
// encoder's bytes.
func TestRawRequestsMatchEncoder(t *testing.T) {
	jobs := []Job{{}, {Queue: "batch", Hold: true, Name: "x", Script: []byte("#!/bin/sh\n\x00true\n")},
		{Extra: ResourceList("nodes=1:ppn=2,walltime=1:00:00")}}
	for _, user := range []string{"root", "alice"} {
		for ji := range jobs {
			j := &jobs[ji]
			q, err := newRawRequests(j, user)
			if err != nil {
				t.Fatal(err)
			}
			for _, port := range []int{0, 1, 9, 10, 99, 1023, 65535} {
				want := batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port}).Append(nil)
				if got := q.auth(nil, port); !bytes.Equal(got, want) {
					t.Errorf("%s auth port %d:\n got %q\nwant %q", user, port, got, want)
				}
			}
			script := j.Script
			if script == nil {
				script = DefaultScript
			}
			for _, id := range []string{"1.vm", "1234567890.server.example.com", strings.Repeat("9", 120) + ".x"} {
				cases := []struct {
					prefix, tail []byte
					req          *batchreq.Request
				}{
					{q.scriptPrefix, q.scriptTail, batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, user, &batchreq.JobFile{JobID: id, Data: script})},
					{q.readyPrefix, q.readyTail, batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, user, &batchreq.JobID{ID: id})},
					{q.commitPrefix, q.commitTail, batchreq.NewRequest(batchreq.PBS_BATCH_Commit, user, &batchreq.JobID{ID: id})},
				}
				for _, c := range cases {
					if got, want := withID(nil, c.prefix, []byte(id), c.tail), c.req.Append(nil); !bytes.Equal(got, want) {
						t.Errorf("%s %s id %s:\n got %q\nwant %q", user, batchreq.RequestName(c.req.Type), id, got, want)
					}
				}
			}
			want := batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, user, &batchreq.QueueJob{Destination: j.Queue, Attrs: j.attrs(user)}).Append(nil)
			if !bytes.Equal(q.queueJob, want) {
				t.Errorf("QueueJob differs")
			}
		}
	}
}

// fakeServer answers submissions like a batch server and records the
// bytes of every connection.
type fakeServer struct {
	t      *testing.T
	ln     net.Listener
	refuse int // refuse every refuse-th QueueJob (0: none)

	mu      sync.Mutex
	authed  map[int]bool // client ports vouched for
	jobs    int
	streams []stream
	errs    []string
	wg      sync.WaitGroup
}

type stream struct {
	port    int
	auth    bool // the reserved-port connection
	bytes   []byte
	id      string
	refused bool // a refused client may close without Disconnect
}

func newFakeServer(t *testing.T, refuse int) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, ln: ln, refuse: refuse, authed: map[int]bool{}}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() { defer f.wg.Done(); f.serve(c) }()
		}
	}()
	return f
}

func (f *fakeServer) close() { f.ln.Close(); f.wg.Wait() }

func (f *fakeServer) fail(format string, a ...any) {
	f.mu.Lock()
	f.errs = append(f.errs, fmt.Sprintf(format, a...))
	f.mu.Unlock()
}

func (f *fakeServer) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	port := c.RemoteAddr().(*net.TCPAddr).Port
	var rec bytes.Buffer
	r := dis.NewReader(io.TeeReader(c, &rec))
	st := stream{port: port}
	defer func() {
		st.bytes = rec.Bytes()
		f.mu.Lock()
		f.streams = append(f.streams, st)
		f.mu.Unlock()
	}()
	reply := func(p *batchreq.Reply) { c.Write(p.Append(nil)) }
	for {
		req, err := batchreq.ReadRequest(r)
		if err != nil {
			if !st.refused {
				f.fail("port %d: %v", port, err)
			}
			return
		}
		switch req.Type {
		case batchreq.PBS_BATCH_Disconnect:
			return // the server closes first
		case batchreq.PBS_BATCH_AuthenUser:
			st.auth = true
			if port >= 1024 {
				f.fail("AuthenticateUser from port %d", port)
			}
			f.mu.Lock()
			f.authed[req.Body.(*batchreq.AuthenUser).Port] = true
			f.mu.Unlock()
			reply(batchreq.NullReply())
		case batchreq.PBS_BATCH_QueueJob:
			f.mu.Lock()
			ok := f.authed[port]
			f.jobs++
			n := f.jobs
			f.mu.Unlock()
			if !ok {
				f.fail("QueueJob on unauthenticated port %d", port)
			}
			if f.refuse > 0 && n%f.refuse == 0 {
				st.refused = true
				reply(batchreq.TextReply(15007, "refused"))
				continue
			}
			st.id = fmt.Sprintf("%d.fake", n)
			reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, st.id))
		case batchreq.PBS_BATCH_jobscript:
			reply(batchreq.NullReply())
		case batchreq.PBS_BATCH_RdytoCommit:
			reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, st.id))
		case batchreq.PBS_BATCH_Commit:
			reply(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, st.id))
		default:
			f.fail("unexpected request %d", req.Type)
			return
		}
	}
}

// The raw submitter and the net path send the same bytes for each
// submission, authenticate every client port from a reserved port, let
// the server close first, and count refusals.
func TestRawSubmitSameBytes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding reserved ports needs root")
	}
	job := Job{Queue: "batch", Hold: true}
	for _, raw := range []bool{true, false} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
			f := newFakeServer(t, 7)
			var ids []string
			var mu sync.Mutex
			res, err := Run(Config{Mode: ModeSubmit, Ops: 60, Clients: 4, Raw: raw, Job: job,
				Dialer:   &Dialer{Addr: f.ln.Addr().String(), User: "root", Auth: true, Timeout: 10 * time.Second},
				OnSubmit: func(id string) { mu.Lock(); ids = append(ids, id); mu.Unlock() }})
			f.close()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range f.errs {
				t.Error(e)
			}
			if res.OK != 52 || res.Failed != 8 || res.Refused != 8 || len(ids) != 52 || len(res.Latencies) != 52 {
				t.Fatalf("ok=%d failed=%d refused=%d ids=%d latencies=%d, want 52 8 8 52 52; errors %q",
					res.OK, res.Failed, res.Refused, len(ids), len(res.Latencies), res.Errors)
			}
			if len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "QueueJob: code 15007") {
				t.Errorf("errors %q", res.Errors)
			}
			q, err := newRawRequests(&job, "root")
			if err != nil {
				t.Fatal(err)
			}
			auths, clients := 0, 0
			for _, st := range f.streams {
				if st.auth {
					auths++
					continue
				}
				clients++
				if st.id == "" {
					continue // refused
				}
				var want []byte
				want = append(want, q.queueJob...)
				want = withID(want, q.scriptPrefix, []byte(st.id), q.scriptTail)
				want = withID(want, q.readyPrefix, []byte(st.id), q.readyTail)
				want = withID(want, q.commitPrefix, []byte(st.id), q.commitTail)
				want = append(want, q.disconnect...)
				if !bytes.Equal(st.bytes, want) {
					t.Errorf("job %s:\n got %q\nwant %q", st.id, st.bytes, want)
				}
			}
			if auths != 60 || clients != 60 {
				t.Errorf("%d authentication and %d client connections, want 60 each", auths, clients)
			}
		})
	}
}

// The raw submitter's reply decoder never panics, reports a reply cut
// short as incomplete, and agrees with batchreq.ReadReply on the code
// and job id of the replies a submission gets.
func FuzzRawReply(f *testing.F) {
	for _, p := range []*batchreq.Reply{
		batchreq.NullReply(),
		batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, "12.vm"),
		batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, "123456789.server.example.com"),
		batchreq.TextReply(15007, "Unauthorized Request"),
		{Choice: batchreq.BATCH_REPLY_CHOICE_Select, JobIDs: []string{"1.vm"}},
	} {
		f.Add(p.Append(nil))
	}
	f.Add([]byte("+2+1+0+0+2+4"))
	f.Add([]byte("+2+1-1+0+7+999999999999"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l := &rawLoop{r: dis.NewReader(nil)}
		l.r = dis.NewReader(&l.src)
		s := &rawSlot{step: stepQueueJob, in: append([]byte(nil), b...)}
		err := l.reply(s)
		want, werr := batchreq.ReadReply(dis.NewReader(bytes.NewReader(b)))
		if err == errIncomplete {
			if werr == nil {
				t.Fatalf("incomplete, but ReadReply decoded %+v", want)
			}
			return
		}
		if werr != nil || want.Choice > batchreq.BATCH_REPLY_CHOICE_Commit && want.Choice != batchreq.BATCH_REPLY_CHOICE_Text {
			return // ReadReply refuses it, or a choice no submission step gets
		}
		var re *ReplyError
		switch {
		case want.Code != 0:
			if !errors.As(err, &re) || re.Code != want.Code || re.Text != want.Text {
				t.Fatalf("code %d %q: got %v", want.Code, want.Text, err)
			}
		case err != nil:
			t.Fatalf("ReadReply accepts %+v, raw decoder: %v", want, err)
		case want.Choice != batchreq.BATCH_REPLY_CHOICE_NULL && want.Choice != batchreq.BATCH_REPLY_CHOICE_Text && string(s.id) != want.JobID:
			t.Fatalf("job id %q, want %q", s.id, want.JobID)
		}
	})
}
