// Command qstat shows the status of batch jobs, queues and servers, with
// TORQUE 2.5.13's options, requests, output formats and exit statuses
// (spec 05 §3).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

const usageText = `usage: 
qstat [-f [-1]] [-W site_specific] [-x] [ job_identifier... | destination... ]
qstat [-a|-i|-r|-e] [-u user] [-n [-1]] [-s] [-G|-M] [-R] [job_id... | destination...]
qstat -Q [-f [-1]] [-W site_specific] [ destination... ]
qstat -q [-G|-M] [ destination... ]
qstat -B [-f [-1]] [-W site_specific] [ server_name... ]
qstat -t
`

type mode int

const (
	modeJobs mode = iota
	modeQueues
	modeServers
	modeQueueSummary
)

type options struct {
	mode      mode
	full      bool
	xml       bool
	alt       bool // alternate job display
	nodes     bool // -n
	comments  bool // -s
	oneLine   bool // -1
	long      bool // -l
	arrays    bool // -t
	execOnly  bool // -e
	ext       string
	userList  string
	idle      bool // -i
	running   bool // -r
	memMW     bool // -M
	memGB     bool // -G
	resources bool // -R
}

func main() {
	cli.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	prog := "qstat"
	if cli.VersionRequested(args[1:], stderr) {
		return 0
	}
	opts, operands, bad := cli.Getopt(args[1:], "aeE:filn1qrstu:xGMQRBW:", args[0], stderr)
	var o options
	conflict := false
	altSeen := false
	for _, op := range opts {
		switch op.C {
		case 'a':
			o.alt, altSeen = true, true
		case 'e':
			o.execOnly = true
		case 'E':
			o.ext = op.Arg
		case 'f':
			if altSeen {
				conflict = true
			}
			o.full = true
		case 'i':
			o.idle, o.alt, altSeen = true, true, true
		case 'l':
			o.long = true
		case 'n':
			o.nodes, o.alt, altSeen = true, true, true
		case '1':
			o.oneLine = true
		case 'q':
			if o.mode != modeJobs {
				conflict = true
			}
			o.mode = modeQueueSummary
		case 'r':
			o.running, o.alt, altSeen = true, true, true
		case 's':
			o.comments, o.alt, altSeen = true, true, true
		case 't':
			o.arrays = true
		case 'u':
			o.userList, o.alt, altSeen = op.Arg, true, true
		case 'x':
			o.xml, o.full = true, true
		case 'G':
			o.memGB, o.alt, altSeen = true, true, true
		case 'M':
			o.memMW, o.alt, altSeen = true, true, true
		case 'Q':
			if o.mode == modeServers || altSeen {
				conflict = true
			}
			o.mode = modeQueues
		case 'R':
			o.resources, o.alt, altSeen = true, true, true
		case 'B':
			if o.mode == modeQueues || altSeen {
				conflict = true
			}
			o.mode = modeServers
		case 'W':
			// site-specific display options: accepted, ignored
		}
	}
	if os.Getenv("PBS_QSTAT_EXECONLY") != "" {
		o.execOnly = true
	}
	if o.memGB && o.memMW || o.mode == modeQueueSummary && o.full ||
		n(o.idle)+n(o.running)+n(o.mode == modeQueueSummary)+n(hasA(opts)) > 1 ||
		o.oneLine && !o.nodes && !o.full {
		conflict = true
	}
	if (o.mode == modeServers || o.mode == modeQueues) && o.alt {
		conflict = true
	}
	if conflict && !bad {
		fmt.Fprintln(stderr, "qstat: conflicting options.")
	}
	if bad || conflict {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	if o.full && !o.xml && o.alt {
		o.full = false // "-f -a" prints the -a display
	}
	q := &qstat{prog: prog, o: o, stdout: stdout, stderr: stderr}
	switch o.mode {
	case modeQueues:
		return q.queues(operands)
	case modeServers:
		return q.servers(operands)
	case modeQueueSummary:
		return q.queueSummary(operands)
	}
	return q.jobs(operands)
}

func n(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasA(opts []cli.Opt) bool {
	for _, o := range opts {
		if o.C == 'a' {
			return true
		}
	}
	return false
}

type qstat struct {
	prog           string
	o              options
	stdout, stderr io.Writer
	status         int
	headerDone     bool   // default job display header printed
	lastServer     string // alternate display: server of the last header
	haveLastServer bool
	// dests are the "destination EQ <queue>" criteria of the destination
	// operands so far, the latest first: they accumulate across operands.
	dests []pbs.Attr
}

func (q *qstat) jobExt() string {
	switch {
	case q.o.ext != "":
		return q.o.ext
	case q.o.execOnly:
		return "exec_queue_only"
	case q.o.arrays:
		return ""
	}
	return "summarize_arrays"
}

// criteria returns the selection entries of -i, -r and -u.
func (q *qstat) criteria() []pbs.Attr {
	var c []pbs.Attr
	if q.o.userList != "" {
		c = append(c, pbs.Attr{Name: "User_List", Value: q.o.userList, Op: batchreq.EQ})
	}
	if q.o.idle {
		c = append(c, pbs.Attr{Name: "job_state", Value: "EHQTW", Op: batchreq.EQ})
	}
	if q.o.running {
		c = append(c, pbs.Attr{Name: "job_state", Value: "RS", Op: batchreq.EQ})
	}
	return c
}

func isJobID(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

func (q *qstat) jobs(operands []string) int {
	if len(operands) == 0 {
		operands = []string{""}
	}
	for _, op := range operands {
		if isJobID(op) {
			j, err := pbs.ResolveJobID(op)
			if err != nil {
				fmt.Fprintf(q.stderr, "qstat: illegally formed job identifier: %s\n", op)
				q.status = 1
				continue
			}
			var list []pbs.Status
			var svrName string
			err = pbs.WithLocate(j, cli.Connect, func(c *pbs.Conn, id string) error {
				var err error
				svrName, err = q.altHeaderStatus(c, j.Server())
				if err != nil {
					return err
				}
				list, err = c.StatusJob(id, nil, q.jobExt())
				return err
			})
			if err != nil {
				q.jobErr(j, err)
				continue
			}
			q.display(list, svrName)
			continue
		}
		queue, server := cli.SplitDest(op)
		if op != "" && !strings.Contains(op, "@") && !validQueue(queue) {
			fmt.Fprintf(q.stderr, "qstat: illegally formed destination: %s\n", op)
			q.status = 1
			continue
		}
		c, err := cli.Connect(server)
		if err != nil {
			q.status = cli.ConnectFailed(q.stderr, q.prog, cli.ServerName(server), err)
			continue
		}
		svrName, err := q.altHeaderStatus(c, server)
		if err != nil {
			c.Close()
			q.status = q.serverErr(err, cli.ServerName(server))
			continue
		}
		if queue != "" {
			// TORQUE's quirk: the destination criteria of earlier
			// operands stay in the list (spec 05 §3.1).
			q.dests = append([]pbs.Attr{{Name: "destination", Value: queue, Op: batchreq.EQ}}, q.dests...)
		}
		crit := append(append([]pbs.Attr{}, q.dests...), q.criteria()...)
		var list []pbs.Status
		if len(crit) == 0 {
			list, err = c.StatusJob("", nil, q.jobExt())
		} else {
			ext := "summarize_arrays"
			if q.o.arrays {
				ext = ""
			} else if q.o.execOnly {
				ext = "exec_queue_only"
			}
			list, err = c.SelStat(crit, ext)
		}
		c.Close()
		if err != nil {
			if queue != "" {
				fmt.Fprintf(q.stderr, "qstat: %s destination %s\n", cli.ErrText(err), op)
				q.status = pbs.Errno(err)
			} else {
				q.status = q.serverErr(err, cli.ServerName(server))
			}
			continue
		}
		q.display(list, svrName)
	}
	return q.status
}

func validQueue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func (q *qstat) jobErr(j pbs.JobID, err error) {
	if ce, ok := err.(*pbs.ConnectError); ok {
		q.status = cli.ConnectFailed(q.stderr, q.prog, cli.ServerName(ce.Server), ce.Err)
		return
	}
	q.status = cli.JobError(q.stderr, q.prog, j.Qualified(), err)
}

func (q *qstat) serverErr(err error, server string) int {
	return cli.RequestFailed(q.stderr, "qstat", err, "", "getting status of server "+server)
}

// altHeaderStatus fetches the server status for the alternate display's
// header when the server differs from the previous operand's.
func (q *qstat) altHeaderStatus(c *pbs.Conn, server string) (string, error) {
	if !q.o.alt || q.o.full {
		return "", nil
	}
	if q.haveLastServer && q.lastServer == server {
		return "", nil
	}
	q.lastServer, q.haveLastServer = server, true
	st, err := c.StatusServer(nil, "")
	if err != nil {
		return "", err
	}
	name := cli.ServerName(server)
	comment := ""
	if len(st) > 0 {
		name = st[0].Name
		comment, _ = st[0].Get("comment", "")
	}
	return name + ": " + comment, nil
}

func (q *qstat) display(list []pbs.Status, altHeader string) {
	switch {
	case q.o.xml:
		printXML(q.stdout, "Job", "Job_Id", list)
	case q.o.full:
		q.printFull("Job Id", list, true)
	case q.o.alt:
		if len(list) == 0 {
			return
		}
		if altHeader != "" {
			printAltHeader(q.stdout, altHeader, q.o)
		}
		for i := range list {
			printAltJob(q.stdout, &list[i], q.o)
		}
	default:
		if len(list) == 0 {
			return
		}
		if !q.headerDone {
			fmt.Fprintln(q.stdout, "Job ID                    Name             User            Time Use S Queue")
			fmt.Fprintln(q.stdout, "------------------------- ---------------- --------------- -------- - -----")
			q.headerDone = true
		}
		for i := range list {
			printJobLine(q.stdout, &list[i], q.o.long)
		}
	}
}

func (q *qstat) width() int {
	if q.o.oneLine {
		return 65536
	}
	return 77
}
