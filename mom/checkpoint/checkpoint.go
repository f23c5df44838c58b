// Package checkpoint is pbs_mom's interface to a site's checkpoint and
// restart programs ($checkpoint_script, $restart_script): what a job's
// Checkpoint attribute asks for, the arguments and environment the
// programs get, running a checkpoint, and the record of a job's
// checkpoints in its checkpoint directory.
//
// The programs are the site's: DMTCP, CRIU, BLCR or an application's own
// checkpointing plug in the same way. A checkpoint program is run as
//
//	checkpoint_script <session id> <job id> <user> <group> <dir> <name> <signal> <depth>
//
// and a restart program, run in place of the job's shell as the job's top
// process when the job runs again after a checkpoint, as
//
//	restart_script <session id> <job id> <user> <group> <dir> <name>
//
// where <dir> is the job's checkpoint directory (owned by the job's user),
// <name> the checkpoint's name within it (the program makes <dir>/<name>,
// a file or a directory), <signal> the signal number pbs_mom sends the job
// once the checkpoint is taken (0: the job goes on; 15: the job is
// checkpointed and held, or the server shuts down), <depth> the number of
// checkpoints kept, and <session id> the job's session (for a restart: the
// session of the run that was checkpointed). Both run as the job's user,
// with the job's environment plus PBS_CHECKPOINT_DIR and
// PBS_CHECKPOINT_NAME.
package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options is what a job's Checkpoint attribute (qsub -c) asks for.
type Options struct {
	// Never is "n" or "none": the job is never checkpointed.
	Never bool
	// Shutdown is "s" or "shutdown": checkpoint when the server shuts
	// down.
	Shutdown bool
	// Periodic is "c", "c=<minutes>", "periodic" or "interval=<minutes>":
	// checkpoint every Interval.
	Periodic bool
	// Interval is the period of periodic checkpoints; 0 is the MOM's
	// $checkpoint_interval.
	Interval time.Duration
	// Enabled is "enabled": checkpoints on request (qchkpt, qhold).
	Enabled bool
	// Depth is "depth=<n>": how many checkpoints are kept (default 1).
	Depth int
	// Dir is "dir=<path>": where the job's checkpoint directory is made.
	Dir string
}

// ParseOptions parses a Checkpoint value: comma-separated items n, none,
// s, shutdown, c, c=<minutes>, periodic, interval=<minutes>, enabled,
// depth=<n>, dir=<path>, u (unspecified). Unknown items are errors.
func ParseOptions(v string) (Options, error) {
	o := Options{Depth: 1}
	for _, item := range strings.Split(v, ",") {
		key, val, hasVal := strings.Cut(strings.TrimSpace(item), "=")
		minutes := func() error {
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 1<<20 {
				return fmt.Errorf("checkpoint: bad interval %q", item)
			}
			o.Interval = time.Duration(n) * time.Minute
			return nil
		}
		switch {
		case key == "" && !hasVal, key == "u" && !hasVal:
		case (key == "n" || key == "none") && !hasVal:
			o.Never = true
		case (key == "s" || key == "shutdown") && !hasVal:
			o.Shutdown = true
		case key == "enabled" && !hasVal:
			o.Enabled = true
		case (key == "c" || key == "periodic") && !hasVal:
			o.Periodic = true
		case key == "c" || key == "interval":
			o.Periodic = true
			if err := minutes(); err != nil {
				return o, err
			}
		case key == "depth" && hasVal:
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1000 {
				return o, fmt.Errorf("checkpoint: bad depth %q", item)
			}
			o.Depth = n
		case key == "dir" && hasVal && filepath.IsAbs(val):
			o.Dir = filepath.Clean(val)
		default:
			return o, fmt.Errorf("checkpoint: unknown item %q", item)
		}
	}
	return o, nil
}

// Job is a job as its checkpoint and restart programs see it.
type Job struct {
	SessionID int
	ID        string
	User      string
	Group     string
	// Dir is the job's checkpoint directory.
	Dir string
	// Env is the job's environment.
	Env []string
	// Cred is the job user's credential; Home the user's home directory,
	// where the programs start.
	Cred *syscall.Credential
	Home string
}

// Name returns the name of a checkpoint taken at t.
func Name(jobID string, t time.Time) string {
	return "ckpt." + jobID + "." + strconv.FormatInt(t.Unix(), 10)
}

// CheckpointArgs returns the arguments (program first) of a checkpoint.
func CheckpointArgs(script string, j Job, name string, signal, depth int) []string {
	return []string{script, strconv.Itoa(j.SessionID), j.ID, j.User, j.Group, j.Dir, name, strconv.Itoa(signal), strconv.Itoa(depth)}
}

// RestartArgs returns the arguments (program first) of a restart.
func RestartArgs(script string, j Job, name string) []string {
	return []string{script, strconv.Itoa(j.SessionID), j.ID, j.User, j.Group, j.Dir, name}
}

// Env returns the job's environment with the checkpoint's variables.
func Env(j Job, name string) []string {
	return append(append([]string(nil), j.Env...), "PBS_CHECKPOINT_DIR="+j.Dir, "PBS_CHECKPOINT_NAME="+name)
}

// maxOutput bounds what is kept of a failed program's output.
const maxOutput = 4096

// Run runs a checkpoint program for job j, naming the checkpoint name, and
// waits at most timeout for it. A program that exits 0 took the
// checkpoint; anything else is an error carrying the start of its output.
func Run(ctx context.Context, script string, j Job, name string, signal, depth int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := CheckpointArgs(script, j, name, signal, depth)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = Env(j, name)
	cmd.Dir = j.Home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: j.Cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &out, n: maxOutput}, &limitedWriter{w: &out, n: maxOutput}
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("checkpoint script %s: no end within %v", script, timeout)
	}
	if err != nil {
		text := strings.TrimSpace(out.String())
		if text != "" {
			return fmt.Errorf("checkpoint script %s: %w: %s", script, err, text)
		}
		return fmt.Errorf("checkpoint script %s: %w", script, err)
	}
	return nil
}

type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// lastFile names, in a job's checkpoint directory, the file holding the
// name of the last checkpoint taken.
const lastFile = ".last"

// Record notes name as the job's last checkpoint in dir and removes the
// oldest checkpoints beyond depth.
func Record(dir, name string, depth int) error {
	tmp := filepath.Join(dir, lastFile+".new")
	if err := os.WriteFile(tmp, []byte(name+"\n"), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, lastFile)); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	type ck struct {
		name string
		t    int64
	}
	var cks []ck
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "ckpt.") {
			continue
		}
		i := strings.LastIndexByte(e.Name(), '.')
		t, err := strconv.ParseInt(e.Name()[i+1:], 10, 64)
		if err != nil {
			continue
		}
		cks = append(cks, ck{e.Name(), t})
	}
	sort.Slice(cks, func(a, b int) bool { return cks[a].t > cks[b].t })
	for i, c := range cks {
		if i >= max(depth, 1) && c.name != name {
			if err := os.RemoveAll(filepath.Join(dir, c.name)); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return nil
}

// ErrNone is returned by Last for a directory without a recorded
// checkpoint.
var ErrNone = errors.New("no checkpoint recorded")

// Last returns the name of the last checkpoint recorded in dir.
func Last(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, lastFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNone
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	name := strings.TrimSpace(string(b))
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return "", fmt.Errorf("checkpoint: bad name %q recorded in %s", name, dir)
	}
	return name, nil
}
