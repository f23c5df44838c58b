package server

import (
	"strings"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/admit"
	"gopbs/server/link/running"
)

func TestCheckpointValues(t *testing.T) {
	for v, want := range map[string][2]bool{ // wantsCheckpoints, neverCheckpoint
		"": {false, false}, "u": {false, false}, "n": {false, true}, "none": {false, true},
		"s": {true, false}, "c": {true, false}, "c=5": {true, false}, "enabled": {true, false},
		"shutdown,depth=2": {true, false}, "depth=2,dir=/x": {false, false}, "periodic": {true, false},
	} {
		if got := [2]bool{admit.WantsCheckpoints(v), running.NeverCheckpoint(v)}; got != want {
			t.Errorf("%q: wants, never = %v, want %v", v, got, want)
		}
	}
}

// TestCheckpointQueueRules: an execution queue refuses a job asking for
// checkpoints while no node reports checkpoint support (seed 001), and
// accepts it once one does; the queue's checkpoint_defaults fill an
// unspecified Checkpoint and checkpoint_min raises a shorter interval.
func TestCheckpointQueueRules(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	queue := func(ckpt string) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{
			Attrs: batchreq.AttrList{attr("Job_Name", "ck"), attr("Checkpoint", ckpt)}}))
	}
	if p := queue("enabled"); p.Code != batchreq.PBSE_NOSUP || !strings.Contains(p.Text, "no node of queue batch can take them") {
		t.Errorf("qsub -c enabled without checkpointing nodes: %d %q", p.Code, p.Text)
	}
	if p := queue("n"); p.Code != 0 {
		t.Errorf("qsub -c n: %d %q", p.Code, p.Text)
	}
	s.mu.Lock()
	s.nodeByName["vm"].Attrs.Set(pbsattr.NodeStatus, "opsys=linux,checkpoint=yes,state=free")
	s.mu.Unlock()
	if p := queue("enabled"); p.Code != 0 {
		t.Errorf("qsub -c enabled with a checkpointing node: %d %q", p.Code, p.Text)
	}
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("checkpoint_defaults", "c=2")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("checkpoint_min", "10")),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("qmgr: %d %s", p.Code, p.Text)
		}
	}
	for ckpt, want := range map[string]string{"u": "c=10", "c=3,depth=2": "c=10,depth=2", "c=30": "c=30", "s": "s", "n": "n"} {
		id := submit(t, c, "ck", attr("Checkpoint", ckpt))
		if got := jobAttr(t, c, id, "Checkpoint"); got != want {
			t.Errorf("Checkpoint %s in queue batch (defaults c=2, min 10): %q, want %q", ckpt, got, want)
		}
	}
}

// TestShutdownCheckpointsJobs: qterm -t immediate offers every running
// job whose Checkpoint is not n a checkpoint (u included, seed 001); the
// job the MOM checkpointed comes back held (system hold) after its obit,
// with its checkpoint for the restart; the n job is killed.
func TestShutdownCheckpointsJobs(t *testing.T) {
	mom := newFakeMom(t)
	home := t.TempDir()
	s := runServerAt(t, home, InitCreate, mom, 0, nil)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	ck := submit(t, c, "ck", attr("Rerunable", "False"))
	never := submit(t, c, "never", attr("Checkpoint", "n"), attr("Rerunable", "False"))
	for _, id := range []string{ck, never} {
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
			t.Fatalf("RunJob %s: %d", id, p.Code)
		}
		mom.next(batchreq.PBS_BATCH_Commit)
	}
	done := make(chan *batchreq.Reply, 1)
	go func() {
		done <- c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_IMMEDIATE}))
	}()
	if h := mom.next(batchreq.PBS_BATCH_HoldJob).Body.(*batchreq.Manage); h.ObjName != ck {
		t.Errorf("HoldJob for %s, want %s", h.ObjName, ck)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.JobID != never || sj.Signal != "SIGKILL" {
		t.Errorf("SignalJob %+v, want SIGKILL for %s", sj, never)
	}
	momc := privConn(t, s)
	for _, id := range []string{ck, never} {
		attrs := batchreq.AttrList{}
		if id == ck {
			attrs = append(attrs, attr("checkpoint_name", "ckpt."+ck+".1795777341"))
		}
		if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, Attrs: attrs})); p.Code != 0 {
			t.Fatalf("obit %s: %d", id, p.Code)
		}
	}
	<-done
	<-s.Done()
	s = runServerAt(t, home, InitWarm, mom, 0, nil)
	c = privConn(t, s)
	if st, h, n := jobAttr(t, c, ck, "job_state"), jobAttr(t, c, ck, "Hold_Types"), jobAttr(t, c, ck, "checkpoint_name"); st != "H" || h != "s" || n == "" {
		t.Errorf("checkpointed job after the restart: state %q hold %q checkpoint_name %q", st, h, n)
	}
	if st := jobAttr(t, c, never, "job_state"); st != "" {
		t.Errorf("killed job after the restart: %q", st)
	}
}
