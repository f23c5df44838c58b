// Command qdel deletes batch jobs (DeleteJob; spec 05 §4).
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

const usage = "usage: qdel [{ -a | -c | -p | -t | -W delay | -m message}] [<JOBID>[<JOBID>]|'all'|'ALL']..."

func main() {
	opts, ids, bad := cli.Getopt(os.Args[1:], "acm:pt:W:", os.Args[0], os.Stderr)
	ext, purgeComplete, purge := "", false, false
	for _, o := range opts {
		if ext != "" || purgeComplete {
			bad = true
		}
		switch o.C {
		case 'a':
			ext = "delasync"
		case 'c':
			purgeComplete = true
			ext = "purgecomplete=" + strconv.FormatInt(time.Now().Unix(), 10)
		case 'm':
			ext = o.Arg
		case 'p':
			purge = true
			ext = "delpurge=1"
		case 't':
			ext = "array_range=" + o.Arg
		case 'W':
			if o.Arg == "" || strings.Trim(o.Arg, "0123456789") != "" {
				bad = true // the delay is digits only
			}
			ext = "deldelay=" + o.Arg
		}
	}
	if bad || len(ids) == 0 && !purgeComplete {
		fmt.Fprintln(os.Stderr, usage)
		cli.Exit(2)
	}
	if purgeComplete && len(ids) == 0 {
		c, err := cli.Connect("")
		if err != nil {
			cli.Exit(cli.ConnectFailed(os.Stderr, "qdel", pbs.DefaultServer(), err))
		}
		defer c.Close()
		if err := c.DeleteJob("", ext); err != nil {
			cli.Exit(cli.JobError(os.Stderr, "qdel", "", err))
		}
		return
	}
	status := 0
	var rest []string
	for _, id := range ids {
		if id == "all" || id == "ALL" {
			deleteAll(ext, purge)
			continue
		}
		rest = append(rest, id)
	}
	if len(rest) > 0 {
		status = cli.RunJobOps("qdel", rest, func(c *pbs.Conn, id string) error {
			return c.DeleteJob(id, ext)
		})
	}
	cli.Exit(status)
}

// deleteAll deletes every job the server lists that is not exiting or
// complete; errors are reported but do not change the exit status.
func deleteAll(ext string, purge bool) {
	c, err := cli.Connect("")
	if err != nil {
		cli.ConnectFailed(os.Stderr, "qdel", pbs.DefaultServer(), err)
		return
	}
	defer c.Close()
	jobs, err := c.SelStat(nil, "")
	if err != nil || len(jobs) == 0 {
		fmt.Fprintln(os.Stderr, "qdel: cannot find any jobs to delete")
		return
	}
	for _, j := range jobs {
		state, _ := j.Get("job_state", "")
		if state == "E" || state == "C" && !purge {
			continue
		}
		var derr error
		for try := 0; try < 3; try++ {
			if derr = c.DeleteJob(j.Name, ext); pbs.Errno(derr) != batchreq.PBSE_NORELYMOM {
				break
			}
		}
		if derr != nil {
			n := pbs.Errno(derr)
			fmt.Fprintf(os.Stdout, "Deletion Error: %d (%s)\n", n, pbs.ErrorText(n))
			cli.JobError(os.Stderr, "qdel", j.Name, derr)
		}
	}
}
