package main

import (
	"io"
	"testing"

	"gopbs/pbs"
)

// FuzzLine checks that no input line makes qmgr's parser panic (with -n,
// syntax check only, nothing is sent).
func FuzzLine(f *testing.F) {
	for _, s := range []string{
		"set server operators += bob@vm", "unset server comment", "create queue q2 queue_type=execution",
		"s q batch enabled = true, started='TRUE'", "list server scheduling,log_events", "active queue a,b@srv",
		"set queue batch resources_max.walltime=\"01:00:00\"", "p s; l q # comment", "set node vm state -= offline",
		"set server bogus=1", "set queue batch enabled", "'", "set server comment = \"unterminated",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		q := &qmgr{syntaxOnly: true, stdout: io.Discard, stderr: io.Discard, conns: map[string]*pbs.Conn{}}
		q.line(line)
	})
}
