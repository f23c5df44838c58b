package jobexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The checkpoint programs of the tests save and restore a counter: the
// job counts to 5 in $HOME/count and waits; the checkpoint script copies
// the count into the checkpoint; the restart script counts on from the
// checkpoint's count to 3 more and ends.
const (
	counterJob = `n=0
while [ $n -lt 5 ]; do n=$((n+1)); echo $n > "$HOME/count"; done
echo counted to $n
while :; do sleep 1; done
`
	counterCheckpoint = `#!/bin/sh
# <sid> <jobid> <user> <group> <dir> <name> <signal> <depth>
cp "$HOME/count" "$5/$6" && echo "$2 $7 $8 $PBS_CHECKPOINT_NAME" >> "$HOME/checkpoints"
`
	counterRestart = `#!/bin/sh
# <sid> <jobid> <user> <group> <dir> <name>
n=$(cat "$5/$6")
echo "restarted $2 from $6 at $n (session $1)"
end=$((n+3))
while [ $n -lt $end ]; do n=$((n+1)); echo $n > "$HOME/count"; done
echo counted to $n
`
)

// counterEnv is a test environment whose MOM has the counter's
// checkpoint and restart scripts.
func counterEnv(t *testing.T, clk *fakeClock, extra string) *testEnv {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	ck, rs := filepath.Join(dir, "checkpoint"), filepath.Join(dir, "restart")
	os.WriteFile(ck, []byte(counterCheckpoint), 0o755)
	os.WriteFile(rs, []byte(counterRestart), 0o755)
	cfg := "$checkpoint_script " + ck + "\n$restart_script " + rs + "\n" + extra
	if clk != nil {
		return newClockedEnv(t, clk, cfg)
	}
	return newTestEnv(t, cfg)
}

// waitFile waits until path holds want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(path); string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(path)
			t.Fatalf("%s holds %q, want %q", path, b, want)
		}
	}
}

// TestCheckpointHoldRestart: qchkpt takes a checkpoint and the job goes
// on; qhold takes one and ends the job (exit 0, its checkpoints kept when
// the job is purged); the job run again with checkpoint_name restarts
// from the last checkpoint with $restart_script.
func TestCheckpointHoldRestart(t *testing.T) {
	te := counterEnv(t, nil, "")
	id := "70.srv"
	j := te.job(id, counterJob, Resource{"walltime", "01:00:00"})
	j.Checkpoint = "enabled,depth=2"
	sid, err := te.eng.Start(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(te.uhome, "count")
	waitFile(t, count, "5\n")
	if err := te.eng.Checkpoint(t.Context(), id, false); err != nil {
		t.Fatal(err)
	}
	st, _ := te.eng.Status(id)
	if st.State != StateRunning || !strings.HasPrefix(st.CheckpointName, "ckpt."+id+".") || st.CheckpointTime.IsZero() {
		t.Fatalf("after qchkpt: %+v", st)
	}
	dir := filepath.Join(te.home, "checkpoint", id+".CK")
	if b, _ := os.ReadFile(filepath.Join(dir, st.CheckpointName)); string(b) != "5\n" {
		t.Errorf("checkpoint holds %q", b)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || !ownedBy(fi, te.cred.UID) {
		t.Errorf("checkpoint directory %v %v", fi, err)
	}
	// qhold: checkpointed and ended, reported as ending normally.
	time.Sleep(1100 * time.Millisecond) // a checkpoint name of its own (seconds)
	if err := te.eng.Checkpoint(t.Context(), id, true); err != nil {
		t.Fatal(err)
	}
	ex := te.waitExit(30 * time.Second)
	if ex.Status != 0 || ex.SessionID != sid || !strings.HasPrefix(ex.CheckpointName, "ckpt."+id+".") || ex.CheckpointName == st.CheckpointName {
		t.Fatalf("exit after the held checkpoint: %+v", ex)
	}
	if got := readFile(t, filepath.Join(te.uhome, "checkpoints")); got != id+" 0 2 "+st.CheckpointName+"\n"+id+" 15 2 "+ex.CheckpointName+"\n" {
		t.Errorf("the checkpoint script saw %q", got)
	}
	if err := te.eng.Purge(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ex.CheckpointName)); err != nil {
		t.Fatalf("checkpoint of a held job removed by the purge: %v", err)
	}
	// Run again: restarted from the last checkpoint.
	os.WriteFile(count, []byte("0\n"), 0o644)
	j = te.job(id, counterJob)
	j.Checkpoint, j.CheckpointName, j.RestartSession = "enabled", ex.CheckpointName, sid
	_, ex2 := te.run(j)
	if ex2.Status != 0 || ex2.CheckpointName != ex.CheckpointName {
		t.Errorf("restarted job's exit %+v", ex2)
	}
	if got := readFile(t, count); got != "8\n" {
		t.Errorf("count after the restart %q, want 8", got)
	}
	out := te.spool(id + ".OU")
	if want := "counted to 5\nrestarted " + id + " from " + ex.CheckpointName + " at 5 (session " + itoa(sid) + ")\ncounted to 8\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if !strings.Contains(te.logBuf.String(), ";"+id+";restarted from checkpoint "+ex.CheckpointName+"\n") {
		t.Errorf("log:\n%s", te.logBuf.String())
	}
	// A job that ends by itself leaves no checkpoints behind.
	if err := te.eng.Purge(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("checkpoint directory of a finished job left: %v", err)
	}
}

