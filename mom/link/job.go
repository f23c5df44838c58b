package link

import (
	"cmp"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/jobfile"
	"gopbs/mom/jobexec"
)

// Launch and run stages of a job at MOM (state/substate of spec 10 §6.4
// and §8).
type stage int

const (
	stageTransIn   stage = iota // QueueJob received (TRANSIT/TRANSIN 0/0)
	stageTransCM                // RdytoCommit received (TRANSIT/TRANSICM 0/1)
	stageRunning                // committed and started (RUNNING 4/42)
	stageSuspended              // suspended (4/43)
	stageExiting                // ended, obit in progress (EXITING 5/50..58)
	stageExited                 // obit acknowledged (EXITED 53), awaiting DeleteJob
)

// job is MOM's protocol-side record of one job.
type job struct {
	id     string
	attrs  batchreq.AttrList // as received in QueueJob (ModifyJob applied)
	spec   jobexec.Job       // guarded by Mom.mu (ModifyJob rebuilds it)
	prefix string            // file prefix (hashname); never changes
	order  uint64            // arrival order, for the jobs= status item; never changes
	stage  stage
	conn   *batchConn // the launch connection until Commit

	server     netip.Addr // peer of the Commit: where the obit goes
	serverPort int
	sid        int
	sidSent    bool
	termSent   bool // an interactive job's terminal was reported
	exit       *jobexec.Exit
	obitDue    bool // the end still has to be reported
	preobitOK  bool // the server confirmed the job; epilogue done
	rerun      bool
	stime      int64 // start time recorded in a recovered job file
	purged     bool  // purge ran for this instance

	// From a recovered job file: the HERE flag (mother superior) and
	// the trailing TM information (output ports, next task, node id).
	here  bool
	tm    jobfile.TM
	hasTM bool
}

// queueJobAttrs are the attribute names a MOM accepts in QueueJob (spec
// 10 §6.2); others are rejected with PBSE_NOATTR.
var queueJobAttrs = map[string]bool{
	"Job_Name": true, "Job_Owner": true, "queue": true, "server": true, "Account_Name": true,
	"Checkpoint": true, "Error_Path": true, "Output_Path": true, "exec_host": true, "exec_gpus": true,
	"interactive": true, "Join_Path": true, "Keep_Files": true, "Shell_Path_List": true, "umask": true,
	"Resource_List": true, "Variable_List": true, "euser": true, "egroup": true, "hashname": true,
	"cookie": true, "forward_x11": true, "start_time": true, "checkpoint_dir": true,
	"checkpoint_name": true, "restart_name": true, "fault_tolerant": true, "jobtype": true,
	"inter_cmd": true, "job_arguments": true, "gpu_flags": true, "session_id": true,
	"Priority": true, "Rerunable": true, "Mail_Points": true, "Mail_Users": true, "Hold_Types": true,
	"depend": true, "stagein": true, "stageout": true, "group_list": true, "User_List": true,
	"Execution_Time": true, "job_array_request": true, "job_id": true, "init_work_dir": true,
	"job_radix": true, "submit_args": true, "x": true, "login_node_id": true, "stageout_status": true,
	"exit_status": true, "comment": true, "etime": true, "ctime": true, "mtime": true, "qtime": true,
	"reported": true, "sched_hint": true, "proxy_user": true, "submit_host": true, "nppcu": true,
}

