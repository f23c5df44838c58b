// Command qrerun requeues running batch jobs (Rerun; spec 05 §4).
package main

import (
	"fmt"
	"os"
	"strings"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	opts, ids, bad := cli.Getopt(os.Args[1:], "fm:", os.Args[0], os.Stderr)
	ext := ""
	for _, o := range opts {
		switch o.C {
		case 'f':
			ext = "force"
		case 'm':
			if strings.Contains(o.Arg, "=") {
				bad = true
			}
			ext = o.Arg
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprintln(os.Stderr, "usage: qrerun [-f] [-m message] job_identifier...")
		cli.Exit(2)
	}
	cli.Exit(cli.RunJobOps("qrerun", ids, func(c *pbs.Conn, id string) error {
		return c.RerunJob(id, ext)
	}))
}
