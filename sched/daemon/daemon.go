// Package daemon is pbs_sched without its process plumbing: it reads the
// policy files of PBS_HOME/sched_priv, accepts the server's connections on
// the scheduler port, checks that they come from a trusted host, reads the
// 4-byte command and runs a scheduling cycle over the same connection
// (spec 14 §1–3).
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/momquery"
	"gopbs/sched/nas"
	"gopbs/sched/placement"
	"gopbs/sched/policy"
	"gopbs/sched/reservable"
	"gopbs/sched/schedlog"
	"gopbs/sched/svrconn"
	"gopbs/sched/timeplan"
	"gopbs/sched/world"
)

// Default ports and limits.
const (
	DefaultPort    = 15004
	DefaultMomPort = 15003
	DefaultAlarm   = 180 * time.Second
	// CommandWait bounds the wait for the command of an accepted
	// connection (its first 4 bytes), so that a peer that connects and
	// sends nothing holds the scheduler no longer. It is apart from the
	// alarm, which bounds the cycle the command starts (spec 14 §1).
	CommandWait = 10 * time.Second
)

// Options are the command-line settings of pbs_sched.
type Options struct {
	Home       string        // PBS_HOME (-d)
	LogFile    string        // -L: fixed log file instead of sched_logs/YYYYMMDD
	Port       int           // -S
	MomPort    int           // -R
	ConfigFile string        // -c: $clienthost / $restricted lines
	Alarm      time.Duration // -a: longest scheduling cycle
	// ListenAddr is the address to bind; empty means the address the
	// local host name resolves to, as TORQUE binds.
	ListenAddr string
	// Argv0 is logged in the startup line.
	Argv0 string
	// Stderr receives configuration error messages (default os.Stderr).
	Stderr io.Writer
	// NoPrefilter makes the scheduler ask the server about every job,
	// as TORQUE does, even when its own node model says the job cannot
	// fit now (see policy.Scheduler.NoPrefilter).
	NoPrefilter bool
	// Policy selects the policy: PolicyAuto ("" too), PolicyFIFO or
	// PolicyNAS (see nasConfigPath).
	Policy string
	// NASConfig is the NAS configuration file to read instead of
	// sched_priv/config (pbs_sched takes it from PBSSCHED_CONFIG).
	NASConfig string
	// PrivDir and LogDir replace PBS_HOME/sched_priv and
	// PBS_HOME/sched_logs (a sched object's sched_priv and sched_log,
	// issue 18).
	PrivDir, LogDir string
	// Name is the scheduler's sched object: the scheduler names itself
	// to the server at the start of every cycle and sees its slice of
	// the cluster. Empty for a TORQUE-style scheduler (the default one).
	Name string
}

// Daemon is a running scheduler.
type Daemon struct {
	opts Options
	priv string
	Log  *schedlog.Logger
	// Sched is the FIFO policy when it is the one that runs (nil when
	// another policy runs).
	Sched *policy.Scheduler
	Mom   momquery.Querier

	// running is the policy that runs the cycles: Sched or nas.
	running policy.Policy
	// nas is the NAS policy when it is the one that runs.
	nas *nas.Scheduler
	// fatal is set when the policy found problems it cannot run with.
	fatal error

	// Reservable is the reservability policy of advance reservations
	// (sched_priv/reservable.ad, seed 002 §3.4), read with the other
	// policy files; the reservations of issue 17 consult it.
	Reservable *reservable.Policy

	// Now is the clock (tests replace it).
	Now func() time.Time

	mu         sync.Mutex
	trusted    map[netip.Addr]bool
	restricted []string
	lock       *os.File
	acct       *os.File
	lastSync   time.Time
	brkLogged  bool
}

// New prepares a daemon: opens the log and the scheduler's accounting
// file, reads the policy files and the -c file. mom may be nil (no MOM
// queries).
func New(opts Options, mom momquery.Querier) (*Daemon, error) {
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	if opts.MomPort == 0 {
		opts.MomPort = DefaultMomPort
	}
	if opts.Alarm == 0 {
		opts.Alarm = DefaultAlarm
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.PrivDir == "" {
		opts.PrivDir = filepath.Join(opts.Home, "sched_priv")
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(opts.Home, "sched_logs")
	}
	d := &Daemon{opts: opts, priv: opts.PrivDir, Mom: mom, Now: time.Now}
	d.Log = schedlog.New(opts.LogDir, opts.LogFile)
	if err := d.Log.Open(); err != nil {
		return nil, err
	}
	if err := d.openAccounting(); err != nil {
		return nil, err
	}
	if err := d.ReadClientConfig(); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.LoadPolicy(); err != nil {
		d.Close()
		return nil, err
	}
	d.lastSync = d.Now()
	return d, nil
}

// openAccounting opens sched_priv/accounting/YYYYMMDD as TORQUE's
// scheduler does, and logs it.
func (d *Daemon) openAccounting() error {
	dir := filepath.Join(d.priv, "accounting")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("scheduler accounting: %w", err)
	}
	name := filepath.Join(dir, d.Now().Format("20060102"))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("scheduler accounting: %w", err)
	}
	d.acct = f
	d.Log.Log(logline.EventSystem, logline.ClassServer, "TokenAct", "Account file "+name+" opened")
	return nil
}

