// Command schedbench measures pbs_server and pbs_sched scheduling cycles
// over a large simulated cluster, reproducing the scenario of
// docs/performance.md §4: -nodes simulated nodes (tools/nodesim) of -np
// processors, -running jobs started on them through the real launch path,
// then -queued more jobs that cannot run. It prints the duration of every
// cycle it watches and a summary line: the first cycle after the mass
// submission (which sets a comment on every queued job) and the later
// ones.
//
// Usage:
//
//	schedbench [-bin dir] [-nodes 1000] [-np 8] [-running 8000] [-queued 10000]
//	           [-cycles 5] [-iteration 10] [-clients 8] [-profile dir]
//	           [-profile-seconds 20] [-profile-first] [-keep] [-max-reservation 20]
//	           [-partitions 4]
//
// With -partitions N the cluster is cut into N partitions of -nodes/N
// nodes, each with a queue and a scheduler of its own (sched objects
// that pbs_server starts; issue 18); the running and queued jobs are
// spread evenly over the queues, and the cycle durations of every
// scheduler come from pbs_server's log (partitions.go).
//
// It must run as root on Linux: the daemons bind reserved ports, and
// schedbench runs itself again in a private mount namespace where a
// hosts file naming the simulated nodes is bind-mounted on /etc/hosts
// (the node names must resolve for the server and the scheduler; nothing
// outside the namespace sees the file). Every address is on the loopback
// network, the ports are chosen free, and PBS_HOME is a temporary
// directory removed at the end (kept with -keep).
//
// The daemons are the binaries in -bin (default: the directory holding
// schedbench, as `make build` puts every program in ./bin). The cycle
// durations come from pbs_server's hidden debug listener (GOPBS_PPROF):
// the time from its connection to the scheduler until the scheduler
// closes it. With -profile, CPU profiles of pbs_server and pbs_sched are
// taken over the later cycles (with -profile-first: from the start of the
// first cycle) and written to that directory.
//
// With -max-reservation the scheduler plans ahead (seed 004): its
// sched_config sets max_reservation, the running jobs have walltimes (so
// that the resource-time profile knows when they end) and every queued
// job asks for a reservation (reserve=y); the cycles then build the
// profile, make the reservations and test every queued job for
// backfilling.
//
// The first cycle is made deterministic: scheduling is switched off
// during the mass submission and on again after it, which starts a cycle
// at once over all the queued jobs; the later cycles come every
// -iteration seconds (scheduler_iteration).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// nsEnv marks the process running inside the private mount namespace.
const nsEnv = "SCHEDBENCH_NAMESPACE"

func main() { os.Exit(run()) }

func run() int {
	var cfg config
	fs := flag.NewFlagSet("schedbench", flag.ContinueOnError)
	fs.StringVar(&cfg.bin, "bin", "", "directory of pbs_server, pbs_sched and nodesim (default: schedbench's own directory)")
	fs.IntVar(&cfg.nodes, "nodes", 1000, "simulated nodes")
	fs.IntVar(&cfg.np, "np", 8, "processors per node")
	fs.IntVar(&cfg.running, "running", 8000, "jobs to start first (they run forever)")
	fs.IntVar(&cfg.queued, "queued", 10000, "jobs to queue after them")
	fs.IntVar(&cfg.cycles, "cycles", 5, "cycles to time after the first one")
	fs.IntVar(&cfg.iteration, "iteration", 10, "scheduler_iteration in seconds (the period of the later cycles)")
	fs.IntVar(&cfg.clients, "clients", 8, "concurrent submitting clients")
	fs.StringVar(&cfg.profileDir, "profile", "", "write CPU profiles of pbs_server and pbs_sched over the later cycles to this directory")
	fs.IntVar(&cfg.profileSeconds, "profile-seconds", 20, "length of the CPU profiles")
	fs.BoolVar(&cfg.profileFirst, "profile-first", false, "with -profile: profile from the start of the first cycle instead (use a short -profile-seconds)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the temporary PBS_HOME (its logs) and print its path")
	fs.DurationVar(&cfg.wait, "wait", 5*time.Minute, "longest wait for the nodes, the running jobs or the cycles")
	fs.IntVar(&cfg.maxReservation, "max-reservation", 0, "look-ahead scheduling: max_reservation in sched_config (-1: no cap); the running jobs get a walltime of 12 h, the queued ones 4 h and reserve=y")
	fs.IntVar(&cfg.partitions, "partitions", 0, "several schedulers: this many partitions of -nodes/N nodes, each with its queue and its scheduler (a sched object pbs_server runs); the jobs are spread over the queues")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "schedbench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "schedbench:", err)
		return 2
	}
	if os.Getenv(nsEnv) == "" {
		return reexec()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, &cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schedbench:", err)
		return 1
	}
	return 0
}

// config holds the command-line settings.
type config struct {
	bin                     string
	nodes, np               int
	running, queued         int
	cycles, iteration       int
	clients                 int
	profileDir              string
	profileSeconds          int
	profileFirst            bool
	keep                    bool
	wait                    time.Duration
	maxReservation          int
	partitions              int    // -partitions: schedulers over partitions (partitions.go)
	queue                   string // the queue jobs are submitted to ("" the default queue)
	home                    string // the temporary PBS_HOME
	port                    int    // pbs_server's port; the MOM, RM and scheduler ports follow it
	serverDebug, schedDebug string // GOPBS_PPROF addresses
}

func (c *config) check() error {
	switch {
	case c.nodes < 1 || c.np < 1:
		return errors.New("-nodes and -np must be positive")
	case c.running < 0 || c.queued < 1:
		return errors.New("-running must not be negative and -queued must be positive")
	case c.running > c.nodes*c.np:
		return fmt.Errorf("-running %d exceeds the %d processors of the nodes", c.running, c.nodes*c.np)
	case c.cycles < 0 || c.iteration < 1 || c.clients < 1:
		return errors.New("-cycles must not be negative, -iteration and -clients must be positive")
	case c.profileSeconds < 1:
		return errors.New("-profile-seconds must be positive")
	case c.maxReservation < -1:
		return errors.New("-max-reservation must be -1 (no cap), 0 (off) or positive")
	case c.partitions < 0 || c.partitions > 0 && c.nodes%c.partitions != 0:
		return errors.New("-partitions must divide -nodes")
	}
	if c.bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("locating the binaries: %w", err)
		}
		c.bin = filepath.Dir(exe)
	}
	for _, p := range []string{"pbs_server", "pbs_sched", "nodesim"} {
		if _, err := os.Stat(filepath.Join(c.bin, p)); err != nil {
			return fmt.Errorf("%s not found in %s (-bin; make build): %w", p, c.bin, err)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("must run as root (reserved ports, mount namespace)")
	}
	return nil
}

// reexec runs schedbench again, with the same arguments, in a private
// mount namespace (the mounts there are private: nothing leaks out).
func reexec() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedbench:", err)
		return 1
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), nsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	signal.Ignore(syscall.SIGINT) // the child gets it too, and cleans up
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "schedbench: private mount namespace:", err)
		return 1
	}
	return 0
}
