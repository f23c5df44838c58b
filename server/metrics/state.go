package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"gopbs/server/monitor"
)

// stateCollector reads the server's queues and nodes from a
// monitor.Source at each scrape.
type stateCollector struct {
	src       monitor.Source
	jobs      *prometheus.Desc
	queueUp   *prometheus.Desc
	nodes     *prometheus.Desc
	vps       *prometheus.Desc
	vpsInUse  *prometheus.Desc
	nodesLoad *prometheus.Desc
}

func newStateCollector(src monitor.Source) *stateCollector {
	return &stateCollector{
		src: src,
		jobs: prometheus.NewDesc("gopbs_server_jobs",
			"Jobs by queue and state (transit, queued, held, waiting, running, exiting, complete).",
			[]string{"queue", "state"}, nil),
		queueUp: prometheus.NewDesc("gopbs_server_queue_started",
			"1 if the queue is enabled and started, else 0.",
			[]string{"queue", "type"}, nil),
		nodes: prometheus.NewDesc("gopbs_server_nodes",
			"Nodes by state, the state words joined as pbsnodes prints them (free, job-exclusive, down, offline, down,offline, ...).",
			[]string{"state"}, nil),
		vps: prometheus.NewDesc("gopbs_server_node_vps",
			"Virtual processors (np) of all nodes.", nil, nil),
		vpsInUse: prometheus.NewDesc("gopbs_server_node_vps_assigned",
			"Virtual processors assigned to jobs.", nil, nil),
		nodesLoad: prometheus.NewDesc("gopbs_server_node_load_sum",
			"Sum of the one-minute load averages the MOMs last reported.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.queueUp
	ch <- c.nodes
	ch <- c.vps
	ch <- c.vpsInUse
	ch <- c.nodesLoad
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	cl := c.src.Cluster()
	for _, q := range cl.Queues {
		for i, n := range q.Counts {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), q.Name, stateNames[i])
		}
		up := 0.0
		if q.Enabled && q.Started {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.queueUp, prometheus.GaugeValue, up, q.Name, q.Type)
	}
	byState := make(map[string]int)
	var vps, inUse int
	var load float64
	for _, n := range cl.Nodes {
		byState[n.State()]++
		vps += n.NP
		inUse += n.Jobs
		if n.HasLoad {
			load += n.Load
		}
	}
	for st, n := range byState {
		ch <- prometheus.MustNewConstMetric(c.nodes, prometheus.GaugeValue, float64(n), st)
	}
	ch <- prometheus.MustNewConstMetric(c.vps, prometheus.GaugeValue, float64(vps))
	ch <- prometheus.MustNewConstMetric(c.vpsInUse, prometheus.GaugeValue, float64(inUse))
	ch <- prometheus.MustNewConstMetric(c.nodesLoad, prometheus.GaugeValue, load)
}
