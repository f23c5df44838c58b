package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

// The test's own checkpoint programs save and restore a counter: the job
// counts to 5 in count.<job name> and waits; the checkpoint script copies
// the count into the checkpoint and notes each checkpoint in
// checkpoints.log; the restart script counts on from the saved count to 3
// more and ends.
const (
	counterJob = "#!/bin/sh\nn=0\nwhile [ $n -lt 5 ]; do n=$((n+1)); echo $n > \"$PBS_O_WORKDIR/count.$PBS_JOBNAME\"; done\n" +
		"echo counted to $n\nwhile :; do sleep 1; done\n"
	counterCheckpoint = "#!/bin/sh\n# <sid> <jobid> <user> <group> <dir> <name> <signal> <depth>\n" +
		"cp \"$PBS_O_WORKDIR/count.$PBS_JOBNAME\" \"$5/$6\" && echo \"$2 $7 $6\" >> \"$PBS_O_WORKDIR/checkpoints.log\"\n"
	counterRestart = "#!/bin/sh\n# <sid> <jobid> <user> <group> <dir> <name>\nn=$(cat \"$5/$6\")\necho \"restarted from $6 at $n\"\n" +
		"end=$((n+3))\nwhile [ $n -lt $end ]; do n=$((n+1)); echo $n > \"$PBS_O_WORKDIR/count.$PBS_JOBNAME\"; done\necho counted to $n\n"
)

// checkpointCluster is a cluster whose MOM has the counter's programs.
func checkpointCluster(t *testing.T) *cluster {
	dir := filepath.Join(e2e.Dir(t), "scripts")
	e2e.WriteFile(t, filepath.Join(dir, "checkpoint"), counterCheckpoint)
	e2e.WriteFile(t, filepath.Join(dir, "restart"), counterRestart)
	for _, f := range []string{dir, filepath.Join(dir, "checkpoint"), filepath.Join(dir, "restart")} {
		os.Chmod(f, 0o755)
	}
	return newCluster(t, "$checkpoint_script "+filepath.Join(dir, "checkpoint")+"\n$restart_script "+filepath.Join(dir, "restart")+"\n")
}

func (cl *cluster) manage(typ int, id string, attrs ...batchreq.Attr) *batchreq.Reply {
	return cl.c.Do(batchreq.NewRequest(typ, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id, Attrs: attrs}))
}

// checkpointsOf returns the checkpoint log lines of job id.
func (cl *cluster) checkpointsOf(id string) []string {
	var out []string
	for _, line := range strings.Split(read(filepath.Join(cl.outDir, "checkpoints.log")), "\n") {
		if strings.HasPrefix(line, id+" ") {
			out = append(out, line)
		}
	}
	return out
}

