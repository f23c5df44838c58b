// Package server is pbs_server: the TORQUE 2.5.13 batch server. Its
// transport (package server/transport) accepts client connections,
// authenticates them through the iff table and decodes batch requests
// (package batchreq); the server dispatches them to one handler per
// request type, changes the in-memory state, makes each acknowledged
// change durable in the store (group commit) and replies.
//
// Concurrency: on Linux the transport's event loop accepts the
// connections and serves the requests of job submissions itself over
// non-blocking sockets, handing any other request, and any connection
// that could make it wait, to a goroutine of its own; elsewhere (and with
// Config.GoroutinePerConn) one goroutine per connection reads and serves
// its requests. All objects (server attributes, queues, nodes, jobs) are owned by the
// Server and guarded by one RWMutex, held only for in-memory work and
// never while waiting for the network or the disk. Store batches are
// submitted under the lock (which fixes their order) and waited for after
// it is released, so concurrent submissions share fsyncs.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/admit"
	"gopbs/server/depend"
	"gopbs/server/handler"
	"gopbs/server/jobmail"
	"gopbs/server/lifecycle"
	"gopbs/server/link/momis"
	"gopbs/server/link/running"
	"gopbs/server/link/sched"
	"gopbs/server/monitor"
	"gopbs/server/nodesfile"
	"gopbs/server/pbslog"
	"gopbs/server/reservation"
	"gopbs/server/route"
	"gopbs/server/schedulers"
	"gopbs/server/state"
	"gopbs/server/store"
	"gopbs/server/transport"
)

// Initialisation types (-t).
const (
	InitWarm   = "warm"
	InitCold   = "cold"
	InitCreate = "create"
	InitHot    = "hot"
)

// Config configures a Server.
type Config struct {
	Home       string // PBS_HOME
	Port       int    // batch port (default 15001)
	ServerName string // -H: the server's host name; default from server_name or the host name
	MomPort    int
	RMPort     int
	SchedHost  string
	SchedPort  int
	InitType   string // create, cold, warm (default), hot
	Scheduling string // -a: "true"/"false" overrides the saved attribute, "" keeps it
	LogFile    string // -L: server log file (instead of server_logs/YYYYMMDD)
	AcctFile   string // -A: accounting file
	// Listener, if set, is used instead of listening on Port (tests).
	Listener net.Listener
	// AuthWait bounds how long an AuthenticateUser waits for the client
	// connection it names to be accepted (default 2 s).
	AuthWait time.Duration
	// RequestTimeout bounds a stall inside a request (default tcp_timeout,
	// 6 s); IdleTimeout closes connections idle between requests (900 s).
	RequestTimeout time.Duration
	IdleTimeout    time.Duration
	// ResolveHost, if set, maps a node (MOM host) name to its addresses
	// in place of the system resolver. It is used to launch jobs (the MOM
	// is dialled at the first address and MomPort), to recognise the node
	// a MOM's IS stream comes from and to ping down nodes (at RMPort).
	// Tests use it to put a node's MOM on loopback.
	ResolveHost func(name string) []netip.Addr
	// GoroutinePerConn serves every connection on its own goroutine
	// through the runtime's network poller instead of the event loop
	// (server/transport; the only way on other systems). The environment
	// variable GOPBS_NETLOOP=0 sets it too.
	GoroutinePerConn bool
	// HTTPAddr (-http) sets the http_address attribute at start-up: the
	// address of the HTTP listener serving the status page and the
	// metrics (monitoring.go); a failure to listen there is fatal.
	HTTPAddr string
	// SchedCommand is the scheduler program the server starts for its
	// sched objects (default: pbs_sched beside the server's executable).
	SchedCommand string
	// Store, if set, is where the server keeps its state instead of the
	// embedded store (server_priv/serverdb.bolt): a PostgreSQL store
	// (package pgstore) opened by the caller, which -t create must have
	// emptied already. Shutdown closes it, as a failed New does.
	Store store.AsyncStore
}

