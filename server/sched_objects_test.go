package server

import (
	"strings"
	"testing"

	"gopbs/batchreq"
)

// TestSchedObjectRules table-tests the Manager request on sched objects
// and the partition rules of queues and nodes (seed 003): every error
// code with its text, in order, on one server.
func TestSchedObjectRules(t *testing.T) {
	home := t.TempDir()
	s := testServer(t, home, InitCreate)
	c := dialPrivileged(t, s.Addr())
	const (
		sched = batchreq.MGR_OBJ_SCHED
		queue = batchreq.MGR_OBJ_QUEUE
		node  = batchreq.MGR_OBJ_NODE
		cre   = batchreq.MGR_CMD_CREATE
		set   = batchreq.MGR_CMD_SET
		unset = batchreq.MGR_CMD_UNSET
		del   = batchreq.MGR_CMD_DELETE
	)
	incr := func(name, value string) batchreq.Attr {
		a := attr(name, value)
		a.Op = batchreq.INCR
		return a
	}
	for _, tc := range []struct {
		name string
		req  *batchreq.Request
		code int
		text string // the reply's text, if any
	}{
		{"create s1", mgr(cre, sched, "s1"), 0, ""},
		{"create s2 with partitions", mgr(cre, sched, "s2", attr("partitions", "p3")), 0, ""},
		{"name of 16 characters", mgr(cre, sched, "abcdefghijklmnop"), batchreq.PBSE_SCHED_NAME_BIG, ""},
		{"name of 15 characters", mgr(cre, sched, "abcdefghijklmno"), 0, ""},
		{"create twice", mgr(cre, sched, "s1"), batchreq.PBSE_SCHED_EXIST, ""},
		{"create default", mgr(cre, sched, "default"), batchreq.PBSE_SCHED_EXIST, ""},
		{"set partitions", mgr(set, sched, "s1", attr("partitions", "p1,p2")), 0, ""},
		{"partition of another scheduler", mgr(set, sched, "s2", incr("partitions", "p2")), batchreq.PBSE_PART_ALREADY_USED,
			"Partition p2 is already associated with scheduler s1"},
		{"sched_log of another", mgr(set, sched, "s2", attr("sched_log", home+"/sched_logs_s1")), batchreq.PBSE_SCHED_LOG_EXIST,
			"Another Sched object also has same value for its sched_log directory"},
		{"sched_priv of another", mgr(set, sched, "s2", attr("sched_priv", home+"/sched_priv_s1/")), batchreq.PBSE_SCHED_PRIV_EXIST,
			"Another Sched object also has same value for its sched_priv directory"},
		{"sched_priv of default", mgr(set, sched, "s2", attr("sched_priv", home+"/sched_priv")), batchreq.PBSE_SCHED_PRIV_EXIST, ""},
		{"default sched_priv", mgr(set, sched, "default", attr("sched_priv", "/tmp")), batchreq.PBSE_SCHED_OP_DEFAULT,
			"Operation is not permitted on default scheduler"},
		{"default port", mgr(set, sched, "default", attr("port", "15090")), batchreq.PBSE_SCHED_OP_DEFAULT, ""},
		{"default partitions", mgr(set, sched, "default", attr("partitions", "p9")), batchreq.PBSE_SCHED_OP_DEFAULT, ""},
		{"delete default", mgr(del, sched, "default"), batchreq.PBSE_SCHED_OP_DEFAULT, ""},
		{"state is read-only", mgr(set, sched, "s1", attr("state", "IDLE")), batchreq.PBSE_ATTRRO, ""},
		{"unknown attribute", mgr(set, sched, "s1", attr("colour", "red")), batchreq.PBSE_NOATTR, ""},
		{"bad iteration", mgr(set, sched, "s1", attr("scheduler_iteration", "soon")), batchreq.PBSE_BADATVAL, ""},
		{"unknown scheduler", mgr(set, sched, "nosuch", attr("comment", "x")), batchreq.PBSE_UNKSCHED, ""},
		{"port of another", mgr(set, sched, "s2", attr("port", "15004")), batchreq.PBSE_BADATVAL, ""},
		{"queues", mgr(cre, queue, "q1", attr("queue_type", "execution")), 0, ""},
		{"route queue", mgr(cre, queue, "q4", attr("queue_type", "route")), 0, ""},
		{"q1 in p1", mgr(set, queue, "q1", attr("partition", "p1")), 0, ""},
		{"partition on a route queue", mgr(set, queue, "q4", attr("partition", "p1")), batchreq.PBSE_ROUTE_QUE_NO_PART,
			"Can not assign a partition to route queue"},
		{"route type with a partition", mgr(set, queue, "q1", attr("queue_type", "route")), batchreq.PBSE_CANNOT_SET_ROUTE,
			"Route queues are incompatible with the partition attribute queue_type"},
		{"nodes", mgr(cre, node, "n1"), 0, ""},
		{"node in p1", mgr(set, node, "n1", attr("partition", "p1")), 0, ""},
		{"node to its partition's queue", mgr(set, node, "n1", attr("queue", "q1")), 0, ""},
		{"node to another partition", mgr(set, node, "n1", attr("partition", "p2")), batchreq.PBSE_QUE_NOT_IN_PART,
			"Queue q1 is not part of partition for node"},
		{"queue to another partition", mgr(set, queue, "q1", attr("partition", "p2")), batchreq.PBSE_INVALID_PART_QUE,
			"Invalid partition in queue"},
		{"node n2 in p2", mgr(cre, node, "n2", attr("partition", "p2")), 0, ""},
		{"node to a queue of another partition", mgr(set, node, "n2", attr("queue", "q1")), batchreq.PBSE_PART_NOT_IN_QUE,
			"Partition p2 is not part of queue for node"},
		{"node to an unknown queue", mgr(set, node, "n2", attr("queue", "nosuch")), batchreq.PBSE_UNKQUE, ""},
		{"unset partitions", mgr(unset, sched, "s1", attr("partitions", "")), 0, ""},
		{"p2 free again", mgr(set, sched, "s2", incr("partitions", "p2")), 0, ""},
		{"delete", mgr(del, sched, "abcdefghijklmno"), 0, ""},
		{"delete unknown", mgr(del, sched, "abcdefghijklmno"), batchreq.PBSE_UNKSCHED, ""},
	} {
		p := c.do(tc.req)
		if p.Code != tc.code {
			t.Errorf("%s: code %d (%s), want %d", tc.name, p.Code, p.Text, tc.code)
			continue
		}
		if tc.text != "" && p.Text != tc.text {
			t.Errorf("%s: text %q, want %q", tc.name, p.Text, tc.text)
		}
	}

	// The default scheduler mirrors the server's scheduling and
	// scheduler_iteration, both ways.
	if p := c.do(mgr(set, sched, "default", attr("scheduler_iteration", "42"))); p.Code != 0 {
		t.Fatalf("set default iteration: %d %s", p.Code, p.Text)
	}
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("scheduler_iteration")}))
	if len(p.Status) != 1 || len(p.Status[0].Attrs) != 1 || p.Status[0].Attrs[0].Value != "42" {
		t.Errorf("server after set sched default: %+v", p.Status)
	}
	c.do(mgr(set, batchreq.MGR_OBJ_SERVER, "", attr("scheduler_iteration", "77")))
	p = c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSched, "root", &batchreq.StatusReq{ID: "default"}))
	if got := statusText(p); !strings.Contains(got, "scheduler_iteration=77") || !strings.Contains(got, "sched_priv="+home+"/sched_priv,") {
		t.Errorf("default after set server: %s", got)
	}

	// Everything survives a restart.
	want := statusText(c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSched, "root", &batchreq.StatusReq{})))
	s.Shutdown("Quick")
	<-s.Done()
	s2 := testServer(t, home, InitWarm)
	c2 := dialPrivileged(t, s2.Addr())
	if got := statusText(c2.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSched, "root", &batchreq.StatusReq{}))); got != want {
		t.Errorf("after restart:\n%s\nwant\n%s", got, want)
	}
	p = c2.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "n1"}))
	if got := statusText(p); !strings.Contains(got, "partition=p1") || !strings.Contains(got, "queue=q1") {
		t.Errorf("node n1 after restart: %s", got)
	}
}

// statusText renders a Status reply as "name: a=v, b=v" lines.
func statusText(p *batchreq.Reply) string {
	var b strings.Builder
	for _, o := range p.Status {
		b.WriteString(o.Name + ":")
		for _, a := range o.Attrs {
			b.WriteString(" " + a.FullName() + "=" + a.Value + ",")
		}
		b.WriteString("\n")
	}
	return b.String()
}
