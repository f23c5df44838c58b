// This file carries a parsed command out against the servers: the Manager
// request of create, delete, set and unset, the status requests of list and
// print and what they print (exec, list, printQueues, printSets), the
// active command (active) and the server's errors (printErr).

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/pbs"
)

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
