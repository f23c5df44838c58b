package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/handler"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// fakeHost is a server for the transport: a policy the test sets, and
// the event loop's Commit over a store the test completes by hand.
type fakeHost struct {
	mu      sync.Mutex
	pol     Policy
	durable bool // the last Commit's done has been called
	flushed bool // FlushLogs was called after it

	dropped chan *state.Job   // jobs of closed connections (Drop)
	commits chan func(error)  // the done of each Commit, for the test to call
	replied chan commitReport // one per Committed
}

type commitReport struct {
	id               string
	durable, flushed bool
}

func newFakeHost() *fakeHost {
	return &fakeHost{
		pol:     Policy{CredentialLifetime: time.Hour},
		dropped: make(chan *state.Job, 4),
		commits: make(chan func(error), 4),
		replied: make(chan commitReport, 4),
	}
}

func (h *fakeHost) setPolicy(p Policy) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pol = p
}

func (h *fakeHost) Policy(host string, p *Policy) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*p = h.pol
	p.Now = time.Now()
}

func (h *fakeHost) Drop(hc *handler.Conn) { h.dropped <- hc.Pending() }

func (h *fakeHost) Commit(hc *handler.Conn, id string, done func(error)) bool {
	if j := hc.Pending(); j == nil || j.ID != id {
		hc.Reject(batchreq.PBSE_UNKJOBID, "")
		return false
	}
	hc.SetPending(nil)
	h.mu.Lock()
	h.durable, h.flushed = false, false
	h.mu.Unlock()
	h.commits <- func(err error) {
		h.mu.Lock()
		h.durable = true
		h.mu.Unlock()
		done(err)
	}
	return true
}

func (h *fakeHost) FlushLogs() {
	h.mu.Lock()
	h.flushed = h.durable
	h.mu.Unlock()
}

func (h *fakeHost) Committed(hc *handler.Conn, id string, err error, took time.Duration) {
	h.mu.Lock()
	r := commitReport{id: id, durable: h.durable, flushed: h.flushed}
	h.mu.Unlock()
	h.replied <- r
	if err != nil {
		hc.Reject(batchreq.PBSE_SYSTEM, "cannot save job")
		return
	}
	hc.Send(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, id))
}

// startTransport serves a transport on loopback with a mux where
// QueueJob leaves a job (1.vm, 2.vm, ...) pending on the connection and StatusSvr
// answers with who asks ("user host operator manager privileged"); it
// runs on the event loop unless goroutine is set.
func startTransport(t *testing.T, goroutine bool) (*Transport, *fakeHost) {
	t.Helper()
	logger, err := pbslog.NewLogger(t.TempDir(), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logger.Close() })
	h := newFakeHost()
	mux := new(batchreq.ServeMux[*handler.Conn])
	tr := New(Config{Name: "vm", Log: logger, Mux: mux, Host: h, AuthWait: 2 * time.Second,
		RequestTimeout: time.Minute, IdleTimeout: time.Minute, GoroutinePerConn: goroutine})
	var jobs atomic.Int64
	mux.HandleFunc(batchreq.PBS_BATCH_QueueJob, func(c *handler.Conn, req *batchreq.Request) {
		id := fmt.Sprintf("%d.vm", jobs.Add(1))
		c.SetPending(&state.Job{ID: id})
		c.Send(batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, id))
	})
	mux.HandleFunc(batchreq.PBS_BATCH_StatusSvr, func(c *handler.Conn, req *batchreq.Request) {
		a := c.Asker
		c.Send(batchreq.TextReply(0, fmt.Sprintf("%s %s %v %v %v", a.User, a.Host, a.Operator, a.Manager, a.Privileged)))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr.Listen(ln)
	served := make(chan struct{})
	go func() {
		tr.Serve()
		close(served)
	}()
	t.Cleanup(func() {
		tr.Close()
		<-served
		tr.Wait()
	})
	return tr, h
}

type client struct {
	t  *testing.T
	nc net.Conn
	r  *dis.Reader
}

// dial connects to tr, from a reserved port if privileged.
func dial(t *testing.T, tr *Transport, privileged bool) *client {
	t.Helper()
	if !privileged {
		nc, err := net.Dial("tcp", tr.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return &client{t: t, nc: nc, r: dis.NewReader(nc)}
	}
	if syscall.Geteuid() != 0 {
		t.Skip("needs root for a reserved source port")
	}
	for p := 1023; p > 600; p-- {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}}
		if nc, err := d.Dial("tcp", tr.Addr().String()); err == nil {
			t.Cleanup(func() { nc.Close() })
			return &client{t: t, nc: nc, r: dis.NewReader(nc)}
		}
	}
	t.Fatal("no free reserved port")
	return nil
}

