// Command printjob prints the saved state of batch jobs: TORQUE 2.5.13
// job files (server_priv/jobs or mom_priv/jobs <prefix>.JB and .TA, spec 13
// §6; GoPBS's pbs_mom writes the same files) and the job records of a
// GoPBS pbs_server's store.
//
// Usage:
//
//	printjob [-a] [-s] [-d pbs_home] file|jobid...
//
// An operand naming a file is decoded as a TORQUE binary job file
// (package jobfile). Any other operand is a job id, looked up in
// the GoPBS server store (pbs_home/server_priv/serverdb.bolt and its
// write-ahead log, read-only; the server must not be running since it
// keeps the database locked), then as a TORQUE file
// server_priv/jobs/<id>.JB (or .TA) and mom_priv/jobs/<id>.JB. A job id
// without a server part matches the one stored job "<id>.<server>".
//
// A TORQUE file is printed as TORQUE's printjob prints it (captured
// "printjob 2.vm.JB"): the fixed part ("jobid:", "ji_qs version:",
// "state:", ... "union type exec:" with its members), "--attributes--",
// one "name[.resource] = value" line per saved attribute, and an empty
// line. The union members of the new, route and MOM variants and the
// GoPBS server record follow the same layout with their own fields (no
// capture shows them). -a prints the fixed part only; -s also prints the job
// script (the .SC file beside a job file, or the store's script) after a
// "--script--" line. -d sets PBS_HOME (default $PBS_HOME or the compiled-in
// home).
//
// Exit status: 0 when every operand was printed, 1 when one could not be
// read or found, 2 for a usage error (unknown option, missing argument,
// no operand, an operand that is neither a file nor a job id).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopbs/jobfile"
	"gopbs/pbs"
	"gopbs/pbs/cli"
	"gopbs/server/state"
	"gopbs/server/store"
)

const usageText = "usage: printjob [-a] [-s] [-d pbs_home] file|jobid...\n"

// printer holds the options of one run.
type printer struct {
	home    string
	noAttrs bool
	script  bool
	stdout  io.Writer
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, operands, bad := cli.Getopt(args, "asd:", "printjob", stderr)
	p := &printer{home: pbs.Home(), stdout: stdout}
	for _, o := range opts {
		switch o.C {
		case 'a':
			p.noAttrs = true
		case 's':
			p.script = true
		case 'd':
			p.home = o.Arg
		}
	}
	if bad || len(operands) == 0 {
		io.WriteString(stderr, usageText)
		return 2
	}
	for _, op := range operands {
		if _, err := os.Stat(op); err != nil {
			if _, err := pbs.ParseJobID(op); err != nil {
				fmt.Fprintf(stderr, "printjob: %s: no such file, and not a job id\n", op)
				io.WriteString(stderr, usageText)
				return 2
			}
		}
	}
	status := 0
	for _, op := range operands {
		var err error
		if _, serr := os.Stat(op); serr == nil {
			err = p.file(op)
		} else {
			err = p.jobID(op)
		}
		if err != nil {
			fmt.Fprintf(stderr, "printjob: %s: %v\n", op, err)
			status = 1
		}
	}
	return status
}

// file prints a job file.
func (p *printer) file(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !jobfile.IsJobFile(b) {
		return jobfile.ErrNotJobFile
	}
	j, err := jobfile.Parse(b)
	if j == nil {
		return err
	}
	printTorqueJob(p.stdout, j, p.noAttrs)
	if err != nil {
		return err
	}
	return p.scriptFile(path)
}

// scriptFile prints the .SC file beside a job file when -s was given.
func (p *printer) scriptFile(path string) error {
	if !p.script {
		return nil
	}
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".JB"), ".TA")
	b, err := os.ReadFile(base + ".SC")
	if err != nil {
		return fmt.Errorf("no script: %w", err)
	}
	p.printScript(b)
	return nil
}

func (p *printer) printScript(b []byte) {
	io.WriteString(p.stdout, "--script--\n")
	p.stdout.Write(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		io.WriteString(p.stdout, "\n")
	}
}

// errNoJob reports a job id found nowhere.
var errNoJob = errors.New("no such job")

// jobID finds and prints a job by id.
func (p *printer) jobID(id string) error {
	priv := filepath.Join(p.home, "server_priv")
	db := filepath.Join(priv, storeFile)
	if _, err := os.Stat(db); err == nil {
		if found, err := p.storeJob(db, id); found || err != nil {
			return err
		}
	}
	for _, dir := range []string{filepath.Join(priv, "jobs"), filepath.Join(p.home, "mom_priv", "jobs")} {
		for _, suffix := range []string{".JB", ".TA"} {
			names := []string{filepath.Join(dir, id+suffix)}
			if !strings.Contains(id, ".") {
				more, _ := filepath.Glob(filepath.Join(dir, id+".*"+suffix))
				names = append(names, more...)
			}
			for _, name := range names {
				if _, err := os.Stat(name); err == nil {
					return p.file(name)
				}
			}
		}
	}
	return errNoJob
}

// storeJob prints job id (or the one job whose id starts with "id.") from
// the GoPBS server database db, reporting whether it is there.
func (p *printer) storeJob(db, id string) (bool, error) {
	st, err := store.OpenReadOnly(db)
	if errors.Is(err, store.ErrLocked) {
		return false, errServerRunning
	}
	if err != nil {
		return false, err
	}
	defer st.Close()
	key := id
	val, err := st.Get(store.Jobs, key)
	if err != nil {
		return false, err
	}
	if val == nil {
		matches, err := st.Keys(store.Jobs, id+".")
		if err != nil {
			return false, err
		}
		switch {
		case len(matches) > 1:
			return false, fmt.Errorf("ambiguous job id: %s", strings.Join(matches, ", "))
		case len(matches) == 0:
			return false, nil
		}
		key = matches[0]
		if val, err = st.Get(store.Jobs, key); err != nil {
			return false, err
		}
	}
	j, err := state.DecodeJobRecord(key, val)
	if err != nil {
		return false, err
	}
	printServerJob(p.stdout, j, p.noAttrs)
	if p.script {
		sc, err := st.Get(store.Script, key)
		if err != nil {
			return false, err
		}
		if sc == nil {
			return false, fmt.Errorf("no script stored")
		}
		p.printScript(sc)
	}
	return true, nil
}
