package server

import (
	"bytes"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// TestSelStatEncoding: the directly encoded full status of the jobs
// (encodeJobStatuses, the SelStat path) has the bytes of a batchreq
// Reply of their jobStatus objects, for every kind of requester, with
// queued, held and running jobs (Walltime.Remaining), and for none.
func TestSelStatEncoding(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	submit(t, c, "queued")
	if p := submitAs(t, c, "root", "short", rattr("Resource_List", "walltime", "00:02:00")); p.Code != 0 {
		t.Fatalf("submit to short: %d", p.Code)
	}
	submit(t, c, "held", attr("Hold_Types", "u"), attr("comment", "a comment"))
	id := submit(t, c, "running")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d %s", p.Code, p.Text)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var jobs []*state.Job
	for j := s.jobs.First(); j != nil; j = j.Next() {
		jobs = append(jobs, j)
	}
	if len(jobs) != 4 || jobs[1].Queue.Name != "short" || jobs[3].State != pbsattr.StateRunning {
		t.Fatalf("%d jobs, want 4 with the second in short and the last running", len(jobs))
	}
	if raw := s.encodeJobStatuses(&handler.Asker{Manager: true}, jobs[3:], -1); !bytes.Contains(raw, []byte("Remaining")) {
		t.Errorf("running job's status without Walltime.Remaining: %q", raw)
	}
	for _, tc := range []struct {
		name string
		user string
		who  handler.Asker
	}{
		{"scheduler", "Scheduler", handler.Asker{Operator: true, Manager: true, Privileged: true}},
		{"manager", "root", handler.Asker{Manager: true}},
		{"owner", "root", handler.Asker{}},
		{"other user", "alice", handler.Asker{}},
	} {
		rc := &tc.who
		rc.User = tc.user
		for _, list := range [][]*state.Job{jobs, jobs[3:], nil} {
			objs := make([]batchreq.StatusObject, 0, len(list))
			for _, j := range list {
				o, _ := s.jobStatus(rc, j, nil)
				objs = append(objs, o)
			}
			want := (&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs}).Append(nil)
			if got := s.encodeJobStatuses(rc, list, -1); !bytes.Equal(got, want) {
				t.Errorf("%s, %d jobs:\n got %q\nwant %q", tc.name, len(list), got, want)
			}
		}
	}
}

// TestSelStatReply: a SelStat over the wire lists the selected jobs of
// the queue with their full status, and an empty selection is a Status
// reply without objects.
func TestSelStatReply(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	a := submit(t, c, "first")
	if p := submitAs(t, c, "root", "short"); p.Code != 0 {
		t.Fatalf("submit to short: %d", p.Code)
	}
	b := submit(t, c, "second")
	sel := func(queue string, crit ...batchreq.Attr) *batchreq.Reply {
		t.Helper()
		attrs := batchreq.AttrList{{Name: "destination", Value: queue, Op: batchreq.EQ}}
		attrs = append(attrs, crit...)
		p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SelStat, "Scheduler", &batchreq.Select{Attrs: attrs}))
		if p.Code != 0 || p.Choice != batchreq.BATCH_REPLY_CHOICE_Status {
			t.Fatalf("SelStat %s: code %d choice %d", queue, p.Code, p.Choice)
		}
		return p
	}
	p := sel("batch")
	if len(p.Status) != 2 || p.Status[0].Name != a || p.Status[1].Name != b {
		t.Fatalf("SelStat batch: %+v", p.Status)
	}
	names := map[string]string{}
	for _, at := range p.Status[1].Attrs {
		names[at.Name] = at.Value
	}
	if names["Job_Name"] != "second" || names["job_state"] != "Q" || names["queue"] != "batch" {
		t.Errorf("status of %s: %v", b, names)
	}
	held := batchreq.Attr{Name: "job_state", Value: "H", Op: batchreq.EQ}
	if p := sel("batch", held); len(p.Status) != 0 {
		t.Errorf("SelStat of held jobs: %+v", p.Status)
	}
}
