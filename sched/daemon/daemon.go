// Package daemon is pbs_sched without its process plumbing: it reads the
// policy files of PBS_HOME/sched_priv, accepts the server's connections on
// the scheduler port, checks that they come from a trusted host, reads the
// 4-byte command and runs a scheduling cycle over the same connection
// (spec 14 §1–3).
//
// daemon.go holds the Daemon, its options and its start and end (the
// lock file, the accounting file, the startup line); policyfiles.go reads
// the policy files; trust.go holds the connection trust rules; serve.go
// the scheduler port and its commands; cycle.go a scheduling cycle and
// the server actions of a policy; moms.go the MOM queries of a cycle;
// nas.go the choice and loading of the NAS policy (and SIGHUP);
// partition.go a sched object's hello to the server and its change of
// directories; reservations.go the advance reservations a cycle reads.
package daemon

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/momquery"
	"gopbs/sched/nas"
	"gopbs/sched/policy"
	"gopbs/sched/reservable"
	"gopbs/sched/schedlog"
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
	err := d.Log.Open()
	if err != nil {
		return nil, err
	}
	if d.acct, err = d.openAccounting(d.priv); err != nil {
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

// openAccounting opens priv/accounting/YYYYMMDD (priv a sched_priv) as
// TORQUE's scheduler does, and logs it.
func (d *Daemon) openAccounting(priv string) (*os.File, error) {
	dir := filepath.Join(priv, "accounting")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scheduler accounting: %w", err)
	}
	name := filepath.Join(dir, d.Now().Format("20060102"))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("scheduler accounting: %w", err)
	}
	d.Log.Log(logline.EventSystem, logline.ClassServer, "TokenAct", "Account file "+name+" opened")
	return f, nil
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

// Lock creates sched_priv/sched.lock holding the PID under an exclusive
// lock; it fails when another scheduler holds it.
func (d *Daemon) Lock() error {
	f, err := takeLock(d.priv)
	if err != nil {
		return err
	}
	d.lock = f
	return nil
}

// takeLock creates dir/sched.lock holding this process's pid under an
// exclusive lock, held while the file stays open.
func takeLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "sched.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another scheduler is running (sched.lock): %w", err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return f, nil
}

// dropLock removes a lock file this process holds and releases it.
func dropLock(f *os.File) {
	os.Remove(f.Name())
	f.Close()
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
	if d.acct != nil {
		d.acct.Close()
	}
	if d.lock != nil {
		d.lock.Close()
	}
	d.mu.Unlock()
	return d.Log.Close()
}
