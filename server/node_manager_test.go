package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestNodeManager covers the node Manager operations the capture
// scenarios do not: properties set/+=/-=, np increments, note, state
// words, unset and delete, and their errors.
func TestNodeManager(t *testing.T) {
	cl := newCluster(t)
	op := func(a batchreq.Attr, o int) batchreq.Attr { a.Op = o; return a }
	setN := func(name string, attrs ...batchreq.Attr) *batchreq.Reply {
		return cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, name, attrs...))
	}
	nodeAttr := func(name, attr string) string {
		t.Helper()
		p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: name}))
		if p.Code != 0 || len(p.Status) != 1 {
			t.Fatalf("status node %s: %d %q", name, p.Code, p.Text)
		}
		v, _ := p.Status[0].Attrs.Get(attr)
		return v
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n1", attr("np", "4"), attr("properties", "fast"))); p.Code != 0 {
		t.Fatalf("create: %d %q", p.Code, p.Text)
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n1")); p.Code != batchreq.PBSE_NODEEXIST {
		t.Fatalf("create twice: %d", p.Code)
	}
	// A new node is down,offline until its MOM reports; the operator's
	// offline is its own.
	if got := nodeAttr("n1", "state"); got != "down,offline" {
		t.Errorf("new node's state %q, want down,offline", got)
	}
	momsReported(cl.s)
	// each step runs in turn and is checked before the next
	steps := []struct {
		name  string
		set   batchreq.Attr
		attr  string
		value string
	}{
		{"properties +=", op(attr("properties", "bigmem"), batchreq.INCR), "properties", "fast,bigmem"},
		{"properties -=", op(attr("properties", "fast"), batchreq.DECR), "properties", "bigmem"},
		{"np +=", op(attr("np", "2"), batchreq.INCR), "np", "6"},
		{"np -=", op(attr("np", "1"), batchreq.DECR), "np", "5"},
		{"note", attr("note", "disk replaced"), "note", "disk replaced"},
	}
	for _, st := range steps {
		if p := setN("n1", st.set); p.Code != 0 {
			t.Errorf("%s: %d %q", st.name, p.Code, p.Text)
			continue
		}
		if got := nodeAttr("n1", st.attr); got != st.value {
			t.Errorf("%s: %s = %q, want %q", st.name, st.attr, got, st.value)
		}
	}
	before := nodeAttr("n1", "state")
	if p := setN("n1", op(attr("state", "offline"), batchreq.INCR)); p.Code != 0 {
		t.Fatalf("offline: %d", p.Code)
	}
	if got := nodeAttr("n1", "state"); got != "offline" && got != before+",offline" {
		t.Errorf("state after offline %q (before %q)", got, before)
	}
	if p := setN("n1", op(attr("state", "offline"), batchreq.DECR)); p.Code != 0 {
		t.Fatalf("clear offline: %d", p.Code)
	}
	if got := nodeAttr("n1", "state"); got != before {
		t.Errorf("state after clearing offline %q, want %q", got, before)
	}
	for _, tc := range []struct {
		name string
		p    *batchreq.Reply
		code int
	}{
		{"unknown node", setN("nosuch", attr("np", "1")), batchreq.PBSE_UNKNODE},
		{"unknown node attribute", setN("n1", attr("colour", "blue")), batchreq.PBSE_UNKNODEATR},
		{"bad np", setN("n1", attr("np", "-3")), batchreq.PBSE_BADNDATVAL},
		{"bad state word", setN("n1", attr("state", "sleepy")), batchreq.PBSE_BADNDATVAL},
		{"alice may not set", cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "alice",
			&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_NODE, ObjName: "n1", Attrs: batchreq.AttrList{attr("note", "x")}})), batchreq.PBSE_PERM},
	} {
		if tc.p.Code != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, tc.p.Code, tc.p.Text, tc.code)
		}
	}
	if p := cl.root.do(mgr(batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_NODE, "n1")); p.Code != 0 {
		t.Fatalf("delete: %d %q", p.Code, p.Text)
	}
	if p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "n1"})); p.Code != batchreq.PBSE_UNKNODE {
		t.Fatalf("deleted node listed: %d", p.Code)
	}
}
