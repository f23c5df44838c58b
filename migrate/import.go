// Package migrate turns the state a TORQUE 2.5 pbs_server left in its
// PBS_HOME (read by package migrate/torque) into a GoPBS home: the same
// server attributes, queues, nodes and jobs, written through the server's
// own record encoding (importdb.Database) into its store (server/store).
//
// Nothing is written unless every file decodes and every object is
// accepted, and a home that already holds a GoPBS database is refused, so
// that an import cannot be run twice over the same home.
package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"gopbs/migrate/torque"
	"gopbs/server/importdb"
	"gopbs/server/state"
)

// Running says what Import does with jobs that are running (or exiting)
// on a MOM when TORQUE stopped.
type Running int

const (
	// Refuse refuses the import, naming the jobs: drain them first.
	Refuse Running = iota
	// Requeue puts rerunnable running jobs back in their queue (their
	// MOMs must be told to kill them, e.g. by restarting pbs_mom without
	// -p); a running job that is not rerunnable, or an exiting job, still
	// refuses the import.
	Requeue
	// Keep keeps them running, as TORQUE's own warm start does: their MOMs
	// (which keep running after qterm -t quick) report them and send
	// their obits to GoPBS.
	Keep
)

// ParseRunning decodes the name of a Running policy.
func ParseRunning(s string) (Running, error) {
	switch s {
	case "refuse":
		return Refuse, nil
	case "requeue":
		return Requeue, nil
	case "keep":
		return Keep, nil
	}
	return 0, fmt.Errorf("unknown policy %q for running jobs (refuse, requeue or keep)", s)
}

// Options adjust Import.
type Options struct {
	Running Running
}

// Result tells what Import wrote.
type Result struct {
	Database      string // the database file written
	Queues, Nodes int
	Jobs          int      // jobs, array templates and sub-jobs included
	Requeued      []string // running jobs put back in their queue
	Kept          []string // jobs left running
	// Skipped lists jobs TORQUE was still receiving when it stopped (never
	// acknowledged to their submitters), which are not imported.
	Skipped []string
	// Dropped lists attributes GoPBS does not know, left out ("object:
	// name"); TORQUE itself discards unknown server and queue attributes.
	Dropped []string
}

// ErrImported is returned when the destination already holds a GoPBS
// database.
var ErrImported = errors.New("already holds a GoPBS database: importing twice is refused")

// DatabaseFile is where a GoPBS home keeps its store, under PBS_HOME.
const DatabaseFile = "server_priv/serverdb.bolt"

// Import reads the TORQUE home from and writes a GoPBS home at to (which
// may be the same directory: the TORQUE files are then left beside the
// GoPBS database, and accounting/, server_logs/ and spool/ stay where they
// are). For another directory, server_name, server_priv/nodes and the
// accounting files are written there too.
func Import(from, to string, opt Options) (*Result, error) {
	dbPath := filepath.Join(to, DatabaseFile)
	if _, err := os.Stat(dbPath); err == nil {
		return nil, fmt.Errorf("%s %w", dbPath, ErrImported)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := checkStopped(from); err != nil {
		return nil, err
	}
	h, err := torque.Read(from)
	if err != nil {
		return nil, err
	}
	db, res, err := build(h, opt)
	if err != nil {
		return nil, err
	}
	same, err := sameDir(from, to)
	if err != nil {
		return nil, err
	}
	w := &writer{}
	if err := w.write(db, h, from, to, same); err != nil {
		w.undo()
		return nil, err
	}
	res.Database = dbPath
	return res, nil
}

// checkStopped refuses a home whose TORQUE server still runs: server.lock
// holding the pid of a live process.
func checkStopped(home string) error {
	path := filepath.Join(home, "server_priv", "server.lock")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil // no lock file: nothing runs
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil
	}
	if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("%s: pbs_server (pid %d) still runs: stop it with qterm -t quick first (or remove the file if that process is not pbs_server)", path, pid)
	}
	return nil
}

func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// recordAttrs converts stored TORQUE records into server record
// attributes (values stay in save encoding, which the server accepts).
func recordAttrs(list []torque.Attr) []state.RecordAttr {
	out := make([]state.RecordAttr, 0, len(list))
	for _, a := range list {
		out = append(out, state.RecordAttr{Name: a.Name, Resource: a.Resource, Value: a.Value})
	}
	return out
}

// aclAttrs converts ACL files into attributes, in name order.
func aclAttrs(acls map[string]string) []state.RecordAttr {
	var out []state.RecordAttr
	for name, text := range acls {
		out = append(out, state.RecordAttr{Name: name, Value: text})
	}
	slices.SortFunc(out, func(a, b state.RecordAttr) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// build converts a decoded TORQUE home into a server database.
func build(h *torque.Home, opt Options) (*importdb.Database, *Result, error) {
	db := importdb.New()
	res := &Result{}
	serverFile := filepath.Join(h.Priv, "serverdb")
	if err := db.SetServer(int64(h.Server.NextJobID), append(recordAttrs(h.Server.Attrs), aclAttrs(h.ServerACLs)...)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", serverFile, err)
	}
	for _, q := range h.Queues {
		if err := db.AddQueue(q.Name, append(recordAttrs(q.Attrs), aclAttrs(q.ACLs)...)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(h.Priv, "queues", q.Name), err)
		}
		res.Queues++
	}
	for _, n := range h.Nodes {
		var attrs []state.RecordAttr
		if n.Note != "" {
			attrs = append(attrs, state.RecordAttr{Name: "note", Value: n.Note})
		}
		if err := db.AddNodes(n.Line, n.State&torque.NodeOffline != 0, n.State&torque.NodeReserve != 0, attrs); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(h.Priv, "nodes"), err)
		}
		res.Nodes++
	}
	if err := addJobs(db, h, opt, res); err != nil {
		return nil, nil, err
	}
	res.Jobs = db.JobCount()
	res.Dropped = db.Dropped
	return db, res, nil
}