// Server is a running pbs_server.
type Server struct {
	cfg   Config
	name  string
	log   *pbslog.Logger
	acct  *pbslog.Accounting
	store store.AsyncStore
	mux   batchreq.ServeMux[*handler.Conn]
	tr    *transport.Transport // listener, connections, authentication
	lock  *os.File
	now   func() time.Time

	mu          sync.RWMutex
	attrs       state.Attrs
	nextJob     int64
	jobs        state.Jobs
	queues      []*state.Queue
	queueByName map[string]*state.Queue
	nodes       []*state.Node
	nodeByName  map[string]*state.Node
	rankCounter int64
	order       state.Order    // creation order of queues and nodes
	tracking    state.Tracking // jobs that moved to other servers
	db          state.DB       // transactions over the tables above (state.Txn)
	shutting    bool
	rate        rateCounter
	groups      map[string]groupEntry // primary groups of job users (state.go)
	life        *lifecycle.Life       // the job life cycle (job_requests.go)
	deps        *depend.Graph         // dependencies and sync sets (job_requests.go)
	resv        *reservation.Service  // advance reservations (reservations.go)
	admission   *admit.Checker        // queue admission, feasibility, defaults (server/admit)
	nodesFile   *nodesfile.File       // server_priv/nodes kept in step with the node table
	router      *route.Router         // route queues and moves to other servers (server/route)

	// run is the MOM side of running jobs (server/link/running,
	// run_host.go); it is also the job-control handlers' handler.Running.
	run *running.Link
	// mailer writes and sends job mail (server/jobmail).
	mailer *jobmail.Mailer
	// groupOf returns the primary group of a user (tests replace it).
	groupOf func(user string) string
	// is is the MOMs' IS streams (server/link/momis, is_nodes.go).
	is *momis.Link
	// sched is the scheduler link (server/link/sched, sched_state.go).
	sched *sched.Link
	// scheds holds the sched objects and schedRun runs the non-default
	// schedulers (sched_objects.go, package schedulers).
	scheds     *schedulers.Table
	schedRun   schedRunner
	schedSuper *schedulers.Supervisor
	killScheds atomic.Bool // qterm -s

	pprof net.Listener // GOPBS_PPROF (debug.go)

	mon *monitoring      // metrics, status page, HTTP listener (monitoring.go)
	obs monitor.Observer // where events are reported

	done      chan struct{}
	closeOnce sync.Once
	stopErr   error
}

