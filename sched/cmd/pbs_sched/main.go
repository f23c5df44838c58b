// Command pbs_sched is the GoPBS scheduler, driven by pbs_server over the
// scheduler port: TORQUE's FIFO scheduler policy (sched_priv/sched_config),
// or the NAS scheduler's policy (seed 000) when its configuration is in
// the NAS form.
//
//	pbs_sched [-d home] [-L logfile] [-S port] [-R momport] [-p outfile]
//	          [-c configfile] [-a alarm] [-D] [-prefilter-nodes=false]
//	          [-policy auto|fifo|nas] [-priv dir] [-log dir] [-name sched]
//	          [--version]
//
// -priv and -log replace PBS_HOME/sched_priv and PBS_HOME/sched_logs, and
// -name makes the scheduler the sched object of that name (GoPBS, issue
// 18): at the start of every cycle it names itself to the server, which
// then shows it only the queues, jobs and nodes of its partitions; a
// scheduler other than "default" without a partition logs "Scheduler
// does not contain a partition" and exits. pbs_server starts
// its sched objects' schedulers with these options.
//
// -policy auto (the default) runs the NAS policy when PBSSCHED_CONFIG
// names its configuration file, or when sched_priv/config or
// sched_priv/sched_config is in the NAS form ("<OPTION> <argument>" lines
// of the NAS options); otherwise the FIFO policy. -policy fifo and
// -policy nas force the choice. With the NAS policy, SIGHUP also re-reads
// its configuration; a configuration with syntax errors or sanity
// problems stops the start (the reasons are logged and printed).
//
// -prefilter-nodes=false makes it ask the server to run (or query nodes
// for) every eligible job, as TORQUE does, even when its own node model
// says the job cannot fit now; by default such jobs only get the comment
// "Not Running: Not enough of the right type of nodes are available".
//
// Without -D it detaches from the terminal (new session, stdin from
// /dev/null, stdout and stderr to the -p file in sched_priv) once it holds
// its lock file and its port.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	daemonize "gopbs/internal/daemon"
	"gopbs/internal/debugserve"
	"gopbs/sched/daemon"
	"gopbs/sched/momquery"
)

// Version is the TORQUE version GoPBS is compatible with.
const Version = "2.5.13"

// childEnv marks the detached child process (see internal/daemon).
const childEnv = "GOPBS_SCHED_CHILD"

// gcPercent is the garbage collector's target unless GOGC is set: a
// cycle decodes the status of every job into short-lived values (20 MB
// for 18,000 jobs) on a small long-lived heap, which the default of 100
// scans several times over.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args, os.Stderr))
}

func envPort(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return def
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := fs.String("d", "/var/spool/torque", "PBS home directory")
	logFile := fs.String("L", "", "log file (default sched_logs/YYYYMMDD)")
	port := fs.Int("S", envPort("PBS_SCHEDULER_SERVICE_PORT", daemon.DefaultPort), "scheduler port")
	momPort := fs.Int("R", envPort("PBS_MANAGER_SERVICE_PORT", daemon.DefaultMomPort), "MOM resource monitor port")
	outFile := fs.String("p", "sched_out", "file receiving stdout and stderr when detached")
	cfgFile := fs.String("c", "", "file of $clienthost and $restricted lines")
	alarm := fs.Int("a", int(daemon.DefaultAlarm/time.Second), "seconds a scheduling cycle may take")
	foreground := fs.Bool("D", false, "stay in the foreground")
	prefilter := fs.Bool("prefilter-nodes", true, "skip the node query or RunJob of jobs the scheduler's own node model says cannot fit now (false: ask the server about every job, as TORQUE)")
	pol := fs.String("policy", daemon.PolicyAuto, "scheduling policy: auto (by the configuration file's form), fifo or nas")
	listen := fs.String("listen", "", "address to listen on (default: the address the local host name resolves to, as TORQUE)")
	privDir := fs.String("priv", "", "scheduler directory (default PBS_HOME/sched_priv; a sched object's sched_priv)")
	logDir := fs.String("log", "", "log directory (default PBS_HOME/sched_logs; a sched object's sched_log)")
	name := fs.String("name", "", "the sched object this scheduler is: it names itself to the server and sees only its partitions (GoPBS)")
	version := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args[1:]); err != nil {
		return 1
	}
	if *version {
		fmt.Println("version:", Version)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "usage: %s [-d home][-L logfile][-S port][-R port][-p output][-c clientsfile][-a alarm][-D]\n", args[0])
		return 1
	}
	// Like TORQUE, work in PBS_HOME/sched_priv: relative -L, -c and -p
	// names are taken from there.
	absHome, err := filepath.Abs(*home)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", filepath.Base(args[0]), err)
		return 1
	}
	*home = absHome
	priv := *privDir
	if priv == "" {
		priv = filepath.Join(*home, "sched_priv")
	}
	child := daemonize.Child(childEnv)
	if !*foreground && child == nil {
		return detach(args, priv, *outFile, stderr)
	}
	if err := os.Chdir(priv); err != nil {
		err = fmt.Errorf("unable to change to directory %s: %v", priv, err)
		child.Ready(err)
		fmt.Fprintf(stderr, "%s: %v\n", filepath.Base(args[0]), err)
		return 1
	}

	opts := daemon.Options{Home: *home, LogFile: *logFile, Port: *port, MomPort: *momPort,
		ConfigFile: *cfgFile, Alarm: time.Duration(*alarm) * time.Second, Argv0: args[0], Stderr: stderr,
		NoPrefilter: !*prefilter, ListenAddr: *listen, Policy: *pol, NASConfig: os.Getenv("PBSSCHED_CONFIG"),
		PrivDir: priv, LogDir: *logDir, Name: *name}
	ready := child.Ready
	err = serve(opts, ready)
	if err != nil && !errors.Is(err, daemon.ErrQuit) {
		fmt.Fprintf(stderr, "%s: %v\n", filepath.Base(args[0]), err)
		return 1
	}
	return 0
}

// serve runs the scheduler; ready is called once start-up succeeded or
// failed.
func serve(opts daemon.Options, ready func(error)) error {
	mom := momquery.NewRPP(opts.MomPort)
	defer mom.Close()
	d, err := daemon.New(opts, mom)
	if err != nil {
		ready(err)
		return err
	}
	defer d.Close()
	if err := d.Lock(); err != nil {
		ready(err)
		return err
	}
	ln, err := d.Listen()
	if err != nil {
		ready(err)
		return err
	}
	d.Started()
	ready(nil)
	if pl := debugserve.Start(nil); pl != nil {
		defer pl.Close()
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			d.Hangup()
		}
	}()
	return d.Serve(ctx, ln)
}

// detach starts the scheduler again as a child in a new session with
// stdout/stderr on the output file (relative names in priv, the
// scheduler's directory), waits until it reports its start-up and
// returns the exit status for the parent.
func detach(args []string, priv, outFile string, stderr io.Writer) int {
	name := filepath.Base(args[0])
	if !filepath.IsAbs(outFile) {
		outFile = filepath.Join(priv, outFile)
	}
	err := daemonize.Detach(daemonize.Options{Env: childEnv, Args: args, Output: outFile, WaitReady: true})
	switch {
	case errors.Is(err, daemonize.ErrExited):
		fmt.Fprintf(stderr, "%s: scheduler exited during start-up\n", name)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
