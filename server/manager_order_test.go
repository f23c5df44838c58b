package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestManagerCheckOrder: the Manager request (qmgr, pbsnodes, qenable...)
// checks in TORQUE's order where several errors apply (spec 02 §10 lists
// them in that order; capture 16: a user's set server is refused before
// anything else): the privilege the command needs (manager for create
// and delete, operator for set and unset), then the command and object
// combination (UNSET node, DELETE server), then the object (unknown queue
// or node, existing queue or node at creation), and then the attributes
// one by one in the order sent, each checked for its name, its write
// permission, its resource and its value before the next (issue 14,
// remainder a).
func TestManagerCheckOrder(t *testing.T) {
	cl := newCluster(t)
	as := func(user string, cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
		return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, user, &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("operators", "bob@vm"))); p.Code != 0 {
		t.Fatalf("set server operators: %d %q", p.Code, p.Text)
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "vm")); p.Code != 0 && p.Code != batchreq.PBSE_NODEEXIST {
		t.Fatalf("create node vm: %d %q", p.Code, p.Text)
	}
	const (
		perm  = "Unauthorized Request "
		unkq  = "Unknown queue"
		unkn  = "Unknown node "
		ival  = "Invalid request"
		qexst = "Queue already exists"
	)
	for _, tc := range []struct {
		name string
		c    *client
		req  *batchreq.Request
		code int
		text string
	}{
		// the privilege first
		{"user's set of an unknown queue", cl.alice,
			as("alice", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "nosuch", attr("enabled", "true")), batchreq.PBSE_PERM, perm},
		{"user's set server with a bad value", cl.alice,
			as("alice", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "maybe")), batchreq.PBSE_PERM, perm},
		{"user's unset of a node", cl.alice,
			as("alice", batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_NODE, "nosuch", attr("note", "")), batchreq.PBSE_PERM, perm},
		{"operator's creation of an existing queue", cl.bob,
			as("bob", batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch"), batchreq.PBSE_PERM, perm},
		{"operator's deletion of an unknown node", cl.bob,
			as("bob", batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_NODE, "nosuch"), batchreq.PBSE_PERM, perm},
		{"operator's deletion of the server", cl.bob,
			as("bob", batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_SERVER, ""), batchreq.PBSE_PERM, perm},
		// then the command and object combination
		{"unset of an unknown node", cl.root,
			mgr(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_NODE, "nosuch", attr("note", "")), batchreq.PBSE_IVALREQ, ival},
		{"deletion of the server", cl.root,
			mgr(batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_SERVER, ""), batchreq.PBSE_IVALREQ, ival},
		// then the object
		{"set of an unknown queue with a bad value", cl.root,
			mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "nosuch", attr("max_running", "abc")), batchreq.PBSE_UNKQUE, unkq},
		{"operator's set of an unknown queue", cl.bob,
			as("bob", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "nosuch", attr("max_running", "abc")), batchreq.PBSE_UNKQUE, unkq},
		{"creation of an existing queue with a bad value", cl.root,
			mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", attr("max_running", "abc")), batchreq.PBSE_QUEEXIST, qexst},
		{"set of an unknown node with a bad value", cl.root,
			mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "nosuch", attr("np", "abc")), batchreq.PBSE_UNKNODE, unkn},
		{"creation of an existing node with a bad value", cl.root,
			mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "vm", attr("np", "abc")), batchreq.PBSE_NODEEXIST, "Node name already exists"},
		// then the attributes, in the order sent
		{"read-only attribute before a bad value", cl.root,
			mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("total_jobs", "3"), attr("max_running", "abc")),
			batchreq.PBSE_ATTRRO, "Cannot set attribute, read only or insufficient permission  total_jobs"},
		{"bad value before a read-only attribute", cl.root,
			mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("max_running", "abc"), attr("total_jobs", "3")),
			batchreq.PBSE_BADATVAL, "Illegal attribute or resource value for  max_running"},
		{"unknown attribute before a bad value", cl.root,
			mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("bogus", "1"), attr("scheduling", "maybe")),
			batchreq.PBSE_NOATTR, "Undefined attribute  bogus"},
		{"operator's manager-only attribute before a bad value", cl.bob,
			as("bob", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("managers", "bob@vm"), attr("scheduling", "maybe")),
			batchreq.PBSE_ATTRRO, "Cannot set attribute, read only or insufficient permission  managers"},
	} {
		p := tc.c.do(tc.req)
		if p.Code != tc.code || p.Text != tc.text {
			t.Errorf("%s: %d %q, want %d %q", tc.name, p.Code, p.Text, tc.code, tc.text)
		}
	}
}
