package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/debugserve"
	"gopbs/tools/pbsbench/load"
)

// bench runs the whole scenario inside the private mount namespace.
func bench(ctx context.Context, cfg *config, out io.Writer) (err error) {
	home, err := os.MkdirTemp("", "schedbench-")
	if err != nil {
		return err
	}
	cfg.home = home
	defer func() {
		if cfg.keep {
			fmt.Fprintf(out, "PBS_HOME kept: %s\n", home)
		} else {
			os.RemoveAll(home)
		}
	}()
	for _, d := range []string{"sched_priv", "sched_logs"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			return err
		}
	}
	if cfg.maxReservation != 0 {
		n := cfg.maxReservation
		if n < 0 {
			n = 1 << 30
		}
		text := fmt.Sprintf("max_reservation: %d\n", n)
		if err := os.WriteFile(filepath.Join(home, "sched_priv", "sched_config"), []byte(text), 0o644); err != nil {
			return err
		}
	}
	hosts := filepath.Join(home, "hosts")
	if err := runTool(ctx, cfg, filepath.Join(home, "nodesim-hosts.out"), "nodesim", "-n", strconv.Itoa(cfg.nodes), "-hosts", hosts); err != nil {
		return fmt.Errorf("writing the hosts file: %w", err)
	}
	if err := syscall.Mount(hosts, "/etc/hosts", "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding %s on /etc/hosts: %w", hosts, err)
	}
	if cfg.port, err = freePorts(6); err != nil {
		return err
	}
	cfg.serverDebug = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port+4))
	cfg.schedDebug = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port+5))
	p := func(off int) string { return strconv.Itoa(cfg.port + off) }

	var procs daemons
	defer procs.stop()
	server, err := procs.start(ctx, cfg, "pbs_server", []string{debugserve.Env + "=" + cfg.serverDebug},
		"-D", "-f", "-t", "create", "-d", home, "-p", p(0), "-H", "localhost", "-a", "false",
		"-M", p(1), "-R", p(2), "-S", p(3))
	if err != nil {
		return err
	}
	if err := waitTCP(ctx, net.JoinHostPort("127.0.0.1", p(0)), 10*time.Second); err != nil {
		return fmt.Errorf("pbs_server: %w (see %s)", err, logPath(home, "pbs_server"))
	}
	if cfg.partitions > 0 {
		return benchPartitions(ctx, cfg, out, &procs, net.JoinHostPort("127.0.0.1", p(0)))
	}
	sched, err := procs.start(ctx, cfg, "pbs_sched", []string{debugserve.Env + "=" + cfg.schedDebug, "PBS_BATCH_SERVICE_PORT=" + p(0)},
		"-D", "-d", home, "-S", p(3), "-R", p(2), "-listen", "127.0.0.1")
	if err != nil {
		return err
	}
	if err := waitTCP(ctx, net.JoinHostPort("127.0.0.1", p(3)), 10*time.Second); err != nil {
		return fmt.Errorf("pbs_sched: %w (see %s)", err, logPath(home, "pbs_sched"))
	}
	srvAddr := net.JoinHostPort("127.0.0.1", p(0))
	d := &load.Dialer{Addr: srvAddr, User: "root", Timeout: time.Minute}
	if err := load.Setup(d, "batch"); err != nil {
		return fmt.Errorf("creating the queue: %w", err)
	}

	t0 := time.Now()
	if _, err := procs.start(ctx, cfg, "nodesim", nil, "-server", srvAddr, "-n", strconv.Itoa(cfg.nodes),
		"-np", strconv.Itoa(cfg.np), "-rmport", p(2), "-momport", p(1), "-interval", "30s", "-create"); err != nil {
		return err
	}
	if err := waitUntil(ctx, cfg.wait, time.Second, func() (bool, error) {
		n, err := freeNodes(d)
		return n >= cfg.nodes, err
	}); err != nil {
		return fmt.Errorf("waiting for %d free nodes: %w", cfg.nodes, err)
	}
	fmt.Fprintf(out, "nodes: %d free after %.1fs\n", cfg.nodes, time.Since(t0).Seconds())

	if err := manage(d, batchreq.NewAttr("scheduler_iteration", strconv.Itoa(cfg.iteration)), batchreq.NewAttr("scheduling", "True")); err != nil {
		return err
	}
	if cfg.running > 0 {
		t0 = time.Now()
		if err := submit(ctx, cfg, srvAddr, cfg.running, out, "running"); err != nil {
			return err
		}
		if err := waitUntil(ctx, cfg.wait, 2*time.Second, func() (bool, error) {
			n, err := stateCount(d, "Running")
			return n >= cfg.running, err
		}); err != nil {
			return fmt.Errorf("waiting for %d running jobs: %w", cfg.running, err)
		}
		fmt.Fprintf(out, "running: %d after %.1fs\n", cfg.running, time.Since(t0).Seconds())
	}
	// Queue the jobs with scheduling off, so that the first cycle sees
	// them all; switching it on starts that cycle at once.
	if err := waitIdle(ctx, cfg, d); err != nil {
		return err
	}
	if err := manage(d, batchreq.NewAttr("scheduling", "False")); err != nil {
		return err
	}
	if err := submit(ctx, cfg, srvAddr, cfg.queued, out, "queued"); err != nil {
		return err
	}
	before, err := fetchCycles(cfg.serverDebug)
	if err != nil {
		return err
	}
	w := newWatch(server.Process.Pid, sched.Process.Pid)
	fmt.Fprintf(out, "load average: %s\n", loadAverage())
	var profiles <-chan error
	if cfg.profileDir != "" && cfg.profileFirst {
		profiles = takeProfiles(cfg)
	}
	if err := manage(d, batchreq.NewAttr("scheduling", "True")); err != nil {
		return err
	}
	cycles, err := collectCycles(ctx, cfg, before.Total, out, func(c cycle) {
		if c.Seq == before.Total+1 {
			w.mark()
			if cfg.profileDir != "" && !cfg.profileFirst {
				profiles = takeProfiles(cfg)
			}
		}
	})
	w.mark()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, summarize(cycles, w))
	if srv, sch, ok := w.peakRSS(); ok {
		fmt.Fprintf(out, "peak RSS: pbs_server=%d MiB pbs_sched=%d MiB\n", srv>>20, sch>>20)
	}
	fmt.Fprintf(out, "load average: %s\n", loadAverage())
	if profiles != nil {
		if err := <-profiles; err != nil {
			return err
		}
		fmt.Fprintf(out, "profiles: %s, %s\n", filepath.Join(cfg.profileDir, "pbs_server.pprof"), filepath.Join(cfg.profileDir, "pbs_sched.pprof"))
	}
	return nil
}

