package load

import (
	"net"
	"os"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// TestTakeover: the mode keeps trying while nothing listens, then
// reports the server's total_jobs once a StatusServer succeeds; with
// nothing ever listening it fails at MaxTime.
func TestTakeover(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("connects from a reserved port (root only)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens at first
	d := &Dialer{Addr: addr, User: "root", Timeout: 5 * time.Second}
	res, err := Run(Config{Mode: ModeTakeover, Dialer: d, MaxTime: 100 * time.Millisecond})
	if err != nil || res.OK != 0 || res.Failed != 1 || len(res.Errors) != 1 {
		t.Fatalf("with nothing listening: %+v %v", res, err)
	}
	attempts := make(chan int, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			attempts <- 0
			return
		}
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		req, err := batchreq.ReadRequest(dis.NewReader(c))
		if err != nil || req.Type != batchreq.PBS_BATCH_StatusSvr {
			t.Errorf("request %+v %v", req, err)
			return
		}
		rep := &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{
			{ObjType: batchreq.MGR_OBJ_SERVER, Name: "srv", Attrs: batchreq.AttrList{batchreq.NewAttr("total_jobs", "100000")}}}}
		c.Write(rep.Append(nil))
		attempts <- 1
	}()
	res, err = Run(Config{Mode: ModeTakeover, Dialer: d, MaxTime: 20 * time.Second})
	if err != nil || res.OK != 1 || res.Objects != 100000 {
		t.Fatalf("after the server came: %+v %v", res, err)
	}
	<-attempts
}