// TestCheckpointAndRestart: qchkpt of a running job takes a checkpoint
// (accounting C "Checkpointed"), qhold checkpoints it, ends it, frees its
// node and holds it in the queue (C "Checkpointed and held"); released
// and run again it restarts from the last checkpoint (T "Restart from
// checkpoint") and ends with the counter restored. At the server's
// shutdown a running job with the default Checkpoint (u) is
// checkpointed, and after the restart it too runs on from its
// checkpoint.
func TestCheckpointAndRestart(t *testing.T) {
	cl := checkpointCluster(t)
	id := cl.submit("counter", counterJob, batchreq.NewAttr("Checkpoint", "enabled"))
	cl.run(id)
	e2e.WaitFor(t, "the job to count to 5", 30*time.Second, func() bool {
		return read(filepath.Join(cl.outDir, "count.counter")) == "5\n"
	})
	if p := cl.manage(batchreq.PBS_BATCH_CheckpointJob, id); p.Code != 0 {
		t.Fatalf("qchkpt: %d %s", p.Code, p.Text)
	}
	if c := cl.checkpointsOf(id); len(c) != 1 || !strings.HasPrefix(c[0], id+" 0 ckpt.") {
		t.Errorf("checkpoints after qchkpt: %q", c)
	}
	if r := cl.record("C", id); !strings.HasSuffix(r, ";Checkpointed") || cl.job(id, "job_state") != "R" {
		t.Errorf("after qchkpt: C record %q, state %s", r, cl.job(id, "job_state"))
	}
	time.Sleep(1100 * time.Millisecond) // the next checkpoint's name is a second later
	if p := cl.manage(batchreq.PBS_BATCH_HoldJob, id, batchreq.NewAttr("Hold_Types", "u")); p.Code != 0 {
		t.Fatalf("qhold: %d %s", p.Code, p.Text)
	}
	cl.waitState(id, "H", 30*time.Second)
	c := cl.checkpointsOf(id)
	if len(c) != 2 || !strings.HasPrefix(c[1], id+" 15 ckpt.") {
		t.Fatalf("checkpoints after qhold: %q", c)
	}
	held := strings.Fields(c[1])[2]
	if r := cl.record("C", id); !strings.Contains(read(filepath.Join(cl.svHome, "server_priv", "accounting", time.Now().Format("20060102"))), ";C;"+id+";Checkpointed and held\n") {
		t.Errorf("no C record 'Checkpointed and held' (last C: %q)", r)
	}
	if n := cl.job(id, "checkpoint_name"); n != held {
		t.Errorf("checkpoint_name %q, want %q", n, held)
	}
	e2e.WaitFor(t, "the node to be free", 20*time.Second, func() bool {
		return !strings.Contains(cl.status(batchreq.PBS_BATCH_StatusNode, "localhost")["jobs"], id)
	})
	// Released and run again: restarted from the held checkpoint.
	if p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_ReleaseJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET,
		ObjType: batchreq.MGR_OBJ_JOB, ObjName: id, Attrs: batchreq.AttrList{batchreq.NewAttr("Hold_Types", "u")}})); p.Code != 0 {
		t.Fatalf("qrls: %d %s", p.Code, p.Text)
	}
	cl.waitState(id, "Q", 10*time.Second)
	cl.run(id)
	cl.waitState(id, "C", 60*time.Second)
	if r := cl.record("T", id); !strings.HasSuffix(r, ";Restart from checkpoint") {
		t.Errorf("T record %q", r)
	}
	if got := read(filepath.Join(cl.outDir, "count.counter")); got != "8\n" {
		t.Errorf("count after the restart %q, want 8", got)
	}
	if out := read(filepath.Join(cl.outDir, "counter.out")); out != "counted to 5\nrestarted from "+held+" at 5\ncounted to 8\n" {
		t.Errorf("output %q", out)
	}
	if st := cl.job(id, "exit_status"); st != "0" {
		t.Errorf("exit_status %s", st)
	}
	if _, err := os.Stat(filepath.Join(cl.momHome, "checkpoint", id+".CK")); !os.IsNotExist(err) {
		t.Errorf("checkpoints of the finished job left: %v", err)
	}

	// Shutdown: a job with Checkpoint u is checkpointed.
	id2 := cl.submit("atshutdown", counterJob)
	cl.run(id2)
	e2e.WaitFor(t, "the second job to count to 5", 30*time.Second, func() bool {
		return read(filepath.Join(cl.outDir, "count.atshutdown")) == "5\n"
	})
	if p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_IMMEDIATE})); p.Code != 0 {
		t.Fatalf("qterm -t immediate: %d %s", p.Code, p.Text)
	}
	if err := cl.server.Wait(t, 60*time.Second); err != nil {
		t.Logf("pbs_server: %v", err)
	}
	c = cl.checkpointsOf(id2)
	if len(c) != 1 || !strings.HasPrefix(c[0], id2+" 15 ckpt.") {
		t.Fatalf("checkpoints of the job running at shutdown: %q", c)
	}
	cl.startServer("warm")
	if st, h := cl.job(id2, "job_state"), cl.job(id2, "Hold_Types"); st != "H" || h != "s" {
		t.Fatalf("after the restart the job is %s, held %q; want H, s", st, h)
	}
	if p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_ReleaseJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET,
		ObjType: batchreq.MGR_OBJ_JOB, ObjName: id2, Attrs: batchreq.AttrList{batchreq.NewAttr("Hold_Types", "s")}})); p.Code != 0 {
		t.Fatalf("qrls -h s: %d %s", p.Code, p.Text)
	}
	e2e.WaitFor(t, "the MOM back", 30*time.Second, func() bool {
		return strings.Contains(cl.status(batchreq.PBS_BATCH_StatusNode, "localhost")["state"], "free")
	})
	cl.run(id2)
	cl.waitState(id2, "C", 60*time.Second)
	if got := read(filepath.Join(cl.outDir, "count.atshutdown")); got != "8\n" {
		t.Errorf("count of the job restarted after the shutdown %q, want 8", got)
	}
	if r := cl.record("T", id2); r == "" {
		t.Error("no T record for the job restarted after the shutdown")
	}
}

