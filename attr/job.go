package attr

import "strconv"

// Job attribute numbers: positions in JobTable, which is also the order of
// a full StatusJob reply (spec 04 §3).
const (
	JobName                    = iota // Job_Name
	JobOwner                          // Job_Owner
	JobResourcesUsed                  // resources_used
	JobState                          // job_state
	JobQueue                          // queue
	JobServer                         // server
	JobAccountName                    // Account_Name
	JobCheckpoint                     // Checkpoint
	JobCtime                          // ctime
	JobDepend                         // depend
	JobErrorPath                      // Error_Path
	JobExecHost                       // exec_host
	JobExecGpus                       // exec_gpus
	JobExecutionTime                  // Execution_Time
	JobGroupList                      // group_list
	JobHoldTypes                      // Hold_Types
	JobInteractive                    // interactive
	JobJoinPath                       // Join_Path
	JobKeepFiles                      // Keep_Files
	JobMailPoints                     // Mail_Points
	JobMailUsers                      // Mail_Users
	JobMtime                          // mtime
	JobOutputPath                     // Output_Path
	JobPriority                       // Priority
	JobQtime                          // qtime
	JobRerunable                      // Rerunable
	JobResourceList                   // Resource_List
	JobSessionID                      // session_id
	JobShellPathList                  // Shell_Path_List
	JobStagein                        // stagein
	JobStageout                       // stageout
	JobSubstate                       // substate
	JobUserList                       // User_List
	JobVariableList                   // Variable_List
	JobEuser                          // euser
	JobEgroup                         // egroup
	JobHashname                       // hashname
	JobHopCount                       // hop_count
	JobQueueRank                      // queue_rank
	JobQueueType                      // queue_type
	JobSchedHint                      // sched_hint
	JobSecurity                       // security
	JobComment                        // comment
	JobCookie                         // cookie
	JobAltID                          // alt_id
	JobEtime                          // etime
	JobExitStatus                     // exit_status
	JobForwardX11                     // forward_x11
	JobSubmitArgs                     // submit_args
	JobArrayID                        // job_array_id
	JobArrayRequest                   // job_array_request
	JobUmask                          // umask
	JobStartTime                      // start_time
	JobStartCount                     // start_count
	JobCheckpointDir                  // checkpoint_dir
	JobCheckpointName                 // checkpoint_name
	JobCheckpointTime                 // checkpoint_time
	JobCheckpointRestartStatus        // checkpoint_restart_status
	JobRestartName                    // restart_name
	JobFaultTolerant                  // fault_tolerant
	JobCompTime                       // comp_time
	JobReported                       // reported
	JobJobtype                        // jobtype
	JobInterCmd                       // inter_cmd
	JobProxyUser                      // proxy_user
	JobSubmitHost                     // submit_host
	JobInitWorkDir                    // init_work_dir
	JobID                             // job_id
	JobArguments                      // job_arguments
	JobExtension                      // x (scheduler extension, qsub -W x=...)
	// GoPBS additions (seed 004, look-ahead scheduling), after TORQUE's.
	JobReserve            // reserve
	JobEstimatedStartTime // estimated_start_time
	JobEstimatedExecHost  // estimated_exec_host
	numJobAttrs
)

// NumJobAttrs is the number of job attribute definitions.
const NumJobAttrs = numJobAttrs

