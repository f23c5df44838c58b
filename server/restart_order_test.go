package server

import (
	"slices"
	"testing"

	"gopbs/batchreq"
)

// objectNames lists the names of the objects a status request returns.
func objectNames(t *testing.T, c *client, typ int) []string {
	t.Helper()
	p := c.do(batchreq.NewRequest(typ, "root", &batchreq.StatusReq{}))
	if p.Code != 0 {
		t.Fatalf("%s: %d %q", batchreq.RequestName(typ), p.Code, p.Text)
	}
	var names []string
	for _, o := range p.Status {
		names = append(names, o.Name)
	}
	return names
}

// TestListingOrderAfterRestart checks that queues, nodes and jobs are
// listed in the same order after a warm restart as before: queues and
// nodes in creation order (whatever their names; the store returns them
// by name), jobs in the order the server keeps them (here reordered by
// OrderJob).
func TestListingOrderAfterRestart(t *testing.T) {
	cl := newCluster(t)
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "zeta", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "alpha", attr("queue_type", "route")),
		mgr(batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_QUEUE, "short"),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "short", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n9", attr("np", "1")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "a1", attr("np", "1")),
	} {
		if p := cl.root.do(r); p.Code != 0 {
			t.Fatalf("%+v: %d %q", r.Body, p.Code, p.Text)
		}
	}
	a := mustSubmit(t, cl.alice, "alice")
	b := mustSubmit(t, cl.alice, "alice")
	// b before a in the queue
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_OrderJob, "alice", &batchreq.MoveJob{JobID: a, Destination: b})); p.Code != 0 {
		t.Fatalf("OrderJob: %d %q", p.Code, p.Text)
	}
	types := []int{batchreq.PBS_BATCH_StatusQue, batchreq.PBS_BATCH_StatusNode, batchreq.PBS_BATCH_StatusJob}
	before := map[int][]string{}
	for _, typ := range types {
		before[typ] = objectNames(t, cl.root, typ)
	}
	if want := []string{"batch", "route", "zeta", "alpha", "short"}; !slices.Equal(before[batchreq.PBS_BATCH_StatusQue], want) {
		t.Fatalf("queues before the restart %v, want %v", before[batchreq.PBS_BATCH_StatusQue], want)
	}
	cl.s.Shutdown("Quick")
	s2 := testServer(t, cl.home, InitWarm)
	root := dialPrivileged(t, s2.Addr())
	for _, typ := range types {
		if got := objectNames(t, root, typ); !slices.Equal(got, before[typ]) {
			t.Errorf("%s after the restart lists %v, before %v", batchreq.RequestName(typ), got, before[typ])
		}
	}
	// a queue created after the restart comes last
	if p := root.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "beta", attr("queue_type", "execution"))); p.Code != 0 {
		t.Fatalf("create beta: %d", p.Code)
	}
	if got := objectNames(t, root, batchreq.PBS_BATCH_StatusQue); got[len(got)-1] != "beta" {
		t.Fatalf("queues %v: beta not last", got)
	}
}
