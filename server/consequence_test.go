package server

import (
	"strconv"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestDeleteJobAndDependent: qdel A B, B depending afterok on A, deletes
// both and succeeds for both, though deleting A removed B before B's own
// request arrived (issue 14 item 5). B's owner gets the same answer by
// the short id; another user is still told B is unknown, and a job that
// never existed is unknown as before.
func TestDeleteJobAndDependent(t *testing.T) {
	cl := newCluster(t)
	a := mustSubmit(t, cl.alice, "alice", attr("Hold_Types", "u"))
	b := mustSubmit(t, cl.alice, "alice", attr("depend", "afterok:"+a))
	for _, id := range []string{a, b} {
		if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", id)); p.Code != 0 {
			t.Fatalf("qdel %s (after %s): %d %q", id, a, p.Code, p.Text)
		}
	}
	if p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: b})); p.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("dependent %s still exists: %d %+v", b, p.Code, p.Status)
	}
	seq := b[:len(b)-len(".vm")]
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", seq)); p.Code != 0 {
		t.Errorf("qdel %s by its short id: %d %q", seq, p.Code, p.Text)
	}
	if p := cl.bob.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "bob", b)); p.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("another user's qdel %s: %d %q, want Unknown Job Id", b, p.Code, p.Text)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", "9999.vm")); p.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("qdel of a job that never existed: %d %q", p.Code, p.Text)
	}
}

// TestDeleteArrayThenSubjob: qdel 5[] 5[1] succeeds for both, though
// deleting the array removed the sub-job before its own request.
func TestDeleteArrayThenSubjob(t *testing.T) {
	cl := newCluster(t)
	arr := mustSubmit(t, cl.alice, "alice", attr("job_array_request", "0-2"), attr("Hold_Types", "u"))
	seq := arr[:len(arr)-len("[].vm")]
	for _, id := range []string{arr, seq + "[1].vm"} {
		if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_DeleteJob, "alice", id)); p.Code != 0 {
			t.Fatalf("qdel %s: %d %q", id, p.Code, p.Text)
		}
	}
}

// TestConsequencesBounded: removals are forgotten after consequenceAge
// and beyond consequenceMax.
func TestConsequencesBounded(t *testing.T) {
	var c consequences
	t0 := time.Unix(1_800_000_000, 0)
	c.note("1.vm", "alice", t0)
	if owner, ok := c.removed("1.vm", t0.Add(consequenceAge)); !ok || owner != "alice" {
		t.Fatalf("removed at the age limit: %q %v", owner, ok)
	}
	if _, ok := c.removed("1.vm", t0.Add(consequenceAge+time.Second)); ok {
		t.Fatal("remembered past consequenceAge")
	}
	for i := 0; i < consequenceMax+10; i++ {
		c.note(strconv.Itoa(i)+".vm", "alice", t0)
	}
	if len(c.at) != consequenceMax || len(c.order) != consequenceMax {
		t.Fatalf("%d entries (%d ordered), want %d", len(c.at), len(c.order), consequenceMax)
	}
	if _, ok := c.removed("0.vm", t0); ok {
		t.Fatal("the oldest entry beyond consequenceMax is remembered")
	}
	c.note("late.vm", "bob", t0.Add(consequenceAge+time.Minute))
	if len(c.at) != 1 {
		t.Fatalf("%d entries after the others aged, want 1", len(c.at))
	}
}
