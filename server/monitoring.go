package server

import (
	"fmt"
	"gopbs/server/state"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/httplisten"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/metrics"
	"gopbs/server/monitor"
	"gopbs/server/pbslog"
	"gopbs/server/statuspage"
)

// This file connects the server to its monitoring (issue 21): the
// monitor.Source its metrics and status page read, the monitor.Observer
// it reports events to, and the opt-in HTTP listener that serves both
// (the -http flag, the http_address server attribute).

// MetricsPath is where the HTTP listener serves the Prometheus metrics;
// the status page is at "/".
const MetricsPath = "/metrics"

// monitoring is the server's metrics, page and HTTP listener.
type monitoring struct {
	metrics *metrics.Metrics
	handler http.Handler // the listener's mux
	log     *pbslog.Logger
	want    func() string // the address to listen on (http_address), "" for none

	mu   sync.Mutex // held while the listener changes
	ln   *httplisten.Listener
	addr string // the address ln listens on as configured, "" when none
}

// newMonitoring creates the metrics and the page over src. want returns
// the address the HTTP listener is to listen on. Nothing listens yet.
func newMonitoring(src monitor.Source, log *pbslog.Logger, want func() string) *monitoring {
	m := metrics.New(src)
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, m.Handler())
	mux.Handle("/", statuspage.New(src, statuspage.Options{}))
	return &monitoring{metrics: m, handler: mux, log: log, want: want}
}

// initMonitoring creates the server's monitoring; the server reports to
// s.obs from then on, and the time every request handler takes is
// reported.
func initMonitoring(s *Server) {
	src := monitorSource{s}
	m := newMonitoring(src, s.log, src.httpAddress)
	s.mon = m
	s.obs = m.metrics
	// The embedded store reports its group commits; a store that cannot
	// simply leaves the commit metrics empty.
	if st, ok := any(s.store).(interface {
		SetObserver(func(time.Duration, int))
	}); ok {
		st.SetObserver(m.metrics.StoreCommit)
	}
	instrumentRequests(&s.mux, s.obs)
}

// instrumentRequests wraps every request handler registered on mux,
// TORQUE's request types and GoPBS's own, so that the time it takes is
// reported to obs by request type.
func instrumentRequests(mux *batchreq.ServeMux[*handler.Conn], obs monitor.Observer) {
	wrap := func(t int) {
		h := mux.Handler(t)
		if h == nil {
			return
		}
		mux.Handle(t, batchreq.HandlerFunc[*handler.Conn](func(c *handler.Conn, req *batchreq.Request) {
			begin := time.Now()
			h.ServeBatch(c, req)
			obs.Request(req.Type, time.Since(begin))
		}))
	}
	for t := range batchreq.PBS_BATCH_CEILING {
		wrap(t)
	}
	for t := batchreq.PBS_BATCH_GoPBSFirst; t < batchreq.PBS_BATCH_GoPBSCeiling; t++ {
		wrap(t)
	}
}

// reconcile makes the HTTP listener match the wanted address (the
// http_address attribute): it starts, moves or stops it. A failure to
// listen is logged and, when fatal is set (the -http flag at start-up),
// returned.
func (m *monitoring) reconcile(fatal bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := m.want()
	if want == m.addr {
		return nil
	}
	if m.ln != nil {
		m.ln.Close()
		m.log.Logf(logline.EventSystem|logline.EventAdmin, logline.ClassServer, "PBS_Server", "HTTP listener on %s closed", m.ln.Addr())
		m.ln, m.addr = nil, ""
	}
	if want == "" {
		return nil
	}
	ln, err := httplisten.Start(want, m.handler)
	if err != nil {
		m.log.Logf(logline.EventSystem|logline.EventAdmin|logline.EventError, logline.ClassServer, "PBS_Server", "http_address %s: %v", want, err)
		if fatal {
			return fmt.Errorf("pbs_server: -http %s: %w", want, err)
		}
		return nil
	}
	m.ln, m.addr = ln, want
	m.log.Logf(logline.EventSystem|logline.EventAdmin, logline.ClassServer, "PBS_Server", "HTTP listener on %s: status page %s, metrics %s", ln.Addr(), ln.URL(), strings.TrimSuffix(ln.URL(), "/")+MetricsPath)
	return nil
}

