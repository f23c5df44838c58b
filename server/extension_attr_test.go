package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestExtensionAttribute: the job attribute x (qsub -W x=..., the
// scheduler extensions Maui and Moab users pass) is accepted into an
// execution queue, kept verbatim, reported last in a full status, changed
// by its owner with ModifyJob, selectable, and read-only to other users
// (issue 14 item 2).
func TestExtensionAttribute(t *testing.T) {
	cl := newCluster(t)
	p := submitAs(t, cl.alice, "alice", "batch", attr("x", "ADVRES:R12"))
	if p.Code != 0 {
		t.Fatalf("qsub -W x=ADVRES:R12: %d %q", p.Code, p.Text)
	}
	id := p.JobID
	st := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "alice", &batchreq.StatusReq{ID: id}))
	if st.Code != 0 || len(st.Status) != 1 {
		t.Fatalf("status: %d %q", st.Code, st.Text)
	}
	attrs := st.Status[0].Attrs
	if last := attrs[len(attrs)-1]; last.Name != "x" || last.Value != "ADVRES:R12" {
		t.Fatalf("last attribute of the full status = %s=%q, want x=ADVRES:R12 (%v)", last.Name, last.Value, attrs)
	}
	if p := cl.alice.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "alice", id, attr("x", "QOS:high;NACCESSPOLICY:SINGLEJOB"))); p.Code != 0 {
		t.Fatalf("owner's qalter -W x=...: %d %q", p.Code, p.Text)
	}
	if got := statusAttr(t, cl.root, id, "x"); got != "QOS:high;NACCESSPOLICY:SINGLEJOB" {
		t.Fatalf("x after qalter = %q", got)
	}
	if p := cl.bob.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "bob", id, attr("x", "QOS:low"))); p.Code != batchreq.PBSE_PERM {
		t.Fatalf("another user's qalter -W x=...: %d %q, want %d", p.Code, p.Text, batchreq.PBSE_PERM)
	}
	eq := attr("x", "QOS:high;NACCESSPOLICY:SINGLEJOB")
	eq.Op = batchreq.EQ
	sel := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_SelectJobs, "root", &batchreq.Select{Attrs: batchreq.AttrList{eq}}))
	if sel.Code != 0 || len(sel.JobIDs) != 1 || sel.JobIDs[0] != id {
		t.Fatalf("qselect on x: %d %q %v", sel.Code, sel.Text, sel.JobIDs)
	}
}
