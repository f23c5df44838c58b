// Command pbsnodes lists the batch nodes and marks them offline, clears or
// annotates them (StatusNode / Manager node requests; spec 05 §7).
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

const usageText = `usage:	%s [-{c|d|l|o|p|r}] [-s server] [-n] [-N "note"] [-q] node ...
	%s [-{a|x}] [-s server] [-q] [node]
`

func main() {
	cli.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	prog := args[0]
	if cli.VersionRequested(args[1:], stderr) {
		return 0
	}
	opts, nodes, bad := cli.Getopt(args[1:], "acdlnopqrs:xN:", prog, stderr)
	var mode byte = 'a'
	server, note, quiet, withNote, setNote := "", "", false, false, false
	modes := 0
	for _, o := range opts {
		switch o.C {
		case 'a', 'c', 'd', 'l', 'o', 'p', 'r', 'x':
			mode = o.C
			modes++
		case 'n':
			withNote = true
		case 'q':
			quiet = true
		case 's':
			server = o.Arg
		case 'N':
			note, setNote = o.Arg, true
		}
	}
	if bad || modes > 1 || (mode == 'c' || mode == 'o' || mode == 'r' || setNote) && len(nodes) == 0 {
		fmt.Fprintf(stderr, usageText, prog, prog)
		return 1
	}
	c, err := cli.Connect(server)
	if err != nil {
		if !quiet {
			fmt.Fprintf(stderr, "%s: cannot connect to server %s, error=%d (%s)\n",
				prog, cli.ServerName(server), pbs.Errno(err), cli.ErrText(err))
		}
		return 1
	}
	defer c.Close()

	if setNote {
		if len(note) > 256 {
			fmt.Fprintln(stderr, "Warning: note exceeds length limit (256) - server may reject it...")
		}
		if strings.Contains(note, "\n") {
			fmt.Fprintln(stderr, "Warning: note contains a newline - server may reject it...")
		}
		if note == "n" {
			note = ""
		}
		for _, n := range nodes {
			err := c.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, n, []pbs.Attr{{Name: "note", Value: note}}, "")
			if err != nil && !quiet {
				fmt.Fprintf(stderr, "Error setting note attribute for %s - %s\n", n, cli.ErrText(err))
			}
		}
		if mode == 'a' && modes == 0 {
			return 0
		}
	}

	switch mode {
	case 'd', 'p':
		return 0
	case 'o', 'c', 'r':
		var attrs []pbs.Attr
		switch mode {
		case 'o':
			attrs = []pbs.Attr{{Name: "state", Value: "offline", Op: batchreq.INCR}}
		case 'c':
			attrs = []pbs.Attr{{Name: "state", Value: "offline", Op: batchreq.DECR}}
		case 'r':
			attrs = []pbs.Attr{{Name: "state", Value: "offline", Op: batchreq.DECR}, {Name: "state", Value: "down", Op: batchreq.INCR}}
		}
		for _, n := range nodes {
			if err := c.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, n, attrs, ""); err != nil && !quiet {
				fmt.Fprintf(stderr, "Error marking node %s - %s\n", n, cli.ErrText(err))
			}
		}
		return 0
	case 'l':
		return list(c, prog, nodes, withNote, quiet, stdout, stderr)
	}

	// -a (default) and -x
	all, ok := statusNodes(c, prog, nodes, quiet, stderr)
	if !ok {
		return 1
	}
	if len(all) == 0 {
		if !quiet {
			fmt.Fprintf(stderr, "%s: No nodes found\n", prog)
		}
		return 2
	}
	if mode == 'x' {
		var b strings.Builder
		b.WriteString("<Data>")
		for _, st := range all {
			fmt.Fprintf(&b, "<Node><name>%s</name>", st.Name)
			for _, a := range st.Attrs {
				fmt.Fprintf(&b, "<%s>%s</%s>", a.FullName(), a.Value, a.FullName())
			}
			b.WriteString("</Node>")
		}
		b.WriteString("</Data>\n")
		io.WriteString(stdout, b.String())
		return 0
	}
	for _, st := range all {
		fmt.Fprintln(stdout, st.Name)
		for _, a := range st.Attrs {
			if strings.HasPrefix(a.Value, "?") {
				continue
			}
			fmt.Fprintf(stdout, "     %s = %s\n", a.FullName(), a.Value)
		}
		fmt.Fprintln(stdout)
	}
	return 0
}

// statusNodes asks for the status of the named nodes (all nodes when
// there are none). After a failure, which it reports unless quiet, ok is
// false.
func statusNodes(c *pbs.Conn, prog string, names []string, quiet bool, stderr io.Writer) (all []pbs.Status, ok bool) {
	if len(names) == 0 {
		names = []string{""}
	}
	for _, n := range names {
		st, err := c.StatusNode(n, nil, "")
		if err != nil {
			if quiet {
				return nil, false
			}
			if t := pbs.ServerText(err); t != "" {
				fmt.Fprintf(stderr, "%s: %s\n", prog, t)
			} else {
				code := pbs.Errno(err)
				fmt.Fprintf(stderr, "%s: Error %d (%s)\n", prog, code, pbs.ErrorText(code))
			}
			return nil, false
		}
		all = append(all, st...)
	}
	return all, true
}

// list is "pbsnodes -l [state] [node...]".
func list(c *pbs.Conn, prog string, args []string, withNote, quiet bool, stdout, stderr io.Writer) int {
	filter := ""
	if len(args) > 0 {
		switch strings.ToLower(args[0]) {
		case "free", "offline", "down", "reserve", "job-exclusive", "job-sharing", "busy",
			"state-unknown", "time-shared", "active", "all", "up":
			filter = strings.ToLower(args[0])
			args = args[1:]
		}
	}
	all, ok := statusNodes(c, prog, args, quiet, stderr)
	if !ok {
		return 1
	}
	for _, st := range all {
		state, _ := st.Get("state", "")
		if !matches(state, filter) {
			continue
		}
		note, hasNote := st.Get("note", "")
		if withNote && hasNote && note != "" {
			fmt.Fprintf(stdout, "%-20.20s %-26.26s %s\n", st.Name, state, note)
		} else {
			fmt.Fprintf(stdout, "%-20.20s %s\n", st.Name, state)
		}
	}
	return 0
}

func matches(state, filter string) bool {
	has := func(w string) bool {
		for _, s := range strings.Split(state, ",") {
			if s == w {
				return true
			}
		}
		return false
	}
	switch filter {
	case "":
		return has("down") || has("offline") || has("state-unknown")
	case "all":
		return true
	case "down":
		return has("down") || has("state-unknown")
	case "active":
		return has("busy") || has("job-exclusive") || has("job-sharing")
	case "up":
		return !has("down") && !has("offline") && !has("state-unknown")
	}
	return has(filter)
}