// Policy returns the current FIFO policy (replaced by LoadPolicy), or nil
// while the NAS policy runs.
func (d *Daemon) Policy() *policy.Scheduler {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Sched
}

// PrivPath returns the path of a file in sched_priv.
func (d *Daemon) PrivPath(name string) string { return filepath.Join(d.priv, name) }

// LoadPolicy (re)reads the policy files: reservable.ad (a malformed one
// is an error naming its line), then for the NAS policy its
// configuration (see nasConfigPath); for the FIFO policy sched_config,
// holidays, dedicated_time, resource_group and the usage file, saving
// the current usage first.
func (d *Daemon) LoadPolicy() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loadPolicyLocked()
}

// loadPolicyLocked is LoadPolicy with d.mu held.
func (d *Daemon) loadPolicyLocked() error {
	rp, err := reservable.Load(d.PrivPath(reservable.FileName))
	if err != nil {
		return err
	}
	d.Reservable = rp
	path, err := d.nasConfigPath()
	if err != nil {
		return err
	}
	if path != "" {
		return d.loadNAS(path)
	}
	if d.Sched != nil && d.Sched.FairShare != nil {
		d.saveUsage()
	}
	cfg := &config.Config{}
	c, lineErrs, err := config.ReadFile(d.PrivPath("sched_config"))
	switch {
	case err == nil:
		cfg = c
	case errors.Is(err, os.ErrNotExist):
	default:
		return err
	}
	for _, e := range lineErrs {
		fmt.Fprintln(d.opts.Stderr, e.Error())
	}
	hol, err := timeplan.ReadHolidays(d.PrivPath("holidays"))
	if err != nil {
		return err
	}
	ded, err := timeplan.ReadDedicated(d.PrivPath("dedicated_time"), time.Local)
	if err != nil {
		return err
	}
	tree, err := fairshare.ReadFile(d.PrivPath("resource_group"), cfg.UnknownShares)
	if err != nil {
		return err
	}
	if err := tree.LoadUsageFile(d.PrivPath("usage")); err != nil {
		return err
	}
	s := policy.New(cfg, d.Log)
	s.Holidays, s.Dedicated, s.FairShare = hol, ded, tree
	s.NoPrefilter = d.opts.NoPrefilter
	s.MonitorPath = d.PrivPath("schedule")
	if d.Sched != nil {
		s.Location = d.Sched.Location
	}
	d.Sched, d.running, d.nas = s, s, nil
	d.Log.SetFilter(cfg.LogFilter)
	return nil
}

func (d *Daemon) saveUsage() {
	if err := d.Sched.FairShare.SaveUsageFile(d.PrivPath("usage")); err != nil {
		d.Log.Log(logline.EventError, logline.ClassServer, "usage", err.Error())
	}
	d.lastSync = d.Now()
}

// ReadClientConfig reads the -c file: "$clienthost <host>" lines add
// trusted hosts, "$restricted <pattern>" lines add hosts allowed from
// non-reserved ports. localhost and the local host name are always
// trusted.
func (d *Daemon) ReadClientConfig() error {
	trusted := map[netip.Addr]bool{}
	addHost := func(h string) {
		if a, err := netip.ParseAddr(h); err == nil {
			trusted[a.Unmap()] = true
			return
		}
		addrs, _ := net.LookupHost(h)
		for _, s := range addrs {
			if a, err := netip.ParseAddr(s); err == nil {
				trusted[a.Unmap()] = true
			}
		}
	}
	addHost("127.0.0.1")
	addHost("::1")
	addHost("localhost")
	if h, err := os.Hostname(); err == nil {
		addHost(h)
	}
	var restricted []string
	if d.opts.ConfigFile != "" {
		b, err := os.ReadFile(d.opts.ConfigFile)
		if err != nil {
			return fmt.Errorf("read %s: %w", d.opts.ConfigFile, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "$clienthost":
				addHost(f[1])
			case "$restricted":
				restricted = append(restricted, f[1])
			}
		}
	}
	d.mu.Lock()
	d.trusted, d.restricted = trusted, restricted
	d.mu.Unlock()
	return nil
}

