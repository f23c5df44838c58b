package main

import (
	"fmt"
	"strings"

	"gopbs/pbs"
)

// defaultSched is the scheduler every GoPBS server has; it is never
// created or deleted, and its host, port, sched_priv, sched_log and
// partitions are the server's.
const defaultSched = "default"

// fixedOnDefault lists the attributes print leaves out for the default
// scheduler (they cannot be set on it).
var fixedOnDefault = map[string]bool{"host": true, "port": true, "sched_priv": true, "sched_log": true, "partitions": true}

// printScheds prints the commands that recreate sched objects: create
// (except for the default scheduler) and set, with scheduling last so
// that a scheduler starts once it is fully defined.
func (q *qmgr) printScheds(list []pbs.Status) {
	fmt.Fprintln(q.stdout, "#")
	fmt.Fprintln(q.stdout, "# Create schedulers and set their attributes.")
	fmt.Fprintln(q.stdout, "#")
	for _, st := range list {
		fmt.Fprintf(q.stdout, "#\n# Create and define scheduler %s\n#\n", st.Name)
		if st.Name != defaultSched {
			fmt.Fprintf(q.stdout, "create sched %s\n", st.Name)
		}
		var attrs, last []pbs.Attr
		for _, a := range st.Attrs {
			switch {
			case st.Name == defaultSched && fixedOnDefault[a.Name]:
			case a.Name == "scheduling":
				last = append(last, a)
			default:
				attrs = append(attrs, a)
			}
		}
		for _, a := range append(attrs, last...) {
			if !publicAttrs[objSched][a.Name] {
				continue
			}
			if a.Name == "partitions" {
				q.printSets(objSched, st.Name, []pbs.Attr{a})
				continue
			}
			// one value, quoted when it holds blanks or commas
			// (a comment), so that qmgr reads it back whole
			v := a.Value
			if strings.ContainsAny(v, " \t,") {
				v = `"` + v + `"`
			}
			fmt.Fprintf(q.stdout, "set sched %s %s = %s\n", st.Name, a.Name, v)
		}
	}
}