func (c *client) do(req *batchreq.Request) *batchreq.Reply {
	c.t.Helper()
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(req.Append(nil)); err != nil {
		c.t.Fatal(err)
	}
	p, err := batchreq.ReadReply(c.r)
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return p
}

// authenticate binds user to c as pbs_iff does, over a privileged
// connection.
func authenticate(t *testing.T, tr *Transport, c *client, user string) {
	t.Helper()
	iffc := dial(t, tr, true)
	defer iffc.nc.Close()
	port := c.nc.LocalAddr().(*net.TCPAddr).Port
	if p := iffc.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port})); p.Code != 0 {
		t.Fatalf("AuthenticateUser: %d %s", p.Code, p.Text)
	}
}

var modes = []struct {
	name      string
	goroutine bool
}{{"loop", false}, {"goroutine", true}}

// TestAskerReachesHandlers: a handler learns who asks from the
// connection's Asker: a privileged peer has every right, an
// authenticated user the rights the server's managers and operators
// lists give, and a request on a connection nobody vouched for is
// refused before any handler runs, the connection closed.
func TestAskerReachesHandlers(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			tr, h := startTransport(t, m.goroutine)
			h.setPolicy(Policy{CredentialLifetime: time.Hour, Managers: "alice@vm", Operators: "bob@*"})
			status := func(user string) *batchreq.Request {
				return batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, user, &batchreq.StatusReq{})
			}
			if p := dial(t, tr, true).do(status("root")); p.Text != "root vm true true true" {
				t.Errorf("privileged peer: %d %q", p.Code, p.Text)
			}
			// Serve has started by the time it answers.
			if want := !m.goroutine && runtime.GOOS == "linux"; tr.EventLoop() != want {
				t.Fatalf("event loop %v, want %v", tr.EventLoop(), want)
			}
			for user, want := range map[string]string{"alice": "alice vm false true false", "bob": "bob vm true false false", "carol": "carol vm false false false"} {
				c := dial(t, tr, false)
				authenticate(t, tr, c, user)
				if p := c.do(status(user)); p.Code != 0 || p.Text != want {
					t.Errorf("%s: %d %q, want %q", user, p.Code, p.Text, want)
				}
			}
			c := dial(t, tr, false)
			if p := c.do(status("mallory")); p.Code != batchreq.PBSE_BADCRED {
				t.Errorf("unauthenticated: code %d, want %d", p.Code, batchreq.PBSE_BADCRED)
			}
			c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := c.nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Errorf("unauthenticated connection not closed: read %d, %v", n, err)
			}
		})
	}
}

// TestLoopCommitAfterDurable: the event loop answers a Commit through
// Host.Committed only after the store's callback, with the logs flushed
// first; the job no longer pending, a later close drops nothing.
func TestLoopCommitAfterDurable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop is Linux's")
	}
	tr, h := startTransport(t, false)
	c := dial(t, tr, true)
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{})); p.Code != 0 || p.JobID != "1.vm" {
		t.Fatalf("QueueJob: %d %q", p.Code, p.JobID)
	}
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: "1.vm"}).Append(nil)); err != nil {
		t.Fatal(err)
	}
	done := <-h.commits
	go done(nil) // the store's goroutine
	p, err := batchreq.ReadReply(c.r)
	if err != nil || p.Code != 0 || p.JobID != "1.vm" {
		t.Fatalf("Commit: %v %+v", err, p)
	}
	if r := <-h.replied; r != (commitReport{id: "1.vm", durable: true, flushed: true}) {
		t.Errorf("Committed called with %+v", r)
	}
	// A Commit of a job not pending is answered by Host.Commit.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: "1.vm"})); p.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("second Commit: code %d", p.Code)
	}
	c.nc.Close()
	// The committed job is not dropped with its connection: the first
	// job dropped is a later connection's.
	c2 := dial(t, tr, true)
	c2.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{}))
	c2.nc.Close()
	if j := <-h.dropped; j == nil || j.ID != "2.vm" {
		t.Errorf("dropped %v, want the second connection's pending 2.vm", j)
	}
}

