package server

import (
	"net"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestBadInput sends malformed requests; each gets TORQUE's reply and a
// close, and the server keeps serving.
func TestBadInput(t *testing.T) {
	home := t.TempDir()
	s := testServer(t, home, InitCreate)
	root := dialPrivileged(t, s.Addr())
	setupCluster(t, root)
	id := mustSubmit(t, root, "root")
	tests := []struct {
		name  string
		input string
		code  int
		text  string
		priv  bool
	}{
		{"Connect", "+2+1+0+5alice+0", batchreq.PBSE_UNKREQ, "Unknown request MSG=cannot decode message", false},
		{"type 40", "+2+1" + "2+40+5alice+0", batchreq.PBSE_UNKREQ, "Unknown request MSG=cannot decode message", false},
		{"type 60", "+2+1" + "2+60+5alice+0", batchreq.PBSE_UNKREQ, "Unknown request MSG=cannot decode message", false},
		{"type 63", "+2+1" + "2+63+5alice+0", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"type -1", "+2+1-1+5alice+0", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"version 2", "+2+2" + "2+21+5alice+0+0+0", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"protocol 3", "+3+1" + "2+21+5alice+0+0+0", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"garbage", "hello world\n", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"absurd string length", "+2+1" + "2+21" + "9+999999999alice", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"absurd count", "+2+1" + "2+21+5alice+0" + "9+999999999", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", true},
		{"user too long", "+2+1" + "2+21" + "2+40" + strings.Repeat("a", 40) + "+0+0+0", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", false},
		{"truncated body", "+2+1" + "2+19+5alice+3ab", batchreq.PBSE_DISPROTO, "Bad DIS based Request Protocol MSG=cannot decode message", true},
		{"unauthenticated", "+2+1" + "2+21+5alice+0+0+0", batchreq.PBSE_BADCRED, "Invalid credential", false},
		{"AltAuthenUser", "+2+1" + "2+61+5alice" + "3+123+3abc+0", batchreq.PBSE_BADCRED, "Invalid credential", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *client
			if tt.priv {
				c = dialPrivileged(t, s.Addr())
			} else {
				c = dialUser(t, s.Addr())
			}
			p, err := c.raw([]byte(tt.input))
			if err != nil {
				t.Fatalf("no reply: %v", err)
			}
			if p.Code != tt.code || p.Text != tt.text {
				t.Fatalf("reply %d %q, want %d %q", p.Code, p.Text, tt.code, tt.text)
			}
			expectClosed(t, c)
		})
	}
	// The server is still up and nothing was lost, in memory or on disk.
	c := dialPrivileged(t, s.Addr())
	if p := c.do(statusSvr("root")); p.Code != 0 {
		t.Fatalf("server broken after bad input: %d", p.Code)
	}
	if st := statusAttr(t, c, id, "job_state"); st != "Q" {
		t.Fatalf("job %s after bad input: %q", id, st)
	}
	s.Shutdown("Quick")
	s2 := testServer(t, home, InitWarm)
	if st := statusAttr(t, dialPrivileged(t, s2.Addr()), id, "job_state"); st != "Q" {
		t.Fatalf("job %s after restart: %q", id, st)
	}
}

func TestDisconnectAndEOFCloseSilently(t *testing.T) {
	s := testServer(t, "", InitCreate)
	c := dialUser(t, s.Addr())
	c.nc.Write([]byte("+2+1" + "2+59+5alice"))
	expectClosed(t, c)
	c = dialUser(t, s.Addr())
	c.nc.Write([]byte("+2+1"))
	c.nc.(interface{ CloseWrite() error }).CloseWrite()
	expectClosed(t, c)
}

// TestStalledClientStallsNobody: a client stuck in the middle of a request
// does not delay anyone else, and is answered DISPROTO and closed after
// the request timeout.
func TestStalledClientStallsNobody(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Home: t.TempDir(), ServerName: "vm", InitType: InitCreate, Listener: ln, RequestTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	stalled := dialPrivileged(t, s.Addr())
	stalled.nc.Write([]byte("+2+1" + "2+21+4root+0"))
	other := dialPrivileged(t, s.Addr())
	for i := 0; i < 20; i++ {
		if p := other.do(statusSvr("root")); p.Code != 0 {
			t.Fatalf("status: %d", p.Code)
		}
	}
	// the other client was served while the stalled one still waits
	stalled.nc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if n, err := stalled.nc.Read(make([]byte, 1)); err == nil {
		t.Fatalf("stalled client answered early (%d bytes)", n)
	}
	stalled.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	p, err := batchreq.ReadReply(stalled.r)
	if err != nil || p.Code != batchreq.PBSE_DISPROTO {
		t.Fatalf("stalled client: %v %+v", err, p)
	}
	expectClosed(t, stalled)
}
