// Command pbsdsh runs a program on the nodes of the batch job it is called
// from, through the TM interface of the job's MOM (spec 10 §11.2):
//
//	pbsdsh [-c copies] [-n node] [-o] [-s] [-u] [-v] program [args...]
//
// By default one copy runs on every virtual node of the job (the lines of
// $PBS_NODEFILE), all at once; pbsdsh waits until every copy has ended.
// -c runs that many copies on the virtual nodes in turn, -n on one
// virtual node only, -u once on each host; -s starts the copies one after
// another, each after the previous ended; -v reports on stderr what is
// done; -o is accepted for compatibility (the copies' output always goes to
// the job's output). The program's output arrives in the job's output
// file, also from other hosts.
//
// The job is found through the environment MOM gives every task:
// PBS_JOBID, PBS_JOBCOOKIE, PBS_TASKNUM and PBS_MOMPORT (the MOM's TM
// port; the MOM host is PBS_MOMHOST if set, else localhost).
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"gopbs/momproto"
	"gopbs/pbs/cli"
)

const usage = "Usage: pbsdsh [-c copies][-o][-s][-u][-v] program [args]...\n       pbsdsh [-n nodenumber][-o][-s][-u][-v] program [args]...\n"

// options are the command-line settings.
type options struct {
	copies  int // -c, 0 = every node
	node    int // -n, -1 = none
	serial  bool
	unique  bool
	verbose bool
	argv    []string
}

func parseArgs(args []string, stderr io.Writer) (*options, bool) {
	opts, operands, bad := cli.Getopt(args, "+c:n:osuv", "pbsdsh", stderr)
	o := &options{node: -1}
	for _, op := range opts {
		switch op.C {
		case 'c':
			n, err := strconv.Atoi(op.Arg)
			if err != nil || n <= 0 {
				bad = true
			}
			o.copies = n
		case 'n':
			n, err := strconv.Atoi(op.Arg)
			if err != nil || n < 0 {
				bad = true
			}
			o.node = n
		case 's':
			o.serial = true
		case 'u':
			o.unique = true
		case 'v':
			o.verbose = true
		}
	}
	if o.copies > 0 && o.node >= 0 {
		bad = true
	}
	o.argv = operands
	return o, !bad && len(operands) > 0
}

func main() {
	cli.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

// targets returns the virtual nodes to run a copy on.
func (o *options) targets(nodes []int, hosts []string) []int {
	switch {
	case o.node >= 0:
		return []int{o.node}
	case o.copies > 0:
		out := make([]int, o.copies)
		for i := range out {
			out[i] = nodes[i%len(nodes)]
		}
		return out
	case o.unique:
		var out []int
		seen := map[string]bool{}
		for i, n := range nodes {
			h := strconv.Itoa(n)
			if i < len(hosts) {
				h = hosts[i]
			}
			if !seen[h] {
				seen[h] = true
				out = append(out, n)
			}
		}
		return out
	}
	return nodes
}

// nodefileHosts reads the host of each virtual node from $PBS_NODEFILE
// (used by -u); nil if there is none.
func nodefileHosts(getenv func(string) string) []string {
	name := getenv("PBS_NODEFILE")
	if name == "" {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	var hosts []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			hosts = append(hosts, string(b[start:i]))
			start = i + 1
		}
	}
	return hosts
}

