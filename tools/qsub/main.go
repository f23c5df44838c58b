// Command qsub submits a batch job: it turns its options and the script's
// #PBS directives into job attributes in TORQUE 2.5.13's exact order
// (spec 05 §2), sends QueueJob, the script, RdytoCommit and Commit, and
// prints the new job id.
//
// main.go holds the command's flow (run); options.go the options and
// their checks; script.go the script's directives and submit filter;
// resources.go qsub's own -l rewrites; interactive.go "qsub -I".
package main

import (
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