// New prepares a server: PBS_HOME layout, lock file, logs, store and
// recovery. Serve then accepts connections.
func New(cfg Config) (*Server, error) {
	if cfg.Home == "" {
		cfg.Home = "/var/spool/torque"
	}
	if cfg.Port == 0 {
		cfg.Port = batchreq.PBS_BATCH_SERVICE_PORT
	}
	if cfg.MomPort == 0 {
		cfg.MomPort = batchreq.PBS_MOM_SERVICE_PORT
	}
	if cfg.RMPort == 0 {
		cfg.RMPort = batchreq.PBS_MANAGER_SERVICE_PORT
	}
	if cfg.SchedPort == 0 {
		cfg.SchedPort = batchreq.PBS_SCHEDULER_SERVICE_PORT
	}
	if cfg.InitType == "" {
		cfg.InitType = InitWarm
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = transport.DefaultRequestTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = transport.DefaultIdleTimeout
	}
	if cfg.AuthWait == 0 {
		cfg.AuthWait = 2 * time.Second
	}
	if os.Getenv("GOPBS_NETLOOP") == "0" {
		cfg.GoroutinePerConn = true
	}
	switch cfg.InitType {
	case InitWarm, InitCold, InitCreate, InitHot:
	default:
		return nil, fmt.Errorf("pbs_server: bad initialization type %q", cfg.InitType)
	}
	s := &Server{
		cfg:         cfg,
		now:         time.Now,
		queueByName: make(map[string]*state.Queue),
		nodeByName:  make(map[string]*state.Node),
		done:        make(chan struct{}),
		obs:         monitor.Discard{},
		groupOf:     lookupPrimaryGroup,
	}
	priv := filepath.Join(cfg.Home, "server_priv")
	for _, d := range []string{priv, filepath.Join(priv, "accounting"), filepath.Join(cfg.Home, "server_logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("pbs_server: %w", err)
		}
	}
	s.name = cfg.ServerName
	if s.name == "" {
		if b, err := os.ReadFile(filepath.Join(cfg.Home, "server_name")); err == nil {
			s.name = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
			if i := strings.IndexByte(s.name, ':'); i >= 0 {
				s.name = s.name[:i]
			}
		}
	}
	if s.name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("pbs_server: host name: %w", err)
		}
		s.name = h
	}
	if err := s.takeLock(filepath.Join(priv, "server.lock")); err != nil {
		if cfg.Store != nil {
			cfg.Store.Close()
		}
		return nil, err
	}
	logDir := filepath.Join(cfg.Home, "server_logs")
	var err error
	if cfg.LogFile != "" {
		s.log, err = pbslog.NewLoggerFile(cfg.LogFile, "PBS_Server")
	} else {
		s.log, err = pbslog.NewLogger(logDir, "PBS_Server")
	}
	if err != nil {
		s.closeConfigStore()
		s.releaseLock()
		return nil, err
	}
	if cfg.AcctFile != "" {
		s.acct, err = pbslog.NewAccountingFile(cfg.AcctFile)
	} else {
		s.acct, err = pbslog.NewAccounting(filepath.Join(priv, "accounting"))
	}
	if err != nil {
		s.closeConfigStore()
		s.releaseLock()
		return nil, err
	}
	s.log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "Log", "Log opened")
	initNum := map[string]int{InitHot: 0, InitWarm: 1, InitCold: 2, InitCreate: 4}[cfg.InitType]
	s.log.Logf(logline.EventSystem|logline.EventAdmin, logline.ClassServer, "PBS_Server", "Server %s started, initialization type = %d", s.name, initNum)
	dbPath := filepath.Join(priv, "serverdb.bolt")
	if cfg.InitType == InitCreate {
		if cfg.Store == nil {
			if err := os.Remove(dbPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				s.releaseLock()
				return nil, fmt.Errorf("pbs_server: remove database: %w", err)
			}
		}
		os.Remove(filepath.Join(priv, "nodes"))
	}
	if cfg.Store != nil {
		s.store = cfg.Store
	} else if s.store, err = store.OpenBolt(dbPath); err != nil {
		s.releaseLock()
		return nil, err
	}
	s.db = state.DB{Store: s.store, Jobs: &s.jobs, Attrs: &s.attrs, NextJob: &s.nextJob}
	s.admission = admit.New(admitState{s})
	s.router = route.New(routeHost{s})
	s.nodesFile = nodesfile.New(filepath.Join(priv, "nodes"))
	s.newLife()
	s.log.Logf(logline.EventSystem, logline.ClassAcct, "Act", "Account file %s opened", s.acct.Path())
	if err := s.recover(); err != nil {
		s.store.Close()
		s.releaseLock()
		return nil, err
	}
	if s.scheds, err = (schedObjects{s}).newTable(); err != nil {
		s.store.Close()
		s.releaseLock()
		return nil, fmt.Errorf("pbs_server: sched objects: %w", err)
	}
	switch strings.ToLower(cfg.Scheduling) {
	case "":
	case "true", "t", "1", "y":
		s.attrs.Set(pbsattr.SrvScheduling, "True")
	default:
		s.attrs.Set(pbsattr.SrvScheduling, "False")
	}
	if v, err := strconv.Atoi(s.attrs.Get(pbsattr.SrvLogEvents)); err == nil {
		s.log.SetEvents(v)
	}
	s.registerHandlers()
	if s.resv, err = startReservations(s, &s.mux); err != nil {
		s.store.Close()
		s.releaseLock()
		return nil, err
	}
	s.mailer = jobmail.New(s.log)
	s.is = momis.New(isNodes{s}, s.log, cfg.RMPort, s.done)
	runHost{s}.register()
	initMonitoring(s)
	s.run = runHost{s}.newLink() // run_host.go; after initMonitoring, which sets s.obs
	// the jobs recovered as queued are the first cycle's; the tick asks
	// for cycles for jobs queued from now on
	s.sched = sched.New(schedState{s}, s.log, s.name, s.obs, sched.Scheduler{Name: "default", Host: cfg.SchedHost, Port: cfg.SchedPort})
	if cfg.HTTPAddr != "" {
		s.attrs.Set(pbsattr.SrvHTTPAddress, cfg.HTTPAddr)
	}
	ln := cfg.Listener
	if ln == nil {
		// No TCP keep-alive: it costs four setsockopt calls per accepted
		// connection, and idle connections are closed by IdleTimeout.
		lc := net.ListenConfig{KeepAlive: -1}
		if ln, err = lc.Listen(context.Background(), "tcp", ":"+strconv.Itoa(cfg.Port)); err != nil {
			s.store.Close()
			s.releaseLock()
			return nil, fmt.Errorf("pbs_server: listen: %w", err)
		}
	}
	s.tr.Listen(ln)
	s.log.Logf(logline.EventSystem|logline.EventAdmin, logline.ClassServer, "PBS_Server",
		"Using ports Server:%d  Scheduler:%d  MOM:%d (server: '%s')", s.port(), cfg.SchedPort, cfg.MomPort, s.name)
	if err := s.mon.reconcile(cfg.HTTPAddr != ""); err != nil {
		ln.Close()
		s.store.Close()
		s.releaseLock()
		return nil, err
	}
	s.log.Logf(logline.EventSystem, logline.ClassServer, "PBS_Server", "Server Ready, pid = %d, loglevel=0", os.Getpid())
	return s, nil
}

