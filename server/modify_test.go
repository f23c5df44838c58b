package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestModifyJobRules checks ModifyJob's refusals on a queued job (spec 02
// §9, seed 001's alterable attributes) and that a refused request changes
// nothing.
func TestModifyJobRules(t *testing.T) {
	cl := newCluster(t)
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", rattr("resources_max", "walltime", "02:00:00")))
	id := mustSubmit(t, cl.alice, "alice", rattr("Resource_List", "walltime", "00:30:00"))
	for _, tc := range []struct {
		name  string
		c     *client
		user  string
		attrs []batchreq.Attr
		code  int
	}{
		{"above the queue's resources_max", cl.alice, "alice", []batchreq.Attr{rattr("Resource_List", "walltime", "03:00:00")}, batchreq.PBSE_EXCQRESC},
		{"unknown attribute", cl.alice, "alice", []batchreq.Attr{attr("no_such_attribute", "1")}, batchreq.PBSE_NOATTR},
		{"unknown resource", cl.alice, "alice", []batchreq.Attr{rattr("Resource_List", "no_such_resource", "1")}, batchreq.PBSE_UNKRESC},
		{"bad value", cl.alice, "alice", []batchreq.Attr{attr("Priority", "high")}, batchreq.PBSE_BADATVAL},
		{"read-only attribute", cl.alice, "alice", []batchreq.Attr{attr("ctime", "1")}, batchreq.PBSE_ATTRRO},
		{"resource only managers write", cl.alice, "alice", []batchreq.Attr{rattr("Resource_List", "nodect", "2")}, batchreq.PBSE_ATTRRO},
		{"resource only the server writes", cl.alice, "alice", []batchreq.Attr{rattr("Resource_List", "srfs_assist", "true")}, batchreq.PBSE_ATTRRO},
		{"bad node spec", cl.alice, "alice", []batchreq.Attr{rattr("Resource_List", "nodes", "2:ppn=4++")}, batchreq.PBSE_BADATVAL},
		{"system hold by a user", cl.alice, "alice", []batchreq.Attr{attr("Hold_Types", "s")}, batchreq.PBSE_PERM},
		{"other hold by a user", cl.alice, "alice", []batchreq.Attr{attr("Hold_Types", "o")}, batchreq.PBSE_PERM},
		{"another user's job", cl.bob, "bob", []batchreq.Attr{attr("Job_Name", "x")}, batchreq.PBSE_PERM},
		// the first entry is valid, the second is not: nothing changes
		{"partly valid", cl.alice, "alice", []batchreq.Attr{attr("Job_Name", "renamed"), attr("Priority", "x")}, batchreq.PBSE_BADATVAL},
		{"within the limits", cl.alice, "alice", []batchreq.Attr{rattr("Resource_List", "walltime", "01:30:00"), attr("Job_Name", "ok")}, 0},
		{"other hold by root", cl.root, "root", []batchreq.Attr{attr("Hold_Types", "o")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := tc.c.do(jobReq(batchreq.PBS_BATCH_ModifyJob, tc.user, id, tc.attrs...)); p.Code != tc.code {
				t.Fatalf("ModifyJob: %d %q, want %d", p.Code, p.Text, tc.code)
			}
		})
	}
	for name, want := range map[string]string{"Job_Name": "ok", "Resource_List.walltime": "01:30:00", "Priority": "", "Hold_Types": "o", "job_state": "H"} {
		if got := statusAttr(t, cl.root, id, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
