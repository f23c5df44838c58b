// Command pbsbench is a load generator for TORQUE-compatible batch
// servers. It speaks the batch protocol itself and authenticates every
// connection the way pbs_iff does (an AuthenticateUser from a reserved
// port naming the client connection), so it must run as root; it lets
// the server close each connection first, which keeps the reserved ports
// reusable at high rates.
//
// Usage:
//
//	pbsbench [-s host:port] [-m submit|stat|select|mixed|comment|takeover] [-n ops] [-c clients]
//	         [-u user] [-q queue] [-hold=true] [-t maxtime] [-window n] [-noauth] [-setup]
//	         [-l name=value,...] [-raw=true]
//
// Modes: submit runs qsub's requests (QueueJob, JobScript, RdytoCommit,
// Commit), each submission on a new connection, with held jobs so that
// nothing runs; stat runs full StatusJob requests (qstat -f); select runs
// SelectJobs (qselect -s Q); mixed is 80% submissions, 10% selects and
// 10% status requests for one job; comment sets the comment of the
// server's jobs in turn (ModifyJob), each client over one connection,
// one request after the other, as the scheduler sets "Not Running"
// comments; takeover connects every 10 ms until a StatusServer succeeds
// and reports that time (a standby taking over after the active server
// was killed; objects= is the server's total_jobs). The last line of the output is
//
//	mode=submit ok=N failed=N elapsed=…s rate=…/s p50=… p99=…
//
// and the exit status is 1 if any operation failed.
//
// With -raw (the default) submit mode runs each client on an OS thread of
// its own with blocking system calls and requests encoded once, which
// costs the generator a fraction of the CPU of the net package's path;
// -raw=false uses the net package (the client library's way).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"gopbs/tools/pbsbench/load"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("pbsbench", flag.ContinueOnError)
	server := fs.String("s", "127.0.0.1:15001", "server host:port")
	mode := fs.String("m", load.ModeSubmit, "mode: submit, stat, select, mixed, comment or takeover")
	ops := fs.Int("n", 10000, "number of operations")
	clients := fs.Int("c", 8, "concurrent clients")
	user := fs.String("u", "root", "user name in request headers")
	queue := fs.String("q", "", "destination queue (default: the server's default queue)")
	hold := fs.Bool("hold", true, "submit with a user hold so that nothing runs")
	maxTime := fs.Duration("t", 0, "stop after this long (0: no limit)")
	window := fs.Int("window", 0, "print the rate of every window of this many operations")
	noAuth := fs.Bool("noauth", false, "connect from a reserved port without AuthenticateUser")
	resources := fs.String("l", "", "resources of the submitted jobs, as qsub -l: name=value[,name=value...]")
	setup := fs.Bool("setup", false, "first create and start the queue (-q, default batch) and make it the default queue; as -u root, add root to acl_roots")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	raw := fs.Bool("raw", true, "submit mode: blocking system calls on one OS thread per client (a cheaper generator; same bytes)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pbsbench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "pbsbench: warning: not root; binding reserved ports will fail")
	}
	cfg := load.Config{
		Mode:    *mode,
		Dialer:  &load.Dialer{Addr: *server, User: *user, Auth: !*noAuth, Timeout: *timeout},
		Ops:     *ops,
		Clients: *clients,
		MaxTime: *maxTime,
		Job:     load.Job{Queue: *queue, Hold: *hold, Extra: load.ResourceList(*resources)},
		Window:  *window,
		Raw:     *raw,
		Progress: func(w load.WindowStats) {
			fmt.Printf("done=%d failed=%d elapsed=%.3fs window_rate=%.1f/s\n", w.Done, w.Failed, w.Elapsed.Seconds(), w.Rate)
		},
	}
	if *setup {
		q := *queue
		if q == "" {
			q = "batch"
		}
		if err := load.Setup(cfg.Dialer, q); err != nil {
			fmt.Fprintln(os.Stderr, "pbsbench:", err)
			return 2
		}
	}
	res, err := load.Run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbsbench:", err)
		return 2
	}
	for _, e := range res.Errors {
		fmt.Fprintln(os.Stderr, "pbsbench: error:", e)
	}
	if *mode == load.ModeMixed {
		fmt.Fprintf(os.Stderr, "pbsbench: kinds: %v\n", res.Kinds)
	}
	if *mode == load.ModeStat || *mode == load.ModeSelect || *mode == load.ModeTakeover {
		fmt.Printf("objects=%d\n", res.Objects)
	}
	fmt.Println(res)
	if res.Failed > 0 {
		return 1
	}
	return 0
}
