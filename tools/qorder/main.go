// Command qorder swaps the queue positions of two batch jobs (OrderJob;
// spec 05 §4).
package main

import (
	"fmt"
	"os"
	"strings"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	_, args, bad := cli.Getopt(os.Args[1:], "", os.Args[0], os.Stderr)
	if bad || len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: qorder job_identifier job_identifier")
		cli.Exit(2)
	}
	j1, err1 := pbs.ResolveJobID(args[0])
	j2, err2 := pbs.ResolveJobID(args[1])
	for i, err := range []error{err1, err2} {
		if err != nil {
			fmt.Fprintf(os.Stderr, "qorder: illegally formed job identifier: %s\n", args[i])
			cli.Exit(1)
		}
	}
	if serverOf(j1) != serverOf(j2) {
		fmt.Fprintln(os.Stderr, "qorder: both jobs ids must specify the same server")
		cli.Exit(1)
	}
	c, err := cli.Connect(j1.Server())
	if err != nil {
		cli.Exit(cli.ConnectFailed(os.Stderr, "qorder", cli.ServerName(j1.Server()), err))
	}
	defer c.Close()
	if err := c.OrderJob(j1.Qualified(), j2.Qualified(), ""); err != nil {
		n := cli.JobError(os.Stderr, "qorder", "", err)
		c.Close()
		cli.Exit(n)
	}
}

// serverOf is the server a job request goes to, for comparing two ids:
// the "@" server, else the normalised parent (or default) server with its
// port.
func serverOf(j pbs.JobID) string {
	if j.Current != "" {
		return strings.ToLower(j.Current)
	}
	return strings.TrimPrefix(j.Qualified(), j.Seq+".")
}
