package batchreq

// Protocol identification carried at the start of every request and reply.
const (
	PBS_BATCH_PROT_TYPE = 2 // protocol type
	PBS_BATCH_PROT_VER  = 1 // protocol version
)

// Size limits of the protocol (spec 02, constants table).
const (
	PBS_MAXUSER           = 32
	PBS_MAXGRPN           = 16
	PBS_MAXHOSTNAME       = 1024
	PBS_MAXSERVERNAME     = 1024
	PBS_MAXSVRJOBID       = 1046
	PBS_MAXCLTJOBID       = 2084
	PBS_MAXDEST           = 1024
	PBS_MAXQUEUENAME      = 15
	PBS_SIGNAMESZ         = 16
	PBS_MAXGPUID          = 16
	PBS_MAXCREDENTIAL_LEN = 2048

	// ScriptChunkSize is the largest JobScript chunk clients and the
	// server send.
	ScriptChunkSize = 65536
)

// Default ports of the daemons.
const (
	PBS_BATCH_SERVICE_PORT     = 15001 // pbs_server ("pbs")
	PBS_MOM_SERVICE_PORT       = 15002 // pbs_mom batch ("pbs_mom")
	PBS_MANAGER_SERVICE_PORT   = 15003 // pbs_mom resource monitor ("pbs_resmon")
	PBS_SCHEDULER_SERVICE_PORT = 15004 // pbs_sched ("pbs_sched")
)

// Receiver capacities of bounded request and reply strings (inclusive).
const (
	capUser      = PBS_MAXUSER + 1           // header user name: 33
	capJobID     = PBS_MAXSVRJOBID + 1       // 1047
	capSvrJobID  = PBS_MAXSVRJOBID           // 1046
	capCltJobID  = PBS_MAXCLTJOBID           // 2084
	capDest      = PBS_MAXDEST + 1           // 1025
	capSignal    = PBS_SIGNAMESZ + 1         // 17
	capGroup     = PBS_MAXGRPN               // 16
	capHost      = PBS_MAXHOSTNAME + 1       // 1025
	capGPUID     = PBS_MAXGPUID + 1          // 17
	capMungeCred = PBS_MAXCREDENTIAL_LEN + 1 // 2049
)

// Batch request types (spec 02 §1.1), named as TORQUE names them.
const (
	PBS_BATCH_Connect       = 0
	PBS_BATCH_QueueJob      = 1
	PBS_BATCH_JobCred       = 2
	PBS_BATCH_jobscript     = 3
	PBS_BATCH_RdytoCommit   = 4
	PBS_BATCH_Commit        = 5
	PBS_BATCH_DeleteJob     = 6
	PBS_BATCH_HoldJob       = 7
	PBS_BATCH_LocateJob     = 8
	PBS_BATCH_Manager       = 9
	PBS_BATCH_MessJob       = 10
	PBS_BATCH_ModifyJob     = 11
	PBS_BATCH_MoveJob       = 12
	PBS_BATCH_ReleaseJob    = 13
	PBS_BATCH_Rerun         = 14
	PBS_BATCH_RunJob        = 15
	PBS_BATCH_SelectJobs    = 16
	PBS_BATCH_Shutdown      = 17
	PBS_BATCH_SignalJob     = 18
	PBS_BATCH_StatusJob     = 19
	PBS_BATCH_StatusQue     = 20
	PBS_BATCH_StatusSvr     = 21
	PBS_BATCH_TrackJob      = 22
	PBS_BATCH_AsyrunJob     = 23
	PBS_BATCH_Rescq         = 24
	PBS_BATCH_ReserveResc   = 25
	PBS_BATCH_ReleaseResc   = 26
	PBS_BATCH_CheckpointJob = 27
	PBS_BATCH_AsyModifyJob  = 28
	PBS_BATCH_StageIn       = 48
	PBS_BATCH_AuthenUser    = 49
	PBS_BATCH_OrderJob      = 50
	PBS_BATCH_SelStat       = 51
	PBS_BATCH_RegistDep     = 52
	PBS_BATCH_ReturnFiles   = 53
	PBS_BATCH_CopyFiles     = 54
	PBS_BATCH_DelFiles      = 55
	PBS_BATCH_JobObit       = 56
	PBS_BATCH_MvJobFile     = 57
	PBS_BATCH_StatusNode    = 58
	PBS_BATCH_Disconnect    = 59
	PBS_BATCH_AsySignalJob  = 60
	PBS_BATCH_AltAuthenUser = 61
	PBS_BATCH_GpuCtrl       = 62

	// PBS_BATCH_CEILING is one past the largest request type; a type
	// outside 0 … PBS_BATCH_CEILING-1 is a protocol error.
	PBS_BATCH_CEILING = 63
)

