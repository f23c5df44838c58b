package main

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

// stateCounts parses a state_count value "Transit:0 Queued:0 ...".
func stateCounts(v string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(v) {
		if k, n, ok := strings.Cut(f, ":"); ok {
			m[k] = n
		}
	}
	return m
}

func count(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return cut(v, 5)
	}
	return "0"
}

func yesNo(v string) string {
	switch strings.ToLower(v) {
	case "true", "1":
		return "yes"
	}
	return "no"
}

// statQueues asks for the status of the queues of destination operand op
// ("queue[@server]", "@server" or "") and returns them with the server
// part; after a failure, which it reports, ok is false.
func (q *qstat) statQueues(op string) (list []pbs.Status, server string, ok bool) {
	queue, server := cli.SplitDest(op)
	c, err := cli.Connect(server)
	if err != nil {
		q.status = cli.ConnectFailed(q.stderr, q.prog, cli.ServerName(server), err)
		return nil, server, false
	}
	list, err = c.StatusQueue(queue, nil, "")
	c.Close()
	if err != nil {
		q.status = cli.RequestFailed(q.stderr, "qstat", err, " "+op, "getting status of queue "+op)
		return nil, server, false
	}
	return list, server, true
}

// printFull prints the -f display of objects: "<title>: <name>", the
// attributes, then an empty line; convertTimes shows time attributes as
// dates (jobs).
func (q *qstat) printFull(title string, list []pbs.Status, convertTimes bool) {
	for _, st := range list {
		fmt.Fprintf(q.stdout, "%s: %s\n", title, st.Name)
		for _, a := range st.Attrs {
			printAttr(q.stdout, a, q.width(), convertTimes)
		}
		fmt.Fprintln(q.stdout)
	}
}

// printLong prints the objects of kind ("Queue", "Server") in the -x or
// -f display and reports whether one of them was asked for.
func (q *qstat) printLong(kind string, list []pbs.Status) bool {
	switch {
	case q.o.xml:
		printXML(q.stdout, kind, "name", list)
	case q.o.full:
		q.printFull(kind, list, false)
	default:
		return false
	}
	return true
}

// getOr returns the value of attribute name of st, or dflt when it is
// absent or empty.
func getOr(st *pbs.Status, name, dflt string) string {
	if v := get(st, name, ""); v != "" {
		return v
	}
	return dflt
}

// queues is "qstat -Q [-f] [destination...]".
func (q *qstat) queues(operands []string) int {
	if len(operands) == 0 {
		operands = []string{""}
	}
	header := false
	for _, op := range operands {
		if queue, _ := cli.SplitDest(op); queue != "" && !validQueue(queue) {
			fmt.Fprintln(q.stderr, "qstat: illegal 'destination' value")
			q.status = 1
			continue
		}
		list, _, ok := q.statQueues(op)
		if !ok {
			continue
		}
		if q.printLong("Queue", list) {
			continue
		}
		const f = "%-16s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %-10s\n"
		for i := range list {
			if !header {
				fmt.Fprintf(q.stdout, f, "Queue", "Max", "Tot", "Ena", "Str", "Que", "Run", "Hld", "Wat", "Trn", "Ext", "T")
				fmt.Fprintf(q.stdout, f, "----------------", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "-")
				header = true
			}
			st := &list[i]
			sc := stateCounts(get(st, "state_count", ""))
			max := getOr(st, "max_running", "0")
			tot := getOr(st, "total_jobs", "0")
			typ := "not defined"
			if t := get(st, "queue_type", ""); t != "" {
				typ = t[:1]
			}
			fmt.Fprintf(q.stdout, f, st.Name, cut(max, 5), cut(tot, 5),
				yesNo(get(st, "enabled", "")), yesNo(get(st, "started", "")),
				count(sc, "Queued"), count(sc, "Running"), count(sc, "Held"),
				count(sc, "Waiting"), count(sc, "Transit"), count(sc, "Exiting"), typ)
		}
	}
	return q.status
}

