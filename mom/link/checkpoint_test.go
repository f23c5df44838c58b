package link

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/batchreq"
)

// TestCheckpointRequests: with a $checkpoint_script, CheckpointJob takes
// a checkpoint that the next StatusJob reports (checkpoint_name,
// checkpoint_time) and HoldJob takes one and ends the job, whose obit
// (exit status 0) carries the checkpoint for the restart.
func TestCheckpointRequests(t *testing.T) {
	requireUser(t)
	dir := openDir(t, "gopbs-ckpt-", nil)
	script := filepath.Join(dir, "ckpt")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$7\" > \"$5/$6\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	tm := startMom(t, srv, "$checkpoint_script "+script+"\n")
	dumpLogOnFailure(t, tm)
	id := "9.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	ask := func(typ int) *batchreq.Reply {
		b := dialBatch(t, tm.batch)
		defer b.disconnect()
		return b.do(typ, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
	}
	if rep := ask(batchreq.PBS_BATCH_CheckpointJob); rep.Code != 0 {
		t.Fatalf("CheckpointJob: %d %s", rep.Code, rep.Text)
	}
	sb := dialBatch(t, tm.batch)
	rep := sb.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	sb.disconnect()
	if rep.Code != 0 || len(rep.Status) != 1 {
		t.Fatalf("StatusJob: %+v", rep)
	}
	name, _ := rep.Status[0].Attrs.Get("checkpoint_name")
	if _, ok := rep.Status[0].Attrs.Get("checkpoint_time"); !strings.HasPrefix(name, "ckpt."+id+".") || !ok {
		t.Errorf("status after the checkpoint: %v", rep.Status[0].Attrs)
	}
	if rep := ask(batchreq.PBS_BATCH_HoldJob); rep.Code != 0 {
		t.Fatalf("HoldJob: %d %s", rep.Code, rep.Text)
	}
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob) // pre-obit
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	held, _ := obit.Attrs.Get("checkpoint_name")
	if obit.ExitStatus != 0 || !strings.HasPrefix(held, "ckpt."+id+".") {
		t.Errorf("obit of the held job: exit %d, attributes %v", obit.ExitStatus, obit.Attrs)
	}
	b, err := os.ReadFile(filepath.Join(tm.home, "checkpoint", id+".CK", held))
	if err != nil || string(b) != "15\n" {
		t.Errorf("the held checkpoint: %q %v", b, err)
	}
}