// requestNames are the names the server prints for request types in its
// logs (spec 02 §1.1 "Text name"); unnamed types (29–47) print "NONE".
var requestNames = [PBS_BATCH_CEILING]string{
	PBS_BATCH_Connect:       "Connect",
	PBS_BATCH_QueueJob:      "QueueJob",
	PBS_BATCH_JobCred:       "JobCred",
	PBS_BATCH_jobscript:     "JobScript",
	PBS_BATCH_RdytoCommit:   "ReadyToCommit",
	PBS_BATCH_Commit:        "Commit",
	PBS_BATCH_DeleteJob:     "DeleteJob",
	PBS_BATCH_HoldJob:       "HoldJob",
	PBS_BATCH_LocateJob:     "LocateJob",
	PBS_BATCH_Manager:       "Manager",
	PBS_BATCH_MessJob:       "MessageJob",
	PBS_BATCH_ModifyJob:     "ModifyJob",
	PBS_BATCH_MoveJob:       "MoveJob",
	PBS_BATCH_ReleaseJob:    "ReleaseJob",
	PBS_BATCH_Rerun:         "RerunJob",
	PBS_BATCH_RunJob:        "RunJob",
	PBS_BATCH_SelectJobs:    "SelectJobs",
	PBS_BATCH_Shutdown:      "Shutdown",
	PBS_BATCH_SignalJob:     "SignalJob",
	PBS_BATCH_StatusJob:     "StatusJob",
	PBS_BATCH_StatusQue:     "StatusQueue",
	PBS_BATCH_StatusSvr:     "StatusServer",
	PBS_BATCH_TrackJob:      "TrackJob",
	PBS_BATCH_AsyrunJob:     "AsyncRunJob",
	PBS_BATCH_Rescq:         "ResourceQuery",
	PBS_BATCH_ReserveResc:   "ReserveResource",
	PBS_BATCH_ReleaseResc:   "ReleaseResource",
	PBS_BATCH_CheckpointJob: "CheckpointJob",
	PBS_BATCH_AsyModifyJob:  "AsyncModifyJob",
	PBS_BATCH_StageIn:       "StageIn",
	PBS_BATCH_AuthenUser:    "AuthenticateUser",
	PBS_BATCH_OrderJob:      "OrderJob",
	PBS_BATCH_SelStat:       "SelStat",
	PBS_BATCH_RegistDep:     "RegisterDependency",
	PBS_BATCH_ReturnFiles:   "ReturnFiles",
	PBS_BATCH_CopyFiles:     "CopyFiles",
	PBS_BATCH_DelFiles:      "DeleteFiles",
	PBS_BATCH_JobObit:       "JobObituary",
	PBS_BATCH_MvJobFile:     "MoveJobFile",
	PBS_BATCH_StatusNode:    "StatusNode",
	PBS_BATCH_Disconnect:    "Disconnect",
	PBS_BATCH_AsySignalJob:  "AsyncSignalJob",
	PBS_BATCH_AltAuthenUser: "AlternateUserAuthentication",
	PBS_BATCH_GpuCtrl:       "GPUControl",
}

// RequestName returns the name the server uses for a request type in its
// logs, e.g. "QueueJob", "ReadyToCommit", "AuthenticateUser". Unused
// types inside the valid range are "NONE"; types outside it are "NONE"
// as well, except GoPBS's own ("ResvSubmit", ...).
func RequestName(reqType int) string {
	if IsGoPBSRequest(reqType) {
		return goPBSRequestNames[reqType-PBS_BATCH_GoPBSFirst]
	}
	if reqType < 0 || reqType >= PBS_BATCH_CEILING || requestNames[reqType] == "" {
		return "NONE"
	}
	return requestNames[reqType]
}

