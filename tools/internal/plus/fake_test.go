package plus

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/pbs"
)

// fakeServer answers each request with the next scripted reply (a null
// reply when they run out) and records the requests in a readable form.
type fakeServer struct {
	ln      net.Listener
	mu      sync.Mutex
	replies []*batchreq.Reply
	got     []string
	wg      sync.WaitGroup
}

func newFakeServer(t *testing.T, replies []*batchreq.Reply) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{ln: ln, replies: replies}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go f.conversation(nc)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

func (f *fakeServer) conversation(nc net.Conn) {
	defer f.wg.Done()
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	r := dis.NewReader(nc)
	for {
		req, err := batchreq.ReadAnyRequest(r)
		if err != nil || req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		f.mu.Lock()
		f.got = append(f.got, describe(req))
		rp := batchreq.NullReply()
		if len(f.replies) > 0 {
			rp, f.replies = f.replies[0], f.replies[1:]
		}
		f.mu.Unlock()
		if _, err := nc.Write(rp.Append(nil)); err != nil {
			return
		}
	}
}

// requests waits for the conversations to end and returns the record.
func (f *fakeServer) requests() []string {
	f.ln.Close()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

func attrs(l batchreq.AttrList) string {
	var s []string
	for _, a := range l {
		s = append(s, a.Name+"="+a.Value)
	}
	return strings.Join(s, " ")
}

// describe writes a request as "User Name fields".
func describe(q *batchreq.Request) string {
	var body string
	switch b := q.Body.(type) {
	case *batchreq.ResvSubmit:
		body = fmt.Sprintf("flags=%d %s", b.Flags, attrs(b.Attrs))
	case *batchreq.ResvID:
		body = fmt.Sprintf("id=%s owner=%s flags=%d", b.ID, b.Owner, b.Flags)
	case *batchreq.ResvModify:
		body = fmt.Sprintf("id=%s flags=%d %s", b.ID, b.Flags, attrs(b.Attrs))
	case *batchreq.ResvStatus:
		body = fmt.Sprintf("id=%s owner=%s start=%d end=%d expired=%d", b.ID, b.Owner, b.Start, b.End, b.Expired)
	case *batchreq.ResvAvail:
		body = fmt.Sprintf("start=%d end=%d %s", b.Start, b.End, attrs(b.Attrs))
	default:
		body = fmt.Sprintf("%T", b)
	}
	return q.User + " " + batchreq.RequestName(q.Type) + " " + strings.TrimSpace(body)
}

// now is the tests' clock: 2026-11-27 12:00:00 UTC (1795780800).
var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

type testCase struct {
	name    string
	args    []string
	replies []*batchreq.Reply
	sent    []string // nil: nothing may be sent
	stdout  string
	stderr  string
	exit    int
	home    string
}

func runCases(t *testing.T, run func(*Env, []string) int, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t, tc.replies)
			var out, errOut bytes.Buffer
			env := &Env{Stdout: &out, Stderr: &errOut, Now: now, User: "alice", Loc: time.UTC, Home: tc.home,
				Connect: func() (*pbs.Conn, error) {
					return pbs.Dial(f.ln.Addr().String(), pbs.Options{User: "alice", NoAuth: true})
				}}
			code := run(env, tc.args)
			sent := f.requests()
			if strings.Join(sent, "\n") != strings.Join(tc.sent, "\n") {
				t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(tc.sent, "\n"))
			}
			if out.String() != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), tc.stdout)
			}
			if errOut.String() != tc.stderr {
				t.Errorf("stderr:\n%q\nwant:\n%q", errOut.String(), tc.stderr)
			}
			if code != tc.exit {
				t.Errorf("exit %d, want %d", code, tc.exit)
			}
		})
	}
}

func text(code int, s string) *batchreq.Reply { return batchreq.TextReply(code, s) }

func idReply(id string) *batchreq.Reply {
	return batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, id)
}

// resvObj is a status object of a reservation, from "name=value" pairs.
func resvObj(id string, pairs ...string) batchreq.StatusObject {
	o := batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_RESV, Name: id}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		o.Attrs = append(o.Attrs, batchreq.NewAttr(k, v))
	}
	return o
}

func statusReply(objs ...batchreq.StatusObject) *batchreq.Reply {
	return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs}
}
