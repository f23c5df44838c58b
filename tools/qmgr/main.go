// Command qmgr is the batch system's administration shell: it creates,
// deletes, sets, unsets, lists and prints servers, queues and nodes with
// Manager and status requests (spec 05 §6).
//
// main.go holds the shell (its input lines and the dispatch of each
// command); parse.go reads a command's words and attributes; exec.go
// carries commands out against the servers; sched.go the sched objects;
// attrs.go the attribute names per object; help.go the help texts.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/pbs/cli"
)

const (
	objServer = iota
	objQueue
	objNode
	objSched // GoPBS: scheduler objects (issue 18, seed 003)
)

var objNames = [...]string{"server", "queue", "node", "sched"}
var objTitles = [...]string{"Server", "Queue", "Node", "Sched"}
var mgrObj = [...]int{batchreq.MGR_OBJ_SERVER, batchreq.MGR_OBJ_QUEUE, batchreq.MGR_OBJ_NODE, batchreq.MGR_OBJ_SCHED}

var verbs = []string{"create", "delete", "set", "unset", "list", "print", "active", "help", "quit", "exit"}

// Exit statuses with -a.
const (
	exitParse   = 1
	exitExec    = 2
	exitConnect = 3
)

type qmgr struct {
	abort, echo, syntaxOnly, quiet bool
	conns                          map[string]*pbs.Conn // by server name as written, "" = default
	servers                        []string             // the active servers
	activeQueues, activeNodes      []string             // "name@server" or "name"
	stdout, stderr                 io.Writer
	status                         int
}

// connFor returns the connection to server, connecting on first use.
func (q *qmgr) connFor(server string) (*pbs.Conn, error) {
	if c, ok := q.conns[server]; ok {
		return c, nil
	}
	c, err := cli.Connect(server)
	if err != nil {
		fmt.Fprintf(q.stderr, "qmgr: cannot connect to server %s (errno=%d) %s\n", server, pbs.Errno(err), cli.ErrText(err))
		return nil, err
	}
	q.conns[server] = c
	return c, nil
}

func (q *qmgr) closeAll() {
	for _, c := range q.conns {
		c.Close()
	}
}

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr, isTTY(0) && isTTY(1)) & 0xff)
}

// run is qmgr with its arguments; interactive says whether standard input
// and output are terminals, which makes qmgr prompt for commands instead
// of echoing them. It returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, interactive bool) int {
	opts, servers, bad := cli.Getopt(args[1:], "+ac:enz", args[0], stderr)
	q := &qmgr{stdout: stdout, stderr: stderr, conns: map[string]*pbs.Conn{}}
	var commands []string
	haveC := false
	for _, o := range opts {
		switch o.C {
		case 'a':
			q.abort = true
		case 'c':
			haveC = true
			commands = append(commands, o.Arg)
		case 'e':
			q.echo = true
		case 'n':
			q.syntaxOnly = true
		case 'z':
			q.quiet = true
		}
	}
	if bad {
		fmt.Fprintf(stderr, "Usage: %s [-a] [-c command] [-e] [-n] [-z] [server...]\n", args[0])
		return 1
	}
	if len(servers) == 0 {
		servers = []string{""}
	}
	if !q.syntaxOnly {
		for _, s := range servers {
			if _, err := q.connFor(s); err == nil {
				q.servers = append(q.servers, s)
			}
		}
		if len(q.servers) == 0 {
			return exitConnect
		}
		defer q.closeAll()
	}
	if haveC {
		for _, cmd := range commands {
			if q.line(cmd) {
				break
			}
		}
		return q.status
	}
	fmt.Fprintln(stdout, "Max open servers: 10239")
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		if interactive {
			fmt.Fprint(stdout, "Qmgr: ")
		}
		if !sc.Scan() {
			break
		}
		text := sc.Text()
		for strings.HasSuffix(text, "\\") {
			if interactive {
				fmt.Fprint(stdout, "Qmgr< ")
			}
			if !sc.Scan() {
				break
			}
			text = text[:len(text)-1] + sc.Text()
		}
		echo := q.echo
		if !interactive {
			// Commands read from a file or pipe are echoed as read;
			// -e adds no second copy.
			fmt.Fprintln(stdout, text)
			q.echo = false
		}
		stop := q.line(text)
		q.echo = echo
		if stop {
			break
		}
	}
	return q.status
}

