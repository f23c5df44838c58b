// This file turns qsub's options (from the command line and the script's
// directives) into job attributes (option, variableList) and checks their
// operands: -d, -N, -S and torque.cfg's VALIDATEGROUP.

package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func (q *qsub) variableList(server string) string {
	var v []string
	home := os.Getenv("HOME")
	if home == "" {
		home = "/"
	}
	v = append(v, "PBS_O_HOME="+home)
	for _, k := range []string{"LANG", "LOGNAME", "PATH", "MAIL", "SHELL", "TZ"} {
		if val, ok := os.LookupEnv(k); ok {
			v = append(v, "PBS_O_"+k+"="+val)
		}
	}
	v = append(v, "PBS_SERVER="+server)
	if q.cfg.Bool("QSUBSENDUID") {
		v = append(v, "PBS_O_UID="+strconv.Itoa(os.Getuid()))
	}
	if q.initDir != "" {
		v = append(v, "PBS_O_INITDIR="+q.initDir)
	}
	if q.rootDir != "" {
		v = append(v, "PBS_O_ROOTDIR="+q.rootDir)
	}
	wd := q.workDir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			wd = "/"
		}
	}
	v = append(v, "PBS_O_WORKDIR="+wd)
	v = append(v, q.vars...)
	if q.allEnv {
		for _, kv := range os.Environ() {
			k, val, _ := strings.Cut(kv, "=")
			v = append(v, k+"="+cli.EscapeEnvValue(val))
		}
	}
	return strings.Join(v, ",")
}

// option converts one option to the attributes it sends.
func (q *qsub) option(o cli.Opt, fromDirective bool) ([]pbs.Attr, error) {
	a := func(name, val string) []pbs.Attr { return []pbs.Attr{{Name: name, Value: val}} }
	switch o.C {
	case 'a':
		t, err := cli.ParseDateTime(o.Arg, time.Now())
		if err != nil {
			return nil, fmt.Errorf("illegal -a value")
		}
		return a("Execution_Time", strconv.FormatInt(t, 10)), nil
	case 'A':
		return a("Account_Name", o.Arg), nil
	case 'b':
		n, err := strconv.Atoi(o.Arg)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("illegal -b value")
		}
		if !fromDirective {
			q.retry = n
		}
		return nil, nil
	case 'c':
		for _, item := range strings.Split(o.Arg, ",") {
			key, _, _ := strings.Cut(item, "=")
			switch key {
			case "n", "c", "s", "u", "none", "shutdown", "periodic", "enabled", "interval", "depth", "dir":
			default:
				return nil, fmt.Errorf("illegal -c value")
			}
		}
		return a("Checkpoint", o.Arg), nil
	case 'C':
		if !fromDirective {
			q.prefix = o.Arg
		}
		return nil, nil
	case 'd':
		dir := o.Arg
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cli.WorkDir(), dir)
		}
		if !q.cfg.IsFalse("VALIDATEPATH") && !isDir(dir) {
			return nil, fmt.Errorf("illegal -d value")
		}
		q.initDir = dir
		return a("init_work_dir", dir), nil
	case 'D':
		q.rootDir = o.Arg
		return nil, nil
	case 'e':
		return a("Error_Path", cli.QualifyPath(o.Arg)), nil
	case 'f':
		return a("fault_tolerant", "TRUE"), nil
	case 'F':
		return a("job_arguments", o.Arg), nil
	case 'h':
		return a("Hold_Types", "u"), nil
	case 'I':
		q.interactive = true
		return nil, nil
	case 'j':
		switch o.Arg {
		case "oe", "eo", "n":
		default:
			return nil, fmt.Errorf("illegal -j value")
		}
		return a("Join_Path", o.Arg), nil
	case 'J':
		return a("job_id", o.Arg), nil
	case 'k':
		switch o.Arg {
		case "o", "e", "oe", "eo", "n":
		default:
			return nil, fmt.Errorf("illegal -k value")
		}
		return a("Keep_Files", o.Arg), nil
	case 'l':
		if strings.Contains(o.Arg, "nodes=") && strings.Contains(o.Arg, ",procs=") {
			return nil, fmt.Errorf("illegal -l value")
		}
		var out []pbs.Attr
		for _, r := range expandResources(cli.ResourceList(o.Arg)) {
			if fromDirective && q.resources[r.Resource] {
				continue
			}
			q.resources[r.Resource] = true
			out = append(out, r)
		}
		return out, nil
	case 'm':
		if o.Arg != "n" && (o.Arg == "" || strings.Trim(o.Arg, "abe") != "") {
			return nil, fmt.Errorf("illegal -m value")
		}
		return a("Mail_Points", o.Arg), nil
	case 'M':
		return a("Mail_Users", o.Arg), nil
	case 'N':
		if !validJobName(o.Arg) {
			return nil, fmt.Errorf("illegal -N value")
		}
		return a("Job_Name", o.Arg), nil
	case 'o':
		return a("Output_Path", cli.QualifyPath(o.Arg)), nil
	case 'p':
		p, err := strconv.Atoi(strings.TrimSpace(o.Arg))
		if err != nil || p < -1024 || p > 1023 {
			return nil, fmt.Errorf("illegal -p value")
		}
		return a("Priority", o.Arg), nil
	case 'P':
		user, group, ok := strings.Cut(o.Arg, ":")
		out := a("proxy_user", user)
		if ok {
			out = append(out, pbs.Attr{Name: "group_list", Value: group})
		}
		return out, nil
	case 'q':
		if !fromDirective || !q.given['q'] {
			q.destination = o.Arg
		}
		return nil, nil
	case 'r':
		if o.Arg != "y" && o.Arg != "n" {
			return nil, fmt.Errorf("illegal -r value")
		}
		return a("Rerunable", o.Arg), nil
	case 'R':
		// GoPBS (seed 004): -R y|n is -W reserve=y|n.
		if o.Arg != "y" && o.Arg != "n" {
			return nil, fmt.Errorf("illegal -R value")
		}
		return a("reserve", o.Arg), nil
	case 'S':
		if !validShellList(o.Arg) {
			return nil, fmt.Errorf("illegal -S value")
		}
		return a("Shell_Path_List", o.Arg), nil
	case 't':
		return a("job_array_request", o.Arg), nil
	case 'T':
		return a("jobtype", o.Arg), nil
	case 'u':
		return a("User_List", o.Arg), nil
	case 'v':
		q.vars = append(q.vars, cli.VariableListFromV(o.Arg)...)
		return nil, nil
	case 'V':
		q.allEnv = true
		return nil, nil
	case 'w':
		q.workDir = o.Arg
		return a("init_work_dir", o.Arg), nil
	case 'W':
		return cli.WAttrs(o.Arg)
	case 'X':
		q.x11 = true
		return nil, nil
	case 'x':
		q.interCmd = true
		return nil, nil
	case 'z':
		q.noPrint = true
		return nil, nil
	}
	return nil, nil
}