// daemons are the long-running processes started by bench.
type daemons []*exec.Cmd

// start starts program from the binary directory with its output in
// PBS_HOME/<program>.out.
func (ds *daemons) start(ctx context.Context, cfg *config, program string, env []string, args ...string) (*exec.Cmd, error) {
	f, err := os.Create(logPath(cfg.home, program))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(filepath.Join(cfg.bin, program), args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", program, err)
	}
	*ds = append(*ds, cmd)
	return cmd, nil
}

// stop ends the processes, the last started first: SIGTERM, then
// SIGKILL after 10 s.
func (ds *daemons) stop() {
	for i := len(*ds) - 1; i >= 0; i-- {
		cmd := (*ds)[i]
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	*ds = nil
}

func logPath(home, program string) string { return filepath.Join(home, program+".out") }

// runTool runs a program from the binary directory to its end.
func runTool(ctx context.Context, cfg *config, output, program string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(cfg.bin, program), args...)
	b, err := cmd.CombinedOutput()
	os.WriteFile(output, b, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w: %s", program, err, strings.TrimSpace(string(b)))
	}
	return nil
}

// freePorts returns the first of n consecutive loopback ports free for
// both TCP and UDP.
func freePorts(n int) (int, error) {
	for base := 20000 + os.Getpid()%20000; base < 65000; base += 97 {
		ok := true
		var closers []io.Closer
		for i := 0; i < n && ok; i++ {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				ok = false
				break
			}
			closers = append(closers, ln)
			pc, err := net.ListenPacket("udp", ":"+strconv.Itoa(base+i))
			if err != nil {
				ok = false
				break
			}
			closers = append(closers, pc)
		}
		for _, c := range closers {
			c.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no free ports")
}

// waitTCP waits until addr accepts connections.
func waitTCP(ctx context.Context, addr string, limit time.Duration) error {
	return waitUntil(ctx, limit, 50*time.Millisecond, func() (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
}

// waitUntil calls cond every period until it reports true or an error,
// for at most limit.
func waitUntil(ctx context.Context, limit, period time.Duration, cond func() (bool, error)) error {
	end := time.Now().Add(limit)
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		if time.Now().After(end) {
			return fmt.Errorf("not done after %v", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(period):
		}
	}
}

// waitIdle waits until no scheduling cycle is in progress.
func waitIdle(ctx context.Context, cfg *config, d *load.Dialer) error {
	return waitUntil(ctx, cfg.wait, 100*time.Millisecond, func() (bool, error) {
		st, err := serverAttr(d, "server_state")
		return st != "Scheduling", err
	})
}

// benchJob is the job submitted as the running or the queued ones: with
// -max-reservation, walltimes and (queued) reserve=y.
func benchJob(cfg *config, what string) load.Job {
	if cfg.maxReservation == 0 {
		return load.Job{}
	}
	if what == "running" {
		return load.Job{Extra: load.ResourceList("walltime=12:00:00")}
	}
	return load.Job{Extra: append(load.ResourceList("walltime=04:00:00"), batchreq.NewAttr("reserve", "y"))}
}

// submit queues n jobs (no hold) with cfg.clients clients.
func submit(ctx context.Context, cfg *config, addr string, n int, out io.Writer, what string) error {
	stop, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			close(stop)
		case <-done:
		}
	}()
	job := benchJob(cfg, what)
	job.Queue = cfg.queue
	res, err := load.Run(load.Config{Mode: load.ModeSubmit, Dialer: &load.Dialer{Addr: addr, User: "root", Auth: true},
		Ops: n, Clients: cfg.clients, Job: job, Raw: true, Stop: stop})
	if err != nil {
		return fmt.Errorf("submitting: %w", err)
	}
	if res.Failed > 0 {
		return fmt.Errorf("submitting: %d failed: %v", res.Failed, res.Errors)
	}
	fmt.Fprintf(out, "%s: %s\n", what, res)
	return nil
}

// manage sets server attributes.
func manage(d *load.Dialer, attrs ...batchreq.Attr) error {
	c, err := d.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_Manager, d.User,
		&batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SERVER, Attrs: attrs}))
	if err == nil && p.Code != 0 {
		err = fmt.Errorf("error %d %s", p.Code, p.Text)
	}
	if err != nil {
		return fmt.Errorf("set server %v: %w", attrs, err)
	}
	return nil
}

