// Command qalter changes the attributes of batch jobs (ModifyJob; spec 05
// §4). Its options are those of qsub.
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
	[-M user_list] [-N jobname] [-o path] [-p priority] [-r y|n] [-S path] 
	[-u user_list] [-v variable_list] [-W dependency_list] [-t array_range] job_identifier...
`

func main() {
	opts, ids, bad := cli.Getopt(os.Args[1:], "a:A:c:e:h:j:k:l:m:M:N:o:p:r:S:t:u:v:W:x:", os.Args[0], os.Stderr)
	var list []pbs.Attr
	add := func(name, val string) { list = append(list, pbs.Attr{Name: name, Value: val}) }
	ext := ""
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
			switch {
			case o.Arg == "n", o.Arg == "s", o.Arg == "c", strings.HasPrefix(o.Arg, "c="):
				add("Checkpoint", o.Arg)
			default:
				bad = true
			}
		case 'e':
			add("Error_Path", cli.QualifyPath(o.Arg))
		case 'h':
			if strings.Trim(o.Arg, "uosn") != "" {
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
			add("Priority", o.Arg)
		case 'r':
			add("Rerunable", o.Arg)
		case 'S':
			add("Shell_Path_List", o.Arg)
		case 't':
			ext = "array_range=" + o.Arg
		case 'u':
			add("User_List", o.Arg)
		case 'v':
			add("Variable_List", o.Arg)
		case 'W':
			for _, item := range strings.Split(o.Arg, ",") {
				k, v, ok := strings.Cut(item, "=")
				if !ok {
					bad = true
					continue
				}
				add(k, v)
			}
		case 'x':
			add("exec_host", o.Arg)
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprint(os.Stderr, usageText)
		cli.Exit(2)
	}
	cli.Exit(cli.RunJobOps("qalter", ids, func(c *pbs.Conn, id string) error {
		return c.ModifyJob(id, list, ext)
	}))
}
