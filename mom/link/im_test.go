package link

import (
	"slices"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/mom/jobexec"
)

// TestJoinAttrs: IM_JOIN_JOB carries the QueueJob attributes with
// job_state, mtime and cookie where TORQUE's mother superior puts them
// (captures 105, 106).
func TestJoinAttrs(t *testing.T) {
	names := func(l batchreq.AttrList) []string {
		var out []string
		for _, a := range l {
			out = append(out, a.Name)
		}
		return out
	}
	queueJob := batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "multi"), batchreq.NewAttr("Job_Owner", "alice@vm"),
		batchreq.NewAttr("queue", "batch"), batchreq.NewAttr("server", "vm"), batchreq.NewAttr("Checkpoint", "u"),
		batchreq.NewAttr("Error_Path", "vm:/home/alice/multi.e41"), batchreq.NewAttr("exec_host", "vm/0+vm2/0"),
		batchreq.NewAttr("Join_Path", "n"), batchreq.NewAttr("Keep_Files", "n"),
		batchreq.NewAttr("Output_Path", "vm:/home/alice/multi.o41"),
		batchreq.NewResourceAttr("Resource_List", "nodes", "2"), batchreq.NewAttr("euser", "alice"),
		batchreq.NewAttr("hashname", "41.vm"), batchreq.NewAttr("start_time", "1795315294"),
		batchreq.NewAttr("fault_tolerant", "False"),
	}
	want := []string{"Job_Name", "Job_Owner", "job_state", "queue", "server", "Checkpoint", "Error_Path", "exec_host",
		"Join_Path", "Keep_Files", "mtime", "Output_Path", "Resource_List", "euser", "hashname", "cookie", "start_time", "fault_tolerant"}
	now := time.Unix(1795315300, 0)
	got := joinAttrs(queueJob, "C00C1E", now)
	if !slices.Equal(names(got), want) {
		t.Errorf("order %q, want %q", names(got), want)
	}
	for name, value := range map[string]string{"job_state": "T", "mtime": "1795315294", "cookie": "C00C1E"} {
		if v, _ := got.Get(name); v != value {
			t.Errorf("%s = %q, want %q", name, v, value)
		}
	}
	// A cookie the server sent is replaced by the job's, in its place;
	// without start_time, mtime is the time of the join and the cookie
	// comes last.
	got = joinAttrs(batchreq.AttrList{batchreq.NewAttr("cookie", "OLD"), batchreq.NewAttr("Keep_Files", "n")}, "NEW", now)
	if !slices.Equal(names(got), []string{"Keep_Files", "mtime", "cookie"}) {
		t.Errorf("order %q", names(got))
	}
	if v, _ := got.Get("cookie"); v != "NEW" {
		t.Errorf("cookie %q", v)
	}
	if v, _ := got.Get("mtime"); v != "1795315300" {
		t.Errorf("mtime %q", v)
	}
}

// TestNodeOf: TM node numbers are virtual nodes; their host's place in
// exec_host is the node number (PBS_NODENUM).
func TestNodeOf(t *testing.T) {
	vnodes, _ := jobexec.ParseExecHost("a/0+a/1+b/0+c/0+b/1")
	mj := &msJob{vnodes: vnodes, hosts: jobHosts(vnodes)}
	if !slices.Equal(mj.hosts, []string{"a", "b", "c"}) {
		t.Fatalf("hosts %q", mj.hosts)
	}
	for vnode, want := range []int{0, 0, 1, 2, 1} {
		if got, ok := mj.nodeOf(vnode); !ok || got != want {
			t.Errorf("nodeOf(%d) = %d %v, want %d", vnode, got, ok, want)
		}
	}
	for _, bad := range []int{-1, 5} {
		if _, ok := mj.nodeOf(bad); ok {
			t.Errorf("nodeOf(%d) accepted", bad)
		}
	}
	single := &msJob{hosts: []string{"a"}}
	if n, ok := single.nodeOf(0); !ok || n != 0 {
		t.Errorf("job without exec_host: nodeOf(0) = %d %v", n, ok)
	}
}
