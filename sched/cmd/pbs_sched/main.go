// Command pbs_sched is the GoPBS scheduler: TORQUE's FIFO scheduler
// policy, driven by pbs_server over the scheduler port.
//
//	pbs_sched [-d home] [-L logfile] [-S port] [-R momport] [-p outfile]
//	          [-c configfile] [-a alarm] [-D] [-prefilter-nodes=false] [--version]
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
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"gopbs/sched/daemon"
	"gopbs/sched/momquery"
)

// Version is the TORQUE version GoPBS is compatible with.
const Version = "2.5.13"

// childEnv marks the detached child process; its value is the number of
// the descriptor on which the child reports its start-up.
const childEnv = "GOPBS_SCHED_CHILD"

// readyWord is what the child reports when it started.
const readyWord = "ready\n"

func main() {
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
	report := os.Getenv(childEnv)
	if !*foreground && report == "" {
		return detach(args, *home, *outFile, stderr)
	}
	if err := os.Chdir(filepath.Join(*home, "sched_priv")); err != nil {
		fmt.Fprintf(stderr, "%s: unable to change to directory %s: %v\n", filepath.Base(args[0]), filepath.Join(*home, "sched_priv"), err)
		return 1
	}

	opts := daemon.Options{Home: *home, LogFile: *logFile, Port: *port, MomPort: *momPort,
		ConfigFile: *cfgFile, Alarm: time.Duration(*alarm) * time.Second, Argv0: args[0], Stderr: stderr,
		NoPrefilter: !*prefilter}
	ready := func(err error) {}
	if report != "" {
		fd, _ := strconv.Atoi(report)
		pipe := os.NewFile(uintptr(fd), "report")
		ready = func(err error) {
			if err != nil {
				fmt.Fprintln(pipe, err)
			} else {
				io.WriteString(pipe, readyWord)
			}
			pipe.Close()
		}
	}
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

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			d.Log.Reopen()
			d.ReadClientConfig()
		}
	}()
	return d.Serve(ctx, ln)
}

// detach starts the scheduler again as a child in a new session with
// stdout/stderr on the output file, waits until it reports its start-up
// and returns the exit status for the parent.
func detach(args []string, home, outFile string, stderr io.Writer) int {
	name := filepath.Base(args[0])
	if !filepath.IsAbs(outFile) {
		outFile = filepath.Join(home, "sched_priv", outFile)
	}
	out, err := os.OpenFile(outFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer out.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer devnull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	cmd := exec.Command(exe, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = append(os.Environ(), childEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, out, out
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	w.Close()
	msg, _ := io.ReadAll(r)
	r.Close()
	if string(msg) != readyWord {
		if len(msg) == 0 {
			msg = []byte("scheduler exited during start-up\n")
		}
		fmt.Fprintf(stderr, "%s: %s", name, msg)
		return 1
	}
	cmd.Process.Release()
	return 0
}
