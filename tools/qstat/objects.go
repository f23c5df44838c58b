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

// queues is "qstat -Q [-f] [destination...]".
func (q *qstat) queues(operands []string) int {
	if len(operands) == 0 {
		operands = []string{""}
	}
	header := false
	for _, op := range operands {
		queue, server := cli.SplitDest(op)
		c, err := cli.Connect(server)
		if err != nil {
			q.status = cli.ConnectFailed(q.stderr, q.prog, cli.ServerName(server), err)
			continue
		}
		list, err := c.StatusQueue(queue, nil, "")
		c.Close()
		if err != nil {
			if t := pbs.ServerText(err); t != "" {
				fmt.Fprintf(q.stderr, "qstat: %s %s\n", t, op)
			} else {
				n := pbs.Errno(err)
				fmt.Fprintf(q.stderr, "qstat: Error (%d - %s) getting status of queue %s\n", n, pbs.ErrorText(n), op)
			}
			q.status = pbs.Errno(err)
			continue
		}
		if q.o.xml {
			printXML(q.stdout, "Queue", "name", list)
			continue
		}
		if q.o.full {
			for _, st := range list {
				fmt.Fprintf(q.stdout, "Queue: %s\n", st.Name)
				for _, a := range st.Attrs {
					printAttr(q.stdout, a, q.width(), false)
				}
				fmt.Fprintln(q.stdout)
			}
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
			max := get(st, "max_running", "")
			if max == "" {
				max = "0"
			}
			tot := get(st, "total_jobs", "")
			if tot == "" {
				tot = "0"
			}
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
		if q.o.xml {
			printXML(q.stdout, "Server", "name", list)
			continue
		}
		if q.o.full {
			for _, st := range list {
				fmt.Fprintf(q.stdout, "Server: %s\n", st.Name)
				for _, a := range st.Attrs {
					printAttr(q.stdout, a, q.width(), false)
				}
				fmt.Fprintln(q.stdout)
			}
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
			max := get(st, "max_running", "")
			if max == "" {
				max = "0"
			}
			tot := get(st, "total_jobs", "")
			if tot == "" {
				tot = "0"
			}
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
		queue, server := cli.SplitDest(op)
		c, err := cli.Connect(server)
		if err != nil {
			q.status = cli.ConnectFailed(q.stderr, q.prog, cli.ServerName(server), err)
			continue
		}
		list, err := c.StatusQueue(queue, nil, "")
		c.Close()
		if err != nil {
			if t := pbs.ServerText(err); t != "" {
				fmt.Fprintf(q.stderr, "qstat: %s %s\n", t, op)
			} else {
				n := pbs.Errno(err)
				fmt.Fprintf(q.stderr, "qstat: Error (%d - %s) getting status of queue %s\n", n, pbs.ErrorText(n), op)
			}
			q.status = pbs.Errno(err)
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
