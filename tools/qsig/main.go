// Command qsig sends a signal to running batch jobs (SignalJob; spec 05 §4).
package main

import (
	"fmt"
	"os"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	opts, ids, bad := cli.Getopt(os.Args[1:], "as:", os.Args[0], os.Stderr)
	sig := "SIGTERM"
	for _, o := range opts {
		if o.C == 's' {
			sig = o.Arg
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprintln(os.Stderr, "usage: qsig [-s signal] job_identifier...")
		cli.Exit(2)
	}
	cli.Exit(cli.RunJobOps("qsig", ids, func(c *pbs.Conn, id string) error {
		return c.SignalJob(id, sig, "")
	}))
}
