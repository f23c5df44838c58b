package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/sched/config"
	"gopbs/sched/internal/fakeserver"
	"gopbs/sched/momquery"
	"gopbs/sched/world"
)

// slowMom answers after a delay; the hosts in dead fail. Host names are
// address literals, so that nothing is looked up.
type slowMom struct {
	delay    time.Duration
	dead     map[string]bool
	inFlight atomic.Int32
	most     atomic.Int32
	mu       sync.Mutex
	busy     map[string]bool
	overlap  []string // hosts asked twice at once
}

func (m *slowMom) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	m.mu.Lock()
	if m.busy[host] {
		m.overlap = append(m.overlap, host)
	}
	m.busy[host] = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.busy, host)
		m.mu.Unlock()
	}()
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		most := m.most.Load()
		if n <= most || m.most.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(m.delay)
	if m.dead[host] {
		return nil, errors.New("no answer")
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	return []string{"ncpus=" + last, "arch=linux", "physmem=1gb", "loadave=0.5", "max_load=4", "ideal_load=2"}, nil
}

func TestQueryMomsConcurrently(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	d := newTestDaemon(t, config.Shipped, nil, at)
	var logBuf strings.Builder
	d.Log = newBufLogger(&logBuf, at)
	mom := &slowMom{delay: 20 * time.Millisecond, busy: map[string]bool{},
		dead: map[string]bool{"10.9.0.7": true, "10.9.0.150": true}}
	d.Mom = mom
	var nodes []*world.Node
	for i := 1; i <= 200; i++ {
		n := &world.Node{Name: fmt.Sprintf("10.9.0.%d", i), State: world.NodeFree}
		switch i {
		case 8:
			n.State = world.NodeDown
		case 21, 22:
			n.Name = "10.9.0.20" // one MOM for three nodes
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
	if len(mom.overlap) > 0 {
		t.Errorf("hosts asked twice at once: %v", mom.overlap)
	}
	for i, n := range nodes {
		want := i + 1
		switch {
		case want == 7 || want == 150 || want == 8:
			want = 0
		case want == 21 || want == 22:
			want = 20
		}
		if n.NCPUs != want {
			t.Errorf("node %d (%s): ncpus %d, want %d", i+1, n.Name, n.NCPUs, want)
		}
	}
	var failed []string
	for _, line := range strings.Split(logBuf.String(), "\n") {
		if strings.HasSuffix(line, "Can not open connection to mom") {
			failed = append(failed, strings.Split(line, ";")[4])
		}
	}
	if strings.Join(failed, ",") != "10.9.0.7,10.9.0.150" {
		t.Errorf("failures logged for %v\n%s", failed, logBuf.String())
	}
}

// rmServer answers RM requests on an RPP endpoint, like a MOM, until ctx
// ends.
func rmServer(ctx context.Context, ep *rpp.Endpoint) {
	for {
		s, err := ep.Accept(ctx)
		if err != nil {
			return
		}
		go func() {
			for {
				msg, err := s.Recv(ctx)
				if err != nil {
					return
				}
				req, err := momproto.DecodeRMRequest(msg)
				if err != nil || req.Command != momproto.RM_CMD_REQUEST {
					return
				}
				rep := &momproto.RMReply{Code: momproto.RM_RSP_OK, Answers: []string{"ncpus=8", "arch=linux", "physmem=16gb", "loadave=8.00", "max_load=? 15201", "ideal_load=? 15201"}}
				s.Send(rep.Append(nil))
			}
		}()
	}
}

// BenchmarkQueryMoms1k measures the MOM queries of a cycle over 1,000
// nodes, over RPP on loopback: each node is a MOM endpoint of its own on
// an address 127.0.x.y (BENCH_MOMS sets the number of nodes).
func BenchmarkQueryMoms1k(b *testing.B) {
	if v, err := strconv.Atoi(os.Getenv("BENCH_MOMS")); err == nil {
		benchMoms = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := 0
	var nodes []*world.Node
	for i := 0; i < benchMoms; i++ {
		addr := fmt.Sprintf("127.0.%d.%d", 10+i/250, 1+i%250)
		pc, err := net.ListenPacket("udp4", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			b.Skipf("MOM endpoint on %s: %v", addr, err)
		}
		port = pc.LocalAddr().(*net.UDPAddr).Port
		ep := rpp.NewEndpoint(pc, nil)
		defer ep.Close()
		go rmServer(ctx, ep)
		nodes = append(nodes, &world.Node{Name: addr, State: world.NodeFree})
	}
	d := newTestDaemon(b, config.Shipped, nil, time.Now())
	q := momquery.NewRPP(port)
	q.Listen = func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }
	defer q.Close()
	d.Mom = q
	for b.Loop() {
		d.queryMoms(context.Background(), nodes)
	}
	for _, n := range nodes {
		if n.NCPUs != 8 {
			b.Fatalf("node %s: ncpus %d", n.Name, n.NCPUs)
		}
	}
}

var benchMoms = 1000

// waitingMom answers only once the fake server has been asked for the
// jobs (SelStat), or after a while.
type waitingMom struct {
	srv   *fakeserver.Server
	wait  time.Duration
	after atomic.Int32 // answers given after the SelStat
}

func (m *waitingMom) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	selStat := strconv.Itoa(batchreq.PBS_BATCH_SelStat)
	for end := time.Now().Add(m.wait); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if slices.Contains(m.srv.RequestsSoFar(), selStat) {
			m.after.Add(1)
			break
		}
	}
	return []string{"ncpus=2", "arch=linux", "physmem=1gb", "loadave=0.5", "max_load=4", "ideal_load=2"}, nil
}

