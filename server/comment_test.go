package server

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/server/store"
)

func setComment(id, text string) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "root", &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{attr("comment", text)},
	})
}

// TestCommentsWithoutSyncEach checks that comment-only ModifyJobs (the
// scheduler's "Not Running" comments) are acknowledged without an
// fdatasync each, while other modifications still get theirs.
func TestCommentsWithoutSyncEach(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports")
	s := testServer(t, "", "create")
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	id := submit(t, c, "commented")
	const n = 50
	start := time.Now()
	before := s.store.(*store.Bolt).Syncs()
	for i := range n {
		if p := c.do(setComment(id, fmt.Sprintf("Not Running: try %d", i))); p.Code != 0 {
			t.Fatalf("comment %d: %d %q", i, p.Code, p.Text)
		}
	}
	elapsed := time.Since(start)
	// At most one lazy sync per 10 ms, and a few to spare for the
	// server's own durable writes meanwhile; a sync per comment would be n.
	if syncs, most := s.store.(*store.Bolt).Syncs()-before, int64(elapsed/(10*time.Millisecond))+5; syncs > most {
		t.Fatalf("%d fdatasyncs for %d comments in %v (at most %d expected)", syncs, n, elapsed, most)
	}
	if got := jobAttr(t, c, id, "comment"); got != fmt.Sprintf("Not Running: try %d", n-1) {
		t.Fatalf("comment = %q", got)
	}
	// A modification of anything else is synced before its reply.
	before = s.store.(*store.Bolt).Syncs()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "root", &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{attr("comment", "with a name"), attr("Job_Name", "renamed")},
	}))
	if p.Code != 0 {
		t.Fatalf("modify: %d %q", p.Code, p.Text)
	}
	if s.store.(*store.Bolt).Syncs() == before {
		t.Fatal("a ModifyJob of Job_Name was acknowledged before its fdatasync")
	}
}

// TestCommentsSurviveKill SIGKILLs pbs_server right after its last
// comment reply: every acknowledged comment is there after a warm start.
func TestCommentsSurviveKill(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	start, _, port := e2eServerProcess(t)
	server := start("create")
	c := e2eDial(t, port)
	e2eBatchQueue(t, c)
	const jobs, rounds = 20, 10
	ids := make([]string, jobs)
	for i := range ids {
		ids[i] = submit(t, c, "j"+strconv.Itoa(i), attr("Hold_Types", "u"))
	}
	want := map[string]string{}
	for r := range rounds {
		for _, id := range ids {
			text := fmt.Sprintf("Not Running: round %d", r)
			if p := c.do(setComment(id, text)); p.Code != 0 {
				t.Fatalf("comment %s: %d %q", id, p.Code, p.Text)
			}
			want[id] = text
		}
	}
	server.Kill()
	c.nc.Close()
	start("warm")
	c = e2eDial(t, port)
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	for _, id := range ids {
		if got := jobAttr(t, c, id, "comment"); got != want[id] {
			t.Errorf("%s: comment after SIGKILL and warm start = %q, want %q", id, got, want[id])
		}
	}
}
