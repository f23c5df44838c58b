package reliability

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
)

// rawConn is a bare batch connection for hand-made requests.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *dis.Reader
}

func dialRaw(t *testing.T, addr string, localPort int) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if localPort > 0 {
		d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: localPort}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, r: dis.NewReader(nc)}
}

func (c *rawConn) port() int { return c.nc.LocalAddr().(*net.TCPAddr).Port }

// do sends req and returns the reply, or nil if the server closed the
// connection instead of answering.
func (c *rawConn) do(req *batchreq.Request) *batchreq.Reply {
	c.t.Helper()
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(req.Append(nil)); err != nil {
		return nil
	}
	p, err := batchreq.ReadReply(c.r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("%s: no reply and no close: %v", batchreq.RequestName(req.Type), err)
		}
		return nil
	}
	return p
}

// refused fails the test unless p is a refusal (error reply or closed
// connection).
func refused(t *testing.T, what string, p *batchreq.Reply) {
	t.Helper()
	if p != nil && p.Code == 0 {
		t.Errorf("%s: accepted (choice %d)", what, p.Choice)
	}
}

func statusSvr(user string) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, user, &batchreq.StatusReq{})
}

func authen(user string, port int) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port})
}

func manage(user string, cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, user, &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

// TestImpersonation tries every way a client could pass itself off as
// another user or as a daemon; the server must refuse each one and keep
// serving the real users.
func TestImpersonation(t *testing.T) {
	c := newCluster(t)
	c.startServer("create")
	c.setup()
	mom := c.startMom()
	addr := c.addr()

	t.Run("unauthenticated request", func(t *testing.T) {
		v := dialRaw(t, addr, 0)
		refused(t, "status as root without credentials", v.do(statusSvr("root")))
	})
	t.Run("unauthenticated manager request claiming root", func(t *testing.T) {
		v := dialRaw(t, addr, 0)
		refused(t, "qmgr as root without credentials", v.do(manage("root", batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_QUEUE, "batch")))
	})
	t.Run("AuthenticateUser from an unprivileged port for another connection", func(t *testing.T) {
		victim := dialRaw(t, addr, 0)
		attacker := dialRaw(t, addr, 0)
		refused(t, "unprivileged AuthenticateUser", attacker.do(authen("root", victim.port())))
		refused(t, "victim after a forged AuthenticateUser", victim.do(statusSvr("root")))
	})
	t.Run("unauthenticated connection vouching for itself", func(t *testing.T) {
		v := dialRaw(t, addr, 0)
		refused(t, "self AuthenticateUser", v.do(authen("root", v.port())))
		refused(t, "request after self AuthenticateUser", v.do(statusSvr("root")))
	})
	t.Run("authenticated user vouching for another connection", func(t *testing.T) {
		alice := dialRaw(t, addr, 0)
		mustAuth(t, c, alice, "alice")
		victim := dialRaw(t, addr, 0)
		refused(t, "alice vouching for another port", alice.do(authen("alice", victim.port())))
		refused(t, "victim after alice vouched", victim.do(statusSvr("alice")))
	})
	t.Run("authenticated user sending another user's name", func(t *testing.T) {
		alice := dialRaw(t, addr, 0)
		mustAuth(t, c, alice, "alice")
		if p := alice.do(statusSvr("alice")); p == nil || p.Code != 0 {
			t.Fatalf("alice's own request refused: %v", p)
		}
		refused(t, "alice claiming root", alice.do(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "",
			batchreq.NewAttr("managers", "alice@*"))))
	})
	t.Run("ordinary user asking for manager operations", func(t *testing.T) {
		alice := dialRaw(t, addr, 0)
		mustAuth(t, c, alice, "alice")
		refused(t, "alice deleting a queue", alice.do(manage("alice", batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_QUEUE, "batch")))
		refused(t, "alice shutting down the server", alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "alice", &batchreq.Shutdown{})))
	})
	t.Run("AuthenticateUser for a port with no connection", func(t *testing.T) {
		helper := dialReservedRaw(t, addr)
		refused(t, "AuthenticateUser for an unknown port", helper.do(authen("root", 1)))
	})
	t.Run("user-run pbs_iff cannot claim another name", func(t *testing.T) {
		u := e2e.User(t, testUserName)
		v := dialRaw(t, addr, 0)
		f, err := v.nc.(*net.TCPConn).File()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(c.b.Path("pbs_iff"), "localhost", strconv.Itoa(c.server), "3")
		cmd.ExtraFiles = []*os.File{f}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.Credential()}
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pbs_iff as %s: %v %q", testUserName, err, out)
		}
		if p := v.do(statusSvr(testUserName)); p == nil || p.Code != 0 {
			t.Fatalf("pbs_iff did not authenticate its real user: %v", p)
		}
		refused(t, "user-authenticated connection claiming root", v.do(statusSvr("root")))
	})
	t.Run("non-setuid pbs_iff cannot reach a reserved port", func(t *testing.T) {
		u := e2e.User(t, testUserName)
		// t.TempDir's parent is private; the test user must reach the file
		plain := e2e.Dir(t) + "/pbs_iff"
		b, err := os.ReadFile(c.b.Path("pbs_iff"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(plain, b, 0o755)
		v := dialRaw(t, addr, 0)
		f, _ := v.nc.(*net.TCPConn).File()
		defer f.Close()
		cmd := exec.Command(plain, "localhost", strconv.Itoa(c.server), "3")
		cmd.ExtraFiles = []*os.File{f}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.Credential()}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("could not run the plain pbs_iff as %s: %v", testUserName, err)
		}
		t.Logf("plain pbs_iff as %s: %v %q", testUserName, err, out)
		refused(t, "connection after an unprivileged pbs_iff", v.do(statusSvr(testUserName)))
	})
	t.Run("unprivileged connection to the MOM posing as the server", func(t *testing.T) {
		// TORQUE 2.5.13's pbs_mom trusted the peer address only (spec 10
		// §3.2), so any local user could pose as the server on loopback
		// (the hole of CVE-2013-4319). GoPBS refuses batch requests from
		// unprivileged ports.
		m := dialRaw(t, "127.0.0.1:"+strconv.Itoa(c.mom), 0)
		p := m.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "PBS_Server",
			&batchreq.SignalJob{JobID: "1.localhost", Signal: "SIGKILL"}))
		if p != nil && p.Code != batchreq.PBSE_BADHOST && p.Code != batchreq.PBSE_BADCRED && p.Code != batchreq.PBSE_PERM {
			t.Errorf("pbs_mom served a batch request from unprivileged port %d (reply code %d)", m.port(), p.Code)
		}
	})
	if !mom.Alive() {
		t.Errorf("pbs_mom died:\n%s", mom.Output())
	}
	// The server's state is untouched: queue batch still exists and root
	// still administers it.
	c.serving()
	root := dialReservedRaw(t, addr)
	if p := root.do(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("enabled", "True"))); p == nil || p.Code != 0 {
		t.Errorf("queue batch damaged: %v", p)
	}
}

// dialReservedRaw connects from a free reserved port (a trusted daemon
// connection).
func dialReservedRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c := batchconn.DialReserved(t, addr, 5*time.Second)
	return &rawConn{t: t, nc: c.NetConn(), r: c.Reader()}
}

// mustAuth authenticates conn as user through a privileged
// AuthenticateUser, as pbs_iff would for that user.
func mustAuth(t *testing.T, c *cluster, conn *rawConn, user string) {
	t.Helper()
	h := dialReservedRaw(t, c.addr())
	defer h.nc.Close()
	if p := h.do(authen(user, conn.port())); p == nil || p.Code != 0 {
		t.Fatalf("AuthenticateUser %s: %v", user, p)
	}
}

const testUserName = "gopbsrel"
