// Command pbs_mom is the GoPBS execution daemon, wire-compatible with
// TORQUE 2.5.13's pbs_mom: it runs jobs for pbs_server (batch requests on
// TCP 15002), reports node status over RPP/IS and answers resource-monitor
// queries on port 15003 (spec 10, 11).
//
// Usage: pbs_mom [-D] [-d home] [-c config] [-H host] [-L logfile]
// [-M momport] [-R rmport] [-S serverport] [-x] [-p|-r|-q|-P]
// [-http [host:]port]
//
// -http (a GoPBS addition, also the configuration line $http_address)
// serves the node's Prometheus metrics at /metrics on the address given,
// 127.0.0.1 when only a port is given. Without either nothing listens.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"gopbs/internal/daemon"
	"gopbs/internal/httplisten"
	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/jobexec"
	"gopbs/mom/link"
	mommetrics "gopbs/mom/metrics"
	"gopbs/mom/momd"
	"gopbs/mom/momlog"
	"gopbs/mom/sysinfo"
	"gopbs/rpp"
)

// daemonEnv marks the re-executed background copy.
const daemonEnv = "GOPBS_MOM_DAEMONIZED"

func main() {
	jobexec.RunStarterIfRequested()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "pbs_mom: %v\n", err)
		os.Exit(1)
	}
}

type flags struct {
	home, configFile, host, logFile string
	httpAddr                        string // -http: the metrics listener
	momPort, rmPort, serverPort     int
	foreground, noPortForward       bool
	version, about                  bool
	recover                         momd.RestartMode
}

func parseFlags(args []string) (*flags, error) {
	f := &flags{home: os.Getenv("PBS_HOME")}
	if f.home == "" {
		f.home = momd.DefaultHome
	}
	fs := flag.NewFlagSet("pbs_mom", flag.ContinueOnError)
	fs.StringVar(&f.home, "d", f.home, "PBS_HOME directory")
	fs.StringVar(&f.configFile, "c", "", "config file (default PBS_HOME/mom_priv/config)")
	fs.StringVar(&f.host, "H", "", "host name to use")
	fs.StringVar(&f.logFile, "L", "", "log file")
	fs.IntVar(&f.momPort, "M", envPort("PBS_MOM_SERVICE_PORT", link.DefaultMomPort), "batch port")
	fs.IntVar(&f.rmPort, "R", envPort("PBS_MANAGER_SERVICE_PORT", link.DefaultRMPort), "resource monitor port")
	fs.IntVar(&f.serverPort, "S", envPort("PBS_BATCH_SERVICE_PORT", link.DefaultServerPort), "server port")
	fs.BoolVar(&f.foreground, "D", false, "stay in the foreground")
	fs.BoolVar(&f.noPortForward, "x", false, "disable X11 port forwarding")
	fs.BoolVar(&f.version, "v", false, "print the version and exit")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.BoolVar(&f.about, "about", false, "print build information and exit")
	fs.StringVar(&f.httpAddr, "http", "", "[host:]port of the Prometheus metrics listener (host default 127.0.0.1; overrides $http_address)")
	var p, r, q, P bool
	fs.BoolVar(&p, "p", false, "recover and keep running jobs (default)")
	fs.BoolVar(&r, "r", false, "kill running jobs and requeue")
	fs.BoolVar(&q, "q", false, "requeue running jobs without killing them")
	fs.BoolVar(&P, "P", false, "purge all jobs")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	given := 0
	for _, o := range []struct {
		set  bool
		mode momd.RestartMode
	}{{p, momd.RecoverPoll}, {r, momd.RecoverKill}, {q, momd.RecoverRequeue}, {P, momd.RecoverPurge}} {
		if o.set {
			given++
			f.recover = o.mode
		}
	}
	if given > 1 {
		return nil, errors.New("only one of -p, -r, -q, -P may be given")
	}
	return f, nil // without any, -p (the zero mode), as spec 11 §1.1 says
}

