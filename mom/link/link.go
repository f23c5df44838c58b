// Package link is the protocol side of pbs_mom (TORQUE 2.5.13, spec 10):
// the batch-request service on TCP 15002 (job launch, status polls,
// signals, deletion, file staging), the job obituary sent to the server,
// the IS conversation with the server over RPP (hello, cluster addresses,
// periodic status) and the resource monitor (RM) on port 15003 over RPP
// and TCP.
//
// Job execution and file staging are delegated to an Executor (normally a
// *jobexec.Engine), the system values of the IS status and of the RM
// answers, the busy/free decision, the node health check and $varattr to
// package sysinfo; the package keeps the protocol state of each job
// (launch stage, server address, attributes, what was reported) and the
// MOM's own status items (state, jobs, message).
//
// The RPP socket dispatches every message of an accepted stream by its
// protocol number (RM 1, IM 3, IS 4). Multi-node jobs (spec 10 §11): as
// mother superior the MOM joins the sisters over IM from its RPP client
// port, relays its tasks' TM requests for other nodes and gathers their
// output and usage (im_ms.go); as a sister it serves IM (im.go) and the
// TM requests of the tasks running there, relayed to the other nodes as
// IM (tm_sister.go); the TM service for a job's tasks shares the TCP RM
// port (tm.go). Both sides write their part of a job to mom_priv/jobs
// (job and task files) and take it back after a restart (im_persist.go).
// The executor must implement TaskRunner for them; Options.IM replaces the
// IM service.
//
// Use: build the execution engine with OnExit calling Mom.JobExited, New
// the Mom, Recover the saved jobs, then Serve the listeners.
package link

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopbs/batchreq"
	"gopbs/mom/config"
	"gopbs/mom/jobexec"
	"gopbs/mom/momd"
	"gopbs/mom/momlog"
	"gopbs/mom/procfs"
	"gopbs/mom/sysinfo"
	"gopbs/rpp"
)

// Default ports (spec 10 §1).
const (
	DefaultServerPort = 15001
	DefaultMomPort    = 15002
	DefaultRMPort     = 15003
)

// Version is the version MOM reports (version=, momctl -d).
const Version = momd.Version

// Executor runs jobs; *jobexec.Engine implements it. Its OnExit callback
// must call Mom.JobExited.
type Executor interface {
	Start(ctx context.Context, spec *jobexec.Job) (int, error)
	Status(jobID string) (jobexec.Status, error)
	Signal(ctx context.Context, jobID, signal string, rerun bool) error
	Epilogue(ctx context.Context, jobID string) (int, error)
	Purge(jobID string) error
	ScriptPath(prefix string) string
	Adopt(spec *jobexec.Job, sid int, started time.Time) error
	// CopyFiles and DeleteFiles stage files as the job's user ($usecp,
	// retries, undelivered/, spec 11 §6); a *jobexec.CopyError carries
	// the PBSE_NOCOPYFILE reply text.
	CopyFiles(ctx context.Context, req *jobexec.CopyRequest) error
	DeleteFiles(ctx context.Context, req *jobexec.CopyRequest) error
}

// Modifier is implemented by executors that apply a ModifyJob to a
// running job's limits (*jobexec.Engine).
type Modifier interface {
	Modify(jobID string, resources []jobexec.Resource) error
}

// Checkpointer is implemented by executors that take checkpoints of
// running jobs (*jobexec.Engine): HoldJob (checkpoint and end the job) and
// CheckpointJob (checkpoint, the job goes on).
type Checkpointer interface {
	Checkpoint(ctx context.Context, jobID string, hold bool) error
}

// Poller is implemented by executors that poll their jobs' usage and
// limits on request (*jobexec.Engine): the MOM asks for a poll after each
// IS_STATUS it sends, so the polls keep in step with the status reports as
// TORQUE's do, and limits are enforced when TORQUE would enforce them.
type Poller interface {
	PollNow()
}

