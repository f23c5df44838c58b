// Command qmsg writes a message into the output of running batch jobs
// (MessJob; spec 05 §4).
package main

import (
	"fmt"
	"os"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	opts, args, bad := cli.Getopt(os.Args[1:], "EO", os.Args[0], os.Stderr)
	file := 0
	for _, o := range opts {
		switch o.C {
		case 'E':
			file |= batchreq.MSG_ERR
		case 'O':
			file |= batchreq.MSG_OUT
		}
	}
	if file == 0 {
		file = batchreq.MSG_ERR
	}
	if bad || len(args) < 2 || args[0] == "" || len(args[0]) > 256 {
		fmt.Fprintln(os.Stderr, "usage: qmsg [-O] [-E] msg_string job_identifier...")
		cli.Exit(2)
	}
	msg := args[0]
	cli.Exit(cli.RunJobOps("qmsg", args[1:], func(c *pbs.Conn, id string) error {
		return c.MessJob(id, file, msg, "")
	}))
}
