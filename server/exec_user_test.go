package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestACLRoots checks that a job that would run as root enters an
// execution queue only when acl_roots lists its owner (issue 20).
func TestACLRoots(t *testing.T) {
	cl := newCluster(t)
	setRoots := func(v string) {
		t.Helper()
		r := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_roots", v))
		if v == "" {
			r = mgr(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_SERVER, "", attr("acl_roots", ""))
		}
		if p := cl.root.do(r); p.Code != 0 {
			t.Fatalf("acl_roots %q: %d %q", v, p.Code, p.Text)
		}
	}
	const refused = "Bad UID for job execution MSG=root user root not allowed"
	for _, tc := range []struct {
		roots string
		user  string
		attrs []batchreq.Attr
		ok    bool
	}{
		{"", "root", nil, false},
		{"", "alice", nil, true},
		{"root@elsewhere", "root", nil, false},
		{"root@vm", "root", nil, true},
		{"root@v*", "root", nil, true},
		{"root", "root", nil, true},
		{"", "root", []batchreq.Attr{attr("User_List", "root@vm")}, false},
	} {
		setRoots(tc.roots)
		p := submitAs(t, cl.root, tc.user, "", tc.attrs...)
		if tc.ok != (p.Code == 0) || !tc.ok && (p.Code != batchreq.PBSE_BADUSER || p.Text != refused) {
			t.Errorf("acl_roots %q, %s's job %v: %d %q", tc.roots, tc.user, tc.attrs, p.Code, p.Text)
		}
	}
	// qmove of a root job into an execution queue is checked too
	setRoots("root")
	id := mustSubmit(t, cl.root, "root")
	setRoots("")
	if p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "root", &batchreq.MoveJob{JobID: id, Destination: "short"})); p.Code != batchreq.PBSE_BADUSER {
		t.Errorf("qmove of root's job without acl_roots: %d %q", p.Code, p.Text)
	}
}