// ServerDecodes reports whether a 2.5.13 pbs_server decodes the body of
// the request type (spec 02 §1.1 "Server decodes"). Types it does not
// decode are answered with PBSE_UNKREQ. Disconnect counts as decoded.
func ServerDecodes(reqType int) bool {
	switch {
	case reqType == PBS_BATCH_Connect,
		reqType > PBS_BATCH_AsyModifyJob && reqType < PBS_BATCH_StageIn,
		reqType == PBS_BATCH_ReturnFiles,
		reqType == PBS_BATCH_CopyFiles,
		reqType == PBS_BATCH_DelFiles,
		reqType == PBS_BATCH_AsySignalJob:
		return false
	}
	return reqType >= 0 && reqType < PBS_BATCH_CEILING
}

// Reply choices (spec 02 §4).
const (
	BATCH_REPLY_CHOICE_NULL        = 1
	BATCH_REPLY_CHOICE_Queue       = 2
	BATCH_REPLY_CHOICE_RdytoCommit = 3
	BATCH_REPLY_CHOICE_Commit      = 4
	BATCH_REPLY_CHOICE_Select      = 5
	BATCH_REPLY_CHOICE_Status      = 6
	BATCH_REPLY_CHOICE_Text        = 7
	BATCH_REPLY_CHOICE_Locate      = 8
	BATCH_REPLY_CHOICE_RescQuery   = 9
)

// Batch operations carried by each attribute-list entry (spec 02 §2.2;
// C enum batch_op).
const (
	SET      = 0
	UNSET    = 1
	INCR     = 2
	DECR     = 3
	EQ       = 4
	NE       = 5
	GE       = 6
	GT       = 7
	LE       = 8
	LT       = 9
	DFLT     = 10
	MERGE    = 11
	INCR_OLD = 12
)

var opNames = [...]string{"SET", "UNSET", "INCR", "DECR", "EQ", "NE", "GE", "GT", "LE", "LT", "DFLT", "MERGE", "INCR_OLD"}

// OpName returns the spec name of a batch operation ("SET", "EQ", ...),
// or "" for an undefined value.
func OpName(op int) string {
	if op < 0 || op >= len(opNames) {
		return ""
	}
	return opNames[op]
}

// Object types of Manage requests and Status replies (spec 02 §2.3).
const (
	MGR_OBJ_NONE   = -1
	MGR_OBJ_SERVER = 0
	MGR_OBJ_QUEUE  = 1
	MGR_OBJ_JOB    = 2
	MGR_OBJ_NODE   = 3
)

// Manage commands (spec 02 §2.4). LIST, PRINT and ACTIVE are client-side
// only and never travel in a Manager request.
const (
	MGR_CMD_CREATE = 0
	MGR_CMD_DELETE = 1
	MGR_CMD_SET    = 2
	MGR_CMD_UNSET  = 3
	MGR_CMD_LIST   = 4
	MGR_CMD_PRINT  = 5
	MGR_CMD_ACTIVE = 6
)

// MessJob file options (spec 02 §2.5).
const (
	MSG_OUT  = 1 // stdout
	MSG_ERR  = 2 // stderr
	MSG_BOTH = MSG_OUT | MSG_ERR
)

// Shutdown manners (spec 02 §2.5).
const (
	SHUT_SIG       = -1 // signal-initiated (internal, never on the wire)
	SHUT_IMMEDIATE = 0
	SHUT_DELAY     = 1
	SHUT_QUICK     = 2
)

// File types of JobScript and MvJobFile chunks (spec 02 §2.5).
const (
	JScript = 0
	StdIn   = 1
	StdOut  = 2
	StdErr  = 3
	Chkpt   = 4
)

