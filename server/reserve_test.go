package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestReserveAttribute: a job asks for a reservation with reserve=y (qsub
// -W reserve=y), alterable with qalter; any value but y or n is refused
// with the bad-attribute-value reply; unset it is not reported. The
// scheduler's plan (estimated_start_time, estimated_exec_host) is
// written by the scheduler's privileged connection only.
func TestReserveAttribute(t *testing.T) {
	cl := newCluster(t)
	plain := mustSubmit(t, cl.alice, "alice")
	if got := statusAttr(t, cl.root, plain, "reserve"); got != "" {
		t.Errorf("reserve of a plain job reported as %q", got)
	}
	id := mustSubmit(t, cl.alice, "alice", attr("reserve", "y"))
	if got := statusAttr(t, cl.root, id, "reserve"); got != "y" {
		t.Errorf("reserve = %q, want y", got)
	}
	p := submitAs(t, cl.alice, "alice", "", attr("reserve", "yes"))
	if p.Code != batchreq.PBSE_BADATVAL || p.Text != "Illegal attribute or resource value for  reserve" {
		t.Errorf("submit reserve=yes: %d %q", p.Code, p.Text)
	}
	for _, tc := range []struct {
		c     *client
		user  string
		attrs []batchreq.Attr
		code  int
	}{
		{cl.alice, "alice", []batchreq.Attr{attr("reserve", "n")}, 0},
		{cl.alice, "alice", []batchreq.Attr{attr("reserve", "Y")}, batchreq.PBSE_BADATVAL},
		{cl.alice, "alice", []batchreq.Attr{attr("estimated_start_time", "1800000000")}, batchreq.PBSE_ATTRRO},
		{cl.root, "Scheduler", []batchreq.Attr{attr("estimated_start_time", "soon")}, batchreq.PBSE_BADATVAL},
		{cl.root, "Scheduler", []batchreq.Attr{attr("estimated_start_time", "1800000000"), attr("estimated_exec_host", "n1+n2")}, 0},
	} {
		if p := tc.c.do(jobReq(batchreq.PBS_BATCH_ModifyJob, tc.user, id, tc.attrs...)); p.Code != tc.code {
			t.Errorf("ModifyJob %v: %d %q, want %d", tc.attrs, p.Code, p.Text, tc.code)
		}
	}
	for name, want := range map[string]string{"reserve": "n", "estimated_start_time": "1800000000", "estimated_exec_host": "n1+n2"} {
		if got := statusAttr(t, cl.root, id, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// the scheduler removes a plan with empty values
	if p := cl.root.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "Scheduler", id, attr("estimated_start_time", ""), attr("estimated_exec_host", ""))); p.Code != 0 {
		t.Fatalf("removing the plan: %d %q", p.Code, p.Text)
	}
	for _, name := range []string{"estimated_start_time", "estimated_exec_host"} {
		if got := statusAttr(t, cl.root, id, name); got != "" {
			t.Errorf("%s = %q after removal", name, got)
		}
	}
}
