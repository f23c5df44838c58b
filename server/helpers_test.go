package server

import (
	"gopbs/server/state"
	"net"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// testServer starts a server named "vm" on an ephemeral loopback port in
// a temporary PBS_HOME.
func testServer(t *testing.T, home string, init string) *Server {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Home: home, ServerName: "vm", InitType: init, Listener: ln, AuthWait: 200 * time.Millisecond, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	return s
}

// client is a test connection.
type client struct {
	t  *testing.T
	nc net.Conn
	r  *dis.Reader
}

// dialPrivileged connects from a reserved port (needs root).
func dialPrivileged(t *testing.T, addr net.Addr) *client {
	t.Helper()
	if syscall.Geteuid() != 0 {
		t.Skip("needs root for a reserved source port")
	}
	for p := 1023; p > 600; p-- {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}}
		nc, err := d.Dial("tcp", addr.String())
		if err == nil {
			return &client{t: t, nc: nc, r: dis.NewReader(nc)}
		}
	}
	t.Fatal("no free reserved port")
	return nil
}

func dialUser(t *testing.T, addr net.Addr) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, nc: nc, r: dis.NewReader(nc)}
}

// authenticate binds user to c through a privileged AuthenticateUser.
func authenticate(t *testing.T, s *Server, c *client, user string) {
	t.Helper()
	iffc := dialPrivileged(t, s.Addr())
	defer iffc.nc.Close()
	port := c.nc.LocalAddr().(*net.TCPAddr).Port
	p := iffc.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port}))
	if p.Code != 0 {
		t.Fatalf("AuthenticateUser: %d %s", p.Code, p.Text)
	}
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

func (c *client) raw(b []byte) (*batchreq.Reply, error) {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		return nil, err
	}
	return batchreq.ReadReply(c.r)
}

func mgr(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

func attr(name, value string) batchreq.Attr { return batchreq.NewAttr(name, value) }

func rattr(name, res, value string) batchreq.Attr { return batchreq.NewResourceAttr(name, res, value) }

// setupCluster configures the capture cluster: queues batch, short,
// route, node vm, server attributes.
func setupCluster(t *testing.T, c *client) {
	t.Helper()
	reqs := []*batchreq.Request{
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("managers", "root@vm")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("operators", "root@vm")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_hosts", "vm")),
		// the tests submit jobs as root too, as a site allows with acl_roots
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_roots", "root@vm")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", rattr("resources_default", "walltime", "01:00:00")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", rattr("resources_default", "nodes", "1")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "short", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", rattr("resources_max", "walltime", "00:10:00")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", rattr("resources_default", "walltime", "00:05:00")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "route", attr("queue_type", "route")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route", attr("route_destinations", "batch")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("default_queue", "batch")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "vm", attr("np", "2")),
	}
	for _, r := range reqs {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("setup %v: %d %s", r.Body, p.Code, p.Text)
		}
	}
}

// momsReported stands for every node's MOM saying hello and sending its
// first status, for tests whose fake MOM speaks only the batch protocol:
// a node that has not reported is "down,offline" and runs nothing.
func momsReported(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.nodes {
		n.State &^= state.NodeStateUnreported
	}
}
