package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/sched/config"
)

// TestPartitionReservation: plus_reserve -partition (seed 003 interface
// 8, GoPBS's option for pbs_rsub -p): n3 is the only node of partition
// p1, scheduled by s1, a pbs_sched the server starts. A reservation of
// p1 holds n3 and its queue is p1's, so that s1 runs its jobs there; an
// unknown partition and more nodes than p1 has are refused; a
// reservation of no partition cannot have n3. plus_availnodes
// -partition counts as plus_reserve -partition assigns: n3 for p1, less
// in the window of the reservation holding it, n1 and n2 without
// -partition, and the same refusal for p9.
func TestPartitionReservation(t *testing.T) {
	cl := newCluster(t)
	mgr := func(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
		return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
	}
	priv := filepath.Join(cl.svHome, "sched_priv_s1")
	if err := os.MkdirAll(priv, 0o750); err != nil {
		t.Fatal(err)
	}
	e2e.WriteFile(t, filepath.Join(priv, "sched_config"), config.Shipped+"\nduration_offset: 0\n")
	e2e.LogFilesOnFailure(t, 0, filepath.Join(cl.svHome, "sched_logs_s1", "*"), filepath.Join(priv, "sched_out"))
	t.Cleanup(func() { // the scheduler leads a process group of its own
		b, _ := os.ReadFile(filepath.Join(priv, "sched.lock"))
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	port := strconv.Itoa(e2e.FreePorts(t, 1)[0])
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "n3", batchreq.NewAttr("partition", "p1")),
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_SCHED, "s1", batchreq.NewAttr("port", port),
			batchreq.NewAttr("partitions", "p1"), batchreq.NewAttr("scheduler_iteration", "5")),
	} {
		cl.c.Must(r)
	}
	avail := func(want string, args ...string) {
		t.Helper()
		if out := cl.must(cl.owner, "plus_availnodes", args...); strings.TrimSpace(out) != want {
			t.Errorf("plus_availnodes %q: %q, want %s", args, out, want)
		}
	}
	avail("2", "-s", "+1h", "-e", "+2h")
	avail("1", "-s", "+1h", "-e", "+2h", "-partition", "p1")
	if out := cl.must(cl.owner, "plus_availnodes", "-s", "+1h", "-e", "+2h", "-partition", "p1", "-x"); !strings.Contains(out, "<partition>p1</partition>") ||
		!strings.Contains(out, "<count>1</count>") || !strings.Contains(out, "<node>n3</node>") {
		t.Errorf("plus_availnodes -partition p1 -x:\n%s", out)
	}
	if out, errOut, code := cl.run(cl.owner, "plus_availnodes", "-s", "+1h", "-e", "+2h", "-partition", "p9"); code != 1 ||
		!strings.Contains(errOut, "unknown partition p9: no node is in it") {
		t.Errorf("plus_availnodes -partition p9: exit %d, stdout %q, stderr %q; want exit 1 and plus_reserve's refusal", code, out, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "1", "-partition", "p9"}, "unknown partition p9: no node is in it"},
		{[]string{"-n", "2", "-partition", "p1"}, "only 1 of 2 nodes free"},
		{[]string{"-n", "n3"}, "unknown node n3"}, // of no partition: n1 and n2 only
	} {
		args := append([]string{"-s", "+5s", "-D", "60s"}, tc.args...)
		if out, errOut, code := cl.run(cl.owner, "plus_reserve", args...); code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("plus_reserve %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, out, errOut, tc.want)
		}
	}
	// s1 is not running yet: the reservation waits UNCONFIRMED, without
	// nodes, until the server reaches it (seed 003, interface 8).
	id := strings.TrimSpace(cl.must(cl.owner, "plus_reserve", "-s", "+15s", "-D", "60s", "-n", "1", "-partition", "p1"))
	if out := cl.must(cl.owner, "plus_status", "-n", "-r", id); !strings.Contains(out, "UNCONFIRMED") || strings.Contains(out, "n3") {
		t.Errorf("plus_status -n -r %s before s1 runs (want UNCONFIRMED, no node):\n%s", id, out)
	}
	cl.c.Must(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SCHED, "s1", batchreq.NewAttr("scheduling", "true")))
	e2e.WaitFor(t, id+" confirmed once s1 runs", 60*time.Second, func() bool {
		out := cl.must(cl.owner, "plus_status", "-r", id)
		return strings.Contains(out, "CONFIRMED") && !strings.Contains(out, "UNCONFIRMED")
	})
	if out := cl.must(cl.owner, "plus_status", "-n", "-r", id); !strings.Contains(out, "n3") {
		t.Errorf("plus_status -n -r %s (want n3):\n%s", id, out)
	}
	// id holds n3 for 60s from 15s after it was made, and was confirmed
	// before its end: the next 70s overlap its window.
	avail("0", "-s", "+1s", "-e", "+70s", "-partition", "p1")
	avail("2", "-s", "+1s", "-e", "+70s")
	avail("1", "-s", "+10m", "-e", "+11m", "-partition", "p1")
	if p := cl.status(batchreq.PBS_BATCH_StatusQue, id)["partition"]; p != "p1" {
		t.Errorf("queue %s in partition %q, want p1", id, p)
	}
	job := cl.submit("inpart", 5, "-q", id, "-l", "walltime=00:00:20")
	e2e.WaitFor(t, "job "+job+" run in "+id, 60*time.Second, func() bool {
		st := cl.job(job)
		return st == nil || st["exec_host"] != "" || st["job_state"] == "C"
	})
	if h := cl.job(job)["exec_host"]; !strings.HasPrefix(h, "n3/") {
		t.Errorf("job %s of %s ran on %q, want n3", job, id, h)
	}
	// s1 ran it: its log says so (once its cycle has ended: it holds
	// its log lines during a cycle)
	e2e.WaitFor(t, "s1's Job Run line of "+job, 30*time.Second, func() bool {
		logs, _ := filepath.Glob(filepath.Join(cl.svHome, "sched_logs_s1", "*"))
		for _, l := range logs {
			if b, _ := os.ReadFile(l); strings.Contains(string(b), "Job;"+job+";Job Run") {
				return true
			}
		}
		return false
	})
}
