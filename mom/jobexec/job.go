// Package jobexec is pbs_mom's local execution engine (TORQUE 2.5.13,
// spec 11): it turns a committed job into a session of processes running as
// the job's user, feeds the job script to the user's shell, runs prologue and
// epilogue scripts, samples resource usage from /proc, enforces limits,
// delivers signals, reports the exit status and delivers output files.
//
// The package knows nothing about the wire protocol: the MOM's request
// handlers translate QueueJob/Commit/SignalJob/CopyFiles/DeleteJob into calls
// of Engine, and Engine reports job ends through Options.OnExit.
//
// Job processes are started through a small "starter" step that runs in a
// fresh copy of the current executable (see RunStarterIfRequested), so every
// binary embedding an Engine — pbs_mom and test binaries — must call
// RunStarterIfRequested first thing in main / TestMain.
package jobexec

import (
	"fmt"
	"strconv"
	"strings"
)

// Exit status values reported for jobs that did not end normally
// (JOB_EXEC_* in spec 10 §8.4).
const (
	JOB_EXEC_OK         = 0
	JOB_EXEC_FAIL1      = -1
	JOB_EXEC_FAIL2      = -2
	JOB_EXEC_RETRY      = -3
	JOB_EXEC_INITABT    = -4
	JOB_EXEC_INITRST    = -5
	JOB_EXEC_INITRMG    = -6
	JOB_EXEC_BADRESRT   = -7
	JOB_EXEC_CMDFAIL    = -8
	JOB_EXEC_STDOUTFAIL = -9
	JOB_EXEC_OVERLIMIT  = -10
)

// ExecFailedStatus is the exit status of a job whose shell could not be
// exec'ed after the start was reported successful.
const ExecFailedStatus = 254

// Resource is one Resource_List entry.
type Resource struct {
	Name  string
	Value string
}

// Var is one environment variable of the job's Variable_List.
type Var struct {
	Name  string
	Value string
}

// Job describes a job to run: the attributes MOM receives in QueueJob
// (spec 10 §6.2) that matter for execution.
type Job struct {
	ID      string // full job id, e.g. "17.srv.example.com"
	Prefix  string // hashname: file prefix for mom_priv/jobs and spool files
	Name    string // Job_Name
	Owner   string // Job_Owner, "user@host"
	User    string // euser
	Group   string // egroup; empty = the user's primary group
	Queue   string // queue
	Account string // Account_Name

	Resources []Resource // Resource_List in the order received
	Variables []Var      // Variable_List

	OutputPath    string // Output_Path "host:/path"
	ErrorPath     string // Error_Path "host:/path"
	JoinPath      string // Join_Path: "n", "oe" or "eo"
	KeepFiles     string // Keep_Files: "n", "o", "e", "oe", "eo"
	ShellPathList string // Shell_Path_List "path[@host][,path[@host]...]"
	Umask         int    // umask attribute; -1 when unset
	ExecHost      string // exec_host "host/N+host/N..."
	Cookie        string // cookie; generated when empty
	JobArguments  string // job_arguments (qsub -F)
	JobType       string // jobtype
	// Checkpoint is the Checkpoint attribute (qsub -c); CheckpointDir
	// checkpoint_dir. CheckpointName, set by the server when the job
	// runs again after a checkpoint, names the checkpoint to restart
	// from, and RestartSession is the session id of the run that took
	// it (checkpoint.go).
	Checkpoint     string
	CheckpointDir  string
	CheckpointName string
	RestartSession int
	// Interactive jobs (qsub -I): InteractivePort is the value of the
	// interactive attribute, the port qsub listens on at PBS_O_HOST;
	// InteractiveCmd is inter_cmd (qsub -I -x), run with "-c".
	Interactive     bool // set with InteractivePort == 0: rejected
	InteractivePort int
	InteractiveCmd  string
}

// Resource returns the value of a Resource_List entry.
func (j *Job) Resource(name string) (string, bool) {
	for _, r := range j.Resources {
		if r.Name == name {
			return r.Value, true
		}
	}
	return "", false
}

// Var returns the value of a Variable_List entry.
func (j *Job) Var(name string) (string, bool) {
	for _, v := range j.Variables {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// ResourceString returns the Resource_List as "name=value,name=value" (the
// prologue/epilogue argument form).
func (j *Job) ResourceString() string {
	parts := make([]string, len(j.Resources))
	for i, r := range j.Resources {
		parts[i] = r.Name + "=" + r.Value
	}
	return strings.Join(parts, ",")
}

// Seq returns the leading digits of the job id (the sequence number used in
// default output file names).
func (j *Job) Seq() string {
	i := 0
	for i < len(j.ID) && j.ID[i] >= '0' && j.ID[i] <= '9' {
		i++
	}
	return j.ID[:i]
}

// ParseVariableList splits a Variable_List value "A=1,B=x\,y" into
// variables. A backslash escapes the next character (commas inside values
// are sent as "\,"). Entries without "=" get an empty value.
func ParseVariableList(s string) []Var {
	var vars []Var
	var cur strings.Builder
	flush := func() {
		item := cur.String()
		cur.Reset()
		if item == "" {
			return
		}
		name, value, _ := strings.Cut(item, "=")
		vars = append(vars, Var{Name: name, Value: value})
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == ',':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return vars
}

// Vnode is one virtual node of exec_host.
type Vnode struct {
	Host  string
	Index int
}

// ParseExecHost parses "host/N+host/N..." into virtual nodes.
func ParseExecHost(s string) ([]Vnode, error) {
	if s == "" {
		return nil, nil
	}
	var out []Vnode
	for _, part := range strings.Split(s, "+") {
		host, idx, ok := strings.Cut(part, "/")
		if host == "" {
			return nil, fmt.Errorf("bad exec_host entry %q", part)
		}
		n := 0
		if ok {
			var err error
			if n, err = strconv.Atoi(idx); err != nil || n < 0 {
				return nil, fmt.Errorf("bad exec_host entry %q", part)
			}
		}
		out = append(out, Vnode{Host: host, Index: n})
	}
	return out, nil
}

// nodesCounts returns PBS_NUM_NODES and PBS_NUM_PPN from a nodes spec such
// as "2:ppn=4" (defaults 1 and 1).
func nodesCounts(nodes string) (numNodes, ppn int) {
	numNodes, ppn = 1, 1
	if nodes == "" {
		return
	}
	first := strings.SplitN(nodes, "+", 2)[0]
	fields := strings.Split(first, ":")
	if n, err := strconv.Atoi(fields[0]); err == nil && n > 0 {
		numNodes = n
	}
	for _, f := range fields[1:] {
		if v, ok := strings.CutPrefix(f, "ppn="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				ppn = n
			}
		}
	}
	return
}

// splitHostPath splits "host:/path" into host and path; a value without a
// host part returns an empty host.
func splitHostPath(s string) (host, path string) {
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.HasPrefix(s, "/") {
		return s[:i], s[i+1:]
	}
	return "", s
}
