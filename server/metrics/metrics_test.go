package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"gopbs/batchreq"
	"gopbs/server/monitor"
)

// fakeSource is a monitor.Source with a fixed cluster.
type fakeSource struct{ cl monitor.Cluster }

func (f *fakeSource) Cluster() monitor.Cluster             { return f.cl }
func (f *fakeSource) Jobs(monitor.JobFilter) []monitor.Job { return nil }

func testCluster() monitor.Cluster {
	return monitor.Cluster{
		Server: "srv",
		Queues: []monitor.Queue{
			{Name: "batch", Type: "Execution", Enabled: true, Started: true, Counts: [7]int{0, 3, 1, 0, 2, 0, 5}},
			{Name: "route", Type: "Route", Enabled: true, Counts: [7]int{0, 1}},
		},
		Nodes: []monitor.Node{
			{Name: "n1", States: []string{"free"}, NP: 4, Jobs: 1, Load: 0.5, HasLoad: true},
			{Name: "n2", States: []string{"job-exclusive"}, NP: 2, Jobs: 2, Load: 2.25, HasLoad: true},
			{Name: "n3", States: []string{"down", "offline"}, NP: 8},
			{Name: "n4", States: []string{"free"}, NP: 1},
		},
	}
}

func TestStateMetrics(t *testing.T) {
	m := New(&fakeSource{cl: testCluster()})
	want := `
# HELP gopbs_server_jobs Jobs by queue and state (transit, queued, held, waiting, running, exiting, complete).
# TYPE gopbs_server_jobs gauge
gopbs_server_jobs{queue="batch",state="complete"} 5
gopbs_server_jobs{queue="batch",state="exiting"} 0
gopbs_server_jobs{queue="batch",state="held"} 1
gopbs_server_jobs{queue="batch",state="queued"} 3
gopbs_server_jobs{queue="batch",state="running"} 2
gopbs_server_jobs{queue="batch",state="transit"} 0
gopbs_server_jobs{queue="batch",state="waiting"} 0
gopbs_server_jobs{queue="route",state="complete"} 0
gopbs_server_jobs{queue="route",state="exiting"} 0
gopbs_server_jobs{queue="route",state="held"} 0
gopbs_server_jobs{queue="route",state="queued"} 1
gopbs_server_jobs{queue="route",state="running"} 0
gopbs_server_jobs{queue="route",state="transit"} 0
gopbs_server_jobs{queue="route",state="waiting"} 0
# HELP gopbs_server_nodes Nodes by state, the state words joined as pbsnodes prints them (free, job-exclusive, down, offline, down,offline, ...).
# TYPE gopbs_server_nodes gauge
gopbs_server_nodes{state="down,offline"} 1
gopbs_server_nodes{state="free"} 2
gopbs_server_nodes{state="job-exclusive"} 1
# HELP gopbs_server_node_vps Virtual processors (np) of all nodes.
# TYPE gopbs_server_node_vps gauge
gopbs_server_node_vps 15
# HELP gopbs_server_node_vps_assigned Virtual processors assigned to jobs.
# TYPE gopbs_server_node_vps_assigned gauge
gopbs_server_node_vps_assigned 3
# HELP gopbs_server_node_load_sum Sum of the one-minute load averages the MOMs last reported.
# TYPE gopbs_server_node_load_sum gauge
gopbs_server_node_load_sum 2.75
# HELP gopbs_server_queue_started 1 if the queue is enabled and started, else 0.
# TYPE gopbs_server_queue_started gauge
gopbs_server_queue_started{queue="batch",type="Execution"} 1
gopbs_server_queue_started{queue="route",type="Route"} 0
`
	err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"gopbs_server_jobs", "gopbs_server_nodes", "gopbs_server_node_vps", "gopbs_server_node_vps_assigned",
		"gopbs_server_node_load_sum", "gopbs_server_queue_started")
	if err != nil {
		t.Error(err)
	}
}

