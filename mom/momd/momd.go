// Package momd holds the daemon plumbing of pbs_mom that is independent of
// the protocols: the lock file, configuration loading, the server list, the
// start-up and shutdown log lines and the restart mode.
package momd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/momlog"
)

// Version is the TORQUE version pbs_mom reports.
const Version = "2.5.13"

// DefaultHome is PBS_HOME when neither -d nor $PBS_HOME is given.
const DefaultHome = "/var/spool/torque"

// RestartMode says what happens to jobs found running at start-up
// (options -p, -r, -q, -P; spec 11 §11).
type RestartMode int

// Restart modes.
const (
	RecoverPoll    RestartMode = iota // -p (default): re-attach and poll
	RecoverKill                       // -r: kill, report INITABT for requeue
	RecoverRequeue                    // -q: report for requeue without killing
	RecoverPurge                      // -P: kill and delete without obit
)

// String returns the option of the mode ("-p", "-r", "-q" or "-P").
func (m RestartMode) String() string {
	if m < RecoverPoll || m > RecoverPurge {
		return fmt.Sprintf("RestartMode(%d)", int(m))
	}
	return [...]string{"-p", "-r", "-q", "-P"}[m]
}

// ParseRestartMode returns the mode of an option letter, with or without
// its "-" ("p", "-r", …); "" is the default, RecoverPoll.
func ParseRestartMode(s string) (RestartMode, error) {
	switch strings.TrimPrefix(s, "-") {
	case "", "p":
		return RecoverPoll, nil
	case "r":
		return RecoverKill, nil
	case "q":
		return RecoverRequeue, nil
	case "P":
		return RecoverPurge, nil
	}
	return 0, fmt.Errorf("unknown restart mode %q", s)
}

// LockFile is the held mom_priv/mom.lock.
type LockFile struct {
	f *os.File
}

// Lock takes the write lock on <home>/mom_priv/mom.lock and writes the PID
// into it. The lock is an fcntl lock: the process must not open and close
// the lock file elsewhere, that would release it. A second MOM gets the error "cannot lock '<dir>/mom.lock' -
// another mom running".
func Lock(home string) (*LockFile, error) {
	dir := filepath.Join(home, "mom_priv")
	name := filepath.Join(dir, "mom.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open '%s': %w", name, err)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock '%s' - another mom running", name)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &LockFile{f: f}, nil
}

// Unlock releases the lock.
func (l *LockFile) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// LoadConfig reads the configuration file; a missing file yields the
// defaults (pbs_mom runs without a config file).
func LoadConfig(name string) (*config.Config, error) {
	c, err := config.ParseFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return config.Default(), nil
	}
	return c, err
}

// Servers returns the servers to report to: the $pbsserver entries, else
// the host in PBS_HOME/server_name.
func Servers(home string, cfg *config.Config) []string {
	if len(cfg.PBSServers) > 0 {
		return cfg.PBSServers
	}
	f, err := os.Open(filepath.Join(home, "server_name"))
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			return []string{s}
		}
	}
	return nil
}

// VersionInterval is how often a running pbs_mom repeats its version line
// in the log: the captured mom_logs have it at the start (01:18:46) and
// every 5 minutes after (01:23:46, ..., 02:23:46, 02:28:46, 02:33:46).
const VersionInterval = 5 * time.Minute

// LogVersion writes pbs_mom's version line ("Torque Mom Version = 2.5.13,
// loglevel = 0").
func LogVersion(log *momlog.Logger, cfg *config.Config) {
	log.Record(logline.EventSystem, momlog.ClassServer, "pbs_mom",
		fmt.Sprintf("Torque Mom Version = %s, loglevel = %d", Version, cfg.LogLevel))
}

// LogVersionEvery writes the version line every interval until ctx is
// done, with the configuration conf returns at the time.
func LogVersionEvery(ctx context.Context, log *momlog.Logger, interval time.Duration, conf func() *config.Config) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			LogVersion(log, conf())
		}
	}
}

// LogStartup writes pbs_mom's start-up lines (spec 11 §12, logs/mom_logs).
func LogStartup(log *momlog.Logger, cfg *config.Config, servers []string, exePath string, exeMtime int64) {
	sys := logline.EventSystem
	log.Record(sys, momlog.ClassServer, "Log", "Log opened")
	LogVersion(log, cfg)
	for _, s := range servers {
		log.Record(sys, momlog.ClassServer, "setpbsserver", s)
		host, _, _ := strings.Cut(s, ":")
		log.Record(sys, momlog.ClassServer, "mom_server_add", "server "+host+" added")
	}
	for _, u := range cfg.UseCp {
		log.Record(sys, momlog.ClassServer, "usecp", u.HostPattern+":"+u.From+" "+u.To)
	}
	for _, w := range cfg.Warnings {
		log.Record(logline.EventError, momlog.ClassServer, "read_config", w)
	}
	log.Record(sys, momlog.ClassNA, "initialize", "independent")
	log.Record(logline.EventDebug, momlog.ClassServer, "pbs_mom", "before init_abort_jobs")
	log.Record(sys, momlog.ClassServer, "pbs_mom", "Is up")
	log.Record(sys, momlog.ClassServer, "setup_program_environment",
		fmt.Sprintf("MOM executable path and mtime at launch: %s %d", exePath, exeMtime))
	LogVersion(log, cfg)
}

// LogShutdown writes the lines of a SIGTERM shutdown that leaves jobs
// running.
func LogShutdown(log *momlog.Logger, sig int) {
	sys := logline.EventSystem
	log.Record(sys, momlog.ClassServer, "pbs_mom", fmt.Sprintf("caught signal %d: leaving jobs running, just exiting", sig))
	log.Record(sys, momlog.ClassServer, "pbs_mom", "Is down")
	log.Record(sys, momlog.ClassServer, "Log", "Log closed")
}

// ExecutableInfo returns the path and modification time (seconds) of the
// running executable.
func ExecutableInfo() (string, int64) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return exe, 0
	}
	return exe, fi.ModTime().Unix()
}

// ImmunizeOOM makes the calling process exempt from the kernel's OOM killer
// ($mom_oom_immunize).
func ImmunizeOOM() error {
	if err := os.WriteFile("/proc/self/oom_score_adj", []byte("-1000\n"), 0); err != nil {
		return fmt.Errorf("oom_score_adj: %w", err)
	}
	return nil
}
