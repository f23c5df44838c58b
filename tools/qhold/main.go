// Command qhold places holds on batch jobs (HoldJob; spec 05 §4).
package main

import (
	"fmt"
	"os"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	opts, ids, bad := cli.Getopt(os.Args[1:], "h:t:", os.Args[0], os.Stderr)
	holds, ext := "u", ""
	for _, o := range opts {
		switch o.C {
		case 'h':
			holds = o.Arg
		case 't':
			ext = "array_range=" + o.Arg
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprintln(os.Stderr, "usage: qhold [-h {u|o|s}] [-t array_range] job_identifier...")
		cli.Exit(2)
	}
	cli.Exit(cli.RunJobOps("qhold", ids, func(c *pbs.Conn, id string) error {
		return c.HoldJob(id, holds, ext)
	}))
}
