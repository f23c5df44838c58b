package cli

import (
	"fmt"
	"os"
	"strings"

	"gopbs/pbs"
)

// Holds is qhold and qrls: "prog [-h {u|o|s}] [-t array_range]
// job_identifier..." applies op (HoldJob or ReleaseJob) with the hold
// types (default "u") and the array-range extension to every job, as
// RunJobOps does. It returns the exit status, 2 after a usage error.
func Holds(prog string, args []string, op func(c *pbs.Conn, id, holds, ext string) error) int {
	opts, ids, bad := Getopt(args[1:], "h:t:", args[0], os.Stderr)
	holds, ext := "u", ""
	for _, o := range opts {
		switch o.C {
		case 'h':
			holds = o.Arg
			if holds == "" || strings.Trim(holds, "uos") != "" {
				bad = true
			}
		case 't':
			ext = "array_range=" + o.Arg
		}
	}
	if bad || len(ids) == 0 {
		fmt.Fprintf(os.Stderr, "usage: %s [-h {u|o|s}] [-t array_range] job_identifier...\n", prog)
		return 2
	}
	return RunJobOps(prog, ids, func(c *pbs.Conn, id string) error {
		return op(c, id, holds, ext)
	})
}