func jobDefs() []Def {
	const (
		altrun = FlagAltRun
		seleq  = FlagSelEQ
		mom    = FlagMOM
		svrd   = FlagSendSvr
		create = FlagCreate
		shared = FlagShared
	)
	uom := perm("UOM", "UOM")
	ro := perm("UOM", "-")
	svr := perm("UOM", "S")
	defs := []Def{
		JobName:                    {Name: "Job_Name", Type: TypeString, Perm: uom, Flags: altrun | seleq | mom, Default: "none"},
		JobOwner:                   {Name: "Job_Owner", Type: TypeString, Perm: svr, Flags: seleq | mom | svrd | shared},
		JobResourcesUsed:           {Name: "resources_used", Type: TypeResourceList, Perm: svr},
		JobState:                   {Name: "job_state", Type: TypeChar, Perm: ro},
		JobQueue:                   {Name: "queue", Type: TypeString, Perm: uom, Flags: mom | shared},
		JobServer:                  {Name: "server", Type: TypeString, Perm: ro, Flags: mom | shared},
		JobAccountName:             {Name: "Account_Name", Type: TypeString, Perm: uom, Flags: seleq | mom | shared},
		JobCheckpoint:              {Name: "Checkpoint", Type: TypeString, Perm: uom, Flags: altrun | mom | shared},
		JobCtime:                   {Name: "ctime", Type: TypeLong, Perm: svr, Flags: svrd},
		JobDepend:                  {Name: "depend", Type: TypeDepend, Perm: uom},
		JobErrorPath:               {Name: "Error_Path", Type: TypeString, Perm: uom, Flags: altrun | seleq | mom},
		JobExecHost:                {Name: "exec_host", Type: TypeString, Perm: perm("UOM", "OS"), Flags: mom | shared},
		JobExecGpus:                {Name: "exec_gpus", Type: TypeString, Perm: perm("UOM", "OS"), Flags: mom | shared},
		JobExecutionTime:           {Name: "Execution_Time", Type: TypeLong, Perm: uom, Flags: altrun},
		JobGroupList:               {Name: "group_list", Type: TypeStringArray, Perm: uom, Flags: seleq | shared},
		JobHoldTypes:               {Name: "Hold_Types", Type: TypeHold, Perm: uom, Flags: altrun | seleq},
		JobInteractive:             {Name: "interactive", Type: TypeInteractive, Perm: ro, Flags: create | seleq | mom | svrd},
		JobJoinPath:                {Name: "Join_Path", Type: TypeString, Perm: uom, Flags: seleq | mom | shared},
		JobKeepFiles:               {Name: "Keep_Files", Type: TypeString, Perm: uom, Flags: seleq | mom | shared},
		JobMailPoints:              {Name: "Mail_Points", Type: TypeString, Perm: uom, Flags: altrun | seleq | shared},
		JobMailUsers:               {Name: "Mail_Users", Type: TypeStringArray, Perm: uom, Flags: altrun | seleq | shared},
		JobMtime:                   {Name: "mtime", Type: TypeLong, Perm: svr, Flags: svrd},
		JobOutputPath:              {Name: "Output_Path", Type: TypeString, Perm: uom, Flags: altrun | seleq | mom},
		JobPriority:                {Name: "Priority", Type: TypeLong, Perm: uom, Flags: altrun},
		JobQtime:                   {Name: "qtime", Type: TypeLong, Perm: ro},
		JobRerunable:               {Name: "Rerunable", Type: TypeBool, Perm: uom, Flags: altrun | seleq},
		JobResourceList:            {Name: "Resource_List", Type: TypeResourceList, Perm: uom, Flags: altrun | mom},
		JobSessionID:               {Name: "session_id", Type: TypeLong, Perm: svr},
		JobShellPathList:           {Name: "Shell_Path_List", Type: TypeStringArray, Perm: uom, Flags: altrun | seleq | mom | shared},
		JobStagein:                 {Name: "stagein", Type: TypeStringArray, Perm: uom},
		JobStageout:                {Name: "stageout", Type: TypeStringArray, Perm: uom},
		JobSubstate:                {Name: "substate", Type: TypeLong, Perm: perm("OM", "-")},
		JobUserList:                {Name: "User_List", Type: TypeStringArray, Perm: uom, Flags: seleq | shared},
		JobVariableList:            {Name: "Variable_List", Type: TypeStringArray, Perm: uom, Flags: FlagPrivRead | altrun | seleq | mom},
		JobEuser:                   {Name: "euser", Type: TypeString, Perm: perm("M", "-"), Flags: mom | shared},
		JobEgroup:                  {Name: "egroup", Type: TypeString, Perm: perm("M", "-"), Flags: mom | shared},
		JobHashname:                {Name: "hashname", Type: TypeString, Perm: perm("M", "-"), Flags: mom},
		JobHopCount:                {Name: "hop_count", Type: TypeLong, Perm: perm("-", "S"), Flags: svrd},
		JobQueueRank:               {Name: "queue_rank", Type: TypeLong, Perm: perm("M", "-")},
		JobQueueType:               {Name: "queue_type", Type: TypeChar, Perm: perm("M", "-"), Flags: seleq},
		JobSchedHint:               {Name: "sched_hint", Type: TypeString, Perm: perm("UOM", "OMS"), Flags: altrun | svrd},
		JobSecurity:                {Name: "security", Type: TypeString, Perm: perm("-", "S"), Flags: svrd},
		JobComment:                 {Name: "comment", Type: TypeString, Perm: perm("UOM", "OMS"), Flags: altrun | shared},
		JobCookie:                  {Name: "cookie", Type: TypeString, Perm: perm("-", "S"), Flags: mom | svrd},
		JobAltID:                   {Name: "alt_id", Type: TypeString, Perm: svr},
		JobEtime:                   {Name: "etime", Type: TypeLong, Perm: svr, Flags: svrd},
		JobExitStatus:              {Name: "exit_status", Type: TypeLong, Perm: ro},
		JobForwardX11:              {Name: "forward_x11", Type: TypeString, Perm: perm("M", "U"), Flags: seleq | mom},
		JobSubmitArgs:              {Name: "submit_args", Type: TypeString, Perm: ro, Flags: create | svrd},
		JobArrayID:                 {Name: "job_array_id", Type: TypeLong, Perm: ro, Flags: svrd},
		JobArrayRequest:            {Name: "job_array_request", Type: TypeString, Perm: ro, Flags: create | svrd},
		JobUmask:                   {Name: "umask", Type: TypeLong, Perm: uom, Flags: seleq | mom},
		JobStartTime:               {Name: "start_time", Type: TypeLong, Perm: svr, Flags: mom | svrd},
		JobStartCount:              {Name: "start_count", Type: TypeLong, Perm: svr, Flags: svrd},
		JobCheckpointDir:           {Name: "checkpoint_dir", Type: TypeString, Perm: uom, Flags: mom | shared},
		JobCheckpointName:          {Name: "checkpoint_name", Type: TypeString, Perm: uom, Flags: altrun | mom},
		JobCheckpointTime:          {Name: "checkpoint_time", Type: TypeLong, Perm: perm("UOM", "OMS"), Flags: altrun},
		JobCheckpointRestartStatus: {Name: "checkpoint_restart_status", Type: TypeString, Perm: perm("UOM", "UOMS"), Flags: altrun},
		JobRestartName:             {Name: "restart_name", Type: TypeString, Perm: perm("UOM", "OMS"), Flags: altrun | mom},
		JobFaultTolerant:           {Name: "fault_tolerant", Type: TypeBool, Perm: uom, Flags: altrun | seleq | mom},
		JobCompTime:                {Name: "comp_time", Type: TypeLong, Perm: svr, Flags: svrd},
		JobReported:                {Name: "reported", Type: TypeBool, Perm: svr, Flags: svrd},
		JobJobtype:                 {Name: "jobtype", Type: TypeString, Perm: uom, Flags: seleq | mom | shared},
		JobInterCmd:                {Name: "inter_cmd", Type: TypeString, Perm: uom, Flags: mom},
		JobProxyUser:               {Name: "proxy_user", Type: TypeString, Perm: ro, Flags: create | shared},
		JobSubmitHost:              {Name: "submit_host", Type: TypeString, Perm: ro, Flags: create | svrd | shared},
		JobInitWorkDir:             {Name: "init_work_dir", Type: TypeString, Perm: ro, Flags: create | svrd | shared},
		JobID:                      {Name: "job_id", Type: TypeString, Perm: ro, Flags: create},
		JobArguments:               {Name: "job_arguments", Type: TypeString, Perm: uom, Flags: seleq | mom},
		// x carries scheduler extensions (Maui and Moab read ADVRES:,
		// QOS:, NACCESSPOLICY:, FLAGS: ... from it): stored and reported
		// verbatim, settable by the owner at submission and with qalter.
		JobExtension: {Name: "x", Type: TypeString, Perm: uom, Flags: seleq},
		// reserve=y asks the scheduler for a reservation when the job
		// cannot start at once; unset means n.
		JobReserve: {Name: "reserve", Type: TypeString, Perm: uom, Flags: seleq, Unset: "n", check: checkYesNo},
		// The scheduler's plan for a job holding a reservation: its
		// planned start (seconds since the epoch) and nodes.
		JobEstimatedStartTime: {Name: "estimated_start_time", Type: TypeLong, Perm: svr},
		JobEstimatedExecHost:  {Name: "estimated_exec_host", Type: TypeString, Perm: svr},
	}
	return defs[:numJobAttrs:numJobAttrs]
}

// checkYesNo accepts only y and n (PBSE_BADATVAL otherwise).
func checkYesNo(v Value) error {
	if s := v.Str(); s != "y" && s != "n" {
		return &Error{Code: pbseBadAtVal, Reason: "value " + strconv.Quote(s) + " is not y or n"}
	}
	return nil
}