// servers is "qstat -B [-f] [server...]".
func (q *qstat) servers(operands []string) int {
	if len(operands) == 0 {
		operands = []string{""}
	}
	header := false
	for _, server := range operands {
		c, err := cli.Connect(server)
		if err != nil {
			q.status = cli.ConnectFailed(q.stderr, q.prog, cli.ServerName(server), err)
			continue
		}
		list, err := c.StatusServer(nil, "")
		c.Close()
		if err != nil {
			q.status = q.serverErr(err, cli.ServerName(server))
			continue
		}
		if q.printLong("Server", list) {
			continue
		}
		const f = "%-16s %5s %5s %5s %5s %5s %5s %5s %5s %-10s\n"
		for i := range list {
			if !header {
				fmt.Fprintf(q.stdout, f, "Server", "Max", "Tot", "Que", "Run", "Hld", "Wat", "Trn", "Ext", "Status")
				fmt.Fprintf(q.stdout, f, "----------------", "---", "---", "---", "---", "---", "---", "---", "---", "----------")
				header = true
			}
			st := &list[i]
			sc := stateCounts(get(st, "state_count", ""))
			max := getOr(st, "max_running", "0")
			tot := getOr(st, "total_jobs", "0")
			fmt.Fprintf(q.stdout, f, cut(st.Name, 16), cut(max, 5), cut(tot, 5),
				count(sc, "Queued"), count(sc, "Running"), count(sc, "Held"),
				count(sc, "Waiting"), count(sc, "Transit"), count(sc, "Exiting"),
				cut(get(st, "server_state", ""), 10))
		}
	}
	return q.status
}

// queueSummary is "qstat -q [destination...]".
func (q *qstat) queueSummary(operands []string) int {
	if len(operands) == 0 {
		operands = []string{""}
	}
	for _, op := range operands {
		list, server, ok := q.statQueues(op)
		if !ok {
			continue
		}
		fmt.Fprintf(q.stdout, "\nserver: %s\n\n", cli.ServerName(server))
		fmt.Fprintln(q.stdout, "Queue            Memory CPU Time Walltime Node  Run Que Lm  State")
		fmt.Fprintln(q.stdout, "---------------- ------ -------- -------- ----  --- --- --  -----")
		totRun, totQue := 0, 0
		en, st := byte('D'), byte('S')
		for i := range list {
			s := &list[i]
			sc := stateCounts(get(s, "state_count", ""))
			atoi := func(k string) int { v, _ := strconv.Atoi(sc[k]); return v }
			run := atoi("Running")
			que := atoi("Queued") + atoi("Held") + atoi("Waiting")
			totRun += run
			totQue += que
			or := func(v string, ok bool, d string) string {
				if !ok {
					return d
				}
				return v
			}
			mem, ok := s.Get("resources_max", "mem")
			memS := or(mem, ok, "--  ")
			cpu, ok := s.Get("resources_max", "cput")
			cpuS := or(cpu, ok, "--   ")
			wall, ok := s.Get("resources_max", "walltime")
			wallS := or(wall, ok, "--   ")
			node, ok := s.Get("resources_max", "nodect")
			nodeS := or(node, ok, "-- ")
			lm, ok := s.Get("max_running", "")
			lmS := or(lm, ok, "--")
			if v, ok := s.Get("enabled", ""); ok {
				if yesNo(v) == "yes" {
					en = 'E'
				} else {
					en = 'D'
				}
			}
			if v, ok := s.Get("started", ""); ok {
				if yesNo(v) == "yes" {
					st = 'R'
				} else {
					st = 'S'
				}
			}
			fmt.Fprintf(q.stdout, "%-16.16s %6.6s %8.8s %8.8s %5.5s %3d %3d %2.2s   %c %c\n",
				s.Name, memS, cpuS, wallS, nodeS, run, que, lmS, en, st)
		}
		fmt.Fprintln(q.stdout, "                                               ----- -----")
		fmt.Fprintf(q.stdout, "                                               %5d %5d\n", totRun, totQue)
	}
	return q.status
}