func hasOpt(opts []cli.Opt, c byte) bool {
	for _, o := range opts {
		if o.C == c {
			return true
		}
	}
	return false
}

// isDir reports whether dir is a directory the user can change into (the
// check of -d unless torque.cfg says VALIDATEPATH false).
func isDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && unix.Access(dir, unix.X_OK) == nil
}

// validateGroups checks, for torque.cfg's VALIDATEGROUP, that the user
// belongs to every group the job's group_list names.
func validateGroups(list []pbs.Attr) error {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		return fmt.Errorf("cannot look up the user: %w", err)
	}
	gids, err := u.GroupIds()
	if err != nil {
		return fmt.Errorf("cannot look up the groups of %s: %w", u.Username, err)
	}
	member := map[string]bool{}
	for _, gid := range gids {
		if g, err := user.LookupGroupId(gid); err == nil {
			member[g.Name] = true
		}
	}
	for _, a := range list {
		if a.Name != "group_list" {
			continue
		}
		for _, item := range strings.Split(a.Value, ",") {
			g, _, _ := strings.Cut(item, "@")
			if g != "" && !member[g] {
				return fmt.Errorf("user %s is not a member of group %s", u.Username, g)
			}
		}
	}
	return nil
}

// validShellList checks a -S operand "path[@host][,path[@host]...]":
// absolute paths, each host named once.
func validShellList(v string) bool {
	hosts := map[string]bool{}
	for _, item := range strings.Split(v, ",") {
		path, host, _ := strings.Cut(item, "@")
		if !strings.HasPrefix(path, "/") || hosts[host] {
			return false
		}
		hosts[host] = true
	}
	return true
}

// validJobName reports whether name is a valid -N value: 1 to 256
// printable characters other than blanks.
func validJobName(name string) bool {
	if name == "" || len(name) > 256 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] <= ' ' || name[i] > '~' {
			return false
		}
	}
	return true
}
