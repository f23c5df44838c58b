package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gopbs/server/state"
)

// --- GoPBS pbs_server store records --------------------------------------

// storeFile is the GoPBS server database in server_priv (package
// server/store; its write-ahead log is storeFile.wal).
const storeFile = "serverdb.bolt"

// errServerRunning reports a database locked by a running pbs_server.
var errServerRunning = errors.New("the server database is in use by a running pbs_server (use qstat -f instead)")

const stateLetters = "TQHWREC"

// printServerJob prints a job record of the GoPBS server store.
func printServerJob(w io.Writer, j *state.JobRecord, noAttrs bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sjobid:\t%s\n%s", rule, j.ID, rule)
	b.WriteString("format:\t\tGoPBS pbs_server store record\n")
	letter := "?"
	if j.State >= 0 && int(j.State) < len(stateLetters) {
		letter = stateLetters[j.State : j.State+1]
	}
	fmt.Fprintf(&b, "state:\t\t0x%x (%s)\n", j.State, letter)
	fmt.Fprintf(&b, "substate:\t0x%x (%d)\n", j.Substate, j.Substate)
	fmt.Fprintf(&b, "hold:\t\t0x%x\n", j.Hold)
	fmt.Fprintf(&b, "queue:\t\t%s\n", j.Queue)
	fmt.Fprintf(&b, "queue rank:\t%d\n", j.Rank)
	if j.Parent != "" {
		fmt.Fprintf(&b, "array:\t\t%s index %d\n", j.Parent, j.ArrayIndex)
	}
	if j.ArrayRequest != "" {
		fmt.Fprintf(&b, "array request:\t%s\n", j.ArrayRequest)
		if len(j.ArrayCounts) >= 3 {
			fmt.Fprintf(&b, "array counts:\tsize %d, ok %d, not ok %d", j.ArrayCounts[0], j.ArrayCounts[1], j.ArrayCounts[2])
			if len(j.ArrayCounts) >= 4 {
				fmt.Fprintf(&b, ", started %d", j.ArrayCounts[3])
			}
			b.WriteString("\n")
		}
	}
	if j.PurgeAt != 0 {
		fmt.Fprintf(&b, "purge at:\t%d\n", j.PurgeAt)
	}
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			writeAttr(&b, a.Name, a.Resource, a.Value)
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}
