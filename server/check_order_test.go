package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestCheckOrder: job requests check in TORQUE's order (spec 02 §8 and
// §10): the common job checks (unknown job, then a requester who is
// neither owner nor operator, then a job exiting or complete), then the
// request's own state check, and only then the privilege the request
// needs or the values it carries (issue 14 item 4).
func TestCheckOrder(t *testing.T) {
	cl := newCluster(t)
	id := mustSubmit(t, cl.alice, "alice")
	const unknown = "4242.vm"
	type want struct {
		code int
		text string
	}
	for _, tc := range []struct {
		name string
		c    *client
		req  *batchreq.Request
		want want
	}{
		// the case: state before the operator privilege
		{"owner's qrerun of a queued job", cl.alice,
			batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "alice", &batchreq.JobID{ID: id}),
			want{batchreq.PBSE_BADSTATE, "Request invalid for state of job"}},
		{"other user's qrerun of a queued job", cl.bob,
			batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "bob", &batchreq.JobID{ID: id}),
			want{batchreq.PBSE_PERM, "Unauthorized Request  MSG=operation not permitted"}},
		{"owner's qrerun of an unknown job", cl.alice,
			batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "alice", &batchreq.JobID{ID: unknown}),
			want{batchreq.PBSE_UNKJOBID, "Unknown Job Id MSG=cannot locate job"}},
		{"owner's suspend of a queued job", cl.alice,
			batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "alice", &batchreq.SignalJob{JobID: id, Signal: "suspend"}),
			want{batchreq.PBSE_BADSTATE, "Request invalid for state of job"}},
		{"other user's qsig of a queued job", cl.bob,
			batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "bob", &batchreq.SignalJob{JobID: id, Signal: "SIGUSR1"}),
			want{batchreq.PBSE_PERM, "Unauthorized Request  MSG=operation not permitted"}},
		{"other user's qmsg of a queued job", cl.bob,
			batchreq.NewRequest(batchreq.PBS_BATCH_MessJob, "bob", &batchreq.MessJob{JobID: id, FileOpt: 1, Message: "hi"}),
			want{batchreq.PBSE_PERM, "Unauthorized Request  MSG=operation not permitted"}},
		// RunJob: job checks, then state, then the operator privilege
		{"owner's qrun of an unknown job", cl.alice,
			batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "alice", &batchreq.RunJob{JobID: unknown}),
			want{batchreq.PBSE_UNKJOBID, "Unknown Job Id MSG=cannot locate job"}},
		{"other user's qrun", cl.bob,
			batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "bob", &batchreq.RunJob{JobID: id}),
			want{batchreq.PBSE_PERM, "Unauthorized Request  MSG=operation not permitted"}},
		{"owner's qrun of a queued job", cl.alice,
			batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "alice", &batchreq.RunJob{JobID: id}),
			want{batchreq.PBSE_PERM, "Unauthorized Request "}},
		// HoldJob: job checks before the Hold_Types list and its letters
		{"qhold with bad letters of an unknown job", cl.alice,
			jobReq(batchreq.PBS_BATCH_HoldJob, "alice", unknown, attr("Hold_Types", "z")),
			want{batchreq.PBSE_UNKJOBID, "Unknown Job Id"}},
		{"other user's qhold -h s", cl.bob,
			jobReq(batchreq.PBS_BATCH_HoldJob, "bob", id, attr("Hold_Types", "s")),
			want{batchreq.PBSE_PERM, "Unauthorized Request  MSG=operation not permitted"}},
		{"other user's qhold with an empty list", cl.bob,
			jobReq(batchreq.PBS_BATCH_HoldJob, "bob", id),
			want{batchreq.PBSE_PERM, "Unauthorized Request  MSG=operation not permitted"}},
		{"owner's qhold -h s", cl.alice,
			jobReq(batchreq.PBS_BATCH_HoldJob, "alice", id, attr("Hold_Types", "s")),
			want{batchreq.PBSE_PERM, "Unauthorized Request "}},
	} {
		p := tc.c.do(tc.req)
		if p.Code != tc.want.code || p.Text != tc.want.text {
			t.Errorf("%s: %d %q, want %d %q", tc.name, p.Code, p.Text, tc.want.code, tc.want.text)
		}
	}
}