// status sends a status request of type typ for all objects.
func status(d *load.Dialer, typ int) ([]batchreq.StatusObject, error) {
	c, err := d.Dial()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p, err := c.Do(batchreq.NewRequest(typ, d.User, &batchreq.StatusReq{}))
	if err == nil && typ == batchreq.PBS_BATCH_StatusNode && p.Code == batchreq.PBSE_NONODES {
		return nil, nil // not created yet
	}
	if err == nil && p.Code != 0 {
		err = fmt.Errorf("error %d %s", p.Code, p.Text)
	}
	if err != nil {
		return nil, fmt.Errorf("status request %d: %w", typ, err)
	}
	return p.Status, nil
}

// freeNodes counts the nodes whose state is free.
func freeNodes(d *load.Dialer) (int, error) {
	objs, err := status(d, batchreq.PBS_BATCH_StatusNode)
	n := 0
	for _, o := range objs {
		for _, a := range o.Attrs {
			if a.Name == "state" && a.Value == "free" {
				n++
			}
		}
	}
	return n, err
}

// serverAttr returns one attribute of the server's status.
func serverAttr(d *load.Dialer, name string) (string, error) {
	objs, err := status(d, batchreq.PBS_BATCH_StatusSvr)
	for _, o := range objs {
		for _, a := range o.Attrs {
			if a.Name == name {
				return a.Value, nil
			}
		}
	}
	return "", err
}

// stateCount returns the server's count of jobs in state (state_count).
func stateCount(d *load.Dialer, state string) (int, error) {
	v, err := serverAttr(d, "state_count")
	if err != nil {
		return 0, err
	}
	return parseStateCount(v, state)
}

// parseStateCount returns the count of state in a state_count value
// ("Transit:0 Queued:3 Held:0 Waiting:0 Running:8 Exiting:0 ").
func parseStateCount(v, state string) (int, error) {
	for _, f := range strings.Fields(v) {
		name, num, ok := strings.Cut(f, ":")
		if ok && name == state {
			n, err := strconv.Atoi(num)
			if err != nil {
				return 0, fmt.Errorf("state_count %q: %w", v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("state_count %q has no %s", v, state)
}

// loadAverage returns the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
