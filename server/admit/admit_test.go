package admit

import (
	"strings"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// fakeState is a server of a few nodes and attributes, as admission
// reads it.
type fakeState struct {
	attrs state.Attrs
	nodes []*state.Node
}

func (f *fakeState) Attrs() state.Attrs   { return f.attrs }
func (f *fakeState) Nodes() []*state.Node { return f.nodes }
func (f *fakeState) Node(name string) *state.Node {
	for _, n := range f.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func node(name string, np int, props ...string) *state.Node {
	n := &state.Node{Name: name, NP: np}
	if len(props) > 0 {
		n.Attrs.Set(pbsattr.NodeProperties, state.EncodeArst(props))
	}
	return n
}

func execQueue(name string) *state.Queue {
	q := &state.Queue{Name: name, Users: map[string]int{}}
	q.Attrs.Set(pbsattr.QueueType, "Execution")
	q.Attrs.Set(pbsattr.QueueEnabled, "True")
	q.Attrs.Set(pbsattr.QueueStarted, "True")
	return q
}

func job(owner string) *state.Job {
	j := &state.Job{ID: "1.srv"}
	j.Attrs.Set(pbsattr.JobOwner, owner)
	return j
}

// TestFeasible: a node request is feasible when the configured nodes
// could serve it whatever their state; a server without nodes serves
// anything; a spec that does not parse is left to allocation, but is
// never satisfiable.
func TestFeasible(t *testing.T) {
	ts := node("ts", 64)
	ts.TimeShared = true
	c := New(&fakeState{nodes: []*state.Node{node("a", 2, "fast"), node("b", 4), node("c", 1, "fast", "big"), ts}})
	for spec, want := range map[string]bool{
		"":                true,
		"1":               true,
		"3":               true,
		"4":               false, // the time-shared node is no cluster node
		"1:ppn=4":         true,
		"2:ppn=2":         true,
		"2:ppn=3":         false,
		"2:fast":          true,
		"3:fast":          false,
		"big:ppn=1+b":     true,
		"a:ppn=2+1:ppn=4": true,
		"1+1:ppn=4":       true, // the large element is tried first
		"ts":              false,
		"1:foo=x":         true, // left to allocation to refuse
	} {
		if got := c.Feasible(spec); got != want {
			t.Errorf("Feasible(%q) = %v, want %v", spec, got, want)
		}
	}
	if c.Satisfiable("1:foo=x") || !c.Satisfiable("2:fast") || c.Satisfiable("5") {
		t.Error("Satisfiable: a bad spec, two fast nodes, five nodes")
	}
	if empty := New(&fakeState{}); !empty.Feasible("100:ppn=8") {
		t.Error("a server without nodes refused a node request")
	}
}

// TestAdmit: the queue's checks in their order, each refusal with its
// code, and the server's resources_max where the queue has none.
func TestAdmit(t *testing.T) {
	st := &fakeState{nodes: []*state.Node{node("a", 2)}}
	st.attrs.SetRes(pbsattr.SrvResourcesMax, "walltime", "01:00:00")
	st.attrs.Set(pbsattr.SrvACLRoots, "root@*")
	c := New(st)
	q := execQueue("batch")
	j := job("alice@sub")
	if p := c.Admit(j, q, "sub", false); p != nil {
		t.Fatalf("plain job refused: %d %q", p.Code, p.Text)
	}
	refused := func(what string, code int, text string) {
		t.Helper()
		p := c.Admit(j, q, "sub", false)
		if p == nil || p.Code != code || !strings.Contains(p.Text, text) {
			t.Errorf("%s: %+v, want %d %q", what, p, code, text)
		}
	}
	q.Attrs.Set(pbsattr.QueueEnabled, "False")
	refused("disabled queue", batchreq.PBSE_QUNOENB, "queue is disabled: user alice@sub, queue batch")
	if p := c.Admit(j, q, "sub", true); p != nil {
		t.Errorf("a manager's move into a disabled queue: %d %q", p.Code, p.Text)
	}
	q.Attrs.Set(pbsattr.QueueEnabled, "True")
	q.Attrs.Set(pbsattr.QueueMaxQueuable, "1")
	q.Count[pbsattr.StateQueued] = 1
	refused("max_queuable", batchreq.PBSE_MAXQUED, "exceeds the queue limit")
	q.Attrs.Unset(pbsattr.QueueMaxQueuable)
	q.Attrs.Set(pbsattr.QueueFromRouteOnly, "True")
	refused("from_route_only", batchreq.PBSE_QACESS, "accepts only routed jobs")
	if p := c.AdmitRouted(j, q); p != nil {
		t.Errorf("routed job refused by from_route_only: %d %q", p.Code, p.Text)
	}
	q.Attrs.Unset(pbsattr.QueueFromRouteOnly)
	q.Attrs.Set(pbsattr.QueueACLHostEnable, "True")
	q.Attrs.Set(pbsattr.QueueACLHosts, "*.example.com")
	refused("host ACL", batchreq.PBSE_BADHOST, "host ACL rejected")
	q.Attrs.Set(pbsattr.QueueACLHostEnable, "False")
	q.Attrs.Set(pbsattr.QueueACLUserEnable, "True")
	q.Attrs.Set(pbsattr.QueueACLUsers, "bob")
	refused("user ACL", batchreq.PBSE_PERM, "user ACL rejected")
	q.Attrs.Set(pbsattr.QueueACLUsers, "alice")
	j.Attrs.SetRes(pbsattr.JobResourceList, "walltime", "02:00:00")
	refused("server resources_max", batchreq.PBSE_EXCQRESC, "cannot satisfy server max walltime")
	q.Attrs.SetRes(pbsattr.QueueResourcesMax, "walltime", "03:00:00")
	if p := c.Admit(j, q, "sub", false); p != nil {
		t.Errorf("queue resources_max above the job's: %d %q", p.Code, p.Text)
	}
	j.Attrs.SetRes(pbsattr.JobResourceList, "nodes", "2")
	refused("infeasible nodes", batchreq.PBSE_EXCQRESC, MsgInfeasible)
	j.Attrs.SetRes(pbsattr.JobResourceList, "nodes", "1")
	j.Attrs.Set(pbsattr.JobCheckpoint, "c=10")
	refused("checkpoints without a capable node", batchreq.PBSE_NOSUP, "asks for checkpoints")
	st.nodes[0].Attrs.Set(pbsattr.NodeStatus, "arch=linux,checkpoint=yes")
	if p := c.Admit(j, q, "sub", false); p != nil {
		t.Errorf("checkpoints with a capable node: %d %q", p.Code, p.Text)
	}
	// root's job: acl_roots names root from any host
	root := job("root@sub")
	q.Attrs.Set(pbsattr.QueueACLUserEnable, "False")
	if p := c.CheckRoot(root); p != nil {
		t.Errorf("root allowed by acl_roots: %d %q", p.Code, p.Text)
	}
	st.attrs.Unset(pbsattr.SrvACLRoots)
	if p := c.CheckRoot(root); p == nil || p.Code != batchreq.PBSE_BADUSER {
		t.Errorf("root without acl_roots: %+v", p)
	}
}

// TestApplyDefaults: the queue's resources_default, then the server's,
// then for the limits a MOM enforces the queue's and the server's
// resources_max; nodect and neednodes follow nodes.
func TestApplyDefaults(t *testing.T) {
	st := &fakeState{}
	st.attrs.SetRes(pbsattr.SrvResourcesDefault, "walltime", "00:10:00")
	st.attrs.SetRes(pbsattr.SrvResourcesDefault, "ncpus", "2")
	st.attrs.SetRes(pbsattr.SrvResourcesMax, "mem", "4gb")
	st.attrs.SetRes(pbsattr.SrvResourcesMax, "software", "abaqus")
	q := execQueue("batch")
	q.Attrs.SetRes(pbsattr.QueueResourcesDefault, "walltime", "00:05:00")
	q.Attrs.SetRes(pbsattr.QueueResourcesDefault, "nodes", "2:ppn=2")
	q.Attrs.SetRes(pbsattr.QueueResourcesMax, "cput", "01:00:00")
	j := job("alice@sub")
	New(st).ApplyDefaults(j, q)
	for res, want := range map[string]string{
		"walltime": "00:05:00", "ncpus": "2", "mem": "4gb", "cput": "01:00:00",
		"nodes": "2:ppn=2", "nodect": "2", "neednodes": "2:ppn=2",
	} {
		if got, _ := j.Attrs.LookupRes(pbsattr.JobResourceList, res); got != want {
			t.Errorf("%s = %q, want %q", res, got, want)
		}
	}
	if v, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, "software"); ok {
		t.Errorf("a maximum that is no MOM limit became a default: software=%q", v)
	}
}
