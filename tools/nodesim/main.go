// Command nodesim simulates many pbs_mom nodes on one machine, so that
// pbs_server and pbs_sched can be measured with 1,000 or 10,000 nodes.
// Each simulated node has its own loopback address (127.X.Y.Z, counting
// up from -base) and, like a MOM, an RPP socket on the resource-monitor
// port over which it says IS_HELLO to the server, sends an IS_STATUS
// report every -interval and answers RM queries (ncpus, arch, physmem,
// loadave, max_load, ideal_load — what pbs_sched asks). As pbs_mom, it
// answers a restarted server's ping (IS_HELLO on a stream the server
// opened) and carries on over that stream, and says hello again at once
// when the server closes its stream; and, unless
// -momport is 0, a TCP listener on the MOM port that accepts job
// launches (the jobs then run forever).
//
// Usage:
//
//	nodesim [-server 127.0.0.1:15001] [-n 1000] [-base 127.1.0.1] [-np 8]
//	        [-rmport 15003] [-momport 15002] [-interval 45s] [-create] [-t duration]
//	        [-prefix simnode] [-hosts file]
//
// Node names are -prefix and a number (simnode00001, ...); -hosts writes
// the hosts(5) lines that resolve them and exits. With -create, nodesim
// first creates the nodes on the server (qmgr
// "create node <address> np=<np>") over a privileged connection, so it
// must run as root. It prints a statistics line every 10 s and at the
// end.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/tools/pbsbench/load"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("nodesim", flag.ContinueOnError)
	server := fs.String("server", "127.0.0.1:15001", "pbs_server address (its TCP and IS/UDP port)")
	count := fs.Int("n", 1000, "number of simulated nodes")
	base := fs.String("base", "127.1.0.1", "loopback address of the first node")
	np := fs.Int("np", 8, "processors per node")
	rmPort := fs.Int("rmport", 15003, "resource monitor (RPP) port of every node")
	momPort := fs.Int("momport", 15002, "MOM batch port of every node (0: no job launches)")
	interval := fs.Duration("interval", 45*time.Second, "status report interval")
	create := fs.Bool("create", false, "create the nodes on the server first")
	limit := fs.Duration("t", 0, "stop after this long (0: until SIGINT/SIGTERM)")
	prefix := fs.String("prefix", "simnode", "node names are this prefix and a 5-digit number")
	hostsFile := fs.String("hosts", "", "write a hosts(5) file naming every node's address to this path and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	srv, err := netip.ParseAddrPort(*server)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nodesim: -server must be address:port: %v\n", err)
		return 2
	}
	first, err := netip.ParseAddr(*base)
	if err != nil || !first.Is4() || !first.IsLoopback() {
		fmt.Fprintf(os.Stderr, "nodesim: -base must be an IPv4 loopback address\n")
		return 2
	}
	addrs, err := nodeAddrs(first, *count)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodesim:", err)
		return 2
	}
	names := make([]string, len(addrs))
	for i := range addrs {
		names[i] = fmt.Sprintf("%s%05d", *prefix, i+1)
	}
	if *hostsFile != "" {
		if err := writeHosts(*hostsFile, addrs, names); err != nil {
			fmt.Fprintln(os.Stderr, "nodesim:", err)
			return 1
		}
		return 0
	}
	if *create {
		if err := createNodes(*server, names, *np); err != nil {
			fmt.Fprintln(os.Stderr, "nodesim:", err)
			return 1
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if *limit > 0 {
		ctx, cancel = context.WithTimeout(ctx, *limit)
		defer cancel()
	}
	stats := &counters{}
	var wg sync.WaitGroup
	for i, a := range addrs {
		n := &node{addr: a, name: names[i], np: *np, physKB: 64 << 20, server: srv, interval: *interval, stats: stats}
		if err := n.listen(*rmPort, *momPort); err != nil {
			fmt.Fprintln(os.Stderr, "nodesim:", err)
			cancel()
			break
		}
		// spread the first reports over at most 5 s
		stagger := time.Duration(int64(min(*interval, 5*time.Second)) * int64(i) / int64(len(addrs)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.run(ctx, stagger)
		}()
	}
	start := time.Now()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			report(stats, time.Since(start))
		}
	}
	wg.Wait()
	report(stats, time.Since(start))
	return 0
}

func report(s *counters, el time.Duration) {
	fmt.Printf("elapsed=%.0fs hellos=%d cluster_addrs=%d statuses=%d rm_queries=%d batch_requests=%d errors=%d\n",
		el.Seconds(), s.hellos.Load(), s.clusterAddrs.Load(), s.statuses.Load(), s.rmQueries.Load(), s.batchReqs.Load(), s.errors.Load())
}

// nodeAddrs returns n consecutive loopback addresses from first, skipping
// those ending in .0 and .255.
func nodeAddrs(first netip.Addr, n int) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, n)
	for a := first; len(out) < n; a = a.Next() {
		if !a.IsValid() || !a.IsLoopback() {
			return nil, fmt.Errorf("only %d loopback addresses after %s", len(out), first)
		}
		if b := a.As4(); b[3] == 0 || b[3] == 255 {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// writeHosts writes a hosts file with the usual localhost lines and one
// line per node. Node names must start with a letter, so the server and
// the scheduler resolve them through this file: run them in a private
// mount namespace where it is bind-mounted on /etc/hosts (see
// docs/performance.md).
func writeHosts(path string, addrs []netip.Addr, names []string) error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for i, a := range addrs {
		fmt.Fprintf(&b, "%s\t%s\n", a, names[i])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// createNodes creates the nodes on the server (as root, from a reserved
// port); nodes that already exist are left alone.
func createNodes(server string, addrs []string, np int) error {
	d := &load.Dialer{Addr: server, User: "root", Timeout: time.Minute}
	c, err := d.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	created := 0
	start := time.Now()
	for _, a := range addrs {
		p, err := c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{
			Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_NODE, ObjName: a,
			Attrs: batchreq.AttrList{batchreq.NewAttr("np", fmt.Sprint(np))}}))
		if err != nil {
			return fmt.Errorf("create node %s: %w", a, err)
		}
		switch {
		case p.Code == 0:
			created++
		case p.Code != batchreq.PBSE_NODEEXIST:
			return fmt.Errorf("create node %s: %w", a, &load.ReplyError{Type: batchreq.PBS_BATCH_Manager, Code: p.Code, Text: p.Text})
		}
	}
	fmt.Printf("created %d of %d nodes in %.1fs\n", created, len(addrs), time.Since(start).Seconds())
	return nil
}
