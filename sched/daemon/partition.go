package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/sched/svrconn"
)

// The seed's texts of a run-time change of a scheduler's directories
// (seed 003, interface 2).
const (
	msgLogChanged   = "Scheduler log directory is changed to "
	msgPrivChanged  = "Scheduler priv directory is changed to "
	commentLogFail  = "Unable to change the sched_logs directory"
	commentPrivFail = "Unable to change the sched_priv directory"
)

// ErrNoPartition ends a scheduler other than the default one whose
// object has no partition: without one it would schedule what the
// default scheduler does, so it shuts down (seed 003, interface 2), and
// the server does not start it again until it has a partition.
var ErrNoPartition = errors.New("scheduler does not contain a partition")

// hello names a scheduler that has a name (Options.Name) to the server
// at the start of a cycle, so that the cycle sees its slice of the
// cluster (issue 18, seed 003). It reports whether the cycle is to be
// skipped: the server did not give the scheduler's attributes, or a
// scheduler other than the default one has no partition, when the error
// is ErrNoPartition.
func (d *Daemon) hello(conn *svrconn.Conn) (skip bool, err error) {
	if d.opts.Name == "" {
		return false, nil // TORQUE's way: the server's default scheduler
	}
	objs, err := conn.SchedHello(d.opts.Name)
	if err != nil || len(objs) != 1 {
		d.Log.Log(logline.EventError, logline.ClassServer, "schedule", "Unable to retrieve the scheduler attributes from server")
		return true, err
	}
	var parts, priv, logDir string
	for _, a := range objs[0].Attrs {
		switch a.Name {
		case "partitions":
			parts = a.Value
		case "sched_priv":
			priv = a.Value
		case "sched_log":
			logDir = a.Value
		}
	}
	if d.opts.Name != "default" && !d.takeDirs(conn, priv, logDir) {
		return true, nil
	}
	if d.opts.Name != "default" && strings.TrimSpace(parts) == "" {
		d.Log.Log(logline.EventSystem, logline.ClassServer, "schedule", "Scheduler does not contain a partition")
		return true, ErrNoPartition
	}
	d.Log.Log(logline.EventDebug2, logline.ClassServer, "schedule", "Scheduler "+d.opts.Name+" schedules partitions "+parts)
	return false, nil
}

// takeDirs takes on a sched_log or sched_priv of the scheduler's object
// that differs from the one it runs with (changed with qmgr while it
// runs): the log goes on in the new directory, the policy files are read
// from the new sched_priv and the accounting file is opened there, and
// each says so in the log. When the scheduler cannot take a directory
// on, it keeps the old one, sets its object's comment to the seed's text
// and its scheduling to false (the server then stops it), and reports
// false: the cycle is skipped.
func (d *Daemon) takeDirs(conn *svrconn.Conn, priv, logDir string) bool {
	if logDir != "" && filepath.Clean(logDir) != filepath.Clean(d.opts.LogDir) {
		if err := d.Log.SetDir(logDir); err != nil {
			d.dirFailed(conn, commentLogFail, err)
			return false
		}
		d.opts.LogDir = logDir
		d.Log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "schedule", msgLogChanged+logDir)
	}
	if priv != "" && filepath.Clean(priv) != filepath.Clean(d.priv) {
		if err := d.switchPriv(priv); err != nil {
			d.dirFailed(conn, commentPrivFail, err)
			return false
		}
		if err := os.Chdir(priv); err != nil {
			d.Log.Log(logline.EventError, logline.ClassServer, "schedule", err.Error())
		}
		d.Log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "schedule", msgPrivChanged+priv)
	}
	return true
}

// switchPriv makes dir, which must hold sched_config, the scheduler's
// sched_priv: it reads the policy files there, moves its lock file
// (sched.lock, when it holds one) there and opens the accounting file in
// dir/accounting, closing the old one. On failure (no sched_config, a bad
// policy file, a directory another scheduler has locked, no accounting
// directory) the scheduler keeps its old sched_priv, policy, lock and
// accounting file. Called with d.mu held (a cycle).
func (d *Daemon) switchPriv(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "sched_config")); err != nil {
		return err
	}
	old := d.priv
	back := func() {
		d.priv = old
		_ = d.loadPolicyLocked() // back to the old directory's files (read before)
	}
	d.priv = dir
	if err := d.loadPolicyLocked(); err != nil {
		back()
		return err
	}
	// The lock file follows sched_priv, as the accounting file does: the
	// server finds a scheduler's pid in its object's sched_priv.
	var lock *os.File
	if d.lock != nil {
		var err error
		if lock, err = takeLock(dir); err != nil {
			back()
			return err
		}
	}
	acct, err := d.openAccounting(dir)
	if err != nil {
		if lock != nil {
			dropLock(lock)
		}
		back()
		return err
	}
	if d.acct != nil {
		d.acct.Close()
	}
	d.acct = acct
	if lock != nil {
		dropLock(d.lock)
		d.lock = lock
	}
	return nil
}

// dirFailed reports a directory the scheduler could not take on: in its
// log, and in its object's comment, with scheduling set to false.
func (d *Daemon) dirFailed(conn *svrconn.Conn, comment string, err error) {
	d.Log.Log(logline.EventError, logline.ClassServer, "schedule", fmt.Sprintf("%s: %v", comment, err))
	if err := conn.SetSched(d.opts.Name, batchreq.NewAttr("comment", comment), batchreq.NewAttr("scheduling", "false")); err != nil {
		d.Log.Log(logline.EventError, logline.ClassServer, "schedule", "cannot set the scheduler's comment: "+err.Error())
	}
}
