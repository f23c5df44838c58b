package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/momquery"
	"gopbs/sched/nas"
	nasconfig "gopbs/sched/nas/config"
)

// The policies pbs_sched can run (Options.Policy).
const (
	PolicyAuto = "auto" // chosen by the configuration file's form
	PolicyFIFO = "fifo" // TORQUE's FIFO scheduler (sched_priv/sched_config)
	PolicyNAS  = "nas"  // the NAS scheduler (seed 000)
)

// nasConfigName is the NAS scheduler's configuration file in sched_priv,
// as the NAS-derived TORQUE schedulers read it.
const nasConfigName = "config"

// ErrNotStarted reports a NAS configuration with syntax errors or sanity
// problems: the scheduler does not start (the problems are in the log).
var ErrNotStarted = errors.New("the scheduler will not start")

// nasConfigPath chooses the policy: it returns the NAS configuration file
// to read, or "" for the FIFO policy. With PolicyAuto the NAS policy runs
// when Options.NASConfig is set (PBSSCHED_CONFIG), when sched_priv/config
// is in the NAS form, or when sched_priv/sched_config is; anything else
// keeps the FIFO policy.
func (d *Daemon) nasConfigPath() (string, error) {
	candidates := []string{d.PrivPath(nasConfigName), d.PrivPath("sched_config")}
	if d.opts.NASConfig != "" {
		candidates = []string{d.opts.NASConfig}
	}
	switch d.opts.Policy {
	case PolicyFIFO:
		return "", nil
	case PolicyNAS:
		for _, p := range candidates {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
		return "", fmt.Errorf("NAS policy: no configuration file (%s)", candidates[0])
	case "", PolicyAuto:
	default:
		return "", fmt.Errorf("unknown policy %q (want %s, %s or %s)", d.opts.Policy, PolicyAuto, PolicyFIFO, PolicyNAS)
	}
	if d.opts.NASConfig != "" {
		return d.opts.NASConfig, nil
	}
	for _, p := range candidates {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		nasForm := nasconfig.LooksLikeNAS(f)
		f.Close()
		if nasForm {
			return p, nil
		}
	}
	return "", nil
}

// loadNAS reads the NAS configuration at path, checks it, and makes the
// NAS policy the one that runs. Syntax errors and sanity problems are
// logged (and printed on stderr) and stop the start; on a re-read the
// running policy is kept. d.mu is held.
func (d *Daemon) loadNAS(path string) error {
	cfg, err := nasconfig.ReadFile(path)
	var se nasconfig.SyntaxErrors
	if errors.As(err, &se) {
		for _, e := range se {
			d.refuse("syntax error: " + e.Error())
		}
		return fmt.Errorf("%s has %d syntax errors: %w", path, len(se), ErrNotStarted)
	}
	if err != nil {
		return err
	}
	if err := nasconfig.Check(cfg, isLocalHost); err != nil {
		var ps nasconfig.Problems
		errors.As(err, &ps)
		for _, p := range ps {
			d.refuse("configuration problem: " + p.Error())
		}
		return fmt.Errorf("%s: %w", path, ErrNotStarted)
	}
	s := nas.New(cfg, d.Log)
	if cfg.EnforceDedicatedTime {
		s.Dedicated = &nas.Dedicated{Command: cfg.DedicatedTimeCommand, System: cfg.SystemName,
			CacheFor: time.Duration(cfg.DedicatedTimeCacheSecs) * time.Second}
	}
	s.UsagePath = d.PrivPath("nas_usage")
	if cfg.SchedAcctDir != "" {
		s.UsagePath = filepath.Join(cfg.SchedAcctDir, "usage")
	}
	if s.Usage, err = nas.ReadUsage(s.UsagePath); err != nil {
		d.refuse(err.Error())
		return fmt.Errorf("%w: %w", err, ErrNotStarted)
	}
	if cfg.EnforceAllocation {
		if s.Allocations, err = nas.ReadAllocations(filepath.Join(cfg.SchedAcctDir, "allocations")); err != nil {
			d.refuse(err.Error() + " (suggestion: write the allocations file, '<account> <node-hours>' lines)")
			return fmt.Errorf("%w: %w", err, ErrNotStarted)
		}
	}
	if d.nas != nil {
		s.ContinueFrom(d.nas)
	}
	if cfg.ServerHost != "" {
		d.trustHost(cfg.ServerHost)
	}
	d.nas, d.running, d.Sched = s, s, nil
	d.Log.SetFilter(0) // log_filter is a sched_config key: the NAS policy logs every decision
	d.Log.Log(logline.EventSystem, logline.ClassServer, "nas", "NAS scheduler policy, configuration "+path)
	return nil
}

// momLines are the lines of the MOM queries: the FIFO scheduler's, plus
// momquery.SysTimeLine when the NAS policy applies HIGH_SYSTIME. d.mu is
// held (a cycle).
func (d *Daemon) momLines() []string {
	if d.nas != nil && d.nas.Config.HighSystime > 0 {
		return append(momquery.Lines[:len(momquery.Lines):len(momquery.Lines)], momquery.SysTimeLine)
	}
	return momquery.Lines
}

// refuse logs a reason the configuration cannot be used and prints it
// on stderr.
func (d *Daemon) refuse(text string) {
	d.Log.Log(logline.EventError, logline.ClassServer, "nas", text)
	fmt.Fprintln(d.opts.Stderr, text)
}

// trustHost adds the addresses of host to the trusted hosts. d.mu is
// held.
func (d *Daemon) trustHost(host string) {
	for _, a := range hostAddrs(host) {
		d.trusted[a] = true
	}
}

// hostAddrs returns the addresses of a host name or IP address.
func hostAddrs(host string) []netip.Addr {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}
	}
	var out []netip.Addr
	addrs, _ := net.LookupHost(host)
	for _, s := range addrs {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// isLocalHost reports whether host names this machine: one of its
// addresses is a loopback address or an address of a local interface.
func isLocalHost(host string) bool {
	local := map[netip.Addr]bool{}
	if ifs, err := net.InterfaceAddrs(); err == nil {
		for _, ia := range ifs {
			if p, err := netip.ParsePrefix(ia.String()); err == nil {
				local[p.Addr().Unmap()] = true
			}
		}
	}
	for _, a := range hostAddrs(host) {
		if a.IsLoopback() || local[a] {
			return true
		}
	}
	return false
}

// policyFatal reports whether the running policy found problems it
// cannot run with (the NAS policy's queue sanity checks at its first
// cycle, logged); it records them for Serve to return.
func (d *Daemon) policyFatal() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nas == nil || d.nas.Fatal() == nil {
		return false
	}
	d.fatal = fmt.Errorf("queue sanity: %w", ErrNotStarted)
	return true
}

// Hangup is SIGHUP: reopen the log, re-read the -c file and, for the NAS
// policy, its configuration (TORQUE's FIFO scheduler re-reads
// sched_config only on the CONFIGURE command). A configuration that no
// longer reads keeps the running one; the reasons are logged.
func (d *Daemon) Hangup() {
	d.Log.Reopen()
	if err := d.ReadClientConfig(); err != nil {
		d.Log.Log(logline.EventError, logline.ClassServer, "hangup", err.Error())
	}
	d.mu.Lock()
	isNAS := d.nas != nil
	d.mu.Unlock()
	if isNAS {
		if err := d.LoadPolicy(); err != nil {
			d.Log.Log(logline.EventError, logline.ClassServer, "hangup", err.Error()+" (keeping the running configuration)")
			d.mu.Lock()
			if d.nas != nil && d.nas.Config.ServerHost != "" {
				d.trustHost(d.nas.Config.ServerHost) // the -c file was re-read without it
			}
			d.mu.Unlock()
		}
	}
}