// jobSpec converts QueueJob attributes into what the execution engine
// needs.
func jobSpec(id string, attrs batchreq.AttrList) jobexec.Job {
	j := jobexec.Job{ID: id, Umask: -1}
	for _, a := range attrs {
		v := a.Value
		switch a.Name {
		case "Job_Name":
			j.Name = v
		case "Job_Owner":
			j.Owner = v
		case "euser":
			j.User = v
		case "egroup":
			j.Group = v
		case "queue":
			j.Queue = v
		case "Account_Name":
			j.Account = v
		case "Resource_List":
			if a.HasResource {
				j.Resources = append(j.Resources, jobexec.Resource{Name: a.Resource, Value: v})
			}
		case "Variable_List":
			j.Variables = append(j.Variables, jobexec.ParseVariableList(v)...)
		case "Output_Path":
			j.OutputPath = v
		case "Error_Path":
			j.ErrorPath = v
		case "Join_Path":
			j.JoinPath = v
		case "Keep_Files":
			j.KeepFiles = v
		case "Shell_Path_List":
			j.ShellPathList = v
		case "umask":
			if n, err := strconv.Atoi(v); err == nil {
				j.Umask = n
			}
		case "exec_host":
			j.ExecHost = v
		case "cookie":
			j.Cookie = v
		case "job_arguments":
			j.JobArguments = v
		case "jobtype":
			j.JobType = v
		case "interactive":
			// qsub -I sets it to the port it listens on at PBS_O_HOST.
			if port, err := strconv.Atoi(v); err == nil {
				j.Interactive, j.InteractivePort = port > 0, max(port, 0)
			} else {
				j.Interactive = v != "" && !strings.EqualFold(v, "false")
			}
		case "inter_cmd":
			j.InteractiveCmd = v
		case "hashname":
			j.Prefix = v
		case "Checkpoint":
			j.Checkpoint = v
		case "checkpoint_dir":
			j.CheckpointDir = v
		case "checkpoint_name":
			j.CheckpointName = v
		case "session_id":
			// sent with checkpoint_name only: the checkpointed run's
			j.RestartSession, _ = strconv.Atoi(v)
		}
	}
	if j.Prefix == "" {
		j.Prefix = id
	}
	return j
}

// firstExecHost returns the mother-superior host of an exec_host value.
func firstExecHost(s string) string {
	if i := strings.IndexAny(s, "/+:"); i >= 0 {
		return s[:i]
	}
	return s
}

// serverPortOf returns the port of the job's "server" attribute
// ("host:port"), else def.
func serverPortOf(attrs batchreq.AttrList, def int) int {
	if v, ok := attrs.Get("server"); ok {
		_, p := splitHostPort(v, def)
		return p
	}
	return def
}

// checkpointAttrs are checkpoint_name and checkpoint_time of a job's last
// checkpoint (none without one): the server keeps them and sends
// checkpoint_name back when the job runs again, to restart from it.
func checkpointAttrs(name string, at time.Time) batchreq.AttrList {
	if name == "" {
		return nil
	}
	l := batchreq.AttrList{batchreq.NewAttr("checkpoint_name", name)}
	if !at.IsZero() {
		l = append(l, batchreq.NewAttr("checkpoint_time", strconv.FormatInt(at.Unix(), 10)))
	}
	return l
}

// usageAttrs are the four resources_used entries.
func usageAttrs(u jobexec.Usage) batchreq.AttrList {
	var l batchreq.AttrList
	for _, r := range u.Resources() {
		l = append(l, batchreq.NewResourceAttr("resources_used", r.Name, r.Value))
	}
	return l
}

// Job states and substates MOM records in its job files (spec 12 §2).
const (
	jobStateTransit  = 0
	jobStateRunning  = 4
	jobStateExiting  = 5
	substateTransIn  = 0
	substateTransICM = 1
	substateRunning  = 42
	substateSuspend  = 43
	substateExiting  = 50
	substateExited   = 53

	svrflagHere = 0x01 // JOB_SVFLG_HERE: this MOM is the job's mother superior
)

// stateOf returns the state and substate TORQUE's MOM keeps for a job at
// stage s.
func stateOf(s stage) (state, substate int32) {
	switch s {
	case stageTransIn:
		return jobStateTransit, substateTransIn
	case stageTransCM:
		return jobStateTransit, substateTransICM
	case stageRunning:
		return jobStateRunning, substateRunning
	case stageSuspended:
		return jobStateRunning, substateSuspend
	case stageExiting:
		return jobStateExiting, substateExiting
	}
	return jobStateExiting, substateExited
}

