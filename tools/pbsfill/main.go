// Command pbsfill fills a TORQUE-compatible batch server with held jobs
// (100,000 or 1,000,000 for the scale measurements) through the real
// submission path, and reports how the submission rate and the server's
// memory evolve as the queue grows.
//
// Usage:
//
//	pbsfill [-s host:port] [-n jobs] [-c clients] [-window n] [-pid server-pid | -home PBS_HOME] [-stat]
//
// Every window of submissions prints one line
//
//	queued=N window_rate=…/s rss=…MB bytes_per_job=… server_cpu_per_job=…us
//
// (rss and CPU time only when the server's pid is known: -pid, or -home to read it
// from server_priv/server.lock). With -stat, pbsfill ends by timing a
// full StatusJob. The last line is pbsbench's summary line.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopbs/tools/pbsbench/load"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("pbsfill", flag.ContinueOnError)
	server := fs.String("s", "127.0.0.1:15001", "server host:port")
	jobs := fs.Int("n", 100000, "jobs to submit")
	clients := fs.Int("c", 8, "concurrent clients")
	window := fs.Int("window", 10000, "report every this many submissions")
	user := fs.String("u", "root", "user name in request headers")
	pid := fs.Int("pid", 0, "pbs_server's pid, to report its memory")
	home := fs.String("home", "", "PBS_HOME of the server, to find its pid")
	queue := fs.String("q", "batch", "queue to create (-setup) and submit to")
	setup := fs.Bool("setup", true, "create and start the queue first")
	stat := fs.Bool("stat", false, "time a full StatusJob at the end")
	noAuth := fs.Bool("noauth", false, "connect from a reserved port without AuthenticateUser")
	raw := fs.Bool("raw", true, "submit with pbsbench's raw submitter (one thread, raw system calls; same bytes)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *pid == 0 && *home != "" {
		b, err := os.ReadFile(filepath.Join(*home, "server_priv", "server.lock"))
		if err == nil {
			*pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	d := &load.Dialer{Addr: *server, User: *user, Auth: !*noAuth, Timeout: time.Minute}
	if *setup {
		if err := load.Setup(d, *queue); err != nil {
			fmt.Fprintln(os.Stderr, "pbsfill:", err)
			return 2
		}
	}
	base := 0
	if c, err := d.Dial(); err == nil {
		if ids, err := c.StatJobIDs(); err == nil {
			base = len(ids)
		}
		c.Close()
	}
	lastCPU, _ := cpuTime(*pid)
	res, err := load.Run(load.Config{
		Mode: load.ModeSubmit, Dialer: d, Ops: *jobs, Clients: *clients,
		Job:    load.Job{Queue: *queue, Hold: true},
		Raw:    *raw,
		Window: *window,
		Progress: func(w load.WindowStats) {
			line := fmt.Sprintf("queued=%d failed=%d elapsed=%.1fs window_rate=%.1f/s", base+w.Done-w.Failed, w.Failed, w.Elapsed.Seconds(), w.Rate)
			if *pid > 0 {
				if rss, err := rssBytes(*pid); err == nil {
					line += fmt.Sprintf(" rss=%.1fMB bytes_per_job=%.0f", float64(rss)/(1<<20), float64(rss)/float64(max(base+w.Done-w.Failed, 1)))
				}
				// The server's CPU time per submission does not depend on
				// what else runs on the machine, unlike the rate.
				if cpu, err := cpuTime(*pid); err == nil {
					line += fmt.Sprintf(" server_cpu_per_job=%.0fus", float64(cpu-lastCPU)/float64(time.Microsecond)/float64(*window))
					lastCPU = cpu
				}
			}
			fmt.Println(line)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbsfill:", err)
		return 2
	}
	for _, e := range res.Errors {
		fmt.Fprintln(os.Stderr, "pbsfill: error:", e)
	}
	if *stat {
		c, err := d.Dial()
		if err != nil {
			fmt.Fprintln(os.Stderr, "pbsfill:", err)
			return 1
		}
		t0 := time.Now()
		n, err := c.StatJobs()
		el := time.Since(t0)
		c.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "pbsfill: stat:", err)
			return 1
		}
		fmt.Printf("stat jobs=%d elapsed=%.3fs\n", n, el.Seconds())
	}
	fmt.Println(res)
	if res.Failed > 0 {
		return 1
	}
	return 0
}

// cpuTime returns the user and system CPU time process pid has used.
func cpuTime(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("no pid")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in ")".
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad times", pid)
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

// rssBytes returns the resident set size of process pid.
func rssBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
