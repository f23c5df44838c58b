package cli

import (
	"fmt"
	"io"
	"strings"
)

// Opt is one option found by Getopt: its letter and its argument.
type Opt struct {
	C   byte
	Arg string
}

// Getopt parses args (without the program name) like the GNU C library's
// getopt, which TORQUE's commands use: options may be grouped ("-Qf"), an
// option's argument may be attached ("-uBob") or the next word, operands
// and options may be mixed (operands are collected in order), and "--"
// ends the options. optstring lists the letters, a letter followed by ':'
// takes an argument; a leading '+' stops at the first operand (POSIX
// mode). Errors are reported on w in glibc's words, prefixed with prog;
// bad is true if there was any.
func Getopt(args []string, optstring, prog string, w io.Writer) (opts []Opt, operands []string, bad bool) {
	posix := strings.HasPrefix(optstring, "+")
	optstring = strings.TrimPrefix(optstring, "+")
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if posix {
				operands = append(operands, args[i:]...)
				break
			}
			operands = append(operands, a)
			continue
		}
		for k := 1; k < len(a); k++ {
			c := a[k]
			idx := strings.IndexByte(optstring, c)
			if idx < 0 || c == ':' {
				fmt.Fprintf(w, "%s: invalid option -- '%c'\n", prog, c)
				opts = append(opts, Opt{C: '?'})
				bad = true
				continue
			}
			if idx+1 < len(optstring) && optstring[idx+1] == ':' {
				switch {
				case k+1 < len(a):
					opts = append(opts, Opt{C: c, Arg: a[k+1:]})
				case i+1 < len(args):
					i++
					opts = append(opts, Opt{C: c, Arg: args[i]})
				default:
					fmt.Fprintf(w, "%s: option requires an argument -- '%c'\n", prog, c)
					opts = append(opts, Opt{C: '?'})
					bad = true
				}
				break
			}
			opts = append(opts, Opt{C: c})
		}
	}
	return opts, operands, bad
}