// stageOf is the inverse of stateOf for a recovered job file.
func stageOf(state, substate int32) stage {
	switch {
	case state == jobStateTransit && substate == substateTransIn:
		return stageTransIn
	case state == jobStateTransit:
		return stageTransCM
	case state == jobStateRunning && substate == substateSuspend:
		return stageSuspended
	case state == jobStateExiting && substate == substateExited:
		return stageExited
	case state == jobStateExiting:
		return stageExiting
	}
	return stageRunning
}

// jobFilePath returns mom_priv/jobs/<prefix>.JB.
func (m *Mom) jobFilePath(prefix string) string {
	return filepath.Join(m.opt.Home, "mom_priv", "jobs", prefix+".JB")
}

// saveJob writes mom_priv/jobs/<prefix>.JB in TORQUE's layout (spec 13
// §6, MOM variant), so that a TORQUE MOM and GoPBS's read each other's
// files: state and substate, the HERE flag once committed, the start
// time, the union's server address, exit status and execution ids, the
// attributes as received (string arrays in their newline form, depend in
// its fixed field), session_id once the job started, and for an
// interactive job the trailing TM information with its port.
func (m *Mom) saveJob(j *job) error {
	tm, multi := m.msTM(j.id)
	m.mu.Lock()
	f := jobFile(j)
	if multi && !j.spec.Interactive {
		f.SetTM(tm) // the output goes to the demultiplexer's ports
	}
	user, group := j.spec.User, j.spec.Group
	m.mu.Unlock()
	mom := f.Mom()
	if cred, err := jobexec.LookupUser(user, group); err == nil {
		mom.UID, mom.GID = cred.UID, cred.GID
	}
	f.SetMom(mom)
	b, err := f.Marshal()
	if err != nil {
		return fmt.Errorf("save job %s: %w", j.id, err)
	}
	return writeJobFile(m.jobFilePath(j.prefix), b)
}

// resaveJob saves a job whose file exists again after a change of state
// (jobs that never had one, such as a sister's, get none).
func (m *Mom) resaveJob(j *job, function string) {
	if _, err := os.Stat(m.jobFilePath(j.prefix)); err != nil {
		return
	}
	if err := m.saveJob(j); err != nil {
		m.logErr(function, err, "cannot save job")
	}
}

// jobFile builds the job file of j. The caller holds m.mu.
func jobFile(j *job) *jobfile.Job {
	f := &jobfile.Job{Version: jobfile.QSVersion, ID: j.id, Prefix: j.prefix, Queue: j.spec.Queue}
	f.State, f.Substate = stateOf(j.stage)
	if j.stage >= stageRunning {
		f.Svrflags = svrflagHere
		if j.stime == 0 {
			j.stime = j.startTime("").Unix() // start_time, else now
		}
		f.Stime = j.stime
	}
	mom := jobfile.Mom{ServerAddr: j.server}
	if j.exit != nil {
		mom.ExitStatus = int32(j.exit.Status)
	}
	f.SetMom(mom)
	for _, a := range j.attrs {
		if a.Name == "session_id" || a.Name == "cookie" {
			continue // written from j.sid and j.spec.Cookie below
		}
		f.Attrs = append(f.Attrs, saveAttr(a))
	}
	if j.spec.Cookie != "" {
		// The cookie the mother superior made up (or the sister was
		// given): TM and IM requests after a restart must still match.
		f.Attrs = append(f.Attrs, jobfile.Attr{Name: "cookie", Value: j.spec.Cookie, Flags: jobfile.FlagSet})
	}
	if j.sid > 0 {
		f.Attrs = append(f.Attrs, jobfile.Attr{Name: "session_id", Value: strconv.Itoa(j.sid), Flags: jobfile.FlagSet})
	}
	sortRecords(f.Attrs)
	if j.spec.Interactive {
		port := int32(j.spec.InteractivePort)
		f.SetTM(jobfile.TM{Stdout: port, Stderr: port, NextTaskID: 1})
	}
	return f
}

