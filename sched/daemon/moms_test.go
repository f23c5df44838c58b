package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gopbs/sched/config"
	"gopbs/sched/world"
)

// slowMom answers after a delay; hosts named "dead*" fail.
type slowMom struct {
	delay    time.Duration
	inFlight atomic.Int32
	most     atomic.Int32
}

func (m *slowMom) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		most := m.most.Load()
		if n <= most || m.most.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(m.delay)
	if strings.HasPrefix(host, "dead") {
		return nil, errors.New("no answer")
	}
	return []string{"ncpus=" + strings.TrimPrefix(host, "n"), "arch=linux", "physmem=1gb", "loadave=0.5", "max_load=4", "ideal_load=2"}, nil
}

func TestQueryMomsConcurrently(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	d := newTestDaemon(t, config.Shipped, nil, at)
	var logBuf strings.Builder
	d.Log = newBufLogger(&logBuf, at)
	mom := &slowMom{delay: 20 * time.Millisecond}
	d.Mom = mom
	var nodes []*world.Node
	for i := 1; i <= 200; i++ {
		n := &world.Node{Name: fmt.Sprintf("n%d", i), State: world.NodeFree}
		switch i {
		case 7, 150:
			n.Name = fmt.Sprintf("dead%d", i)
		case 8:
			n.State = world.NodeDown
		}
		nodes = append(nodes, n)
	}
	start := time.Now()
	d.queryMoms(context.Background(), nodes)
	// One at a time this would take 199 × 20 ms ≈ 4 s.
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("queries took %v", took)
	}
	if most := mom.most.Load(); most < 2 || most > momQueries {
		t.Errorf("%d queries in flight at most", most)
	}
	for i, n := range nodes {
		switch {
		case i+1 == 7 || i+1 == 150 || i+1 == 8:
			if n.NCPUs != 0 {
				t.Errorf("%s: ncpus %d", n.Name, n.NCPUs)
			}
		case n.NCPUs != i+1 || n.LoadAve != 0.5:
			t.Errorf("%s: ncpus %d loadave %v", n.Name, n.NCPUs, n.LoadAve)
		}
	}
	var failed []string
	for _, line := range strings.Split(logBuf.String(), "\n") {
		if strings.HasSuffix(line, "Can not open connection to mom") {
			failed = append(failed, strings.Split(line, ";")[4])
		}
	}
	if strings.Join(failed, ",") != "dead7,dead150" {
		t.Errorf("failures logged for %v\n%s", failed, logBuf.String())
	}
}
