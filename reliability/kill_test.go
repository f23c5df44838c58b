package reliability

import (
	"sync"
	"testing"
	"time"

	"gopbs/tools/pbsbench/load"
)

// TestKillDuringSubmitStorm kills pbs_server with SIGKILL while eight
// clients submit, restarts it warm, and checks that every acknowledged
// job survived and that no job exists twice. Jobs whose Commit was not
// acknowledged may or may not exist, but there can be at most one per
// client per round.
func TestKillDuringSubmitStorm(t *testing.T) {
	c := newCluster(t)
	rounds := scale(3, 20)
	const clients = 8
	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		dups  []string
	)
	c.startServer("create")
	c.setup()
	for round := range rounds {
		stop := make(chan struct{})
		done := make(chan *load.Result)
		go func() {
			res, err := load.Run(load.Config{
				Mode: load.ModeSubmit, Dialer: c.dialer("root"), Ops: 1 << 30, Clients: clients,
				Job: load.Job{Hold: true}, MaxTime: 2 * time.Minute, Stop: stop,
				OnSubmit: func(id string) {
					mu.Lock()
					if acked[id] {
						dups = append(dups, id)
					}
					acked[id] = true
					mu.Unlock()
				},
			})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		// Kill at a different point of the storm each round.
		time.Sleep(time.Duration(150+round*97%900) * time.Millisecond)
		c.srv.Kill()
		close(stop)
		res := <-done
		t.Logf("round %d: %s", round, res)
		c.startServer("warm")
		ids := c.jobIDs()
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				t.Errorf("round %d: job %s listed twice", round, id)
			}
			seen[id] = true
		}
		mu.Lock()
		lost := 0
		for id := range acked {
			if !seen[id] {
				lost++
				if lost <= 5 {
					t.Errorf("round %d: acknowledged job %s lost", round, id)
				}
			}
		}
		if lost > 0 {
			t.Fatalf("round %d: %d of %d acknowledged jobs lost", round, lost, len(acked))
		}
		if len(dups) > 0 {
			t.Fatalf("job ids acknowledged twice: %v", dups)
		}
		if extra := len(ids) - len(acked); extra > clients*(round+1) {
			t.Fatalf("round %d: %d jobs on the server but %d acknowledged: more than one unacknowledged job per client and round", round, len(ids), len(acked))
		}
		t.Logf("round %d: %d acknowledged, %d on the server", round, len(acked), len(ids))
		mu.Unlock()
	}
	c.serving()
}