// Options configure a Mom.
type Options struct {
	Host   string // this MOM's host name (-H, $mom_host or the host name)
	Home   string // PBS_HOME
	Config *config.Config
	Log    *momlog.Logger
	Exec   Executor
	// Servers are the servers to report to, "host[:port]"; default port
	// ServerPort. Empty: the $pbsserver entries of Config.
	Servers []string
	// ServerPort is the default server port (batch TCP and IS UDP).
	ServerPort int
	MomPort    int // batch TCP port, reported in diagnostics
	RMPort     int // RM port (TCP and RPP)
	// Proc is the proc file system read for status (default /proc).
	Proc procfs.FS
	// RPP tunes the RPP endpoints (nil = TORQUE defaults).
	RPP *rpp.Options
	// Resolve looks a host name up (default net.DefaultResolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial opens a TCP connection to the server from a privileged port
	// (default DialReserved).
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// HelloStatusDelay is the pause between the server's answer to
	// IS_HELLO and the first IS_STATUS (default 2 s, as observed;
	// negative for none).
	HelloStatusDelay time.Duration
	// MemLocked tells diagnostics that the daemon locked its memory
	// (mlockall), as TORQUE's MOM does ("MemLocked: TRUE  (mlock)").
	MemLocked bool
	// AlarmTime is pbs_mom -a, the alarm for RM request handling, shown
	// by momctl -d (default 10 s).
	AlarmTime time.Duration
	// ObitRetry is the period of obituary retries (default 10 s).
	ObitRetry time.Duration
	// ConfigFile is mom_priv/config, rewritten and re-read on an accepted
	// RM_CMD_CONFIG ("" refuses it with RM_RSP_ERROR).
	ConfigFile string
	// OnReconfig, when set, is called with a configuration re-read on
	// RM_CMD_CONFIG, so the daemon can pass it on (execution engine,
	// log mask).
	OnReconfig func(*config.Config)
	// IM serves MOM ↔ MOM requests; nil refuses them (single-node jobs
	// only).
	IM IMHandler
	// Shutdown is called when an RM_CMD_SHUTDOWN was accepted.
	Shutdown func()
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Mom is the protocol side of one pbs_mom.
type Mom struct {
	opt   Options
	cfg   atomic.Pointer[config.Config]
	log   *momlog.Logger
	exec  Executor
	start time.Time
	pid   int

	mu         sync.Mutex
	jobs       map[string]*job
	trusted    map[netip.Addr]bool
	servers    []*isClient
	load       sysinfo.LoadState // busy/free hysteresis
	varAttr    *sysinfo.VarAttrRunner
	varAttrCfg *config.Config  // the configuration varAttr was built for
	nextOrder  uint64          // arrival counter of jobs
	down       bool            // the node health check failed
	cycles     int             // IS_STATUS cycles, for $node_check_interval
	ctx        context.Context // lives until Serve ends; obituaries use it
	stop       context.CancelFunc

	mn multiNode // multi-node jobs: mother superior and sister sides (im*.go, tm.go)

	lastBatch     time.Time // last batch request from a server, for diagnostics
	lastBatchName string
	lastBad       string // last unauthorised RM attempt, for diagnostics
	message       string // node message (clearmsg)
	indexes       rpp.IndexSet

	wg       sync.WaitGroup
	wgMu     sync.Mutex // orders goFunc's Add before Serve's final Wait
	wgClosed bool       // Serve is waiting: no new goroutines
}

// New returns a Mom. Call Serve to run it.
func New(opt Options) (*Mom, error) {
	if opt.Exec == nil {
		return nil, errors.New("link: Options.Exec is required")
	}
	if opt.Config == nil {
		opt.Config = config.Default()
	}
	if opt.Log == nil {
		opt.Log = momlog.Discard()
	}
	if opt.Host == "" {
		opt.Host, _ = os.Hostname()
	}
	if opt.ServerPort == 0 {
		opt.ServerPort = DefaultServerPort
	}
	if opt.MomPort == 0 {
		opt.MomPort = DefaultMomPort
	}
	if opt.RMPort == 0 {
		opt.RMPort = DefaultRMPort
	}
	if opt.Proc.Root == "" {
		opt.Proc = procfs.Default
	}
	if opt.Resolve == nil {
		opt.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if opt.Dial == nil {
		opt.Dial = DialReserved
	}
	if opt.HelloStatusDelay == 0 {
		opt.HelloStatusDelay = 2 * time.Second
	}
	if opt.HelloStatusDelay < 0 {
		opt.HelloStatusDelay = 0
	}
	if opt.AlarmTime <= 0 {
		opt.AlarmTime = 10 * time.Second
	}
	if opt.ObitRetry <= 0 {
		opt.ObitRetry = 10 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if len(opt.Servers) == 0 {
		opt.Servers = opt.Config.PBSServers
	}
	m := &Mom{
		opt: opt, log: opt.Log, exec: opt.Exec,
		start: opt.Now(), pid: os.Getpid(),
		jobs: map[string]*job{}, trusted: map[netip.Addr]bool{},
	}
	m.mn.ready = make(chan struct{})
	m.cfg.Store(opt.Config)
	m.ctx, m.stop = context.WithCancel(context.Background())
	return m, nil
}

// Listeners are the sockets a Mom serves. Any may be nil to leave that
// service out (tests).
type Listeners struct {
	Batch net.Listener   // TCP MomPort: batch requests from the server
	RM    net.Listener   // TCP RMPort: RM requests (TM is refused)
	RPP   net.PacketConn // UDP RMPort: RM, IM and IS streams opened by others
	// Client is the UDP socket (normally a reserved port) of the RPP
	// streams the MOM opens to its servers; nil disables the IS client.
	Client net.PacketConn
}

// Serve runs every service until ctx is cancelled, then closes the
// listeners and returns.
func (m *Mom) Serve(ctx context.Context, l Listeners) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.initTrust(ctx)
	var eps []*rpp.Endpoint
	if l.RPP != nil {
		ep := rpp.NewEndpoint(l.RPP, m.rppOptions())
		eps = append(eps, ep)
		m.goFunc(func() { m.acceptRPP(ctx, ep) })
	}
	if l.RPP != nil {
		m.mn.ep = eps[0] // IM to sisters, unless a client socket is given
	}
	if l.Client != nil {
		ep := rpp.NewEndpoint(l.Client, m.rppOptions())
		eps = append(eps, ep)
		m.mn.ep = ep // IM goes out from the MOM's RPP client port (captures 105, 106)
	}
	if m.mn.ep != nil {
		close(m.mn.ready) // recovered multi-node jobs may reach their sisters now
	}
	if l.Client != nil {
		ep := eps[len(eps)-1]
		for _, s := range m.opt.Servers {
			c := m.newISClient(s, ep)
			m.mu.Lock()
			m.servers = append(m.servers, c)
			m.mu.Unlock()
			m.goFunc(func() { c.run(ctx) })
		}
	}
	if l.Batch != nil {
		m.goFunc(func() { m.serveTCP(ctx, l.Batch, m.serveBatchConn) })
	}
	if l.RM != nil {
		m.goFunc(func() { m.serveTCP(ctx, l.RM, m.serveRMConn) })
	}
	m.goFunc(func() { m.obitLoop(ctx) })
	<-ctx.Done()
	m.stop()
	for _, ln := range []net.Listener{l.Batch, l.RM} {
		if ln != nil {
			ln.Close()
		}
	}
	// Say GOODBYE on the IS streams and give the servers a moment to
	// acknowledge and answer with theirs (capture 103).
	m.mu.Lock()
	var closing []<-chan struct{}
	for _, c := range m.servers {
		if done := c.shutdown(); done != nil {
			closing = append(closing, done)
		}
	}
	m.mu.Unlock()
	deadline := time.After(time.Second)
wait:
	for _, done := range closing {
		select {
		case <-done:
		case <-deadline:
			break wait
		}
	}
	for _, ep := range eps {
		ep.Close()
	}
	m.wgMu.Lock()
	m.wgClosed = true
	m.wgMu.Unlock()
	m.wg.Wait()
	return nil
}

func (m *Mom) goFunc(f func()) {
	m.wgMu.Lock()
	defer m.wgMu.Unlock()
	if m.wgClosed {
		// Serve is already waiting for the others: run f untracked
		// (m.ctx is cancelled, so it ends soon).
		go f()
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
}

func (m *Mom) rppOptions() *rpp.Options {
	var o rpp.Options
	if m.opt.RPP != nil {
		o = *m.opt.RPP
	}
	if o.Throttle == 0 {
		o.Throttle = m.conf().RPPThrottle
	}
	if o.OpenKey == 0 {
		// TORQUE starts the open keys at time() & 0xFFF. A MOM restarted
		// within seconds would then reopen streams to its sisters with
		// the keys (and low stream indexes) of its previous life, and a
		// sister would take the new HELLO1 for a retransmission of the
		// old stream's. A random first key makes that unlikely.
		o.OpenKey = 1 + uint32(rand.IntN(0xFFF))
	}
	o.Indexes = &m.indexes // one stream table for both sockets, as TORQUE has
	return &o
}

// serveTCP accepts connections and serves each in its own goroutine.
func (m *Mom) serveTCP(ctx context.Context, ln net.Listener, serve func(context.Context, net.Conn)) {
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			m.logErr("accept", err, "")
			time.Sleep(50 * time.Millisecond)
			continue
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.Close()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			serve(ctx, c)
		}()
	}
}

// initTrust fills okclients: localhost, the addresses of this host's
// name, the servers and $pbsclient hosts (spec 10 §3.2).
func (m *Mom) initTrust(ctx context.Context) {
	m.addTrusted(netip.MustParseAddr("127.0.0.1"))
	hosts := append([]string{m.opt.Host}, m.opt.Servers...)
	hosts = append(hosts, m.conf().PBSClients...)
	for _, h := range hosts {
		host, _ := splitHostPort(h, 0)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		addrs, err := m.opt.Resolve(rctx, host)
		cancel()
		if err != nil {
			continue
		}
		m.addTrusted(addrs...)
	}
}

func (m *Mom) addTrusted(addrs ...netip.Addr) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range addrs {
		m.trusted[a.Unmap()] = true
	}
}

