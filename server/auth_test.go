package server

import (
	"net"
	"testing"
	"time"

	"gopbs/batchreq"
)

func statusSvr(user string) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, user, &batchreq.StatusReq{})
}

// expectClosed checks that the server closed the connection.
func expectClosed(t *testing.T, c *client) {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1)
	if n, err := c.nc.Read(buf); err == nil {
		t.Fatalf("connection still open (read %d bytes)", n)
	}
}

func TestUnauthenticatedRequestRejectedAndClosed(t *testing.T) {
	s := testServer(t, "", InitCreate)
	c := dialUser(t, s.Addr())
	p := c.do(statusSvr("alice"))
	if p.Code != batchreq.PBSE_BADCRED || p.Text != "Invalid credential" {
		t.Fatalf("reply %d %q", p.Code, p.Text)
	}
	expectClosed(t, c)
}

func TestAuthenticatedUserAndMismatch(t *testing.T) {
	s := testServer(t, "", InitCreate)
	c := dialUser(t, s.Addr())
	authenticate(t, s, c, "alice")
	if p := c.do(statusSvr("alice")); p.Code != 0 || p.Choice != batchreq.BATCH_REPLY_CHOICE_Status {
		t.Fatalf("status as alice: %d %q", p.Code, p.Text)
	}
	p := c.do(statusSvr("bob"))
	if p.Code != batchreq.PBSE_BADCRED || p.Text != "Invalid credential MSG=Users do not match" {
		t.Fatalf("reply %d %q", p.Code, p.Text)
	}
	expectClosed(t, c)
}

func TestAuthenUserForUnknownPort(t *testing.T) {
	s := testServer(t, "", InitCreate)
	iffc := dialPrivileged(t, s.Addr())
	p := iffc.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, "alice", &batchreq.AuthenUser{Port: 1}))
	if p.Code != batchreq.PBSE_BADCRED || p.Text != "Invalid credential MSG=cannot authenticate user. Client connection not found" {
		t.Fatalf("reply %d %q", p.Code, p.Text)
	}
	// the helper's connection stays usable
	if p := iffc.do(statusSvr("root")); p.Code != 0 {
		t.Fatalf("privileged status: %d", p.Code)
	}
}

func TestAuthenUserFromUnprivilegedPort(t *testing.T) {
	s := testServer(t, "", InitCreate)
	victim := dialUser(t, s.Addr())
	attacker := dialUser(t, s.Addr())
	port := victim.nc.LocalAddr().(*net.TCPAddr).Port
	p := attacker.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, "alice", &batchreq.AuthenUser{Port: port}))
	if p.Code != batchreq.PBSE_BADCRED {
		t.Fatalf("reply %d %q", p.Code, p.Text)
	}
	expectClosed(t, attacker)
	if p := victim.do(statusSvr("alice")); p.Code != batchreq.PBSE_BADCRED {
		t.Fatalf("victim became authenticated: %d", p.Code)
	}
}

func TestAuthenticatedUserCannotVouchForOthers(t *testing.T) {
	s := testServer(t, "", InitCreate)
	alice := dialUser(t, s.Addr())
	authenticate(t, s, alice, "alice")
	victim := dialUser(t, s.Addr())
	port := victim.nc.LocalAddr().(*net.TCPAddr).Port
	p := alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, "alice", &batchreq.AuthenUser{Port: port}))
	if p.Code != batchreq.PBSE_BADCRED {
		t.Fatalf("reply %d %q", p.Code, p.Text)
	}
	if p := victim.do(statusSvr("alice")); p.Code != batchreq.PBSE_BADCRED {
		t.Fatalf("victim became authenticated: %d", p.Code)
	}
}

func TestPermissions(t *testing.T) {
	s := testServer(t, "", InitCreate)
	root := dialPrivileged(t, s.Addr())
	setupCluster(t, root)
	alice := dialUser(t, s.Addr())
	authenticate(t, s, alice, "alice")
	req := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "false"))
	req.User = "alice"
	if p := alice.do(req); p.Code != batchreq.PBSE_PERM || p.Text != "Unauthorized Request " {
		t.Fatalf("reply %d %q", p.Code, p.Text)
	}
	// root through pbs_iff on the server host is manager
	rc := dialUser(t, s.Addr())
	authenticate(t, s, rc, "root")
	req = mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "q2", attr("queue_type", "execution"))
	if p := rc.do(req); p.Code != 0 {
		t.Fatalf("root create queue: %d %q", p.Code, p.Text)
	}
}

func TestServerUserACL(t *testing.T) {
	s := testServer(t, "", InitCreate)
	root := dialPrivileged(t, s.Addr())
	root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_users", "bob"), attr("acl_user_enable", "true")))
	alice := dialUser(t, s.Addr())
	authenticate(t, s, alice, "alice")
	if p := alice.do(statusSvr("alice")); p.Code != batchreq.PBSE_PERM {
		t.Fatalf("alice not in acl_users: %d", p.Code)
	}
	expectClosed(t, alice)
	bob := dialUser(t, s.Addr())
	authenticate(t, s, bob, "bob")
	if p := bob.do(statusSvr("bob")); p.Code != 0 {
		t.Fatalf("bob: %d", p.Code)
	}
	// the host ACL lets the server host through
	root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_host_enable", "true")))
	if p := bob.do(statusSvr("bob")); p.Code != 0 {
		t.Fatalf("server host refused by the host ACL: %d", p.Code)
	}
}
