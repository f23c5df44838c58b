// Command qchkpt checkpoints running batch jobs (CheckpointJob; spec 05 §4).
package main

import (
	"fmt"
	"os"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	_, ids, bad := cli.Getopt(os.Args[1:], "", os.Args[0], os.Stderr)
	if bad || len(ids) == 0 {
		fmt.Fprintln(os.Stderr, "usage: qchkpt job_identifier...")
		cli.Exit(2)
	}
	cli.Exit(cli.RunJobOpsNoConnectText("qchkpt", ids, func(c *pbs.Conn, id string) error {
		return c.CheckpointJob(id, "")
	}))
}
