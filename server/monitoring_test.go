package server

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/monitor"
)

// TestMonitorSource checks the snapshots the metrics and the page read:
// queues with their counts, nodes with the MOM's load and memory, jobs by
// filter.
func TestMonitorSource(t *testing.T) {
	s := testServer(t, "", InitCreate)
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	a := mustSubmit(t, c, "alice")
	b := mustSubmit(t, c, "bob")
	mustSubmit(t, c, "alice", attr("Hold_Types", "u"))
	momsReported(s)
	s.mu.Lock()
	s.nodeByName["vm"].attrs.set(pbsattr.NodeStatus, "rectime=1,loadave=0.75,physmem=2048kb,availmem=1024kb,ncpus=2")
	s.mu.Unlock()

	src := monitorSource{s}
	cl := src.Cluster()
	if cl.Server != "vm" || len(cl.Queues) != 3 || len(cl.Nodes) != 1 {
		t.Fatalf("cluster %+v", cl)
	}
	if q := cl.Queues[0]; q.Name != "batch" || q.Type != "Execution" || !q.Enabled || !q.Started || q.Counts != [monitor.NumJobStates]int{0, 2, 1, 0, 0, 0, 0} {
		t.Errorf("batch %+v", q)
	}
	if q := cl.Queues[2]; q.Name != "route" || q.Type != "Route" || q.Total() != 0 {
		t.Errorf("route %+v", q)
	}
	if n := cl.Nodes[0]; n.Name != "vm" || n.State() != "free" || n.NP != 2 || n.Jobs != 0 || !n.HasLoad || n.Load != 0.75 || n.PhysMem != 2<<20 || n.AvailMem != 1<<20 {
		t.Errorf("node %+v", n)
	}
	jobs := src.Jobs(monitor.JobFilter{})
	if len(jobs) != 3 || jobs[0].ID != a || jobs[1].ID != b || jobs[0].Owner != "alice" || jobs[0].Queue != "batch" || jobs[0].State != "Q" || jobs[0].Walltime != "01:00:00" || jobs[0].Queued.IsZero() {
		t.Errorf("jobs %+v", jobs)
	}
	if got := src.Jobs(monitor.JobFilter{User: "alice", State: "H"}); len(got) != 1 || got[0].State != "H" {
		t.Errorf("alice's held jobs %+v", got)
	}
}

// TestHTTPAddress: without -http nothing listens; the http_address
// attribute starts the listener, which serves the page and the metrics
// while jobs are submitted, and unset closes it.
func TestHTTPAddress(t *testing.T) {
	s := testServer(t, "", InitCreate)
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	momsReported(s)
	if a := s.HTTPAddr(); a != "" {
		t.Fatalf("listening on %s unasked", a)
	}
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("http_address", "127.0.0.1:0"))); p.Code != 0 {
		t.Fatalf("set http_address: %d %s", p.Code, p.Text)
	}
	waitFor(t, "the listener", func() bool { return s.HTTPAddr() != "" })
	base := "http://" + s.HTTPAddr()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // scrapes while the jobs come
		defer wg.Done()
		for range 20 {
			for _, path := range []string{"/", "/metrics", "/?sort=user&state=Q"} {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	for range 10 {
		mustSubmit(t, c, "alice")
	}
	wg.Wait()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`gopbs_server_jobs{queue="batch",state="queued"} 10`,
		`gopbs_server_request_duration_seconds_count{request="Commit"} 10`,
		`gopbs_server_nodes{state="free"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The store's group commits are reported: at least the 16 changes of
	// setupCluster and the 10 submissions.
	if m := regexp.MustCompile(`\ngopbs_server_store_commit_batches_sum (\d+)\n`).FindStringSubmatch(string(body)); m == nil {
		t.Error("no store commit batches")
	} else if n, _ := strconv.Atoi(m[1]); n < 26 {
		t.Errorf("%d store commit batches, want at least 26", n)
	}
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("http_address", "127.0.0.1:http"))); p.Code != batchreq.PBSE_BADATVAL {
		t.Errorf("bad http_address: %d %s", p.Code, p.Text)
	}
	if p := c.do(mgr(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_SERVER, "", attr("http_address", ""))); p.Code != 0 {
		t.Fatalf("unset http_address: %d %s", p.Code, p.Text)
	}
	waitFor(t, "the listener to close", func() bool { return s.HTTPAddr() == "" })
	http.DefaultClient.CloseIdleConnections()
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("still serving after unset")
	}
}

func TestNodeStatusInto(t *testing.T) {
	var n monitor.Node
	nodeStatusInto(&n, "rectime=5,loadave=bogus,physmem=10kb,availmem=x,gres=loadave=3")
	if n.HasLoad || n.PhysMem != 10<<10 || n.AvailMem != 0 {
		t.Errorf("%+v", n)
	}
	nodeStatusInto(&n, "loadave=1.5,physmem=-1kb")
	if !n.HasLoad || n.Load != 1.5 || n.PhysMem != 0 {
		t.Errorf("%+v", n)
	}
}