// allowed applies the connection trust rules; it returns the log text of
// a refusal or "".
func (d *Daemon) allowed(remote net.Addr) string {
	ap, err := netip.ParseAddrPort(remote.String())
	if err != nil {
		return "unauthorized host"
	}
	addr := ap.Addr().Unmap()
	d.mu.Lock()
	defer d.mu.Unlock()
	if ap.Port() >= 1024 {
		if len(d.restricted) == 0 {
			return "non-reserved port"
		}
		match := func(names []string) bool {
			for _, pat := range d.restricted {
				for _, n := range names {
					if ok, _ := path.Match(pat, strings.TrimSuffix(n, ".")); ok {
						return true
					}
				}
			}
			return false
		}
		if match([]string{addr.String()}) {
			return ""
		}
		if hn, err := net.LookupAddr(addr.String()); err == nil && match(hn) {
			return ""
		}
		return "non-reserved port"
	}
	if !d.trusted[addr] {
		return "unauthorized host"
	}
	return ""
}

// Listen binds the scheduler port on the configured address (by default
// the address of the local host name, not the wildcard address).
func (d *Daemon) Listen() (net.Listener, error) {
	host := d.opts.ListenAddr
	if host == "" {
		host = "127.0.0.1"
		if hn, err := os.Hostname(); err == nil {
			if addrs, err := net.LookupHost(hn); err == nil && len(addrs) > 0 {
				host = addrs[0]
				for _, a := range addrs {
					if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
						host = a
						break
					}
				}
			}
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(d.opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("bind scheduler port: %w", err)
	}
	return ln, nil
}

// Lock creates sched_priv/sched.lock holding the PID under an exclusive
// lock; it fails when another scheduler holds it.
func (d *Daemon) Lock() error {
	f, err := os.OpenFile(d.PrivPath("sched.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("another scheduler is running (sched.lock): %w", err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	d.lock = f
	return nil
}

// Started logs the startup line.
func (d *Daemon) Started() {
	argv0 := d.opts.Argv0
	if argv0 == "" {
		argv0 = "pbs_sched"
	}
	d.Log.Log(logline.EventSystem, logline.ClassServer, "main", fmt.Sprintf("%s startup pid %d", argv0, os.Getpid()))
}

// Close saves fair-share usage (when this daemon holds the lock file)
// and releases files.
func (d *Daemon) Close() error {
	d.mu.Lock()
	if d.lock != nil && d.Sched != nil && d.Sched.FairShare != nil {
		d.saveUsage()
	}
	d.mu.Unlock()
	if d.acct != nil {
		d.acct.Close()
	}
	if d.lock != nil {
		d.lock.Close()
	}
	return d.Log.Close()
}

// ErrQuit is returned by Serve after a QUIT command.
var ErrQuit = errors.New("scheduler quit")

// Serve accepts connections until ctx ends, the listener fails, or a
// QUIT command arrives. Connections are handled one at a time.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("accept: %w", err)
			}
			// Transient (e.g. out of descriptors): log, pause, go on.
			d.Log.Log(logline.EventError, logline.ClassServer, "main", "accept: "+err.Error())
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		if reason := d.allowed(c.RemoteAddr()); reason != "" {
			d.Log.Log(logline.EventSystem, logline.ClassRequest, "server_command", reason+" "+c.RemoteAddr().String())
			c.Close()
			continue
		}
		if d.Handle(ctx, c) {
			if d.fatal != nil {
				return d.fatal
			}
			return ErrQuit
		}
	}
}

// Handle reads the command from an accepted connection and acts on it; it
// reports whether the scheduler should exit. The connection is closed.
func (d *Daemon) Handle(ctx context.Context, c net.Conn) (quit bool) {
	conn := svrconn.New(c)
	defer conn.Close()
	c.SetDeadline(time.Now().Add(CommandWait))
	cmd, err := conn.ReadCommand()
	if err != nil {
		d.Log.Log(logline.EventError, logline.ClassServer, "server_command", err.Error())
		return false
	}
	// The alarm runs from the command on: it bounds the cycle, not the
	// time the peer took to send the command.
	deadline := time.Now().Add(d.opts.Alarm)
	conn.SetDeadline(deadline)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	switch cmd {
	case batchreq.SCH_SCHEDULE_NEW, batchreq.SCH_SCHEDULE_TERM, batchreq.SCH_SCHEDULE_TIME,
		batchreq.SCH_SCHEDULE_CMD, batchreq.SCH_SCHEDULE_FIRST:
		_, err := d.Cycle(ctx, conn)
		if d.policyFatal() || errors.Is(err, ErrNoPartition) {
			return true
		}
		if err != nil || !time.Now().Before(deadline) {
			var ne net.Error
			if !time.Now().Before(deadline) || errors.As(err, &ne) && ne.Timeout() {
				d.Log.Log(logline.EventSystem, logline.ClassServer, "schedule", "scheduling iteration took too long")
			} else {
				d.Log.Log(logline.EventError, logline.ClassServer, "schedule", err.Error())
			}
		}
	case batchreq.SCH_CONFIGURE:
		if err := d.LoadPolicy(); err != nil {
			d.Log.Log(logline.EventError, logline.ClassServer, "schedinit", err.Error())
		}
	case batchreq.SCH_QUIT:
		return true
	}
	return false
}

