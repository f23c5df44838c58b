package server

import (
	"testing"

	"gopbs/batchreq"
)

func TestSmokeStatus(t *testing.T) {
	s := testServer(t, "", InitCreate)
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	for _, typ := range []int{batchreq.PBS_BATCH_StatusSvr, batchreq.PBS_BATCH_StatusQue, batchreq.PBS_BATCH_StatusNode} {
		p := c.do(batchreq.NewRequest(typ, "alice", &batchreq.StatusReq{}))
		t.Logf("%s", p.Append(nil))
	}
}