func (s *Server) port() int {
	if p := s.tr.Port(); p != 0 {
		return p
	}
	return s.cfg.Port
}

// Addr returns the listening address.
func (s *Server) Addr() net.Addr { return s.tr.Addr() }

// Name returns the server name (host part of job ids).
func (s *Server) Name() string { return s.name }

// Done is closed when the server has shut down.
func (s *Server) Done() <-chan struct{} { return s.done }

func (s *Server) takeLock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("pbs_server: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("pbs_server: another server is running (lock %s held): %w", path, err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	s.lock = f
	return nil
}

// closeConfigStore closes Config.Store for a New that fails before the
// server has taken it over.
func (s *Server) closeConfigStore() {
	if s.cfg.Store != nil {
		s.cfg.Store.Close()
	}
}

func (s *Server) releaseLock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// Serve accepts connections until the server shuts down. It returns nil
// after a clean shutdown.
func (s *Server) Serve() error {
	s.pprof = s.startPprof()
	s.startSchedulers()
	runHost{s}.start()
	go s.timers()
	s.tr.Serve()
	<-s.done
	s.tr.Wait()
	return s.stopErr
}

// Shutdown stops the server: it logs, stops accepting, closes every
// connection except the one that asked (whose reply is sent by the
// caller), flushes the store and releases the lock. how is the text of
// the shutdown type ("Quick", "By Signal", ...).
func (s *Server) Shutdown(how string) {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.shutting = true
		s.mu.Unlock()
		s.log.Logf(logline.EventSystem|logline.EventAdmin|logline.EventDebug, logline.ClassServer, "PBS_Server", "Starting to shutdown the server, type is %s", how)
		s.tr.Close()
		if s.pprof != nil {
			s.pprof.Close()
		}
		s.mon.stop()
		s.is.Stop()
		s.stopSchedulers()
		s.stopErr = s.store.Close()
		s.log.Log(logline.EventSystem, logline.ClassServer, "PBS_Server", "Server shutdown completed")
		s.log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "Log", "Log closed")
		s.log.Close()
		s.acct.Close()
		s.releaseLock()
		close(s.done)
	})
}

// timers runs periodic work: execution-time releases, routing, purging of
// completed jobs.
func (s *Server) timers() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.tick()
			s.resv.Tick()
			s.deps.Sync().Deliver()
		}
	}
}

// serverFlag returns a boolean server attribute.
func (s *Server) serverFlag(idx int) bool { return state.IsTrue(s.attrs.Get(idx)) }

func (s *Server) serverLong(idx int, def int64) int64 {
	if v := s.attrs.Get(idx); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// credentialLifetimeLocked returns the credential lifetime (negative:
// infinite). Called with s.mu held.
func (s *Server) credentialLifetimeLocked() time.Duration {
	n := s.serverLong(pbsattr.SrvCredentialLifetime, 3600)
	if n < 0 {
		return -1
	}
	return time.Duration(n) * time.Second
}