// serverActions carries out policy actions over the server connection.
type serverActions struct{ c *svrconn.Conn }

func (a serverActions) QueryNodes(j *world.Job, spec string) (placement.Availability, error) {
	n, err := a.c.ResourceQuery(spec)
	if err != nil {
		// Only an explicit negative answer means "never": an error
		// reply must not get jobs deleted.
		return placement.Later, err
	}
	switch {
	case n > 0:
		return placement.Now, nil
	case n < 0:
		return placement.Never, nil
	}
	return placement.Later, nil
}

func (a serverActions) SetComment(j *world.Job, comment string) error {
	return a.c.SetComment(j.ID, comment)
}

func (a serverActions) RunJob(j *world.Job, dest string) error { return a.c.RunJob(j.ID, dest) }

func (a serverActions) DeleteJob(j *world.Job, msg string) error { return a.c.DeleteJob(j.ID, msg) }

// SetPlan implements policy.PlanActions.
func (a serverActions) SetPlan(j *world.Job, start time.Time, hosts string) error {
	if start.IsZero() {
		return a.c.SetPlan(j.ID, "", "")
	}
	return a.c.SetPlan(j.ID, strconv.FormatInt(start.Unix(), 10), hosts)
}

func (a serverActions) MoveJob(j *world.Job, queue string) error { return a.c.MoveJob(j.ID, queue) }

// ReadWorld asks the server (and the MOMs) for the world, in the FIFO
// scheduler's request order: StatusServer, StatusNode, the MOM queries,
// StatusQue, then one SelStat per queue in the server's queue order.
// On a cluster of more than momQueries nodes the MOM queries go on while
// the queues and jobs are read from the server: the server and each MOM
// see the same requests in the same order as one after the other, but the
// cycle does not wait for the last of 1,000 MOMs before asking for
// 18,000 jobs. A smaller cluster's MOMs are all asked in one concurrent
// round, which overlapping would hardly shorten, so there the FIFO
// scheduler's order is kept exactly: the MOM queries between StatusNode
// and StatusQue, as in the captures.
func (d *Daemon) ReadWorld(ctx context.Context, conn *svrconn.Conn) (*world.World, error) {
	w := &world.World{Now: d.Now()}
	srv, err := conn.StatusServer()
	if err != nil {
		return nil, fmt.Errorf("status server: %w", err)
	}
	if len(srv) > 0 {
		w.Server = world.FromServer(srv[0].Name, srv[0].Attrs)
	} else {
		w.Server = world.FromServer("", nil)
	}
	nodes, err := conn.StatusNode()
	if err != nil {
		// A server without nodes answers with an error; go on without.
		var re *svrconn.ReplyError
		if !errors.As(err, &re) {
			return nil, fmt.Errorf("status node: %w", err)
		}
	}
	for _, o := range nodes {
		w.Nodes = append(w.Nodes, world.FromNode(o.Name, o.Attrs))
	}
	finishMoms := d.startMomQueries(ctx, w.Nodes)
	if len(w.Nodes) <= momQueries {
		finishMoms()
	}
	w.Queues, err = readQueues(conn)
	finishMoms()
	if err != nil {
		return nil, err
	}
	if w.Reservations, err = d.readReservations(conn, w.Queues); err != nil {
		return nil, err
	}
	return w, nil
}

// readQueues asks the server for its queues and the jobs of each.
func readQueues(conn *svrconn.Conn) ([]*world.Queue, error) {
	queues, err := conn.StatusQueue()
	if err != nil {
		return nil, fmt.Errorf("status queue: %w", err)
	}
	var out []*world.Queue
	for _, o := range queues {
		q := world.FromQueue(o.Name, o.Attrs)
		jobs, err := conn.SelStatQueue(q.Name)
		if err != nil {
			return nil, fmt.Errorf("select jobs of %s: %w", q.Name, err)
		}
		q.Jobs = make([]*world.Job, 0, len(jobs))
		for _, jo := range jobs {
			q.Jobs = append(q.Jobs, world.FromJob(jo.Name, q, jo.Attrs))
		}
		out = append(out, q)
	}
	return out, nil
}

