// Command qalter changes the attributes of batch jobs (ModifyJob, or
// AsyModifyJob with -q; spec 05 §4). Its options are those of qsub that
// make sense for an existing job; every attribute is sent with op SET in
// command-line order.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

const usageText = `usage: qalter [-a date_time] [-A account_string] [-c interval] [-e path] 
	[-h hold_list] [-j y|n] [-k keep] [-l resource_list] [-m mail_options] 
	[-M user_list] [-N jobname] [-o path] [-p priority] [-q] [-r y|n] [-S path] 
	[-u user_list] [-v variable_list] [-W dependency_list] [-t array_range] job_identifier...
`

func main() {
	cli.Exit(run(os.Args))
}

// run is qalter with its arguments; it returns the exit status.
func run(args []string) int {
	opts, ids, bad := cli.Getopt(args[1:], "a:A:c:e:h:j:k:l:m:M:N:o:p:qr:R:S:t:u:v:W:x:", args[0], os.Stderr)
	var list []pbs.Attr
	add := func(name, val string) { list = append(list, pbs.Attr{Name: name, Value: val}) }
	ext, async := "", false
	for _, o := range opts {
		switch o.C {
		case 'a':
			t, err := cli.ParseDateTime(o.Arg, time.Now())
			if err != nil {
				bad = true
				continue
			}
			add("Execution_Time", strconv.FormatInt(t, 10))
		case 'A':
			add("Account_Name", o.Arg)
		case 'c':
			// Only the old single-letter forms and "c=<minutes>".
			switch {
			case o.Arg == "n", o.Arg == "s", o.Arg == "c", o.Arg == "u", strings.HasPrefix(o.Arg, "c="):
				add("Checkpoint", o.Arg)
			default:
				bad = true
			}
		case 'e':
			add("Error_Path", cli.QualifyPath(o.Arg))
		case 'h':
			if o.Arg == "" || strings.Trim(o.Arg, "uosn") != "" {
				bad = true
			}
			add("Hold_Types", o.Arg)
		case 'j':
			add("Join_Path", o.Arg)
		case 'k':
			add("Keep_Files", o.Arg)
		case 'l':
			list = append(list, cli.ResourceList(o.Arg)...)
		case 'm':
			add("Mail_Points", o.Arg)
		case 'M':
			add("Mail_Users", o.Arg)
		case 'N':
			if o.Arg == "" || !(o.Arg[0] >= 'a' && o.Arg[0] <= 'z' || o.Arg[0] >= 'A' && o.Arg[0] <= 'Z') {
				bad = true
			}
			add("Job_Name", o.Arg)
		case 'o':
			add("Output_Path", cli.QualifyPath(o.Arg))
		case 'p':
			if p, err := strconv.Atoi(strings.TrimSpace(o.Arg)); err != nil || p < -1024 || p > 1023 {
				bad = true
			}
			add("Priority", o.Arg)
		case 'q':
			async = true
		case 'r':
			if o.Arg != "y" && o.Arg != "n" {
				bad = true
			}
			add("Rerunable", o.Arg)
		case 'R':
			// GoPBS (seed 004): -R y|n is -W reserve=y|n.
			if o.Arg != "y" && o.Arg != "n" {
				bad = true
			}
			add("reserve", o.Arg)
		case 'S':
			add("Shell_Path_List", o.Arg)
		case 't':
			ext = "array_range=" + o.Arg
		case 'u':
			add("User_List", o.Arg)
		case 'v':
			add("Variable_List", o.Arg)
		case 'W':
			attrs, err := cli.WAttrs(o.Arg)
			if err != nil {
				bad = true
				continue
			}
			list = append(list, attrs...)
		case 'x':
			add("exec_host", o.Arg)
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprint(os.Stderr, usageText)
		return 2
	}
	return cli.RunJobOps("qalter", ids, func(c *pbs.Conn, id string) error {
		if async {
			return c.AsyModifyJob(id, list, ext)
		}
		return c.ModifyJob(id, list, ext)
	})
}
