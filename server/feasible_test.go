package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestInfeasibleNodeRequest: a node request the configured nodes can
// never satisfy is refused at submission with TORQUE's code and text
// (qsub exits 190); busy and down nodes do not make a request infeasible
// (issue 14 item 3).
func TestInfeasibleNodeRequest(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c) // node vm, np=2
	if p := c.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "big", attr("np", "4"), attr("properties", "fat"))); p.Code != 0 {
		t.Fatalf("create node big: %d", p.Code)
	}
	const text = "Job exceeds queue resource limits MSG=cannot locate feasible nodes (nodes file is empty or all systems are busy)"
	sub := func(nodes string) *batchreq.Reply {
		t.Helper()
		return submitAs(t, c, "root", "batch", rattr("Resource_List", "nodes", nodes))
	}
	// Node big has not reported (down,offline): it still counts.
	for _, spec := range []string{"1:ppn=4", "2", "vm:ppn=2+big:ppn=4", "1:fat:ppn=3", "1:ppn=2+1:ppn=4", "big"} {
		if p := sub(spec); p.Code != 0 {
			t.Errorf("nodes=%s: %d %q, want accepted", spec, p.Code, p.Text)
		}
	}
	for _, spec := range []string{"1:ppn=5", "3", "vm:ppn=3", "2:fat", "1:gpu", "2:ppn=3", "1:ppn=4+1:ppn=4"} {
		if p := sub(spec); p.Code != batchreq.PBSE_EXCQRESC || p.Text != text || p.Code&0xff != 190 {
			t.Errorf("nodes=%s: %d %q, want %d %q", spec, p.Code, p.Text, batchreq.PBSE_EXCQRESC, text)
		}
	}
	// A busy node: vm runs a job on both its VPs, and jobs asking for
	// them again are accepted (they wait).
	momsReported(s)
	id := submit(t, c, "busy", rattr("Resource_List", "nodes", "vm:ppn=2"))
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d %q", p.Code, p.Text)
	}
	if st := jobAttr(t, c, id, "job_state"); st != "R" {
		t.Fatalf("busy job state %q", st)
	}
	for _, spec := range []string{"vm:ppn=2", "2", "1:ppn=2+1:ppn=4"} {
		if p := sub(spec); p.Code != 0 {
			t.Errorf("nodes=%s with vm busy: %d %q, want accepted", spec, p.Code, p.Text)
		}
	}
}

// TestInfeasibleNodeAlter: qalter -l nodes=... gets the submission's
// feasibility check, with the same code and text (qalter exits 190), and
// the job keeps its request; a feasible change, or one that only busy
// nodes stand in the way of, is applied (issue 14, remainder b).
func TestInfeasibleNodeAlter(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c) // node vm, np=2
	if p := c.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "big", attr("np", "4"), attr("properties", "fat"))); p.Code != 0 {
		t.Fatalf("create node big: %d", p.Code)
	}
	const text = "Job exceeds queue resource limits MSG=cannot locate feasible nodes (nodes file is empty or all systems are busy)"
	id := submit(t, c, "alter", rattr("Resource_List", "nodes", "1"))
	alter := func(nodes string) *batchreq.Reply {
		t.Helper()
		return c.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "root", id, rattr("Resource_List", "nodes", nodes)))
	}
	for _, spec := range []string{"1:ppn=5", "3", "vm:ppn=3", "2:fat", "1:gpu", "1:ppn=4+1:ppn=4"} {
		if p := alter(spec); p.Code != batchreq.PBSE_EXCQRESC || p.Text != text || p.Code&0xff != 190 {
			t.Errorf("qalter -l nodes=%s: %d %q, want %d %q", spec, p.Code, p.Text, batchreq.PBSE_EXCQRESC, text)
		}
		if got := jobAttr(t, c, id, "Resource_List.nodes"); got != "1" {
			t.Fatalf("after a refused qalter -l nodes=%s: nodes = %q, want 1 (unchanged)", spec, got)
		}
	}
	for _, spec := range []string{"1:ppn=4", "2", "vm:ppn=2+big:ppn=4", "1:fat:ppn=3"} {
		if p := alter(spec); p.Code != 0 {
			t.Errorf("qalter -l nodes=%s: %d %q, want accepted", spec, p.Code, p.Text)
		}
		if got := jobAttr(t, c, id, "Resource_List.nodes"); got != spec {
			t.Errorf("after qalter -l nodes=%s: nodes = %q", spec, got)
		}
	}
}