// momQueries is the number of MOM queries in flight at once.
const momQueries = 32

// queryMoms asks the MOM of every node that is not down or offline and
// applies the answers (startMomQueries and its finish at once).
func (d *Daemon) queryMoms(ctx context.Context, nodes []*world.Node) {
	d.startMomQueries(ctx, nodes)()
}

// startMomQueries starts asking the MOM of every node that is not down or
// offline and returns the function that waits for the answers and
// applies them (once, however often it is called); the nodes must not be
// used until it returned. The MOMs
// are asked concurrently (each query on its own RPP stream, with the
// same messages as one at a time), so a large cluster, or a few silent
// MOMs each waiting for its timeout, does not add up node by node. Nodes
// with the same momquery.HostKeyer key (the same MOM endpoint) are asked
// one after the other. Answers and failures are applied and logged in
// node order.
func (d *Daemon) startMomQueries(ctx context.Context, nodes []*world.Node) (finish func()) {
	if d.Mom == nil {
		return func() {}
	}
	var ask []*world.Node
	for _, n := range nodes {
		if n.State&(world.NodeDown|world.NodeOffline) == 0 {
			ask = append(ask, n)
		}
	}
	keys := d.hostKeys(ask)
	var hosts [][]int // indexes into ask, per host in order of appearance
	hostIndex := map[string]int{}
	for i, n := range ask {
		key := keys[n.Name]
		h, ok := hostIndex[key]
		if !ok {
			h = len(hosts)
			hostIndex[key] = h
			hosts = append(hosts, nil)
		}
		hosts[h] = append(hosts[h], i)
	}
	lines := d.momLines()
	answers := make([][]string, len(ask))
	failed := make([]bool, len(ask))
	next := make(chan []int)
	var wg sync.WaitGroup
	for range min(momQueries, len(hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for group := range next {
				for _, i := range group {
					a, err := d.Mom.Query(ctx, ask[i].Name, lines)
					answers[i], failed[i] = a, err != nil
				}
			}
		}()
	}
	go func() {
		for _, group := range hosts {
			next <- group
		}
		close(next)
	}()
	return sync.OnceFunc(func() {
		wg.Wait()
		for i, n := range ask {
			if failed[i] {
				d.Log.Log(logline.EventSystem, logline.ClassNode, n.Name, "Can not open connection to mom")
				continue
			}
			momquery.Apply(n, answers[i])
			if len(lines) > len(momquery.Lines) && len(answers[i]) > len(momquery.Lines) {
				momquery.ApplySysTime(n, answers[i][len(momquery.Lines)])
			}
		}
	})
}

// hostKeys returns the momquery.HostKeyer key of each node's name,
// resolving the names concurrently; without a HostKeyer the key is the
// name.
func (d *Daemon) hostKeys(nodes []*world.Node) map[string]string {
	keys := map[string]string{}
	keyer, ok := d.Mom.(momquery.HostKeyer)
	if !ok {
		for _, n := range nodes {
			keys[n.Name] = n.Name
		}
		return keys
	}
	var names []string
	for _, n := range nodes {
		if _, ok := keys[n.Name]; !ok {
			keys[n.Name] = ""
			names = append(names, n.Name)
		}
	}
	resolved := make([]string, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(momQueries, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resolved[i] = keyer.HostKey(names[i])
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, name := range names {
		keys[name] = resolved[i]
	}
	return keys
}

// Cycle runs one scheduling cycle over conn.
func (d *Daemon) Cycle(ctx context.Context, conn *svrconn.Conn) (policy.Stats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Log.Hold() // a line per job: written in large pieces
	defer d.Log.Release()
	if skip, err := d.hello(conn); skip || err != nil {
		return policy.Stats{}, err
	}
	w, err := d.ReadWorld(ctx, conn)
	if err != nil {
		return policy.Stats{}, err
	}
	st := d.running.Cycle(w, serverActions{conn})
	if d.Sched != nil && d.Sched.FairShare != nil {
		if sync := d.Sched.Config.SyncTime; sync > 0 && d.Now().Sub(d.lastSync) >= sync {
			d.saveUsage()
		}
	}
	if !d.brkLogged {
		d.brkLogged = true
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		d.Log.Log(logline.EventDebug, logline.ClassServer, "main", fmt.Sprintf("brk point %d", ms.HeapSys))
	}
	return st, nil
}