// TestMomQueriesOverlapJobs: on a cluster of more than momQueries nodes
// the server is asked for the queues and jobs while the MOM queries are
// still under way; on a smaller one the MOMs have all answered before
// StatusQue, as in TORQUE. Either way the server's requests keep the FIFO
// scheduler's order, and the answers are applied before the policy runs
// (the job starts on a node whose MOM answered).
func TestMomQueriesOverlapJobs(t *testing.T) {
	for _, tc := range []struct {
		nodes, wantAfter int
	}{
		{2, 0},
		{momQueries, 0},
		{momQueries + 8, momQueries + 8},
	} {
		t.Run(strconv.Itoa(tc.nodes), func(t *testing.T) {
			c := newCluster(t, config.Shipped, nil)
			mom := &waitingMom{srv: c.srv, wait: 300 * time.Millisecond}
			c.d.mu.Lock()
			c.d.Mom = mom
			c.d.mu.Unlock()
			for i := range tc.nodes {
				c.srv.Nodes = append(c.srv.Nodes, &fakeserver.Node{Name: fmt.Sprintf("node%d", i+1), NP: 2})
			}
			c.queue("batch")
			c.job("1.srv", "batch", "alice", nil)
			c.cycle(batchreq.SCH_SCHEDULE_NEW)
			if n := mom.after.Load(); int(n) != tc.wantAfter {
				t.Errorf("%d of %d MOM answers came after the SelStat, want %d", n, tc.nodes, tc.wantAfter)
			}
			want := []int{batchreq.PBS_BATCH_StatusSvr, batchreq.PBS_BATCH_StatusNode, batchreq.PBS_BATCH_StatusQue, batchreq.PBS_BATCH_SelStat}
			got := c.srv.RequestsSoFar()
			for i, typ := range want {
				if i >= len(got) || got[i] != strconv.Itoa(typ) {
					t.Fatalf("requests %v, want %v first", got, want)
				}
			}
			if !slices.Equal(c.srv.Started, []string{"1.srv"}) {
				t.Errorf("started %v", c.srv.Started)
			}
			if strings.Contains(logText(c), "Can not open connection to mom") {
				t.Errorf("log:\n%s", logText(c))
			}
		})
	}
}