// Trusted reports whether addr is in okclients.
func (m *Mom) Trusted(addr netip.Addr) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.trusted[addr.Unmap()]
}

func (m *Mom) trustedList() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var l []netip.Addr
	for a := range m.trusted {
		if a.Is4() {
			l = append(l, a)
		}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].Less(l[j]) })
	parts := make([]string, len(l))
	for i, a := range l {
		parts[i] = a.String()
	}
	return strings.Join(parts, ",")
}

// splitHostPort splits "host[:port]".
func splitHostPort(s string, def int) (string, int) {
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[i+1:], "]") {
		if p, err := strconv.Atoi(s[i+1:]); err == nil {
			return s[:i], p
		}
	}
	return s, def
}

// Cycle asks for an immediate IS_STATUS to every server.
func (m *Mom) Cycle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.servers {
		c.kick()
	}
}

// resolve returns the first IPv4 (else any) address of host.
func (m *Mom) resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, nil
	}
	addrs, err := m.opt.Resolve(ctx, host)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("%s: no address", host)
	}
	return addrs[0], nil
}

// logErr writes a LOG_ERROR line for err in function, as TORQUE does:
// with the errno and its C library text when err carries one.
func (m *Mom) logErr(function string, err error, message string) {
	if n := errnoOf(err); n != 0 {
		m.log.Error(n, batchreq.Strerror(n), function, message)
		return
	}
	if message != "" {
		message += ": "
	}
	m.log.Error(0, "", function, message+err.Error())
}

// conf returns the current configuration; treat it as read-only.
func (m *Mom) conf() *config.Config { return m.cfg.Load() }

// SetConfig replaces the configuration (SIGHUP, RM_CMD_CONFIG). Settings
// the RM protocol changed at run time are lost, as in TORQUE.
func (m *Mom) SetConfig(cfg *config.Config) { m.cfg.Store(cfg) }

// updateConf applies change to a copy of the configuration and installs
// it.
func (m *Mom) updateConf(change func(*config.Config)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *m.cfg.Load()
	change(&c)
	m.cfg.Store(&c)
}
