package main

import (
	"strings"
	"testing"
)

// TestInteractivePrompts checks the prompts qmgr prints when standard
// input and output are terminals (spec 05 §6.1): "Qmgr: " before each
// command, "Qmgr< " before each continuation line, and no echo of the
// commands; without a terminal the commands are echoed and no prompt is
// printed; -e echoes each command, but a command read from a pipe only
// once. -n keeps qmgr from connecting.
func TestInteractivePrompts(t *testing.T) {
	input := "set server scheduling=true\nset server \\\nscheduling=false\nquit\nlist server\n"
	tests := []struct {
		name        string
		interactive bool
		stdout      string
		args        []string
	}{
		{"terminal", true, "Max open servers: 10239\nQmgr: Qmgr: Qmgr< Qmgr: ", nil},
		{"pipe", false, "Max open servers: 10239\nset server scheduling=true\nset server scheduling=false\nquit\n", nil},
	}
	pipeEcho := tests[1]
	pipeEcho.name, pipeEcho.args = "pipe with -e", []string{"qmgr", "-n", "-e"}
	termEcho := tests[0]
	termEcho.name, termEcho.args = "terminal with -e", []string{"qmgr", "-n", "-e"}
	termEcho.stdout = "Max open servers: 10239\nQmgr: set server scheduling=true\nQmgr: Qmgr< set server scheduling=false\nQmgr: quit\n"
	tests = append(tests, pipeEcho, termEcho)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			args := tt.args
			if args == nil {
				args = []string{"qmgr", "-n"}
			}
			status := run(args, strings.NewReader(input), &stdout, &stderr, tt.interactive)
			if status != 0 || stdout.String() != tt.stdout || stderr.String() != "" {
				t.Errorf("status %d, stdout %q, stderr %q; want 0, %q, \"\"", status, stdout.String(), stderr.String(), tt.stdout)
			}
		})
	}
}

// TestAbortExitStatus checks the -a exit statuses that need no server
// (spec 05 §6.1): a parse error stops the input with status 1, and
// without -a the same input runs to its end with status 0.
func TestAbortExitStatus(t *testing.T) {
	input := "set server scheduling=true\nbogus\nset server bogusattr=1\n"
	for _, tt := range []struct {
		args   []string
		status int
		echoed int // command lines echoed before stopping
	}{
		{[]string{"qmgr", "-n"}, 0, 3},
		{[]string{"qmgr", "-n", "-a"}, 1, 2},
		{[]string{"qmgr", "-n", "-a", "-z"}, 1, 2},
	} {
		var stdout, stderr strings.Builder
		status := run(tt.args, strings.NewReader(input), &stdout, &stderr, false)
		lines := strings.Count(stdout.String(), "\n") - 1 // "Max open servers"
		if status != tt.status || lines != tt.echoed {
			t.Errorf("%q: status %d, %d lines echoed (stdout %q); want %d, %d", tt.args, status, lines, stdout.String(), tt.status, tt.echoed)
		}
		quiet := strings.Contains(strings.Join(tt.args, " "), "-z")
		if quiet != (stderr.String() == "") {
			t.Errorf("%q: stderr %q", tt.args, stderr.String())
		}
	}
}
