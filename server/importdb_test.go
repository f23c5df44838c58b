package server

import (
	"gopbs/server/state"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/importdb"
	"gopbs/server/store"
)

// TestDatabaseRecovers builds a database as pbs_import does, writes it to
// a store and starts a server on it: the server recovers every object.
func TestDatabaseRecovers(t *testing.T) {
	d := importdb.New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.SetServer(42, []state.RecordAttr{{Name: "scheduling", Value: "True"}, {Name: "total_jobs", Value: "9"},
		{Name: "keep_completed", Value: "1000000000"}, {Name: "managers", Value: "root@vm\nadmin@vm\n"}, {Name: "bogus", Value: "1"}}))
	must(d.AddQueue("batch", []state.RecordAttr{{Name: "queue_type", Value: "Execution"}, {Name: "resources_default", Resource: "walltime", Value: "01:00:00"},
		{Name: "total_jobs", Value: "3"}, {Name: "enabled", Value: "True"}, {Name: "acl_users", Value: "alice\nbob\n"}}))
	must(d.AddQueue("a_route", []state.RecordAttr{{Name: "queue_type", Value: "Route"}, {Name: "route_destinations", Value: "batch\n"}}))
	if err := d.AddQueue("odd", []state.RecordAttr{{Name: "queue_type", Value: "Sideways"}}); err == nil {
		t.Error("a queue of an unknown type was added")
	}
	if err := d.AddQueue("batch", nil); err == nil {
		t.Error("a queue was added twice")
	}
	must(d.AddNodes("n[1-2] np=2 big", true, false, []state.RecordAttr{{Name: "note", Value: "new disks"}}))
	if !slices.Equal(d.Dropped, []string{"server: bogus"}) {
		t.Errorf("dropped %v", d.Dropped)
	}
	owner := state.RecordAttr{Name: "Job_Owner", Value: "alice@vm"}
	must(d.AddJob(&state.JobRecord{ID: "5[].vm", Seq: 1, State: int64(pbsattr.StateQueued), Substate: int64(pbsattr.SubQueued), Queue: "batch", Rank: 1, ArrayIndex: -1,
		ArrayRequest: "0-1", ArrayCounts: []int64{2, 0, 0, 0}, Attrs: []state.RecordAttr{owner, {Name: "Variable_List", Value: "A=1\nB=x\\,y\n"}}}, []byte("#!/bin/sh\ntrue\n")))
	must(d.AddJob(&state.JobRecord{ID: "5[1].vm", Seq: 3, State: int64(pbsattr.StateQueued), Substate: int64(pbsattr.SubQueued), Queue: "batch", Rank: 3, ArrayIndex: 1,
		Parent: "5[].vm", Hold: state.HoldArray, Attrs: []state.RecordAttr{owner}}, nil))
	if err := d.AddJob(&state.JobRecord{ID: "6[0].vm", State: int64(pbsattr.StateQueued), Queue: "batch", Parent: "6[].vm"}, nil); err == nil {
		t.Error("a sub-job was added before its template")
	}
	if err := d.AddJob(&state.JobRecord{ID: "9.vm", State: int64(pbsattr.StateQueued), Queue: "nowhere"}, nil); err == nil {
		t.Error("a job of an unknown queue was added")
	}
	if err := d.AddJob(&state.JobRecord{ID: "9.vm", State: int64(pbsattr.StateQueued), Queue: "batch", Attrs: []state.RecordAttr{{Name: "Priority", Value: "high"}}}, nil); err == nil ||
		!strings.Contains(err.Error(), `Priority: bad value "high"`) {
		t.Errorf("bad value: %v", err)
	}
	must(d.AddJob(&state.JobRecord{ID: "7.vm", Seq: 4, State: int64(pbsattr.StateRunning), Substate: int64(pbsattr.SubRunning), Queue: "batch", Rank: 4, ArrayIndex: -1,
		Attrs: []state.RecordAttr{owner, {Name: "exec_host", Value: "n1/0"}, {Name: "session_id", Value: "99"}, {Name: "job_state", Value: "R"}}}, []byte("s")))
	must(d.Requeue("7.vm"))
	if err := d.Requeue("7.vm"); err == nil {
		t.Error("a queued job was requeued")
	}
	must(d.AddJob(&state.JobRecord{ID: "8.vm", Seq: 5, State: int64(pbsattr.StateComplete), Substate: int64(pbsattr.SubComplete), Queue: "batch", Rank: 5, ArrayIndex: -1,
		Attrs: []state.RecordAttr{owner, {Name: "comp_time", Value: "1000"}, {Name: "site_thing", Resource: "x", Value: "kept"}}}, nil))

	home := t.TempDir()
	must(os.Mkdir(filepath.Join(home, "server_priv"), 0o750))
	st, err := store.OpenBolt(filepath.Join(home, "server_priv", "serverdb.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	must(st.Apply(d.Ops()...))
	must(st.Close())

	s := testServer(t, home, InitWarm)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.nextJob != 42 || s.attrs.Get(pbsattr.SrvScheduling) != "True" || s.attrs.Has(pbsattr.SrvTotalJobs) || s.attrs.Get(pbsattr.SrvManagers) != "root@vm,admin@vm" {
		t.Errorf("server: next %d, attributes %+v", s.nextJob, s.attrs)
	}
	if len(s.queues) != 2 || s.queues[0].Name != "batch" || s.queues[1].Name != "a_route" {
		t.Fatalf("queues %+v", s.queues)
	}
	if q := s.queues[0]; q.Attrs.Has(pbsattr.QueueTotalJobs) || q.Attrs.Get(pbsattr.QueueACLUsers) != "alice,bob" || q.Attrs.GetRes(pbsattr.QueueResourcesDefault, "walltime") != "01:00:00" {
		t.Errorf("queue batch %+v", q.Attrs)
	}
	if len(s.nodes) != 2 || s.nodes[1].Name != "n2" || s.nodes[1].NP != 2 || s.nodes[1].State&state.NodeStateOffline == 0 || s.nodes[1].Attrs.Get(pbsattr.NodeNote) != "new disks" {
		t.Errorf("nodes %+v", s.nodes)
	}
	tmpl, sub := s.jobs.Get("5[].vm"), s.jobs.Get("5[1].vm")
	if tmpl == nil || sub == nil || sub.Parent != tmpl || tmpl.Array == nil || tmpl.Array.Size != 2 || len(tmpl.Array.Subjobs) != 1 {
		t.Fatalf("array: template %+v, sub-job %+v", tmpl, sub)
	}
	if v := tmpl.Attrs.Get(pbsattr.JobVariableList); v != `A=1,B=x\,y` {
		t.Errorf("Variable_List %q", v)
	}
	if w := tmpl.Attrs.GetRes(pbsattr.JobResourceList, "walltime"); w != "01:00:00" {
		t.Errorf("resources_default not applied: walltime %q", w)
	}
	if j := s.jobs.Get("7.vm"); j == nil || j.State != pbsattr.StateQueued || j.Attrs.Has(pbsattr.JobExecHost) || j.Attrs.Has(pbsattr.JobSessionID) || j.Attrs.Has(pbsattr.JobState) {
		t.Errorf("requeued job %+v", j)
	}
	if j := s.jobs.Get("8.vm"); j == nil || j.PurgeAt != 1000+1000000000 || j.Attrs.GetRes(state.UnknownJobAttr, "site_thing\x1fx") != "kept" {
		t.Errorf("completed job %+v", j)
	}
	var order []string
	for j := s.jobs.First(); j != nil; j = j.Next() {
		order = append(order, j.ID)
	}
	if !slices.Equal(order, []string{"5[].vm", "5[1].vm", "7.vm", "8.vm"}) {
		t.Errorf("job order %v", order)
	}
}
