// Package metrics exports pbs_server's Prometheus metrics: the jobs of
// each queue by state and the nodes by state, read from a monitor.Source
// when scraped, and the histograms and counters of the events the server
// reports to it as a monitor.Observer (requests by type, store commits,
// scheduling cycles, MOM link errors), with the Go runtime's and the
// process's own metrics.
//
// Every metric is named gopbs_server_*; README and docs/monitoring.md
// list them.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gopbs/batchreq"
	"gopbs/server/monitor"
)

// StateNames are the values of the state label of gopbs_server_jobs,
// indexed like monitor.JobStates.
var stateNames = [monitor.NumJobStates]string{"transit", "queued", "held", "waiting", "running", "exiting", "complete"}

// StateName returns the state label value of job state index i (an index
// into monitor.JobStates).
func StateName(i int) string { return stateNames[i] }

// Buckets of the histograms: durations from 100 µs to about 100 s, and
// batch counts from 1 to 4096.
var (
	latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 20)
	cycleBuckets   = prometheus.ExponentialBuckets(0.001, 2, 18)
	batchBuckets   = prometheus.ExponentialBuckets(1, 2, 13)
)

// Metrics is a registry of pbs_server's metrics and the Observer that
// feeds the event metrics. It is safe for concurrent use.
type Metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.HistogramVec
	byType      [batchreq.PBS_BATCH_CEILING]prometheus.Observer
	commitTime  prometheus.Histogram
	commitSize  prometheus.Histogram
	cycles      *prometheus.HistogramVec
	momErrors   *prometheus.CounterVec
	handlerOpts promhttp.HandlerOpts
}

// New returns the metrics of a server whose state src describes.
func New(src monitor.Source) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gopbs_server_request_duration_seconds",
			Help:    "Time to serve a batch request, from its decoding to its reply, by request type.",
			Buckets: latencyBuckets,
		}, []string{"request"}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gopbs_server_store_commit_duration_seconds",
			Help:    "Time of one group commit of the store (write-ahead log record and its sync).",
			Buckets: latencyBuckets,
		}),
		commitSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "gopbs_server_store_commit_batches",
			Help:    "Changes (batches) made durable together by one group commit.",
			Buckets: batchBuckets,
		}),
		cycles: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gopbs_server_sched_cycle_duration_seconds",
			Help:    "Duration of a scheduling cycle, from the server's connecting to the scheduler until the scheduler closes the connection, by scheduler.",
			Buckets: cycleBuckets,
		}, []string{"scheduler"}),
		momErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gopbs_server_mom_link_errors_total",
			Help: "Failures on the links to the MOMs: connect (could not connect), request (a request failed or got no reply), silent (a node marked down because its MOM stopped reporting).",
		}, []string{"kind"}),
	}
	for t := range m.byType {
		m.byType[t] = m.requests.WithLabelValues(batchreq.RequestName(t))
	}
	for _, k := range []string{monitor.MomConnect, monitor.MomRequest, monitor.MomSilent} {
		m.momErrors.WithLabelValues(k)
	}
	m.reg.MustRegister(
		m.requests, m.commitTime, m.commitSize, m.cycles, m.momErrors,
		newStateCollector(src),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.handlerOpts = promhttp.HandlerOpts{Registry: m.reg}
	return m
}

// Handler returns the HTTP handler that serves the metrics in
// Prometheus's text (or a negotiated) exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, m.handlerOpts)
}

// Registry returns the registry holding the metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request implements monitor.Observer. TORQUE's request types are
// labelled from a table; GoPBS's own (batchreq.IsGoPBSRequest) by their
// names; unknown types are counted as "NONE".
func (m *Metrics) Request(reqType int, d time.Duration) {
	if reqType < 0 || reqType >= len(m.byType) {
		m.requests.WithLabelValues(batchreq.RequestName(reqType)).Observe(d.Seconds())
		return
	}
	m.byType[reqType].Observe(d.Seconds())
}

// StoreCommit implements monitor.Observer.
// The size goes first: a scrape between the two then never sees more
// commits than batches made durable (every commit has one at least).
func (m *Metrics) StoreCommit(d time.Duration, batches int) {
	m.commitSize.Observe(float64(batches))
	m.commitTime.Observe(d.Seconds())
}

// SchedCycle implements monitor.Observer.
func (m *Metrics) SchedCycle(scheduler string, d time.Duration) {
	m.cycles.WithLabelValues(scheduler).Observe(d.Seconds())
}

// MomLinkError implements monitor.Observer.
func (m *Metrics) MomLinkError(kind string) { m.momErrors.WithLabelValues(kind).Inc() }

var _ monitor.Observer = (*Metrics)(nil)