func isTTY(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// line runs one input line (commands separated by ';'); it reports
// whether qmgr should stop.
func (q *qmgr) line(text string) bool {
	if i := strings.IndexByte(text, '#'); i >= 0 {
		text = text[:i]
	}
	for _, cmd := range strings.Split(text, ";") {
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		if q.echo {
			fmt.Fprintln(q.stdout, strings.TrimSpace(cmd))
		}
		stop, code := q.command(cmd)
		if code != 0 {
			if q.abort {
				q.status = code
				return true
			}
		}
		if stop {
			return true
		}
	}
	return false
}

func (q *qmgr) syntaxError(msg, line string, col int) int {
	if !q.quiet {
		fmt.Fprintf(q.stderr, "qmgr: %s\n", msg)
		fmt.Fprintln(q.stderr, line)
		fmt.Fprintf(q.stderr, "%s^\n", strings.Repeat(" ", col))
	}
	return exitParse
}

// command parses and runs one command. It returns whether to stop and the
// -a exit status of a failure (0 for success).
func (q *qmgr) command(line string) (bool, int) {
	p := &parser{s: line}
	verbWord := p.word()
	verb := ""
	for _, v := range verbs {
		if verbWord != "" && strings.HasPrefix(v, strings.ToLower(verbWord)) {
			verb = v
			break
		}
	}
	if verb == "" {
		if !q.quiet {
			fmt.Fprintf(q.stderr, "qmgr: Illegal operation: %s\n", verbWord)
			fmt.Fprintln(q.stderr, "Try 'help' if you are having trouble.")
		}
		return false, exitParse
	}
	switch verb {
	case "quit", "exit":
		return true, 0
	case "help":
		help(q.stdout, p.word())
		return false, 0
	}
	objWord := p.word()
	if objWord == "" {
		if !q.quiet {
			fmt.Fprintln(q.stderr, "qmgr: No object type given")
		}
		return false, exitParse
	}
	obj := -1
	for i, o := range objNames {
		if strings.HasPrefix(o, strings.ToLower(objWord)) {
			obj = i
			break
		}
	}
	if obj < 0 {
		if !q.quiet {
			fmt.Fprintf(q.stderr, "qmgr: Illegal object type: %s.\n", objWord)
		}
		return false, exitParse
	}
	// Names, unless the next word starts the attribute list: it is a
	// known attribute name or holds an operator (no name does).
	var names []string
	save := p.pos
	if w := p.word(); w != "" {
		if knownAttrs[obj][attrPrefix(w)] || strings.Contains(w, "=") {
			p.pos = save
		} else {
			names = strings.Split(w, ",")
		}
	}
	attrs, errCol, errMsg := p.attributes(obj, verb)
	if errMsg != "" {
		return false, q.syntaxError(errMsg, line, errCol)
	}
	needAttrs := verb == "set" || verb == "unset"
	if needAttrs && len(attrs) == 0 {
		return false, q.syntaxError("Syntax error - attribute required for operation", line, len(line))
	}
	if verb == "active" && len(attrs) > 0 {
		return false, q.syntaxError("Syntax error - operation does not allow attribute", line, len(line))
	}
	if q.syntaxOnly {
		return false, 0
	}
	if verb == "active" && obj == objSched {
		if !q.quiet {
			fmt.Fprintln(q.stderr, "qmgr: active is not supported for sched objects")
		}
		return false, exitParse
	}
	if verb == "active" {
		return false, q.active(obj, names)
	}
	type target struct{ name, server string }
	var targets []target
	switch {
	case len(names) > 0:
		if obj == objServer && len(names) > 1 && verb == "list" && len(attrs) == 0 {
			// "list server a,b": the comma word was taken for names.
			fmt.Fprintln(q.stderr, "qmgr: Protocol error, server disconnected")
			q.status = 1
			return true, 1
		}
		for _, n := range names {
			name, svr, _ := strings.Cut(n, "@")
			if obj == objServer {
				name, svr = n, n
				if n == "default" {
					name, svr = "", ""
				}
			}
			if svr == "default" {
				svr = ""
			}
			if svr == "active" {
				// "name@active" (or the server "active"): every active server.
				for _, s := range q.servers {
					if obj == objServer {
						name = s
					}
					targets = append(targets, target{name, s})
				}
				continue
			}
			targets = append(targets, target{name, svr})
		}
	case obj == objServer || obj == objSched:
		// a sched command without a name is the default scheduler's
		// (the seed's old syntax), or every scheduler's for list/print
		for _, s := range q.servers {
			targets = append(targets, target{"", s})
		}
	case verb == "list" || verb == "print":
		active := q.activeQueues
		if obj == objNode {
			active = q.activeNodes
		}
		if len(active) == 0 {
			for _, s := range q.servers {
				targets = append(targets, target{"", s})
			}
		}
		for _, a := range active {
			name, svr, _ := strings.Cut(a, "@")
			targets = append(targets, target{name, svr})
		}
	default:
		active := q.activeQueues
		if obj == objNode {
			active = q.activeNodes
		}
		if len(active) == 0 {
			if obj == objQueue {
				fmt.Fprintln(q.stdout, "No Active Queues, nothing done.")
			} else {
				fmt.Fprintln(q.stdout, "No Active Nodes, nothing done.")
			}
			return false, 0
		}
		for _, a := range active {
			name, svr, _ := strings.Cut(a, "@")
			targets = append(targets, target{name, svr})
		}
	}
	// Attribute lists are built by prepending: reverse command-line order.
	rev := make([]pbs.Attr, len(attrs))
	for i, a := range attrs {
		rev[len(attrs)-1-i] = a
	}
	code := 0
	for _, tg := range targets {
		c, err := q.connFor(tg.server)
		if err != nil {
			code = exitConnect
			continue
		}
		if err := q.exec(c, verb, obj, tg.name, rev); err != nil {
			code = exitExec
			q.printErr(tg.name, tg.server, err)
		}
	}
	return false, code
}