// CopyFiles / DelFiles directions (spec 02 §2.5).
const (
	STAGE_DIR_IN  = 0
	STAGE_DIR_OUT = 1
	CKPT_DIR_IN   = 2
	CKPT_DIR_OUT  = 3
)

// CopyFiles / DelFiles pair flags (spec 02 §2.5).
const (
	STDJOBFILE = 1 // standard job file (stdout/stderr spool)
	JOBCKPFILE = 2 // checkpoint file
	STAGEFILE  = 3 // stage-in/stage-out file
)

// RegistDep operations (spec 02 §2.5).
const (
	JOB_DEPEND_OP_REGISTER = 1
	JOB_DEPEND_OP_RELEASE  = 2
	JOB_DEPEND_OP_READY    = 3
	JOB_DEPEND_OP_DELETE   = 4
	JOB_DEPEND_OP_UNREG    = 5
)

// RegistDep dependency types (spec 02 §2.5).
const (
	JOB_DEPEND_TYPE_AFTERSTART       = 0
	JOB_DEPEND_TYPE_AFTEROK          = 1
	JOB_DEPEND_TYPE_AFTERNOTOK       = 2
	JOB_DEPEND_TYPE_AFTERANY         = 3
	JOB_DEPEND_TYPE_BEFORESTART      = 4
	JOB_DEPEND_TYPE_BEFOREOK         = 5
	JOB_DEPEND_TYPE_BEFORENOTOK      = 6
	JOB_DEPEND_TYPE_BEFOREANY        = 7
	JOB_DEPEND_TYPE_ON               = 8
	JOB_DEPEND_TYPE_SYNCWITH         = 9
	JOB_DEPEND_TYPE_SYNCCT           = 10
	JOB_DEPEND_TYPE_AFTERSTARTARRAY  = 11
	JOB_DEPEND_TYPE_AFTEROKARRAY     = 12
	JOB_DEPEND_TYPE_AFTERNOTOKARRAY  = 13
	JOB_DEPEND_TYPE_AFTERANYARRAY    = 14
	JOB_DEPEND_TYPE_BEFORESTARTARRAY = 15
	JOB_DEPEND_TYPE_BEFOREOKARRAY    = 16
	JOB_DEPEND_TYPE_BEFORENOTOKARRAY = 17
	JOB_DEPEND_TYPE_BEFOREANYARRAY   = 18
)

var dependNames = [...]string{
	"after", "afterok", "afternotok", "afterany",
	"before", "beforeok", "beforenotok", "beforeany",
	"on", "syncwith", "synccount",
	"afterstartarray", "afterokarray", "afternotokarray", "afteranyarray",
	"beforestartarray", "beforeokarray", "beforenotokarray", "beforeanyarray",
}

// DependName returns the keyword of a RegistDep dependency type as users
// write it in "-W depend=" ("after", "afterok", ..., "beforeanyarray"),
// or "" for an undefined value.
func DependName(depType int) string {
	if depType < 0 || depType >= len(dependNames) {
		return ""
	}
	return dependNames[depType]
}

// JobCred credential types (spec 02 §2.5).
const (
	PBS_CREDTYPE_NONE = 0
)

// ShutdownName returns how the server logs a shutdown manner in
// "Starting to shutdown the server, type is <name>": "Immediate",
// "Delayed", "Quick" or "By Signal"; "" for other values.
func ShutdownName(manner int) string {
	switch manner {
	case SHUT_IMMEDIATE:
		return "Immediate"
	case SHUT_DELAY:
		return "Delayed"
	case SHUT_QUICK:
		return "Quick"
	case SHUT_SIG:
		return "By Signal"
	}
	return ""
}

// ObjTypeName returns the object type name the server prints in
// permission log lines ("Object: Job"): "Server", "Queue", "Job" or
// "Node"; "" for other values.
func ObjTypeName(objType int) string {
	switch objType {
	case MGR_OBJ_SERVER:
		return "Server"
	case MGR_OBJ_QUEUE:
		return "Queue"
	case MGR_OBJ_JOB:
		return "Job"
	case MGR_OBJ_NODE:
		return "Node"
	case MGR_OBJ_SCHED:
		return "Sched"
	}
	return ""
}
