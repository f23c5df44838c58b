// Command qterm shuts pbs_server down (Shutdown; spec 05 §4). With -s
// (GoPBS, seed 003) the server stops the schedulers it runs too.
package main

import (
	"fmt"
	"os"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	opts, servers, bad := cli.Getopt(os.Args[1:], "st:", os.Args[0], os.Stderr)
	manner := batchreq.SHUT_QUICK
	scheds := false
	for _, o := range opts {
		if o.C == 's' {
			scheds = true
			continue
		}
		switch o.Arg {
		case "immediate":
			manner = batchreq.SHUT_IMMEDIATE
		case "delay":
			manner = batchreq.SHUT_DELAY
		case "quick":
			manner = batchreq.SHUT_QUICK
		default:
			bad = true
		}
	}
	if bad {
		fmt.Fprintln(os.Stderr, "usage: qterm [-t immediate|delay|quick] [server ...]")
		cli.Exit(1)
	}
	if scheds {
		manner |= batchreq.SHUT_WHO_SCHED
	}
	if len(servers) == 0 {
		servers = []string{""}
	}
	status := 0
	for _, s := range servers {
		c, err := cli.Connect(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "qterm: could not connect to server '%s' (%d) %s\n",
				cli.ServerName(s), pbs.Errno(err), cli.ErrText(err))
			status = 2
			continue
		}
		err = c.Shutdown(manner, "")
		c.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "qterm: %s%s\n", cli.ErrText(err), cli.ServerName(s))
			status = 2
		}
	}
	cli.Exit(status)
}