// sortRecords puts job file records in the order TORQUE writes them
// (spec 13 §2.3): attribute-table order, the resources of one attribute
// by name; names the table does not know keep their order, last.
func sortRecords(recs []jobfile.Attr) {
	t := attr.JobTable()
	rank := func(name string) int {
		if i := t.Index(name); i >= 0 {
			return i
		}
		return t.Len()
	}
	slices.SortStableFunc(recs, func(a, b jobfile.Attr) int {
		if c := cmp.Compare(rank(a.Name), rank(b.Name)); c != 0 || a.Name != b.Name {
			return c
		}
		return strings.Compare(a.Resource, b.Resource)
	})
}

// saveAttr converts a QueueJob attribute into its job file record.
func saveAttr(a batchreq.Attr) jobfile.Attr {
	r := jobfile.Attr{Name: a.Name, Value: a.Value, Flags: jobfile.FlagSet}
	if a.HasResource {
		r.Resource = a.Resource
	}
	if a.Op == batchreq.DFLT {
		r.Flags |= jobfile.FlagDefault
	}
	switch {
	case a.Name == "depend":
		r.Size = jobfile.DependFieldSize
	case isStringArray(a.Name):
		if v, err := attr.Parse(attr.TypeStringArray, a.Value); err == nil {
			r.Value = v.Encode(attr.ModeSave)
		}
	}
	return r
}

// loadAttr converts a job file record back into the attribute as a
// QueueJob carries it.
func loadAttr(r jobfile.Attr) batchreq.Attr {
	a := batchreq.NewAttr(r.Name, r.Value)
	if r.Resource != "" {
		a = batchreq.NewResourceAttr(r.Name, r.Resource, r.Value)
	}
	if r.Flags&jobfile.FlagDefault != 0 {
		a.Op = batchreq.DFLT
	}
	if isStringArray(r.Name) {
		if v, err := attr.Parse(attr.TypeStringArray, r.Value); err == nil {
			a.Value = v.Encode(attr.ModeMOM)
		}
	}
	return a
}

// isStringArray reports whether the job attribute name holds an array of
// strings, stored one element per line in job files.
func isStringArray(name string) bool {
	d, ok := attr.JobTable().Lookup(name)
	return ok && d.Type == attr.TypeStringArray
}

// loadJob reads a job file written by saveJob or by TORQUE's MOM. The
// file prefix must match the file name, as TORQUE requires.
func loadJob(name string) (*job, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := jobfile.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if want := strings.TrimSuffix(filepath.Base(name), ".JB"); f.Prefix != want {
		return nil, fmt.Errorf("%s: file prefix %q does not match the file name", name, f.Prefix)
	}
	j := &job{id: f.ID, prefix: f.Prefix, stage: stageOf(f.State, f.Substate), stime: f.Stime,
		here: f.Svrflags&svrflagHere != 0}
	j.tm, j.hasTM = f.TM()
	exit, cookie := int32(0), ""
	if f.UnType == jobfile.UnionMom {
		mom := f.Mom()
		j.server, exit = mom.ServerAddr, mom.ExitStatus
	}
	for _, r := range f.Attrs {
		if r.Name == "session_id" && r.Resource == "" {
			j.sid, _ = strconv.Atoi(r.Value)
			continue
		}
		if r.Name == "cookie" && r.Resource == "" {
			cookie = r.Value
			continue
		}
		j.attrs = append(j.attrs, loadAttr(r))
	}
	if j.stage >= stageExiting {
		j.exit = &jobexec.Exit{JobID: j.id, SessionID: j.sid, Status: int(exit)}
	}
	j.spec = jobSpec(j.id, j.attrs)
	j.spec.Prefix = j.prefix
	j.spec.Cookie = cookie
	return j, nil
}

// writeJobFile replaces a job file: written beside it under a temporary
// name, synced, then renamed over it, so that a crash leaves the old or
// the new file, never a torn one (spec 13 §1.3 allows it).
func writeJobFile(name string, b []byte) error {
	tmp := strings.TrimSuffix(name, ".JB") + ".JC"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, name)
}
