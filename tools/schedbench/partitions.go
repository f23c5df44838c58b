package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/tools/pbsbench/load"
)

// benchPartitions is the scenario with -partitions N (issue 18): N
// queues and N sched objects, each scheduler (a pbs_sched that pbs_server
// starts) serving one partition of nodes/N nodes and the jobs of its
// queue; the running and queued jobs are spread evenly over the queues.
// The cycle durations come from pbs_server's log ("Scheduler sK cycle
// ... ended after D s"). It prints every cycle and a summary per
// scheduler and for the cluster: the slowest first cycle (all the
// schedulers start theirs together) and the mean of the later ones.
func benchPartitions(ctx context.Context, cfg *config, out io.Writer, procs *daemons, srvAddr string) error {
	n := cfg.partitions
	d := &load.Dialer{Addr: srvAddr, User: "root", Timeout: time.Minute}
	c, err := d.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	mgr := func(cmd, obj int, name string, attrs ...batchreq.Attr) error {
		p, err := c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root",
			&batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs}))
		if err == nil && p.Code != 0 {
			err = fmt.Errorf("error %d %s", p.Code, p.Text)
		}
		if err != nil {
			return fmt.Errorf("manager %s %s: %w", batchreq.ObjTypeName(obj), name, err)
		}
		return nil
	}
	// the jobs are root's, which the server takes only with acl_roots
	if err := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root")); err != nil {
		return err
	}
	ports, err := freePorts(n)
	if err != nil {
		return err
	}
	config, _ := os.ReadFile(filepath.Join(cfg.home, "sched_priv", "sched_config"))
	for k := 1; k <= n; k++ {
		q, part, s := "q"+strconv.Itoa(k), "p"+strconv.Itoa(k), "s"+strconv.Itoa(k)
		if err := mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, q, batchreq.NewAttr("queue_type", "execution")); err != nil {
			return err
		}
		if err := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, q, batchreq.NewAttr("partition", part),
			batchreq.NewAttr("enabled", "True"), batchreq.NewAttr("started", "True")); err != nil {
			return err
		}
		priv := filepath.Join(cfg.home, "sched_priv_"+s)
		if err := os.MkdirAll(priv, 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(priv, "sched_config"), config, 0o644); err != nil {
			return err
		}
		if err := mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_SCHED, s, batchreq.NewAttr("port", strconv.Itoa(ports+k-1)),
			batchreq.NewAttr("partitions", part), batchreq.NewAttr("scheduler_iteration", strconv.Itoa(cfg.iteration))); err != nil {
			return err
		}
	}
	t0 := time.Now()
	p := func(off int) string { return strconv.Itoa(cfg.port + off) }
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
	for i := 0; i < cfg.nodes; i++ {
		part := "p" + strconv.Itoa(i*n/cfg.nodes+1)
		if err := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, fmt.Sprintf("simnode%05d", i+1), batchreq.NewAttr("partition", part)); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "nodes: %d free after %.1fs, %d partitions of %d\n", cfg.nodes, time.Since(t0).Seconds(), n, cfg.nodes/n)
	setScheduling := func(on string) error {
		for k := 1; k <= n; k++ {
			if err := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SCHED, "s"+strconv.Itoa(k), batchreq.NewAttr("scheduling", on)); err != nil {
				return err
			}
		}
		return nil
	}
	spread := func(total int, what string) error {
		for k := 1; k <= n; k++ {
			cfgK := *cfg
			cfgK.queue = "q" + strconv.Itoa(k)
			if err := submit(ctx, &cfgK, srvAddr, total/n, out, what+" "+cfgK.queue); err != nil {
				return err
			}
		}
		return nil
	}
	if cfg.running > 0 {
		if err := setScheduling("True"); err != nil {
			return err
		}
		t0 = time.Now()
		if err := spread(cfg.running, "running"); err != nil {
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
	if err := setScheduling("False"); err != nil { // stops the schedulers
		return err
	}
	if err := spread(cfg.queued, "queued"); err != nil {
		return err
	}
	logFile := serverLog(cfg.home)
	from := fileSize(logFile)
	fmt.Fprintf(out, "load average: %s\n", loadAverage())
	if err := setScheduling("True"); err != nil { // starts them: a first cycle each
		return err
	}
	var cycles []partCycle
	err = waitUntil(ctx, cfg.wait+time.Duration((1+cfg.cycles)*cfg.iteration)*time.Second, 500*time.Millisecond, func() (bool, error) {
		var err error
		cycles, err = readPartCycles(logFile, from)
		if err != nil {
			return false, err
		}
		for k := 1; k <= n; k++ {
			if countCycles(cycles, "s"+strconv.Itoa(k)) < 1+cfg.cycles {
				return false, nil
			}
		}
		return true, nil
	})
	for _, cy := range cycles {
		fmt.Fprintf(out, "cycle %s %s %.3fs started=%d\n", cy.sched, cy.command, cy.seconds, cy.started)
	}
	if err != nil {
		return fmt.Errorf("waiting for %d cycles of each scheduler: %w", 1+cfg.cycles, err)
	}
	fmt.Fprintln(out, summarizePartitions(cycles, n, 1+cfg.cycles))
	fmt.Fprintf(out, "load average: %s\n", loadAverage())
	return nil
}

// partCycle is one cycle of a partition's scheduler.
type partCycle struct {
	sched, command string
	seconds        float64
	started        int
}

var cycleLine = regexp.MustCompile(`;Scheduler (\S+) cycle (\S+) ended after ([0-9.]+) s, (\d+) jobs run`)

// readPartCycles reads the cycle lines of the server log from offset
// from.
func readPartCycles(path string, from int64) ([]partCycle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	var out []partCycle
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := cycleLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		sec, _ := strconv.ParseFloat(m[3], 64)
		started, _ := strconv.Atoi(m[4])
		out = append(out, partCycle{sched: m[1], command: m[2], seconds: sec, started: started})
	}
	return out, sc.Err()
}

func countCycles(cs []partCycle, sched string) int {
	n := 0
	for _, c := range cs {
		if c.sched == sched {
			n++
		}
	}
	return n
}

// summarizePartitions reports, per scheduler, its first cycle and the
// mean of its later ones (up to want cycles), and for the cluster the
// slowest first cycle and the mean of all later cycles.
func summarizePartitions(cs []partCycle, n, want int) string {
	var b strings.Builder
	var firsts, laters []float64
	for k := 1; k <= n; k++ {
		name := "s" + strconv.Itoa(k)
		var mine []float64
		for _, c := range cs {
			if c.sched == name && len(mine) < want {
				mine = append(mine, c.seconds)
			}
		}
		if len(mine) == 0 {
			continue
		}
		firsts = append(firsts, mine[0])
		laters = append(laters, mine[1:]...)
		fmt.Fprintf(&b, "%s: first=%.3fs later mean=%.3fs\n", name, mine[0], mean(mine[1:]))
	}
	fmt.Fprintf(&b, "summary: %d schedulers, slowest first=%.3fs, later mean=%.3fs", n, slices.Max(append(firsts, 0)), mean(laters))
	return b.String()
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// serverLog returns the path of today's server log.
func serverLog(home string) string {
	return filepath.Join(home, "server_logs", time.Now().Format("20060102"))
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
