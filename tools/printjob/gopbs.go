package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server"
)

// --- GoPBS pbs_mom job files ---------------------------------------------

// momJob is a GoPBS MOM's job file (mom_priv/jobs/<prefix>.JB): DIS
// strings job id and server address, DIS unsigned server port and session
// id, then the job's attribute list as in a batch reply.
type momJob struct {
	ID     string
	Server string
	Port   uint64
	SID    uint64
	Attrs  batchreq.AttrList
}

// parseMomJob decodes a GoPBS MOM job file.
func parseMomJob(b []byte) (*momJob, error) {
	r := dis.NewReader(bytes.NewReader(b))
	j := &momJob{}
	var err error
	if j.ID, err = r.Str(); err != nil {
		return nil, fmt.Errorf("job id: %w", err)
	}
	if j.Server, err = r.Str(); err != nil {
		return nil, fmt.Errorf("server address: %w", err)
	}
	if j.Port, err = r.Uint64(); err != nil {
		return nil, fmt.Errorf("server port: %w", err)
	}
	if j.SID, err = r.Uint64(); err != nil {
		return nil, fmt.Errorf("session id: %w", err)
	}
	if j.Attrs, err = batchreq.ReadReplyAttrList(r); err != nil {
		return nil, fmt.Errorf("attributes: %w", err)
	}
	return j, nil
}

func (j *momJob) print(w io.Writer, noAttrs bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sjobid:\t%s\n%s", rule, j.ID, rule)
	b.WriteString("format:\t\tGoPBS pbs_mom job file\n")
	fmt.Fprintf(&b, "server:\t\t%s:%d\n", j.Server, j.Port)
	fmt.Fprintf(&b, "session id:\t%d\n", j.SID)
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			name := a.Name
			if a.HasResource {
				name += "." + a.Resource
			}
			fmt.Fprintf(&b, "%s = %s\n", name, a.Value)
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// --- GoPBS pbs_server store records --------------------------------------

// storeFile is the GoPBS server database in server_priv (package
// server/store; its write-ahead log is storeFile.wal).
const storeFile = "serverdb.bolt"

// errServerRunning reports a database locked by a running pbs_server.
var errServerRunning = errors.New("the server database is in use by a running pbs_server (use qstat -f instead)")

const stateLetters = "TQHWREC"

// printServerJob prints a job record of the GoPBS server store.
func printServerJob(w io.Writer, j *server.JobRecord, noAttrs bool) {
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
