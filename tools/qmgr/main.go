// Command qmgr is the batch system's administration shell: it creates,
// deletes, sets, unsets, lists and prints servers, queues and nodes with
// Manager and status requests (spec 05 §6).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

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

func (q *qmgr) printErr(name, server string, err error) {
	if q.quiet {
		return
	}
	if server == "" {
		server = "default"
	}
	n := pbs.Errno(err)
	if t := pbs.ServerText(err); t != "" {
		fmt.Fprintf(q.stderr, "qmgr obj=%s svr=%s: %s\n", name, server, t)
		if batchreq.IsSchedError(n) {
			// GoPBS's partition and sched codes: their number too,
			// as the seed shows them
			fmt.Fprintf(q.stderr, "qmgr: Error (%d) returned from server\n", n)
		}
		return
	}
	fmt.Fprintf(q.stderr, "qmgr: Error (%d - %s) returned from server\n", n, pbs.ErrorText(n))
}

func (q *qmgr) exec(c *pbs.Conn, verb string, obj int, name string, attrs []pbs.Attr) error {
	switch verb {
	case "create":
		return c.Manager(batchreq.MGR_CMD_CREATE, mgrObj[obj], name, attrs, "")
	case "delete":
		return c.Manager(batchreq.MGR_CMD_DELETE, mgrObj[obj], name, attrs, "")
	case "set":
		return c.Manager(batchreq.MGR_CMD_SET, mgrObj[obj], name, attrs, "")
	case "unset":
		return c.Manager(batchreq.MGR_CMD_UNSET, mgrObj[obj], name, attrs, "")
	case "list", "print", "active":
		for i := range attrs {
			attrs[i].ValueSet = true
		}
		if verb == "print" && obj == objServer {
			queues, err := c.StatusQueue("", nil, "")
			if err != nil {
				return err
			}
			srv, err := c.StatusServer(attrs, "")
			if err != nil {
				return err
			}
			q.printQueues(queues)
			fmt.Fprintln(q.stdout, "#")
			fmt.Fprintln(q.stdout, "# Set server attributes.")
			fmt.Fprintln(q.stdout, "#")
			for _, st := range srv {
				q.printSets(objServer, "", st.Attrs)
			}
			return nil
		}
		var list []pbs.Status
		var err error
		switch obj {
		case objServer:
			list, err = c.StatusServer(attrs, "")
		case objQueue:
			list, err = c.StatusQueue(name, attrs, "")
		case objNode:
			list, err = c.StatusNode(name, attrs, "")
		case objSched:
			list, err = c.StatusSched(name, attrs)
		}
		if err != nil {
			return err
		}
		switch {
		case verb == "active":
		case verb == "print" && obj == objQueue:
			q.printQueues(list)
		case verb == "print" && obj == objSched:
			q.printScheds(list)
		case verb == "print":
			fmt.Fprintln(q.stdout, "#")
			fmt.Fprintln(q.stdout, "# Create nodes and set their properties.")
			fmt.Fprintln(q.stdout, "#")
			for _, st := range list {
				fmt.Fprintf(q.stdout, "#\n# Create and define node %s\n#\ncreate node %s\n", st.Name, st.Name)
				q.printSets(objNode, st.Name, st.Attrs)
			}
		default:
			for _, st := range list {
				q.list(obj, st)
			}
		}
	}
	return nil
}

func (q *qmgr) printQueues(list []pbs.Status) {
	fmt.Fprintln(q.stdout, "#")
	fmt.Fprintln(q.stdout, "# Create queues and set their attributes.")
	fmt.Fprintln(q.stdout, "#")
	for _, st := range list {
		fmt.Fprintf(q.stdout, "#\n# Create and define queue %s\n#\ncreate queue %s\n", st.Name, st.Name)
		q.printSets(objQueue, st.Name, st.Attrs)
	}
}

// printSets prints the "set" lines that recreate the public attributes.
func (q *qmgr) printSets(obj int, name string, attrs []pbs.Attr) {
	prefix := "set " + objNames[obj] + " "
	if name != "" {
		prefix += name + " "
	}
	for _, a := range attrs {
		if !publicAttrs[obj][a.Name] {
			continue
		}
		for i, elem := range strings.Split(a.Value, ",") {
			op := "="
			if i > 0 {
				op = "+="
			}
			fmt.Fprintf(q.stdout, "%s%s %s %s\n", prefix, a.FullName(), op, elem)
		}
	}
}

// list prints one object as "list" does, folding values at column 80.
func (q *qmgr) list(obj int, st pbs.Status) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", objTitles[obj], st.Name)
	for _, a := range st.Attrs {
		fmt.Fprintf(&b, "\t%s = ", a.FullName())
		if a.Name == "mtime" && a.Resource == "" {
			if sec, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
				b.WriteString(time.Unix(sec, 0).Format("Mon Jan _2 15:04:05 2006"))
				b.WriteByte('\n')
				continue
			}
		}
		indent := len(a.Name) + 11
		if a.Resource != "" {
			indent += len(a.Resource) + 1
		}
		count := indent
		for i, elem := range strings.Split(a.Value, ",") {
			count += len(elem) + 1
			if i > 0 {
				b.WriteByte(',')
				if count > 80 {
					elem = strings.TrimLeft(elem, " ")
					b.WriteString("\n" + strings.Repeat(" ", indent))
					count = indent + len(elem) + 1
				}
			}
			b.WriteString(elem)
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	io.WriteString(q.stdout, b.String())
}

