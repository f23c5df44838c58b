// Command qsub submits a batch job: it turns its options and the script's
// #PBS directives into job attributes in TORQUE 2.5.13's exact order
// (spec 05 §2), sends QueueJob, the script, RdytoCommit and Commit, and
// prints the new job id.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

const optString = "a:A:b:c:C:d:D:e:fF:hIj:J:k:l:m:M:N:o:p:P:q:r:R:S:t:T:u:v:VW:w:Xxz"

const usageText = `usage: qsub [-a date_time] [-A account_string] [-b secs]
      [-c [ none | { enabled | periodic | shutdown |
      depth=<int> | dir=<path> | interval=<minutes>}... ]
      [-C directive_prefix] [-d path] [-D path]
      [-e path] [-h] [-I] [-j oe] [-k {oe}] [-l resource_list] [-m n|{abe}]
      [-M user_list] [-N jobname] [-o path] [-p priority] [-P proxy_user] [-q queue] 
      [-r y|n] [-S path] [-t number_to_submit] [-T type]  [-u user_list] [-w] path
      [-W otherattributes=value...] [-v variable_list] [-V] [-x] [-X] [-z] [script]
`

// defaultFor lists the default attribute each option letter suppresses,
// in the order the defaults are sent.
var defaults = []struct {
	letter byte
	attr   pbs.Attr
}{
	{'c', pbs.Attr{Name: "Checkpoint", Value: "u"}},
	{'h', pbs.Attr{Name: "Hold_Types", Value: "n"}},
	{'j', pbs.Attr{Name: "Join_Path", Value: "n"}},
	{'k', pbs.Attr{Name: "Keep_Files", Value: "n"}},
	{'m', pbs.Attr{Name: "Mail_Points", Value: "a"}},
	{'p', pbs.Attr{Name: "Priority", Value: "0"}},
	{'r', pbs.Attr{Name: "Rerunable", Value: "TRUE"}},
	{'f', pbs.Attr{Name: "fault_tolerant", Value: "FALSE"}},
}

type qsub struct {
	given       map[byte]bool // option letters from the command line
	directive   map[byte]bool // option letters from directives
	resources   map[string]bool
	destination string
	vars        []string
	allEnv      bool
	prefix      string
	noPrint     bool
	interactive bool
	x11         bool // -X: send the X11 authentication data
	interCmd    bool // -x: the operand is the command of an interactive job
	retry       int  // -b: seconds to retry connecting
	cfg         pbs.TorqueConfig
	workDir     string
	initDir     string
	rootDir     string
}

func main() {
	os.Exit(run(os.Args) & 0xff)
}