func run(args []string, getenv func(string) string, stderr io.Writer) int {
	o, ok := parseArgs(args, stderr)
	if !ok {
		fmt.Fprint(stderr, usage)
		return 1
	}
	jobID, cookie := getenv("PBS_JOBID"), getenv("PBS_JOBCOOKIE")
	task, _ := strconv.ParseUint(getenv("PBS_TASKNUM"), 10, 32)
	port := getenv("PBS_MOMPORT")
	if jobID == "" || cookie == "" || port == "" {
		fmt.Fprintln(stderr, "pbsdsh: tm_init failed, rc = TM_BADINIT (17007)")
		return 1
	}
	host := getenv("PBS_MOMHOST")
	if host == "" {
		host = "localhost"
	}
	tc, err := dialTM(net.JoinHostPort(host, port), jobID, cookie, uint32(task))
	if err != nil {
		fmt.Fprintf(stderr, "pbsdsh: tm_init failed, rc = TM_ESYSTEM (17000): %v\n", err)
		return 1
	}
	defer tc.close()
	body, err := tc.call(momproto.TM_INIT, momproto.Empty{})
	if err != nil {
		fmt.Fprintf(stderr, "pbsdsh: tm_init failed: %v\n", err)
		return 1
	}
	init, _ := body.(*momproto.TMInitReply)
	if init == nil || len(init.Nodes) == 0 {
		fmt.Fprintln(stderr, "pbsdsh: tm_init returned no nodes")
		return 1
	}
	if o.node >= len(init.Nodes) {
		fmt.Fprintf(stderr, "pbsdsh: node number %d not in the job's %d nodes\n", o.node, len(init.Nodes))
		return 1
	}
	if o.verbose {
		fmt.Fprintf(stderr, "pbsdsh: spanning tree of %d nodes\n", len(init.Nodes))
	}
	targets := o.targets(init.Nodes, nodefileHosts(getenv))
	failed := false
	type running struct{ node, task int }
	var tasks []running
	spawn := func(node int) (int, bool) {
		b, err := tc.call(momproto.TM_SPAWN, &momproto.TMSpawn{Node: node, Argv: o.argv})
		if err != nil {
			fmt.Fprintf(stderr, "pbsdsh: error spawning %s on node %d: %v\n", o.argv[0], node, err)
			return 0, false
		}
		id := 0
		if v, ok := b.(*momproto.Ints); ok && len(v.Values) == 1 {
			id = v.Values[0]
		}
		if o.verbose {
			fmt.Fprintf(stderr, "pbsdsh: spawned task %d on node %d\n", id, node)
		}
		return id, true
	}
	obit := func(r running) {
		b, err := tc.call(momproto.TM_OBIT, &momproto.Ints{Values: []int{r.node, r.task}})
		if err != nil {
			var te *errTM
			if !errors.As(err, &te) || te.code != momproto.TM_ENOTFOUND {
				fmt.Fprintf(stderr, "pbsdsh: error waiting for task %d on node %d: %v\n", r.task, r.node, err)
				failed = true
			}
			return
		}
		if o.verbose {
			status := 0
			if v, ok := b.(*momproto.Ints); ok && len(v.Values) == 1 {
				status = v.Values[0]
			}
			fmt.Fprintf(stderr, "pbsdsh: task %d on node %d exit status %d\n", r.task, r.node, status)
		}
	}
	for _, node := range targets {
		id, ok := spawn(node)
		if !ok {
			failed = true
			continue
		}
		if o.serial {
			obit(running{node, id})
			continue
		}
		tasks = append(tasks, running{node, id})
	}
	// Obits are asked for all at once and answered as the tasks end.
	type result struct {
		r   running
		b   momproto.Body
		err error
	}
	results := make(chan result, len(tasks))
	for _, r := range tasks {
		_, ch, err := tc.send(momproto.TM_OBIT, &momproto.Ints{Values: []int{r.node, r.task}})
		if err != nil {
			results <- result{r, nil, err}
			continue
		}
		go func() {
			b, err := tc.wait(ch)
			results <- result{r, b, err}
		}()
	}
	for range tasks {
		res := <-results
		if res.err != nil {
			fmt.Fprintf(stderr, "pbsdsh: error waiting for task %d on node %d: %v\n", res.r.task, res.r.node, res.err)
			failed = true
			continue
		}
		if o.verbose {
			status := 0
			if v, ok := res.b.(*momproto.Ints); ok && len(v.Values) == 1 {
				status = v.Values[0]
			}
			fmt.Fprintf(stderr, "pbsdsh: task %d on node %d exit status %d\n", res.r.task, res.r.node, status)
		}
	}
	if failed {
		return 1
	}
	return 0
}
