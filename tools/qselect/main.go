// Command qselect lists the ids of the batch jobs matching selection
// criteria (SelectJobs; spec 05 §5).
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

const usageText = `usage: qselect [-a [op]date_time] [-A account_string] [-c [op]interval]
	[-h hold_list] [-l resource_list] [-N name] [-p [op]priority]
	[-q destination] [-r y|n] [-s states] [-u user_name]
`

var ops = map[string]int{"eq": batchreq.EQ, "ne": batchreq.NE, "ge": batchreq.GE, "gt": batchreq.GT, "le": batchreq.LE, "lt": batchreq.LT}

// operator splits an optional ".op." prefix off v.
func operator(v string) (int, string, bool) {
	if len(v) >= 4 && v[0] == '.' && v[3] == '.' {
		op, ok := ops[v[1:3]]
		return op, v[4:], ok
	}
	return batchreq.EQ, v, true
}

func main() {
	opts, operands, bad := cli.Getopt(os.Args[1:], "a:A:c:eh:l:N:p:q:r:s:u:", os.Args[0], os.Stderr)
	var list []pbs.Attr
	prepend := func(a ...pbs.Attr) { list = append(append([]pbs.Attr{}, a...), list...) }
	ext, server := "", ""
	for _, o := range opts {
		switch o.C {
		case 'a':
			op, v, ok := operator(o.Arg)
			t, err := cli.ParseDateTime(v, time.Now())
			if !ok || err != nil {
				bad = true
				continue
			}
			prepend(pbs.Attr{Name: "Execution_Time", Value: strconv.FormatInt(t, 10), Op: op})
		case 'A':
			prepend(pbs.Attr{Name: "Account_Name", Value: o.Arg, Op: batchreq.EQ})
		case 'c':
			op, v, ok := operator(o.Arg)
			bad = bad || !ok
			prepend(pbs.Attr{Name: "Checkpoint", Value: v, Op: op})
		case 'e':
			ext = "exec_queue_only"
		case 'h':
			op, v, ok := operator(o.Arg)
			bad = bad || !ok
			prepend(pbs.Attr{Name: "Hold_Types", Value: v, Op: op})
		case 'l':
			for _, item := range strings.Split(o.Arg, ",") {
				res, rest, ok := strings.Cut(item, ".")
				if !ok {
					bad = true
					continue
				}
				op, v, ok := operator("." + rest)
				bad = bad || !ok
				prepend(pbs.Attr{Name: "Resource_List", Resource: res, Value: v, Op: op})
			}
		case 'N':
			prepend(pbs.Attr{Name: "Job_Name", Value: o.Arg, Op: batchreq.EQ})
		case 'p':
			op, v, ok := operator(o.Arg)
			bad = bad || !ok
			prepend(pbs.Attr{Name: "Priority", Value: v, Op: op})
		case 'q':
			q, s := cli.SplitDest(o.Arg)
			server = s
			if q != "" {
				prepend(pbs.Attr{Name: "destination", Value: o.Arg, Op: batchreq.EQ})
			}
		case 'r':
			if o.Arg != "y" && o.Arg != "n" {
				fmt.Fprintln(os.Stderr, "qsub: illegal -r value")
				bad = true
				continue
			}
			prepend(pbs.Attr{Name: "Rerunable", Value: o.Arg, Op: batchreq.EQ})
		case 's':
			op, v, ok := operator(o.Arg)
			bad = bad || !ok || strings.Trim(v, "CEHQRTW") != ""
			prepend(pbs.Attr{Name: "job_state", Value: v, Op: op})
		case 'u':
			prepend(pbs.Attr{Name: "User_List", Value: o.Arg, Op: batchreq.EQ})
		}
	}
	if os.Getenv("PBS_QSTAT_EXECONLY") != "" {
		ext = "exec_queue_only"
	}
	if bad || len(operands) > 0 {
		fmt.Fprint(os.Stderr, usageText)
		cli.Exit(2)
	}
	c, err := cli.Connect(server)
	if err != nil {
		cli.Exit(cli.ConnectFailed(os.Stderr, "qselect", cli.ServerName(server), err))
	}
	ids, err := c.SelectJobs(list, ext)
	c.Close()
	if err != nil {
		cli.Exit(cli.RequestFailed(os.Stderr, "qselect", err, "", "selecting jobs"))
	}
	for _, id := range ids {
		fmt.Println(id)
	}
}
