package reliability

import (
	"net"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/tools/pbsbench/load"
)

// TestSlowAndIdleClients holds thousands of idle connections, a client
// that asks for large replies and never reads them, and one that stops
// in the middle of a request, while eight other clients submit and ask
// for status; those must all complete.
func TestSlowAndIdleClients(t *testing.T) {
	c := newCluster(t)
	c.startServer("create")
	c.setup()
	t.Logf("fill: %s", c.submit(scale(2000, 5000), 8))

	idle := scale(1000, 10000)
	var conns []net.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for i := range idle {
		nc, err := net.DialTimeout("tcp", c.addr(), 5*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		conns = append(conns, nc)
	}

	// A client that pipelines full StatusJob requests and never reads:
	// the server's writes to it block once the socket buffers are full.
	root := c.dialer("root")
	var stuck []*load.Conn
	for range 4 {
		sc, err := root.Dial()
		if err != nil {
			t.Fatal(err)
		}
		stuck = append(stuck, sc)
		req := batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}).Append(nil)
		go func() {
			for range 50 {
				if sc.Write(req) != nil {
					return
				}
			}
		}()
	}
	defer func() {
		for _, sc := range stuck {
			sc.Abort()
		}
	}()
	// A client that stops in the middle of a request.
	half, err := net.Dial("tcp", c.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	q := batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{}).Append(nil)
	half.Write(q[:len(q)/2])
	time.Sleep(200 * time.Millisecond) // let the stuck clients fill their buffers

	res := c.submit(scale(500, 5000), 8)
	t.Logf("while stalled: %s", res)
	st, err := load.Run(load.Config{Mode: load.ModeSelect, Dialer: c.dialer("root"), Ops: 20, Clients: 4})
	if err != nil || st.Failed > 0 {
		t.Fatalf("select while stalled: %v %v", err, st.Errors)
	}
	t.Logf("while stalled: %s", st)
	c.serving()
}