func run(args []string) int {
	if cli.VersionRequested(args[1:], os.Stderr) {
		return 0
	}
	q := &qsub{given: map[byte]bool{}, directive: map[byte]bool{}, resources: map[string]bool{}, prefix: "#PBS"}
	cfg := cli.TorqueConfig()
	q.cfg = cfg
	if p, ok := os.LookupEnv("PBS_DPREFIX"); ok {
		q.prefix = p
	}
	opts, operands, bad := cli.Getopt(args[1:], optString, args[0], os.Stderr)
	if bad || len(operands) > 1 && !hasOpt(opts, 'x') {
		fmt.Fprint(os.Stderr, usageText)
		return 2
	}
	var cmdAttrs []pbs.Attr
	var ln net.Listener
	for _, o := range opts {
		if o.C == 'I' && ln == nil {
			var port int
			var err error
			if ln, port, err = interactiveListener(); err != nil {
				fmt.Fprintf(os.Stderr, "qsub: cannot create interactive socket: %v\n", err)
				return 1
			}
			cmdAttrs = append(cmdAttrs, pbs.Attr{Name: "interactive", Value: strconv.Itoa(port)})
		}
		attrs, err := q.option(o, false)
		if err != nil {
			fmt.Fprintf(os.Stderr, "qsub: %v\n", err)
			fmt.Fprint(os.Stderr, usageText)
			return 2
		}
		q.given[o.C] = true
		cmdAttrs = append(cmdAttrs, attrs...)
	}

	// The script: a file operand, or standard input; with -I -x the
	// operands are the command the interactive job runs instead.
	var script []byte
	jobName := "STDIN"
	interCmd := ""
	if q.interCmd && q.interactive && len(operands) > 0 {
		interCmd = strings.Join(operands, " ")
		jobName = filepath.Base(operands[0])
	} else if len(operands) > 1 {
		fmt.Fprint(os.Stderr, usageText)
		return 2
	} else if len(operands) == 1 && operands[0] != "-" {
		path := operands[0]
		fi, err := os.Stat(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "qsub: script file:: %s\n", batchreq.Strerror(int(toErrno(err))))
			return 1
		}
		if !fi.Mode().IsRegular() {
			fmt.Fprintf(os.Stderr, "qsub: script not a file\n")
			return 1
		}
		if script, err = os.ReadFile(path); err != nil {
			fmt.Fprintf(os.Stderr, "qsub: could not open script file %s\n", path)
			return 1
		}
		if !textStart(script) {
			fmt.Fprintf(os.Stderr, "qsub: file must be an ascii script\n")
			return 1
		}
		jobName = filepath.Base(path)
	} else if !q.interactive {
		var err error
		if script, err = io.ReadAll(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "qsub: error reading script from stdin\n")
			return 1
		}
	}
	script = bytes.ReplaceAll(script, []byte("\r\n"), []byte("\n"))
	if filtered, code := submitFilter(cfg, args, script); code != 0 {
		return code
	} else if filtered != nil {
		script = filtered
	}

	var dirAttrs []pbs.Attr
	if q.prefix != "" {
		for _, line := range directives(script, q.prefix) {
			words, err := splitWords(line)
			if err != nil {
				fmt.Fprintf(os.Stderr, "qsub: directive error: %s\n", line)
				return 1
			}
			dopts, dops, dbad := cli.Getopt(words, optString, "qsub", os.Stderr)
			if dbad || len(dops) > 0 {
				fmt.Fprintf(os.Stderr, "qsub: directive error: %s\n", line)
				return 1
			}
			for _, o := range dopts {
				if q.given[o.C] && o.C != 'l' && o.C != 'W' && o.C != 'v' {
					continue
				}
				if o.C == 'I' && ln == nil {
					// "#PBS -I": the job is interactive as with -I.
					var port int
					var err error
					if ln, port, err = interactiveListener(); err != nil {
						fmt.Fprintf(os.Stderr, "qsub: cannot create interactive socket: %v\n", err)
						return 1
					}
					dirAttrs = append(dirAttrs, pbs.Attr{Name: "interactive", Value: strconv.Itoa(port)})
				}
				attrs, err := q.option(o, true)
				if err != nil {
					fmt.Fprintf(os.Stderr, "qsub: %v\n", err)
					return 1
				}
				q.directive[o.C] = true
				dirAttrs = append(dirAttrs, attrs...)
			}
		}
	}

	var list []pbs.Attr
	if cfg.Bool("QSUBSENDGROUPLIST") {
		if g, err := user.LookupGroupId(strconv.Itoa(os.Getgid())); err == nil {
			list = append(list, pbs.Attr{Name: "group_list", Value: g.Name + "," + g.Name})
		}
	}
	list = append(list, cmdAttrs...)
	if len(args) > 1 {
		list = append(list, pbs.Attr{Name: "submit_args", Value: strings.Join(args[1:], " ")})
	}
	if q.x11 {
		auth, err := x11Auth(cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "qsub: %v\n", err)
			return 1
		}
		list = append(list, pbs.Attr{Name: "forward_x11", Value: auth})
	}
	if !q.given['N'] {
		list = append(list, pbs.Attr{Name: "Job_Name", Value: jobName})
	}
	if interCmd != "" {
		list = append(list, pbs.Attr{Name: "inter_cmd", Value: interCmd})
	}
	list = append(list, dirAttrs...)
	for _, d := range defaults {
		if !q.given[d.letter] && !q.directive[d.letter] {
			a := d.attr
			switch a.Name {
			case "Checkpoint":
				if v := cfg["DEFAULTCKPT"]; v != "" {
					a.Value = v
				}
			case "Rerunable":
				if cfg.IsFalse("RERUNNABLEBYDEFAULT") {
					a.Value = "FALSE"
				}
			case "fault_tolerant":
				if cfg.Bool("FAULT_TOLERANT_BY_DEFAULT") {
					a.Value = "TRUE"
				}
			}
			list = append(list, a)
		}
	}
	// init_work_dir is always sent ($PWD or ""), except that a directory
	// given with -d or -w is not overridden by it: the server keeps the
	// last value of an attribute.
	if !q.given['d'] && !q.given['w'] && !q.directive['d'] && !q.directive['w'] {
		list = append(list, pbs.Attr{Name: "init_work_dir", Value: initWorkDir()})
	}

	// The server: the destination's, else torque.cfg's SERVERHOST, else
	// the default server.
	_, connServer := cli.SplitDest(q.destination)
	if connServer == "" {
		connServer = cfg["SERVERHOST"]
	}
	server := connServer
	if server == "" {
		server = pbs.DefaultServer()
	}
	list = append(list, pbs.Attr{Name: "Variable_List", Value: q.variableList(server)})
	if cfg.Bool("VALIDATEGROUP") {
		if err := validateGroups(list); err != nil {
			fmt.Fprintf(os.Stderr, "qsub: %v\n", err)
			return 1
		}
	}
	if n, err := strconv.Atoi(cfg["QSUBSLEEP"]); err == nil && n > 0 {
		time.Sleep(time.Duration(n) * time.Second)
	}
	c, err := cli.ConnectRetry(connServer, q.retryTime())
	if err != nil {
		return cli.ConnectFailed(os.Stderr, "qsub", cli.ServerName(connServer), err)
	}
	id, err := c.Submit(list, script, q.destination, "")
	if err != nil {
		c.Drop()
		return cli.RequestFailed(os.Stderr, "qsub", err, "", "submitting job")
	}
	c.Close()
	if ln != nil {
		return runInteractive(ln, id)
	}
	if !q.noPrint {
		fmt.Println(id)
	}
	return 0
}