func envPort(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func run(args []string) (err error) {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	switch {
	case f.version:
		fmt.Fprintf(os.Stderr, "version: %s\n", momd.Version)
		return nil
	case f.about:
		fmt.Fprintf(os.Stderr, "Version: %s\nImplementation: GoPBS (Go, wire-compatible with TORQUE %s)\nDefault PBS_HOME: %s\n",
			momd.Version, momd.Version, momd.DefaultHome)
		return nil
	}
	child := daemon.Child(daemonEnv)
	if !f.foreground && child == nil {
		// Wait for the background copy's start-up, so that its errors
		// (lock held, port in use) reach the terminal.
		return daemon.Detach(daemon.Options{Env: daemonEnv, Dir: "/", WaitReady: true})
	}
	defer func() { child.Ready(err) }() // a start-up failure, unless reported ready
	cfgFile := f.configFile
	if cfgFile == "" {
		cfgFile = filepath.Join(f.home, "mom_priv", "config")
	}
	cfg, err := momd.LoadConfig(cfgFile)
	if err != nil {
		return err
	}
	host := f.host
	if host == "" {
		host = cfg.MomHost
	}
	if host == "" {
		host, _ = os.Hostname()
	}
	servers := momd.Servers(f.home, cfg)

	logDir := filepath.Join(f.home, "mom_logs")
	if cfg.LogDirectory != "" {
		logDir = cfg.LogDirectory
	}
	var logger *momlog.Logger
	if f.logFile != "" {
		lf, err := os.OpenFile(f.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer lf.Close()
		logger = momlog.NewWriter(lf, "pbs_mom", cfg.LogEvent)
	} else {
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
		if logger, err = momlog.New(logDir, cfg.LogFileSuffix, "pbs_mom", cfg.LogEvent); err != nil {
			return err
		}
		logger.SetRolling(cfg.LogFileMaxSize, cfg.LogFileRollDepth)
		_ = logger.RemoveOlderThan(cfg.LogKeepDays)
	}
	defer logger.Close()
	// As TORQUE's pbs_mom: important lines also go to syslog, and the
	// daemon's memory is locked where permitted (momctl -d reports both).
	syslog := momlog.NewSyslog("", "pbs_mom")
	defer syslog.Close()
	logger.SetSyslog(syslog)
	memLocked, err := momd.LockMemory()
	if err != nil {
		logger.Error(0, "", "pbs_mom", err.Error())
	}

	if err := os.MkdirAll(filepath.Join(f.home, "mom_priv"), 0o751); err != nil {
		return err
	}
	lock, err := momd.Lock(f.home)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	// Catch SIGTERM from here on: it is handled once the services run.
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(caught)
	exePath, exeMtime := momd.ExecutableInfo()
	momd.LogStartup(logger, cfg, servers, exePath, exeMtime)
	if cfg.MomOOMImmunize {
		if err := momd.ImmunizeOOM(); err != nil {
			logger.Error(0, "", "pbs_mom", err.Error())
		}
	}

	var m *link.Mom
	metricsSrc := &mommetrics.NodeSource{Name: host, Sys: &sysinfo.Collector{Config: cfg}}
	mm := mommetrics.New(metricsSrc, momd.Version)
	engine, err := jobexec.New(jobexec.Options{
		Home: f.home, Host: host, MomPort: f.rmPort, Config: cfg, Log: logger,
		Cgroups:     momd.SetupCgroups(logger, cfg),
		OnExit:      func(ex jobexec.Exit) { m.JobExited(ex) },
		OnLimitKill: mm.EnforcementKill,
	})
	if err != nil {
		return err
	}
	defer engine.Close()
	metricsSrc.Jobs = engine // before the metrics listener starts

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var current atomic.Pointer[config.Config] // as last (re-)read
	current.Store(cfg)
	go momd.LogVersionEvery(ctx, logger, momd.VersionInterval, current.Load)
	var linked atomic.Pointer[link.Mom] // set once the protocol side exists
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		// SIGHUP: re-read the configuration for job execution and logging.
		for {
			select {
			case <-hup:
				if c, err := momd.LoadConfig(cfgFile); err == nil {
					current.Store(c)
					engine.SetConfig(c)
					logger.SetMask(c.LogEvent)
					if lm := linked.Load(); lm != nil {
						lm.SetConfig(c)
					}
				} else {
					logger.Error(0, "", "pbs_mom", err.Error())
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	var caughtSig atomic.Int32
	go func() {
		select {
		case sig := <-caught:
			caughtSig.Store(int32(sig.(syscall.Signal)))
			stop()
		case <-ctx.Done():
		}
	}()
	m, err = link.New(link.Options{
		Host: host, Home: f.home, Config: cfg, Log: logger, Exec: engine,
		Servers: servers, ServerPort: f.serverPort, MomPort: f.momPort, RMPort: f.rmPort,
		Shutdown: stop, ConfigFile: cfgFile, MemLocked: memLocked,
		OnReconfig: func(c *config.Config) { // momctl -r
			current.Store(c)
			engine.SetConfig(c)
			logger.SetMask(c.LogEvent)
		},
	})
	if err != nil {
		return err
	}
	linked.Store(m)
	if n, err := m.Recover(ctx, f.recover); err != nil {
		logger.Error(0, err.Error(), "init_abort_jobs", "")
	} else if n > 0 {
		logger.Record(logline.EventDebug, momlog.ClassServer, "pbs_mom", fmt.Sprintf("recovered %d jobs", n))
	}

	// GOPBS_MOM_ADDR (a GoPBS extension, not in TORQUE) binds every socket
	// to one address, so that several MOMs can share one host with the
	// same ports on different addresses (multi-node tests on 127.0.0.x).
	bind, bindIP := "", netip.IPv4Unspecified()
	if v := os.Getenv("GOPBS_MOM_ADDR"); v != "" {
		if bindIP, err = netip.ParseAddr(v); err != nil {
			return fmt.Errorf("GOPBS_MOM_ADDR: %w", err)
		}
		bind = bindIP.String()
	}
	var l link.Listeners
	if l.Batch, err = net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(f.momPort))); err != nil {
		return err
	}
	if l.RM, err = net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(f.rmPort))); err != nil {
		return err
	}
	if l.RPP, err = net.ListenPacket("udp", net.JoinHostPort(bind, strconv.Itoa(f.rmPort))); err != nil {
		return err
	}
	if l.Client, err = rpp.ListenReserved(bindIP); err != nil {
		// Not root: fall back to an ordinary port (servers may refuse it).
		if l.Client, err = net.ListenPacket("udp", net.JoinHostPort(bind, "0")); err != nil {
			return err
		}
	}
	if addr := cmp.Or(f.httpAddr, cfg.HTTPAddress); addr != "" {
		// GoPBS: Prometheus metrics of the node (-http, $http_address).
		mux := http.NewServeMux()
		mux.Handle("/metrics", mm.Handler())
		hl, err := httplisten.Start(addr, mux)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		defer hl.Close()
		logger.Record(logline.EventSystem, momlog.ClassServer, "pbs_mom", "metrics listener on "+hl.URL()+"metrics")
	}
	child.Ready(nil)
	var restart atomic.Bool
	if cfg.EnableMomRestart {
		go func() {
			// $enablemomrestart: when the executable changes, stop the
			// services and exec the new binary; jobs keep running and are
			// re-attached (-p).
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					if _, mtime := momd.ExecutableInfo(); mtime != 0 && mtime != exeMtime {
						logger.Record(logline.EventSystem, momlog.ClassServer, "pbs_mom",
							fmt.Sprintf("%s has changed, restarting", exePath))
						restart.Store(true)
						stop()
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	err = m.Serve(ctx, l)
	if restart.Load() {
		logger.Record(logline.EventSystem, momlog.ClassServer, "pbs_mom", "Is down")
		logger.Record(logline.EventSystem, momlog.ClassServer, "Log", "Log closed")
		logger.Close()
		lock.Unlock()
		args := append([]string{os.Args[0]}, withRestartMode(os.Args[1:], momd.RecoverPoll.String())...)
		env := append(os.Environ(), daemonEnv+"=1")
		return syscall.Exec(exePath, args, env)
	}
	sig := int(caughtSig.Load())
	if sig == 0 {
		sig = int(syscall.SIGTERM) // RM_CMD_SHUTDOWN
	}
	momd.LogShutdown(logger, sig)
	return err
}

// withRestartMode replaces any -p/-r/-q/-P option by mode.
func withRestartMode(args []string, mode string) []string {
	out := make([]string, 0, len(args)+1)
	for _, a := range args {
		switch a {
		case "-p", "-r", "-q", "-P":
			continue
		}
		out = append(out, a)
	}
	return append(out, mode)
}
