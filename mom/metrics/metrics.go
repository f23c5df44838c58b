// Package metrics exports pbs_mom's Prometheus metrics for its node: the
// jobs it holds by state, the load average, memory and processors read
// from a Source when scraped, and the enforcement kills (jobs killed for
// exceeding a limit) counted as they happen, with the Go runtime's and the
// process's own metrics. Every metric is named gopbs_mom_*; README and
// docs/monitoring.md list them.
package metrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Node is a snapshot of a MOM's node.
type Node struct {
	Name string
	// Jobs counts the jobs the MOM holds by state ("starting", "running",
	// "suspended", "exited").
	Jobs map[string]int
	// Load is the one-minute load average, valid when HasLoad.
	Load    float64
	HasLoad bool
	// Memory in bytes, 0 when it could not be read: physical, available
	// (free memory and swap) and total (memory and swap), as the MOM
	// reports physmem, availmem and totmem.
	PhysMem, AvailMem, TotalMem int64
	CPUs                        int // processors, 0 when unknown
}

// Source gives snapshots of the node. Node is called at each scrape and
// must be safe for concurrent use.
type Source interface {
	Node() Node
}

// JobStates are the job states always exported, zero or not.
var jobStates = []string{"starting", "running", "suspended", "exited"}

// Resources are the limits whose enforcement kills are always exported,
// zero or not (spec 11 §7; mem and pmem with the MOM's EnforceMem).
var resources = []string{"cput", "pcput", "vmem", "pvmem", "mem", "pmem", "walltime"}

// Metrics is a registry of pbs_mom's metrics. It is safe for concurrent
// use.
type Metrics struct {
	reg   *prometheus.Registry
	kills *prometheus.CounterVec
}

// New returns the metrics of the node that src describes; version is the
// version pbs_mom reports (gopbs_mom_info).
func New(src Source, version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		kills: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gopbs_mom_enforcement_kills_total",
			Help: "Jobs killed for exceeding a limit, by the limit's resource (cput, pcput, vmem, pvmem, mem, pmem, walltime).",
		}, []string{"resource"}),
	}
	for _, r := range resources {
		m.kills.WithLabelValues(r)
	}
	m.reg.MustRegister(
		m.kills,
		newNodeCollector(src, version),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler returns the HTTP handler that serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry returns the registry holding the metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// EnforcementKill counts a job killed for exceeding a limit. Its argument
// is the resource, or the MOM's over-limit message, whose first word is
// the resource ("walltime 9 exceeded limit 5").
func (m *Metrics) EnforcementKill(resourceOrMessage string) {
	r, _, _ := strings.Cut(strings.TrimSpace(resourceOrMessage), " ")
	if r == "" {
		r = "unknown"
	}
	m.kills.WithLabelValues(r).Inc()
}

// nodeCollector reads the node from a Source at each scrape.
type nodeCollector struct {
	src     Source
	version string
	info    *prometheus.Desc
	jobs    *prometheus.Desc
	load    *prometheus.Desc
	mem     *prometheus.Desc
	cpus    *prometheus.Desc
}

func newNodeCollector(src Source, version string) *nodeCollector {
	return &nodeCollector{
		src:     src,
		version: version,
		info:    prometheus.NewDesc("gopbs_mom_info", "Always 1: the MOM's node name and version.", []string{"node", "version"}, nil),
		jobs:    prometheus.NewDesc("gopbs_mom_jobs", "Jobs the MOM holds, by state (starting, running, suspended, exited).", []string{"state"}, nil),
		load:    prometheus.NewDesc("gopbs_mom_load1", "One-minute load average of the node (loadave).", nil, nil),
		mem:     prometheus.NewDesc("gopbs_mom_memory_bytes", "Memory of the node: physical (physmem), available (availmem: free memory and swap), total (totmem: memory and swap).", []string{"kind"}, nil),
		cpus:    prometheus.NewDesc("gopbs_mom_cpus", "Processors of the node (ncpus).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.jobs, c.load, c.mem, c.cpus} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.src.Node()
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, n.Name, c.version)
	for _, st := range jobStates {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n.Jobs[st]), st)
	}
	for st, k := range n.Jobs {
		if !contains(jobStates, st) {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(k), st)
		}
	}
	if n.HasLoad {
		ch <- prometheus.MustNewConstMetric(c.load, prometheus.GaugeValue, n.Load)
	}
	for _, m := range []struct {
		kind string
		v    int64
	}{{"physical", n.PhysMem}, {"available", n.AvailMem}, {"total", n.TotalMem}} {
		if m.v > 0 {
			ch <- prometheus.MustNewConstMetric(c.mem, prometheus.GaugeValue, float64(m.v), m.kind)
		}
	}
	if n.CPUs > 0 {
		ch <- prometheus.MustNewConstMetric(c.cpus, prometheus.GaugeValue, float64(n.CPUs))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