// stop closes the HTTP listener, if any.
func (m *monitoring) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln != nil {
		m.ln.Close()
		m.ln, m.addr = nil, ""
	}
}

// listening returns the address the HTTP listener listens on, "" when
// there is none.
func (m *monitoring) listening() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// HTTPAddr returns the address the HTTP listener listens on, "" when
// there is none.
func (s *Server) HTTPAddr() string { return s.mon.listening() }

// monitorSource is the monitor.Source of a Server.
type monitorSource struct{ s *Server }

// Cluster implements monitor.Source.
func (m monitorSource) Cluster() monitor.Cluster {
	s := m.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	cl := monitor.Cluster{Server: s.name, Taken: s.now(), Queues: make([]monitor.Queue, 0, len(s.queues)), Nodes: make([]monitor.Node, 0, len(s.nodes))}
	for _, q := range s.queues {
		cl.Queues = append(cl.Queues, monitor.Queue{
			Name:    q.Name,
			Type:    q.Attrs.Get(pbsattr.QueueType),
			Enabled: state.IsTrue(q.Attrs.Get(pbsattr.QueueEnabled)),
			Started: state.IsTrue(q.Attrs.Get(pbsattr.QueueStarted)),
			Counts:  q.Count,
		})
	}
	used := s.cluster().UsedVPs()
	for _, n := range s.nodes {
		mn := monitor.Node{Name: n.Name, States: strings.Split(state.FormatNodeState(n.State), ","), NP: n.NP}
		for _, id := range used[n.Name] {
			if id != "" {
				mn.Jobs++
			}
		}
		nodeStatusInto(&mn, n.Attrs.Get(pbsattr.NodeStatus))
		cl.Nodes = append(cl.Nodes, mn)
	}
	return cl
}

// nodeStatusInto reads loadave, physmem and availmem from a node's status
// attribute ("rectime=...,loadave=0.50,physmem=8000kb,...").
func nodeStatusInto(n *monitor.Node, status string) {
	for item := range strings.SplitSeq(status, ",") {
		k, v, _ := strings.Cut(item, "=")
		switch k {
		case "loadave":
			if l, err := strconv.ParseFloat(v, 64); err == nil {
				n.Load, n.HasLoad = l, true
			}
		case "physmem":
			n.PhysMem = statusKB(v)
		case "availmem":
			n.AvailMem = statusKB(v)
		}
	}
}

// statusKB converts a MOM size ("8000kb") to bytes, 0 if malformed.
func statusKB(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimSuffix(v, "kb"), 10, 64)
	if err != nil || n < 0 || n > 1<<50 {
		return 0
	}
	return n << 10
}

// httpAddress returns the http_address server attribute, "" once the
// server is shutting down.
func (m monitorSource) httpAddress() string {
	s := m.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.shutting {
		return ""
	}
	return s.attrs.Get(pbsattr.SrvHTTPAddress)
}

// Jobs implements monitor.Source.
func (m monitorSource) Jobs(f monitor.JobFilter) []monitor.Job {
	s := m.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []monitor.Job
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if f.User != "" && j.OwnerUser() != f.User || f.State != "" && j.StateLetter() != f.State {
			continue
		}
		mj := monitor.Job{
			ID:       j.ID,
			Name:     j.Name(),
			Owner:    j.OwnerUser(),
			State:    j.StateLetter(),
			ExecHost: j.Attrs.Get(pbsattr.JobExecHost),
		}
		if j.Queue != nil {
			mj.Queue = j.Queue.Name
		}
		mj.Walltime, _ = j.Attrs.LookupRes(pbsattr.JobResourceList, "walltime")
		if t, err := strconv.ParseInt(j.Attrs.Get(pbsattr.JobQtime), 10, 64); err == nil {
			mj.Queued = time.Unix(t, 0)
		}
		out = append(out, mj)
	}
	return out
}
