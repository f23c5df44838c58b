// Command qrun runs batch jobs now, optionally on given hosts (RunJob or
// AsyrunJob; spec 05 §4). Every error exits 2.
package main

import (
	"errors"
	"fmt"
	"os"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	opts, ids, bad := cli.Getopt(os.Args[1:], "aH:", os.Args[0], os.Stderr)
	async, hosts := false, ""
	for _, o := range opts {
		switch o.C {
		case 'a':
			async = true
		case 'H':
			hosts = o.Arg
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprintln(os.Stderr, "usage: qrun [-a] [-H <HOST>] <JOBID>[ <JOBID>]...")
		cli.Exit(2)
	}
	status := 0
	for _, arg := range ids {
		j, err := pbs.ResolveJobID(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "qrun: illegally formed job identifier: %s\n", arg)
			status = 1
			continue
		}
		err = pbs.WithLocate(j, pbs.Connect, func(c *pbs.Conn, id string) error {
			return c.RunJob(id, hosts, async, "")
		})
		if err == nil {
			continue
		}
		status = 2
		var ce *pbs.ConnectError
		switch {
		case errors.As(err, &ce):
			fmt.Fprintf(os.Stderr, "qrun: could not connect to server %s (%d) %s\n",
				cli.ServerName(ce.Server), pbs.Errno(ce.Err), cli.ErrText(ce.Err))
		case pbs.Errno(err) == batchreq.PBSE_UNKNODE:
			h := hosts
			if len(h) > 16 {
				h = h[:16]
			}
			fmt.Fprintf(os.Stderr, "qrun: Unknown node in hostlist '%s...' for job %s\n", h, j.Qualified())
		default:
			cli.JobError(os.Stderr, "qrun", j.Qualified(), err)
		}
	}
	cli.Exit(status)
}
