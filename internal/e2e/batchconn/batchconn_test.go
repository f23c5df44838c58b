package batchconn

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// replier answers each request on one accepted connection with the
// replies given, in order, then closes it; it reports the local port of
// the peer and the requests it read.
type replier struct {
	ln    net.Listener
	peer  chan int
	types chan int
}

func newReplier(t *testing.T, replies ...*batchreq.Reply) *replier {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &replier{ln: ln, peer: make(chan int, 1), types: make(chan int, len(replies)+1)}
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		r.peer <- nc.RemoteAddr().(*net.TCPAddr).Port
		dr := dis.NewReader(nc)
		for _, rep := range replies {
			req, err := batchreq.ReadRequest(dr)
			if err != nil {
				return
			}
			r.types <- req.Type
			if _, err := nc.Write(rep.Append(nil)); err != nil {
				return
			}
		}
	}()
	return r
}

func statusSvr() *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{})
}

// fatalRecorder is a testing.TB whose Fatal ends only the calling
// goroutine and records the message.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }

func (r *fatalRecorder) call(f func(tb testing.TB)) string {
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return r.msg
}

func TestDoAndMust(t *testing.T) {
	srv := newReplier(t, batchreq.NullReply(), batchreq.TextReply(batchreq.PBSE_PERM, "no"), batchreq.TextReply(batchreq.PBSE_PERM, "no"))
	nc, err := net.Dial("tcp", srv.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := New(t, nc)
	if rep := c.Must(statusSvr()); rep.Code != 0 {
		t.Errorf("Must: code %d", rep.Code)
	}
	if rep := c.Do(statusSvr()); rep.Code != batchreq.PBSE_PERM || rep.Text != "no" {
		t.Errorf("Do: %d %q", rep.Code, rep.Text)
	}
	r := &fatalRecorder{TB: t}
	if msg := r.call(func(tb testing.TB) { c.t = tb; c.Must(statusSvr()) }); !strings.Contains(msg, batchreq.RequestName(batchreq.PBS_BATCH_StatusSvr)) || !strings.Contains(msg, "15007") {
		t.Errorf("Must of a refused request: %q", msg)
	}
	for range 3 {
		if typ := <-srv.types; typ != batchreq.PBS_BATCH_StatusSvr {
			t.Errorf("server read request type %d", typ)
		}
	}
	// the server has closed the connection
	c.t = t
	if _, err := c.Try(statusSvr()); err == nil || !strings.Contains(err.Error(), batchreq.RequestName(batchreq.PBS_BATCH_StatusSvr)) {
		t.Errorf("Try after the server closed: %v (want an error naming the request)", err)
	}
}

func TestTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, never answers
		nc, err := ln.Accept()
		if err == nil {
			time.Sleep(5 * time.Second)
			nc.Close()
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := New(t, nc)
	c.Timeout = 100 * time.Millisecond
	start := time.Now()
	if _, err := c.Try(statusSvr()); err == nil {
		t.Error("Try against a silent peer: no error")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Try took %v", took)
	}
}

func TestDialReserved(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: reserved ports")
	}
	srv := newReplier(t, batchreq.NullReply())
	c := DialReserved(t, srv.ln.Addr().String(), 5*time.Second)
	if port := <-srv.peer; port >= 1024 {
		t.Errorf("local port %d is not reserved", port)
	}
	c.Must(statusSvr())
	if c.NetConn() == nil || c.Reader() == nil {
		t.Error("no connection or reader")
	}
	// nothing listens: fails after the limit
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	r := &fatalRecorder{TB: t}
	start := time.Now()
	if msg := r.call(func(tb testing.TB) { DialReserved(tb, addr, 200*time.Millisecond) }); !strings.Contains(msg, addr) {
		t.Errorf("DialReserved to nothing: %q", msg)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("DialReserved took %v", took)
	}
}

// TestStatusSubmitManager: Status maps one object's attributes (resources
// as name.resource) and is nil on a refusal; Submit sends QueueJob,
// JobScript, ReadyToCommit and Commit and returns the id the server gave;
// Manager is root's Manager request.
func TestStatusSubmitManager(t *testing.T) {
	status := &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{{
		ObjType: batchreq.MGR_OBJ_JOB, Name: "1.srv",
		Attrs: batchreq.AttrList{batchreq.NewAttr("job_state", "R"), batchreq.NewResourceAttr("Resource_List", "mem", "1gb")}}}}
	srv := newReplier(t, status, batchreq.TextReply(batchreq.PBSE_UNKJOBID, "gone"),
		batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, "7.srv"), batchreq.NullReply(), batchreq.NullReply(),
		batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, "7.srv"), batchreq.NullReply())
	nc, err := net.Dial("tcp", srv.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := New(t, nc)
	got := c.Status(batchreq.PBS_BATCH_StatusJob, "1.srv")
	if len(got) != 2 || got["job_state"] != "R" || got["Resource_List.mem"] != "1gb" {
		t.Errorf("Status: %v", got)
	}
	if got := c.Status(batchreq.PBS_BATCH_StatusJob, "2.srv"); got != nil {
		t.Errorf("Status of an unknown job: %v, want nil", got)
	}
	if id := c.Submit(batchreq.AttrList{batchreq.NewAttr("Job_Name", "x")}, "#!/bin/sh\n"); id != "7.srv" {
		t.Errorf("Submit: id %q", id)
	}
	m := Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("scheduling", "true"))
	c.Must(m)
	if body, ok := m.Body.(*batchreq.Manage); m.Type != batchreq.PBS_BATCH_Manager || m.User != "root" || !ok ||
		body.Command != batchreq.MGR_CMD_SET || body.ObjType != batchreq.MGR_OBJ_SERVER || len(body.Attrs) != 1 {
		t.Errorf("Manager: %+v", m)
	}
	var types []int
	for range 7 {
		types = append(types, <-srv.types)
	}
	want := []int{batchreq.PBS_BATCH_StatusJob, batchreq.PBS_BATCH_StatusJob, batchreq.PBS_BATCH_QueueJob,
		batchreq.PBS_BATCH_jobscript, batchreq.PBS_BATCH_RdytoCommit, batchreq.PBS_BATCH_Commit, batchreq.PBS_BATCH_Manager}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", types, want)
	}
}