// initWorkDir is $PWD when it names the current directory, else "".
func initWorkDir() string {
	pwd := os.Getenv("PWD")
	if pwd == "" {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	a, err1 := os.Stat(pwd)
	b, err2 := os.Stat(wd)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return ""
	}
	return pwd
}

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

// directives returns the option text of the script's directive lines: the
// lines starting (after blanks) with prefix that come before the first
// executable line, with "\" continuations joined.
func directives(script []byte, prefix string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(script))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	pending := ""
	for sc.Scan() {
		line := sc.Text()
		if pending != "" {
			line = pending + line
			pending = ""
		}
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, prefix) {
			rest := trimmed[len(prefix):]
			if strings.HasSuffix(rest, "\\") {
				pending = trimmed[:len(trimmed)-1]
				continue
			}
			if rest == "" || rest[0] == ' ' || rest[0] == '\t' {
				out = append(out, strings.TrimSpace(rest))
			}
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ":") {
			continue
		}
		break
	}
	return out
}

// splitWords splits a directive's text into words, honouring quotes and
// stopping at a comment.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unmatched quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// defaultSubmitFilter is run when torque.cfg names no SUBMITFILTER.
const defaultSubmitFilter = "/usr/local/sbin/torque_submitfilter"

// submitFilter runs the site's submit filter, if any, with qsub's
// arguments and the script on its standard input; its output is the
// script to submit. It returns a non-zero exit status when the filter
// rejects the job.
func submitFilter(cfg pbs.TorqueConfig, args []string, script []byte) ([]byte, int) {
	path := cfg["SUBMITFILTER"]
	if path == "" {
		path = defaultSubmitFilter
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return nil, 0
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin = bytes.NewReader(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err == nil {
		return out, 0
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 255 {
		fmt.Fprintln(os.Stderr, "qsub: Your job has been administratively rejected by the queueing system.")
		fmt.Fprintln(os.Stderr, "qsub: There may be a more detailed explanation prior to this notice.")
		return nil, 1
	}
	fmt.Fprintln(os.Stderr, "qsub: submit filter returned an error code, aborting job submission.")
	return nil, 1
}

func hasOpt(opts []cli.Opt, c byte) bool {
	for _, o := range opts {
		if o.C == c {
			return true
		}
	}
	return false
}

// retryTime is how long to retry connecting: -b, else $PBS_CLIENTRETRY,
// else torque.cfg's CLIENTRETRY, else 0.
func (q *qsub) retryTime() int {
	if q.retry > 0 {
		return q.retry
	}
	if n, err := strconv.Atoi(os.Getenv("PBS_CLIENTRETRY")); err == nil && n > 0 {
		return n
	}
	if n, err := strconv.Atoi(q.cfg["CLIENTRETRY"]); err == nil && n > 0 {
		return n
	}
	return 0
}

// isDir reports whether dir is a directory the user can change into (the
// check of -d unless torque.cfg says VALIDATEPATH false).
func isDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && unix.Access(dir, unix.X_OK) == nil
}

// defaultXauth is the xauth program used when torque.cfg names no
// XAUTHPATH.
const defaultXauth = "/usr/bin/xauth"

// x11Auth returns the forward_x11 value of "qsub -X":
// "<protocol>:<hex data>:<screen>" for $DISPLAY, from "xauth list".
func x11Auth(cfg pbs.TorqueConfig) (string, error) {
	display := os.Getenv("DISPLAY")
	if display == "" {
		return "", fmt.Errorf("DISPLAY not set")
	}
	screen := "0"
	if i := strings.LastIndexByte(display, ':'); i >= 0 {
		if _, sc, ok := strings.Cut(display[i+1:], "."); ok && sc != "" {
			screen = sc
		}
	}
	xauth := cfg["XAUTHPATH"]
	if xauth == "" {
		xauth = defaultXauth
	}
	out, err := exec.Command(xauth, "-q", "list", display).Output()
	if err != nil {
		return "", fmt.Errorf("cannot get X11 authentication data from %s: %w", xauth, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			return f[1] + ":" + f[2] + ":" + screen, nil
		}
	}
	return "", fmt.Errorf("no X11 authentication data for display %s", display)
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

// textStart reports whether the first 50 bytes of a script file are
// printable characters or white space, as qsub requires of script files.
func textStart(script []byte) bool {
	for _, c := range script[:min(len(script), 50)] {
		if (c < ' ' || c > '~') && c != '\n' && c != '\t' && c != '\r' && c != '\f' && c != '\v' {
			return false
		}
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