// TestCheckpointRefused: where no node has a checkpoint script, an
// execution queue refuses a job that asks for checkpoints (qsub -c
// enabled), qchkpt is refused, and qhold of a running job only records
// the hold (seed 001): the job runs on.
func TestCheckpointRefused(t *testing.T) {
	cl := newCluster(t, "")
	for _, v := range []string{"enabled", "s", "c=5", "shutdown,depth=2"} {
		list := batchreq.AttrList{batchreq.NewAttr("Job_Owner", testUser+"@localhost"), batchreq.NewAttr("Checkpoint", v)}
		p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list}))
		if p.Code != batchreq.PBSE_NOSUP {
			t.Errorf("qsub -c %s: code %d %q, want PBSE_NOSUP", v, p.Code, p.Text)
		}
	}
	id := cl.submit("plain", counterJob, batchreq.NewAttr("Checkpoint", "u"))
	cl.run(id)
	cl.waitState(id, "R", 20*time.Second)
	if p := cl.manage(batchreq.PBS_BATCH_CheckpointJob, id); p.Code == 0 {
		t.Errorf("qchkpt of a job with Checkpoint u accepted")
	}
	if p := cl.manage(batchreq.PBS_BATCH_HoldJob, id, batchreq.NewAttr("Hold_Types", "u")); p.Code != 0 {
		t.Fatalf("qhold: %d %s", p.Code, p.Text)
	}
	if st, h := cl.job(id, "job_state"), cl.job(id, "Hold_Types"); st != "R" || h != "u" {
		t.Errorf("after qhold without checkpoints: state %s, Hold_Types %q; want R, u", st, h)
	}
	// A running job made checkpointable (qalter -c enabled): the MOM,
	// without $checkpoint_script, refuses qchkpt (PBSE_NOSUP) and the
	// hold is kept while the job runs on.
	if p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET,
		ObjType: batchreq.MGR_OBJ_JOB, ObjName: id, Attrs: batchreq.AttrList{batchreq.NewAttr("Checkpoint", "enabled")}})); p.Code != 0 {
		t.Fatalf("qalter -c enabled: %d %s", p.Code, p.Text)
	}
	if p := cl.manage(batchreq.PBS_BATCH_CheckpointJob, id); p.Code != batchreq.PBSE_NOSUP {
		t.Errorf("qchkpt without a checkpoint script: %d %q, want PBSE_NOSUP", p.Code, p.Text)
	}
	if p := cl.manage(batchreq.PBS_BATCH_HoldJob, id, batchreq.NewAttr("Hold_Types", "o")); p.Code != 0 {
		t.Fatalf("qhold -h o: %d %s", p.Code, p.Text)
	}
	if st, h := cl.job(id, "job_state"), cl.job(id, "Hold_Types"); st != "R" || !strings.Contains(h, "o") || !strings.Contains(h, "u") {
		t.Errorf("after qhold -h o without checkpoints: state %s, Hold_Types %q; want R, holds u and o", st, h)
	}
	if r := cl.record("C", id); r != "" {
		t.Errorf("C record without a checkpoint: %q", r)
	}
	cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}))
}