// TestPeriodicCheckpoint: Checkpoint c=1 takes a checkpoint each minute
// of the job's run (simulated time); $checkpoint_interval is the period
// of Checkpoint c.
func TestPeriodicCheckpoint(t *testing.T) {
	clk := &fakeClock{t: at(40, 0, 0)}
	te := counterEnv(t, clk, "$checkpoint_interval 2\n")
	for _, tc := range []struct {
		id, ckpt string
		every    time.Duration
	}{{"71.srv", "c=1", time.Minute}, {"72.srv", "c", 2 * time.Minute}} {
		clk.Set(at(40, 0, 0))
		os.Remove(filepath.Join(te.uhome, "checkpoints"))
		j := te.job(tc.id, counterJob)
		j.Checkpoint = tc.ckpt
		if _, err := te.eng.Start(t.Context(), j); err != nil {
			t.Fatal(err)
		}
		waitFile(t, filepath.Join(te.uhome, "count"), "5\n")
		te.eng.Poll()
		clk.Set(at(40, 0, 0).Add(tc.every - time.Second))
		te.eng.Poll()
		time.Sleep(300 * time.Millisecond)
		if b, _ := os.ReadFile(filepath.Join(te.uhome, "checkpoints")); len(b) != 0 {
			t.Errorf("%s: checkpoint before its period: %q", tc.id, b)
		}
		clk.Set(at(40, 0, 0).Add(tc.every))
		te.eng.Poll()
		waitFile(t, filepath.Join(te.uhome, "checkpoints"), tc.id+" 0 1 "+"ckpt."+tc.id+"."+itoa64(at(40, 0, 0).Add(tc.every).Unix())+"\n")
		if err := te.eng.Signal(t.Context(), tc.id, "SIGKILL", false); err != nil {
			t.Fatal(err)
		}
		te.waitExit(20 * time.Second)
	}
}

// TestCheckpointRefused: without $checkpoint_script, or for a job whose
// Checkpoint is n, no checkpoint is taken.
func TestCheckpointRefused(t *testing.T) {
	te := newTestEnv(t, "")
	j := te.job("73.srv", counterJob)
	if _, err := te.eng.Start(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Checkpoint(t.Context(), "73.srv", true); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("without a script: %v", err)
	}
	te.eng.Signal(context.Background(), "73.srv", "SIGKILL", false)
	te.waitExit(20 * time.Second)

	te = counterEnv(t, nil, "")
	j = te.job("74.srv", counterJob)
	j.Checkpoint = "n"
	if _, err := te.eng.Start(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	if err := te.eng.Checkpoint(t.Context(), "74.srv", true); !errors.Is(err, ErrNotCheckpointable) {
		t.Errorf("Checkpoint=n: %v", err)
	}
	if err := te.eng.Checkpoint(t.Context(), "nope", true); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown job: %v", err)
	}
	te.eng.Signal(context.Background(), "74.srv", "SIGKILL", false)
	te.waitExit(20 * time.Second)
}

func ownedBy(fi os.FileInfo, uid uint32) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uid
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
