// Package plus holds the reservation commands of PluS (seed 002 §2.3):
// plus_reserve, plus_status, plus_cancel, plus_modify, plus_availnodes,
// plus_destroy, plus_commit, plus_abort and plus_account. Each command's
// main calls one function of this package with its arguments; the
// functions take their clock, output streams and connection from an Env
// so that tests run them in-process against a fake server.
//
// Options are written as PluS wrote them, one dash and a word (-mem,
// -ncpu, -sn, -ne). Exit status (the seed leaves §2.2.2 empty; GoPBS's
// choice): 0 on success, 1 when the server refuses or cannot be reached
// (the server's message on standard error), 2 for a bad command line
// (unknown option, missing or malformed value, an end before the start,
// ...), with the reason on standard error.
package plus

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gopbs/pbs"
)

// Exit statuses.
const (
	ExitOK     = 0
	ExitFailed = 1 // refused by the server, or it could not be reached
	ExitUsage  = 2 // bad command line
)

// Env is what a command runs with.
type Env struct {
	Stdout, Stderr io.Writer
	Now            time.Time
	// Connect connects to the default server.
	Connect func() (*pbs.Conn, error)
	// User is the invoking user, the owner of new reservations.
	User string
	// Home is the PBS home, for plus_account's default files.
	Home string
	// Loc is the location times are printed and typed in (nil: Local).
	Loc *time.Location
}

func (e *Env) loc() *time.Location {
	if e.Loc == nil {
		return time.Local
	}
	return e.Loc
}

// optKind says whether an option takes a value.
type optKind int

const (
	flag     optKind = iota // no value
	value                   // a value is required
	optValue                // a value may follow (plus_account -o [owner], -n [nodes])
)

// options parses PluS-style options: every option is "-word"; a value
// follows as the next argument. Repeated options keep the last value.
func options(args []string, spec map[string]optKind) (map[string]string, error) {
	got := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return nil, fmt.Errorf("unexpected argument %q", a)
		}
		name := strings.TrimPrefix(a, "-")
		kind, ok := spec[name]
		if !ok {
			return nil, fmt.Errorf("unknown option %s", a)
		}
		switch kind {
		case flag:
			got[name] = ""
		case value:
			if i+1 == len(args) {
				return nil, fmt.Errorf("option %s needs a value", a)
			}
			i++
			got[name] = args[i]
		case optValue:
			got[name] = ""
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				got[name] = args[i]
			}
		}
	}
	return got, nil
}

// cmd is one run of a command.
type cmd struct {
	*Env
	prog  string
	usage string
}

// usageError prints the problem and the usage line and returns ExitUsage.
func (c *cmd) usageError(format string, a ...any) int {
	fmt.Fprintf(c.Stderr, "%s: %s\n", c.prog, fmt.Sprintf(format, a...))
	fmt.Fprintf(c.Stderr, "usage: %s\n", c.usage)
	return ExitUsage
}

// badValue prints a malformed value and returns ExitUsage.
func (c *cmd) badValue(err error) int {
	fmt.Fprintf(c.Stderr, "%s: %v\n", c.prog, err)
	return ExitUsage
}

// failed prints a server refusal or a connection failure and returns
// ExitFailed.
func (c *cmd) failed(what string, err error) int {
	text := pbs.ServerText(err)
	if text == "" {
		var pe *pbs.Error
		if errors.As(err, &pe) {
			text = pbs.ErrorText(pe.Code)
		} else {
			text = err.Error()
		}
	}
	fmt.Fprintf(c.Stderr, "%s: %s: %s\n", c.prog, what, text)
	return ExitFailed
}

// connect connects to the server, reporting a failure.
func (c *cmd) connect() (*pbs.Conn, int) {
	conn, err := c.Connect()
	if err != nil {
		return nil, c.failed("cannot connect to the server", err)
	}
	return conn, ExitOK
}

// wantsHelp reports -h, -help or --help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

func (c *cmd) help() int {
	fmt.Fprintf(c.Stdout, "usage: %s\n", c.usage)
	return ExitOK
}

// splitNames splits a list of names separated by commas or "+".
func splitNames(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' || r == ' ' })
	return f
}

// Main runs a command with the process's environment and exits with its
// status: the default server (authenticated through pbs_iff), the real
// user, the PBS home and the clock.
func Main(run func(*Env, []string) int) {
	env := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now(), Home: pbs.Home(),
		Connect: func() (*pbs.Conn, error) { return pbs.Connect("") }}
	if u, err := pbs.CurrentUser(); err == nil {
		env.User = u
	}
	os.Exit(run(env, os.Args[1:]))
}