// active is the "active" command: with names it makes those objects the
// default targets (checking that queues and nodes exist), without names it
// lists the active objects.
func (q *qmgr) active(obj int, names []string) int {
	if len(names) == 0 {
		title, list := "Active servers:", q.servers
		switch obj {
		case objQueue:
			title, list = "Active queues:", q.activeQueues
		case objNode:
			title, list = "Active nodes:", q.activeNodes
		}
		fmt.Fprintln(q.stdout, title)
		for _, n := range list {
			name, svr, _ := strings.Cut(n, "@")
			if obj == objServer {
				name, svr = "", n
			}
			if svr == "" {
				svr = "default"
			}
			if obj == objServer {
				fmt.Fprintln(q.stdout, svr)
			} else {
				fmt.Fprintf(q.stdout, "%s@%s\n", name, svr)
			}
		}
		return 0
	}
	var ok []string
	code := 0
	for _, n := range names {
		name, svr, _ := strings.Cut(n, "@")
		if svr == "default" {
			svr = ""
		}
		if obj == objServer {
			if n == "default" {
				n = ""
			}
			if _, err := q.connFor(n); err != nil {
				code = exitConnect
				continue
			}
			ok = append(ok, n)
			continue
		}
		c, err := q.connFor(svr)
		if err != nil {
			code = exitConnect
			continue
		}
		var st []pbs.Status
		if obj == objQueue {
			st, err = c.StatusQueue(name, []pbs.Attr{{Name: "queue_type", ValueSet: true}}, "")
		} else {
			st, err = c.StatusNode(name, []pbs.Attr{{Name: "state", ValueSet: true}}, "")
		}
		if err != nil || len(st) == 0 {
			if obj == objQueue {
				fmt.Fprintf(q.stderr, "Queue does not exist: %s.\n", name)
			} else {
				fmt.Fprintf(q.stderr, "Node does not exist: %s.\n", name)
			}
			code = 4
			continue
		}
		ok = append(ok, n)
	}
	switch obj {
	case objServer:
		q.servers = ok
	case objQueue:
		q.activeQueues = ok
	case objNode:
		q.activeNodes = ok
	}
	return code
}

// attrPrefix returns the attribute name a word starts with.
func attrPrefix(w string) string {
	if i := strings.IndexAny(w, "=+-."); i >= 0 {
		return w[:i]
	}
	return w
}

// parser reads the words of one command.
type parser struct {
	s   string
	pos int
}

func (p *parser) skipBlanks() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// word returns the next blank-delimited word.
func (p *parser) word() string {
	p.skipBlanks()
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ' ' && p.s[p.pos] != '\t' {
		p.pos++
	}
	return p.s[start:p.pos]
}

func isNameChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// attributes parses "attr[.res] [op value] {, ...}".
func (p *parser) attributes(obj int, verb string) ([]pbs.Attr, int, string) {
	var out []pbs.Attr
	for {
		p.skipBlanks()
		if p.pos >= len(p.s) {
			if len(out) > 0 {
				return nil, p.pos, "syntax error - checklist failed"
			}
			return out, 0, ""
		}
		start := p.pos
		for p.pos < len(p.s) && isNameChar(p.s[p.pos]) {
			p.pos++
		}
		a := pbs.Attr{Name: p.s[start:p.pos]}
		if p.pos < len(p.s) && p.s[p.pos] == '.' {
			p.pos++
			rs := p.pos
			for p.pos < len(p.s) && (isNameChar(p.s[p.pos]) || p.s[p.pos] == '-') {
				p.pos++
			}
			a.Resource = p.s[rs:p.pos]
		}
		if a.Name == "" || !knownAttrs[obj][a.Name] {
			return nil, p.pos, "Syntax error - cannot locate attribute"
		}
		p.skipBlanks()
		hasOp := false
		switch {
		case strings.HasPrefix(p.s[p.pos:], "+="):
			a.Op, hasOp = batchreq.INCR_OLD, true
			p.pos += 2
		case strings.HasPrefix(p.s[p.pos:], "-="):
			a.Op, hasOp = batchreq.DECR, true
			p.pos += 2
		case strings.HasPrefix(p.s[p.pos:], "="):
			a.Op, hasOp = batchreq.SET, true
			p.pos++
		}
		if hasOp {
			if verb == "unset" || verb == "list" || verb == "print" {
				return nil, p.pos, "syntax error - checklist failed"
			}
			p.skipBlanks()
			v, ok := p.value()
			if !ok {
				return nil, p.pos, "syntax error - checklist failed"
			}
			a.Value = v
		} else if verb == "set" || verb == "create" {
			return nil, p.pos, "syntax error - checklist failed"
		}
		out = append(out, a)
		p.skipBlanks()
		if p.pos >= len(p.s) {
			return out, 0, ""
		}
		if p.s[p.pos] != ',' {
			return nil, p.pos, "syntax error - checklist failed"
		}
		p.pos++
	}
}

// value reads a value: a quoted string or text up to a blank or comma.
func (p *parser) value() (string, bool) {
	if p.pos >= len(p.s) {
		return "", false
	}
	if c := p.s[p.pos]; c == '"' || c == '\'' {
		end := strings.IndexByte(p.s[p.pos+1:], c)
		if end < 0 {
			return "", false
		}
		v := p.s[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return v, true
	}
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ' ' && p.s[p.pos] != '\t' && p.s[p.pos] != ',' {
		p.pos++
	}
	return p.s[start:p.pos], p.pos > start
}
