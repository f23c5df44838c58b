package main

import (
	"fmt"
	"io"
	"strings"
)

// helpTopics are the topics of qmgr's help command (spec 05 §6.3); the
// texts are GoPBS's own, as the help text is not part of the protocol.
var helpTopics = []struct {
	name string
	text func() string
}{
	{"active", fixed(`Syntax: active object [name[,name...]]
Makes the named objects the ones later commands without names apply to.
Without names, lists the active objects of that type.`)},
	{"create", fixed(`Syntax: create object name[,name...] [attribute OP value[,...]]
Creates queues or nodes, optionally setting attributes.`)},
	{"delete", fixed(`Syntax: delete object name[,name...]
Deletes queues or nodes.`)},
	{"set", fixed(`Syntax: set object [name[,name...]] attribute[.resource] OP value[,...]
Sets attributes of the server, queues or nodes.`)},
	{"unset", fixed(`Syntax: unset object [name[,name...]] attribute[.resource][,...]
Removes attribute values.`)},
	{"list", fixed(`Syntax: list object [name[,name...]] [attribute[,attribute...]]
Lists objects and their attributes.`)},
	{"print", fixed(`Syntax: print object [name[,name...]]
Prints the qmgr commands that recreate the objects.`)},
	{"quit", fixed(`Syntax: quit
Ends qmgr.`)},
	{"exit", fixed(`Syntax: exit
Ends qmgr.`)},
	{"operators", fixed(`Operators: = sets a value, += adds to it, -= removes from it.`)},
	{"names", fixed(`Names: name[@server][,name[@server]...]; the server "default" is the default
server, "active" the active servers. A command's verb and object may be
abbreviated (s = set, l = list, p = print, q = queue, n = node, ...).`)},
	{"values", fixed(`Values: a word up to a blank or comma, or a string in double or single
quotes, which may hold blanks and commas.`)},
	{"attributes", fixed(`Attributes: see the topics serverpublic, serverro, queuepublic, queueexec,
queueroute, queuero and nodeattr.`)},
	{"serverpublic", names(serverPublic)},
	{"serverro", names(serverRO)},
	{"queuepublic", names(queuePublic)},
	{"queueexec", names([]string{"checkpoint_min", "checkpoint_defaults", "kill_delay", "max_user_run",
		"max_group_run", "max_running", "resources_available", "resources_default", "resources_max",
		"resources_min", "restartable", "hostlist", "is_transit"})},
	{"queueroute", names([]string{"route_destinations", "alt_router", "route_held_jobs",
		"route_waiting_jobs", "route_retry_time", "route_lifetime"})},
	{"queuero", names(queueRO)},
	{"nodeattr", names(append(append([]string{}, nodePublic...), nodeRO...))},
}

func fixed(s string) func() string { return func() string { return s } }

// names lists attribute names, several to a line.
func names(list []string) func() string {
	return func() string {
		var b strings.Builder
		line := 0
		for i, n := range list {
			if i > 0 {
				if line+len(n)+2 > 76 {
					b.WriteString(",\n")
					line = 0
				} else {
					b.WriteString(", ")
					line += 2
				}
			}
			b.WriteString(n)
			line += len(n)
		}
		return b.String()
	}
}

// help prints the help text of topic, or the general help and the list of
// topics for "" or an unknown topic.
func help(w io.Writer, topic string) {
	for _, t := range helpTopics {
		if topic != "" && t.name == strings.ToLower(topic) {
			fmt.Fprintln(w, t.text())
			return
		}
	}
	fmt.Fprintln(w, "General syntax: command [object][@server] [name] [attribute[.resource] OP value]")
	fmt.Fprintln(w, "Commands: active create delete set unset list print quit exit help")
	var topics []string
	for _, t := range helpTopics {
		topics = append(topics, t.name)
	}
	fmt.Fprintf(w, "Help topics: %s\n", strings.Join(topics, " "))
	fmt.Fprintln(w, `Type "help <topic>" for more.`)
}
