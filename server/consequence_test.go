package server

import (
	"testing"

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
