package link

import (
	"net/netip"
	"strconv"
	"strings"

	"gopbs/batchreq"
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

// usageAttrs are the four resources_used entries.
func usageAttrs(u jobexec.Usage) batchreq.AttrList {
	var l batchreq.AttrList
	for _, r := range u.Resources() {
		l = append(l, batchreq.NewResourceAttr("resources_used", r.Name, r.Value))
	}
	return l
}
