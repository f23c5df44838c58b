// Command qmove moves batch jobs to another queue (MoveJob; spec 05 §4).
package main

import (
	"fmt"
	"os"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	_, args, bad := cli.Getopt(os.Args[1:], "", os.Args[0], os.Stderr)
	if bad || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: qmove destination job_identifier...")
		cli.Exit(2)
	}
	dest := args[0]
	if dest == "" || dest == "@" {
		fmt.Fprintf(os.Stderr, "qmove: illegally formed destination: %s\n", dest)
		cli.Exit(2)
	}
	cli.Exit(cli.RunJobOps("qmove", args[1:], func(c *pbs.Conn, id string) error {
		return c.MoveJob(id, dest, "")
	}))
}