// TestDropPendingOnClose: a connection closed with a submission pending
// hands the job to Host.Drop, in both modes.
func TestDropPendingOnClose(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			tr, h := startTransport(t, m.goroutine)
			c := dial(t, tr, true)
			if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{})); p.Code != 0 {
				t.Fatalf("QueueJob: %d", p.Code)
			}
			c.nc.Close()
			if j := <-h.dropped; j == nil || j.ID != "1.vm" {
				t.Errorf("dropped %v, want 1.vm", j)
			}
		})
	}
}

// TestRightsAndServerACL checks the requester's rights and the server's
// host and user ACLs for requesters from other hosts, which loopback
// cannot show.
func TestRightsAndServerACL(t *testing.T) {
	tr := New(Config{Name: "vm", Mux: new(batchreq.ServeMux[*handler.Conn]), Host: newFakeHost()})
	ap := netip.MustParseAddrPort("192.0.2.7:40000")
	conn := func(host string, privileged bool) *conn {
		c := &conn{t: tr, host: host}
		if privileged {
			c.auth = tr.auth.AddPrivileged(ap)
		} else {
			c.auth = tr.auth.Add(ap)
		}
		t.Cleanup(func() { tr.auth.Remove(c.auth) })
		return c
	}
	lists := &Policy{Managers: "alice@vm,root@*.example.com", Operators: "bob@*"}
	for _, tc := range []struct {
		user, host       string
		privileged       bool
		oper, mgr, svr   bool
		aclCode          int
		aclHosts, aclUse string
	}{
		{user: "root", host: "vm", oper: true, mgr: true},
		{user: "root", host: "VM", oper: true, mgr: true},
		{user: "root", host: "other"},
		{user: "root", host: "n1.example.com", mgr: true},
		{user: "alice", host: "vm", mgr: true},
		{user: "alice", host: "other"},
		{user: "bob", host: "anywhere", oper: true},
		{user: "bob-with-a-name-longer-than-32-chars", host: "vm"},
		{user: "anyone", host: "peer", privileged: true, oper: true, mgr: true, svr: true},
	} {
		c := conn(tc.host, tc.privileged)
		oper, mgr, svr := tr.rights(c, tc.user, lists)
		if oper != tc.oper || mgr != tc.mgr || svr != tc.svr {
			t.Errorf("%s@%s (privileged %v): oper %v mgr %v svr %v, want %v %v %v", tc.user, tc.host, tc.privileged, oper, mgr, svr, tc.oper, tc.mgr, tc.svr)
		}
	}
	hostACL := Policy{ACLHostEnable: true, ACLHosts: "*.example.com,login"}
	userACL := Policy{ACLUserEnable: true, ACLUsers: "alice@*"}
	for _, tc := range []struct {
		name       string
		p          Policy
		user, host string
		privileged bool
		want       int
	}{
		{"host listed", hostACL, "x", "login", false, 0},
		{"host by pattern", hostACL, "x", "n1.example.com", false, 0},
		{"host not listed", hostACL, "x", "evil", false, batchreq.PBSE_BADHOST},
		{"server's own host", hostACL, "x", "vm", false, 0},
		{"a node", Policy{ACLHostEnable: true, HostIsNode: true}, "x", "n7", false, 0},
		{"host ACL off", Policy{ACLHosts: "login"}, "x", "evil", false, 0},
		{"user listed", userACL, "alice", "h", false, 0},
		{"user not listed", userACL, "bob", "h", false, batchreq.PBSE_PERM},
		{"root on the server's host", userACL, "root", "vm", false, 0},
		{"privileged peer", userACL, "bob", "h", true, 0},
	} {
		c := conn(tc.host, tc.privileged)
		code, msg := tr.serverACL(c, tc.user, &tc.p)
		if code != tc.want {
			t.Errorf("%s: code %d %q, want %d", tc.name, code, msg, tc.want)
		}
		if code == batchreq.PBSE_BADHOST && msg != "request not authorized from host "+tc.host {
			t.Errorf("%s: message %q", tc.name, msg)
		}
	}
}
