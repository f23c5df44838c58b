package reliability

import (
	"os/exec"
	"sync"
	"testing"
	"time"

	"gopbs/internal/e2e"
	"gopbs/tools/pbsbench/load"
)

// TestDiskFull runs pbs_server with PBS_HOME on a small tmpfs and submits
// until the file system is full. The server must refuse submissions with
// error replies (not crash or drop connections), keep every job it
// acknowledged — also across a restart — and accept work again once
// there is space.
func TestDiskFull(t *testing.T) {
	c := newCluster(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "gopbs-diskfull", c.home).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs CAP_SYS_ADMIN): %v %s", err, out)
	}
	var c2 *cluster
	t.Cleanup(func() {
		if c2 != nil && c2.srv != nil {
			c2.srv.Kill()
		}
		exec.Command("umount", "-l", c.home).Run()
	})
	c2 = newClusterIn(t, c)
	c2.startServer("create")
	c2.setup()

	var (
		mu    sync.Mutex
		acked []string
	)
	record := func(id string) {
		mu.Lock()
		acked = append(acked, id)
		mu.Unlock()
	}
	// Submit in rounds until submissions fail for a whole round.
	var refusals, transport int
	for round := 0; round < 40; round++ {
		res, err := load.Run(load.Config{Mode: load.ModeSubmit, Dialer: c2.dialer("root"), Ops: 500, Clients: 8,
			Job: load.Job{Hold: true, Script: make([]byte, 2000)}, MaxTime: time.Minute, OnSubmit: record})
		if err != nil {
			t.Fatal(err)
		}
		refusals += res.Refused
		if res.Failed > res.Refused {
			transport += res.Failed - res.Refused
			t.Logf("round %d: %s; errors %q", round, res, res.Errors)
		}
		if !c2.srv.Alive() {
			t.Fatalf("pbs_server died when the disk filled (%v):\n%s", c2.srv.Err(), c2.srv.Output())
		}
		if res.OK == 0 {
			t.Logf("refusals look like: %q", res.Errors)
			break
		}
	}
	t.Logf("%d jobs acknowledged, %d refused with an error reply, %d other failures", len(acked), refusals, transport)
	if refusals == 0 && transport == 0 {
		t.Fatal("the file system never filled")
	}
	if transport > 0 {
		t.Errorf("%d submissions failed without an error reply", transport)
	}
	checkAcked := func(when string) {
		t.Helper()
		ids := map[string]bool{}
		for _, id := range c2.jobIDs() {
			ids[id] = true
		}
		lost := 0
		for _, id := range acked {
			if !ids[id] {
				lost++
			}
		}
		if lost > 0 {
			t.Fatalf("%s: %d of %d acknowledged jobs lost", when, lost, len(acked))
		}
	}
	checkAcked("disk full")
	// Free space: the server must accept work again, and a restart must
	// find every acknowledged job.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", c.home).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	c2.serving()
	c2.srv.Stop()
	c2.startServer("warm")
	checkAcked("after restart")
	c2.serving()
}

// newClusterIn returns a cluster using c's home (which was replaced by a
// mount) with its directory layout recreated.
func newClusterIn(t *testing.T, c *cluster) *cluster {
	t.Helper()
	n := *c
	n.t = t
	if err := e2e.MakeHome(n.home, "localhost"); err != nil {
		t.Fatal(err)
	}
	return &n
}