// TestStateFollowsSource checks that each scrape reads the source anew.
func TestStateFollowsSource(t *testing.T) {
	src := &fakeSource{}
	m := New(src)
	if n := testutil.CollectAndCount(m.Registry(), "gopbs_server_jobs"); n != 0 {
		t.Errorf("no queues: %d job series", n)
	}
	src.cl = testCluster()
	if n := testutil.CollectAndCount(m.Registry(), "gopbs_server_jobs"); n != 14 {
		t.Errorf("two queues: %d job series, want 14", n)
	}
}

func TestObserver(t *testing.T) {
	m := New(&fakeSource{})
	var o monitor.Observer = m
	o.Request(batchreq.PBS_BATCH_QueueJob, 2*time.Millisecond)
	o.Request(batchreq.PBS_BATCH_QueueJob, 300*time.Microsecond)
	o.Request(batchreq.PBS_BATCH_StatusJob, time.Second)
	o.Request(-1, time.Millisecond)   // out of range: NONE
	o.Request(5000, time.Millisecond) // out of range: NONE
	o.Request(batchreq.PBS_BATCH_ResvSubmit, time.Millisecond)
	o.StoreCommit(3*time.Millisecond, 7)
	o.StoreCommit(time.Millisecond, 1)
	o.SchedCycle("default", 250*time.Millisecond)
	o.MomLinkError(monitor.MomConnect)
	o.MomLinkError(monitor.MomConnect)
	o.MomLinkError(monitor.MomSilent)

	for _, c := range []struct {
		label string
		want  uint64
	}{{"QueueJob", 2}, {"StatusJob", 1}, {"NONE", 2}, {"Commit", 0}, {"ResvSubmit", 1}} {
		if got := histCount(t, m, "gopbs_server_request_duration_seconds", "request", c.label); got != c.want {
			t.Errorf("requests %s: count %d, want %d", c.label, got, c.want)
		}
	}
	if got := histCount(t, m, "gopbs_server_store_commit_batches", "", ""); got != 2 {
		t.Errorf("commits: %d, want 2", got)
	}
	if got := histSum(t, m, "gopbs_server_store_commit_batches"); got != 8 {
		t.Errorf("committed batches: %v, want 8", got)
	}
	if got := histSum(t, m, "gopbs_server_store_commit_duration_seconds"); got < 0.0039 || got > 0.0041 {
		t.Errorf("commit time sum %v, want 0.004", got)
	}
	if got := histCount(t, m, "gopbs_server_sched_cycle_duration_seconds", "scheduler", "default"); got != 1 {
		t.Errorf("cycles: %d, want 1", got)
	}
	for kind, want := range map[string]float64{monitor.MomConnect: 2, monitor.MomRequest: 0, monitor.MomSilent: 1} {
		if got := testutil.ToFloat64(m.momErrors.WithLabelValues(kind)); got != want {
			t.Errorf("MOM errors %s: %v, want %v", kind, got, want)
		}
	}
}

// TestHandler scrapes the handler as Prometheus would.
func TestHandler(t *testing.T) {
	m := New(&fakeSource{cl: testCluster()})
	m.Request(batchreq.PBS_BATCH_Commit, time.Millisecond)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`gopbs_server_jobs{queue="batch",state="running"} 2`,
		`gopbs_server_request_duration_seconds_count{request="Commit"} 1`,
		`gopbs_server_mom_link_errors_total{kind="request"} 0`,
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
}

// histCount returns the sample count of a histogram series (the one with
// label=value, or the only one when label is "").
func histCount(t *testing.T, m *Metrics, name, label, value string) uint64 {
	t.Helper()
	for _, mf := range gather(t, m, name) {
		for _, mt := range mf.GetMetric() {
			if label == "" || hasLabel(mt.GetLabel(), label, value) {
				return mt.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

func histSum(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	for _, mf := range gather(t, m, name) {
		for _, mt := range mf.GetMetric() {
			return mt.GetHistogram().GetSampleSum()
		}
	}
	return 0
}
