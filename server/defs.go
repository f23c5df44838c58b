package server

import "strings"

// valueType is the value syntax of an attribute or resource (spec 04 §1).
type valueType uint8

const (
	tLong valueType = iota
	tBool
	tChar
	tStr
	tArst // string array (also ACLs)
	tSize
	tTime
	tResc // resource list
	tHold
	tDepend
	tNodeState
	tNodeType
	tJobs
	tState // server_state, computed
)

// Access bits (spec 04 §2).
const (
	rdU = 1 << iota // user read
	rdO
	rdM
	wrU
	wrO
	wrM
	wrS      // privileged connections (server, scheduler, MOM)
	fCreate  // settable by a user at submission
	fAltRun  // alterable while running
	fSelEq   // select EQ/NE only
	fPrivR   // owner/operator/manager read only
	fNoShow  // never reported
	fComp    // computed on status
	fExecQ   // queue attribute for execution queues only
	fRouteQ  // queue attribute for route queues only
	fDefault // reported in qmgr-visible defaults
)

const (
	rUOM = rdU | rdO | rdM
	rOM  = rdO | rdM
	rM   = rdM
	wUOM = wrU | wrO | wrM
	wOM  = wrO | wrM
	wM   = wrM
)

type attrDef struct {
	name  string
	typ   valueType
	flags uint32
}

// defTable is an ordered attribute definition table with a
// case-insensitive index.
type defTable struct {
	defs  []attrDef
	exact map[string]int // canonical spelling
	index map[string]int // lower case
}

func newDefTable(defs []attrDef) *defTable {
	t := &defTable{defs: defs, exact: make(map[string]int, len(defs)), index: make(map[string]int, len(defs))}
	for i, d := range defs {
		t.exact[d.name] = i
		t.index[strings.ToLower(d.name)] = i
	}
	return t
}

// find returns the index of a name, or -1.
func (t *defTable) find(name string) int {
	if i, ok := t.exact[name]; ok {
		return i
	}
	if i, ok := t.index[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

// Job attribute indexes used by the server code (definition order of spec 04 §3).
const (
	jaJobName = iota
	jaJobOwner
	jaResourcesUsed
	jaJobState
	jaQueue
	jaServer
	jaAccountName
	jaCheckpoint
	jaCtime
	jaDepend
	jaErrorPath
	jaExecHost
	jaExecGpus
	jaExecutionTime
	jaGroupList
	jaHoldTypes
	jaInteractive
	jaJoinPath
	jaKeepFiles
	jaMailPoints
	jaMailUsers
	jaMtime
	jaOutputPath
	jaPriority
	jaQtime
	jaRerunable
	jaResourceList
	jaSessionID
	jaShellPathList
	jaStagein
	jaStageout
	jaSubstate
	jaUserList
	jaVariableList
	jaEuser
	jaEgroup
	jaHashname
	jaHopCount
	jaQueueRank
	jaQueueType
	jaSchedHint
	jaSecurity
	jaComment
	jaCookie
	jaAltID
	jaEtime
	jaExitStatus
	jaForwardX11
	jaSubmitArgs
	jaJobArrayID
	jaJobArrayRequest
	jaUmask
	jaStartTime
	jaStartCount
	jaCheckpointDir
	jaCheckpointName
	jaCheckpointTime
	jaCheckpointRestartStatus
	jaRestartName
	jaFaultTolerant
	jaCompTime
	jaReported
	jaJobtype
	jaInterCmd
	jaProxyUser
	jaSubmitHost
	jaInitWorkDir
	jaJobID
	jaJobArguments
	jaOther // unknown names, kept verbatim
	numJobAttrs
)

var jobDefs = newDefTable([]attrDef{
	{"Job_Name", tStr, rUOM | wUOM | fAltRun | fSelEq},
	{"Job_Owner", tStr, rUOM | wrS | fSelEq},
	{"resources_used", tResc, rUOM | wrS},
	{"job_state", tChar, rUOM},
	{"queue", tStr, rUOM | wUOM},
	{"server", tStr, rUOM},
	{"Account_Name", tStr, rUOM | wUOM | fSelEq},
	{"Checkpoint", tStr, rUOM | wUOM | fAltRun},
	{"ctime", tLong, rUOM | wrS},
	{"depend", tDepend, rUOM | wUOM},
	{"Error_Path", tStr, rUOM | wUOM | fAltRun | fSelEq},
	{"exec_host", tStr, rUOM | wrO | wrS},
	{"exec_gpus", tStr, rUOM | wrO | wrS},
	{"Execution_Time", tLong, rUOM | wUOM | fAltRun},
	{"group_list", tArst, rUOM | wUOM | fSelEq},
	{"Hold_Types", tHold, rUOM | wUOM | fAltRun | fSelEq},
	{"interactive", tLong, rUOM | fCreate | fSelEq},
	{"Join_Path", tStr, rUOM | wUOM | fSelEq},
	{"Keep_Files", tStr, rUOM | wUOM | fSelEq},
	{"Mail_Points", tStr, rUOM | wUOM | fAltRun | fSelEq},
	{"Mail_Users", tArst, rUOM | wUOM | fAltRun | fSelEq},
	{"mtime", tLong, rUOM | wrS},
	{"Output_Path", tStr, rUOM | wUOM | fAltRun | fSelEq},
	{"Priority", tLong, rUOM | wUOM | fAltRun},
	{"qtime", tLong, rUOM},
	{"Rerunable", tBool, rUOM | wUOM | fAltRun | fSelEq},
	{"Resource_List", tResc, rUOM | wUOM | fAltRun},
	{"session_id", tLong, rUOM | wrS},
	{"Shell_Path_List", tArst, rUOM | wUOM | fAltRun | fSelEq},
	{"stagein", tArst, rUOM | wUOM},
	{"stageout", tArst, rUOM | wUOM},
	{"substate", tLong, rOM},
	{"User_List", tArst, rUOM | wUOM | fSelEq},
	{"Variable_List", tArst, rUOM | wUOM | fPrivR | fAltRun | fSelEq},
	{"euser", tStr, rM},
	{"egroup", tStr, rM},
	{"hashname", tStr, rM},
	{"hop_count", tLong, wrS | fNoShow},
	{"queue_rank", tLong, rM},
	{"queue_type", tChar, rM | fSelEq},
	{"sched_hint", tStr, rUOM | wOM | wrS | fAltRun},
	{"security", tStr, wrS | fNoShow},
	{"comment", tStr, rUOM | wOM | wrS | fAltRun},
	{"cookie", tStr, wrS | fNoShow},
	{"alt_id", tStr, rUOM | wrS},
	{"etime", tLong, rUOM | wrS},
	{"exit_status", tLong, rUOM},
	{"forward_x11", tStr, rM | wrU | fSelEq},
	{"submit_args", tStr, rUOM | fCreate},
	{"job_array_id", tLong, rUOM},
	{"job_array_request", tStr, rUOM | fCreate},
	{"umask", tLong, rUOM | wUOM | fSelEq},
	{"start_time", tLong, rUOM | wrS},
	{"start_count", tLong, rUOM | wrS},
	{"checkpoint_dir", tStr, rUOM | wUOM},
	{"checkpoint_name", tStr, rUOM | wUOM | fAltRun},
	{"checkpoint_time", tLong, rUOM | wOM | wrS | fAltRun},
	{"checkpoint_restart_status", tStr, rUOM | wUOM | wrS | fAltRun},
	{"restart_name", tStr, rUOM | wOM | wrS | fAltRun},
	{"fault_tolerant", tBool, rUOM | wUOM | fAltRun | fSelEq},
	{"comp_time", tLong, rUOM | wrS},
	{"reported", tBool, rUOM | wrS},
	{"jobtype", tStr, rUOM | wUOM | fSelEq},
	{"inter_cmd", tStr, rUOM | wUOM},
	{"proxy_user", tStr, rUOM | fCreate},
	{"submit_host", tStr, rUOM | fCreate},
	{"init_work_dir", tStr, rUOM | fCreate},
	{"job_id", tStr, rUOM | fCreate},
	{"job_arguments", tStr, rUOM | wUOM | fSelEq},
	{"_other_", tStr, rUOM | wUOM | fSelEq},
})

// Queue attribute table (spec 04 §6).
const (
	qaQueueType = iota
	qaPriority
	qaHostlist
	qaRestartable
	qaMaxQueuable
	qaMaxUserQueuable
	qaTotalJobs
	qaStateCount
	qaMaxReport
	qaMaxRunning
	qaACLHostEnable
	qaACLHosts
	qaACLUserEnable
	qaACLUsers
	qaFromRouteOnly
	qaResourcesMax
	qaResourcesMin
	qaResourcesDefault
	qaACLGroupEnable
	qaACLGroups
	qaACLLogicOr
	qaACLGroupSloppy
	qaMtime
	qaDisallowedTypes
	qaCheckpointDir
	qaCheckpointMin
	qaCheckpointDefaults
	qaRendezvousRetry
	qaReservedExpedite
	qaReservedSync
	qaResourcesAvailable
	qaResourcesAssigned
	qaKillDelay
	qaMaxUserRun
	qaMaxGroupRun
	qaKeepCompleted
	qaIsTransit
	qaRouteDestinations
	qaAltRouter
	qaRouteHeldJobs
	qaRouteWaitingJobs
	qaRouteRetryTime
	qaRouteLifetime
	qaEnabled
	qaStarted
	numQueueAttrs
)

var queueDefs = newDefTable([]attrDef{
	{"queue_type", tStr, rUOM | wOM},
	{"Priority", tLong, rUOM | wOM},
	{"hostlist", tArst, rUOM | wOM},
	{"restartable", tBool, rUOM | wOM},
	{"max_queuable", tLong, rUOM | wOM},
	{"max_user_queuable", tLong, rUOM | wOM},
	{"total_jobs", tLong, rUOM | fComp},
	{"state_count", tStr, rUOM | fComp},
	{"max_report", tLong, rUOM | wOM},
	{"max_running", tLong, rUOM | wOM},
	{"acl_host_enable", tBool, rUOM | wOM},
	{"acl_hosts", tArst, rUOM | wOM},
	{"acl_user_enable", tBool, rUOM | wOM},
	{"acl_users", tArst, rUOM | wOM},
	{"from_route_only", tBool, rUOM | wOM},
	{"resources_max", tResc, rUOM | wOM},
	{"resources_min", tResc, rUOM | wOM},
	{"resources_default", tResc, rUOM | wOM},
	{"acl_group_enable", tBool, rUOM | wOM},
	{"acl_groups", tArst, rUOM | wOM},
	{"acl_logic_or", tBool, rUOM | wOM},
	{"acl_group_sloppy", tBool, rUOM | wOM},
	{"mtime", tLong, rUOM},
	{"disallowed_types", tArst, rUOM | wOM},
	{"checkpoint_dir", tStr, rUOM | wOM | fExecQ},
	{"checkpoint_min", tLong, rUOM | wOM | fExecQ},
	{"checkpoint_defaults", tStr, rUOM | wOM | fExecQ},
	{"rendezvous_retry", tLong, rUOM | wOM | fExecQ},
	{"reserved_expedite", tLong, rUOM | wOM | fExecQ},
	{"reserved_sync", tLong, rUOM | wOM | fExecQ},
	{"resources_available", tResc, rUOM | wOM | fExecQ},
	{"resources_assigned", tResc, rUOM | fExecQ},
	{"kill_delay", tLong, rUOM | wOM | fExecQ},
	{"max_user_run", tLong, rUOM | wOM | fExecQ},
	{"max_group_run", tLong, rUOM | wOM | fExecQ},
	{"keep_completed", tLong, rUOM | wOM | fExecQ},
	{"is_transit", tBool, rUOM | wOM | fExecQ},
	{"route_destinations", tArst, rUOM | wOM | fRouteQ},
	{"alt_router", tBool, rUOM | wOM | fRouteQ},
	{"route_held_jobs", tBool, rUOM | wOM | fRouteQ},
	{"route_waiting_jobs", tBool, rUOM | wOM | fRouteQ},
	{"route_retry_time", tLong, rUOM | wOM | fRouteQ},
	{"route_lifetime", tLong, rUOM | wOM | fRouteQ},
	{"enabled", tBool, rUOM | wOM},
	{"started", tBool, rUOM | wOM},
})

// Server attribute table (spec 04 §7).
const (
	saServerState = iota
	saScheduling
	saMaxRunning
	saMaxUserRun
	saMaxGroupRun
	saTotalJobs
	saStateCount
	saACLHostEnable
	saACLHosts
	saACLUserEnable
	saACLUsers
	saACLRoots
	saManagers
	saOperators
	saDefaultQueue
	saLogEvents
	saMailFrom
	saQueryOtherJobs
	saResourcesAvailable
	saResourcesDefault
	saResourcesMax
	saResourcesAssigned
	saResourcesCost
	saSystemCost
	saSchedulerIteration
	saNodePingRate
	saNodeCheckRate
	saTCPTimeout
	saComment
	saDefaultNode
	saNodePack
	saNodeSuffix
	saJobStatRate
	saPollJobs
	saLogLevel
	saDownOnError
	saDisableServerIDCheck
	saJobNanny
	saOwnerPurge
	saQueueCentricLimits
	saMomJobSync
	saMailDomain
	saPbsVersion
	saKillDelay
	saACLLogicOr
	saACLGroupSloppy
	saKeepCompleted
	saSubmitHosts
	saAllowNodeSubmit
	saAllowProxyUser
	saAutoNodeNp
	saLogFileMaxSize
	saLogFileRollDepth
	saLogKeepDays
	saNextJobNumber
	saTokens
	saNetCounter
	saExtraResc
	saServerName
	saSchedVersion
	saAccountingKeepDays
	saLockFile
	saLockFileUpdateTime
	saLockFileCheckTime
	saCredentialLifetime
	saJobMustReport
	saCheckpointDir
	saDisplayJobServerSuffix
	saJobSuffixAlias
	saMailSubjectFmt
	saMailBodyFmt
	saNpDefault
	saCloneBatchSize
	saCloneBatchDelay
	saJobStartTimeout
	saJobForceCancelTime
	saMaxJobArraySize
	saMaxSlotLimit
	saRecordJobInfo
	saRecordJobScript
	saJobLogFileMaxSize
	saJobLogFileRollDepth
	saJobLogKeepDays
	saMoabArrayCompatible
	saNoMailForce
	numServerAttrs
)

var serverDefs = newDefTable([]attrDef{
	{"server_state", tState, rUOM | fComp},
	{"scheduling", tBool, rUOM | wOM},
	{"max_running", tLong, rUOM | wOM},
	{"max_user_run", tLong, rUOM | wOM},
	{"max_group_run", tLong, rUOM | wOM},
	{"total_jobs", tLong, rUOM | fComp},
	{"state_count", tStr, rUOM | fComp},
	{"acl_host_enable", tBool, rUOM | wM},
	{"acl_hosts", tArst, rUOM | wM},
	{"acl_user_enable", tBool, rUOM | wM},
	{"acl_users", tArst, rUOM | wM},
	{"acl_roots", tArst, rUOM | wM},
	{"managers", tArst, rUOM | wM},
	{"operators", tArst, rUOM | wM},
	{"default_queue", tStr, rUOM | wOM},
	{"log_events", tLong, rUOM | wOM},
	{"mail_from", tStr, rUOM | wOM},
	{"query_other_jobs", tBool, rUOM | wM},
	{"resources_available", tResc, rUOM | wOM},
	{"resources_default", tResc, rUOM | wOM},
	{"resources_max", tResc, rUOM | wOM},
	{"resources_assigned", tResc, rUOM},
	{"resources_cost", tResc, rUOM | wOM},
	{"system_cost", tLong, rUOM | wOM},
	{"scheduler_iteration", tLong, rUOM | wOM},
	{"node_ping_rate", tLong, rUOM | wOM},
	{"node_check_rate", tLong, rUOM | wOM},
	{"tcp_timeout", tLong, rUOM | wOM},
	{"comment", tStr, rUOM | wM},
	{"default_node", tStr, rUOM | wM},
	{"node_pack", tBool, rUOM | wM},
	{"node_suffix", tStr, rUOM | wM},
	{"job_stat_rate", tLong, rUOM | wM},
	{"poll_jobs", tBool, rUOM | wM},
	{"log_level", tLong, rUOM | wM},
	{"down_on_error", tBool, rUOM | wM},
	{"disable_server_id_check", tBool, rUOM | wM},
	{"job_nanny", tBool, rUOM | wM},
	{"owner_purge", tBool, rUOM | wM},
	{"queue_centric_limits", tBool, rUOM | wM},
	{"mom_job_sync", tBool, rUOM | wM},
	{"mail_domain", tStr, rUOM | wM},
	{"pbs_version", tStr, rUOM},
	{"kill_delay", tLong, rUOM | wOM},
	{"acl_logic_or", tBool, rUOM | wOM},
	{"acl_group_sloppy", tBool, rUOM | wOM},
	{"keep_completed", tLong, rUOM | wOM},
	{"submit_hosts", tArst, rUOM | wOM},
	{"allow_node_submit", tBool, rUOM | wOM},
	{"allow_proxy_user", tBool, rUOM | wOM},
	{"auto_node_np", tBool, rUOM | wM},
	{"log_file_max_size", tLong, rUOM | wOM},
	{"log_file_roll_depth", tLong, rUOM | wOM},
	{"log_keep_days", tLong, rUOM | wOM},
	{"next_job_number", tLong, rUOM | wM},
	{"tokens", tArst, rUOM | wM},
	{"net_counter", tStr, rUOM | fComp},
	{"extra_resc", tArst, rUOM | wOM},
	{"server_name", tStr, rUOM | wM},
	{"sched_version", tStr, rUOM | wM},
	{"accounting_keep_days", tLong, rUOM | wOM},
	{"lock_file", tStr, rUOM | wM},
	{"lock_file_update_time", tLong, rUOM | wM},
	{"lock_file_check_time", tLong, rUOM | wM},
	{"credential_lifetime", tLong, rUOM | wM},
	{"job_must_report", tBool, rUOM | wM},
	{"checkpoint_dir", tStr, rUOM | wM},
	{"display_job_server_suffix", tBool, rUOM | wM},
	{"job_suffix_alias", tStr, rUOM | wM},
	{"mail_subject_fmt", tStr, rUOM | wM},
	{"mail_body_fmt", tStr, rUOM | wM},
	{"np_default", tLong, rUOM | wM},
	{"clone_batch_size", tLong, rUOM | wM},
	{"clone_batch_delay", tLong, rUOM | wM},
	{"job_start_timeout", tLong, rUOM | wOM},
	{"job_force_cancel_time", tLong, rUOM | wM},
	{"max_job_array_size", tLong, rUOM | wM},
	{"max_slot_limit", tLong, rUOM | wM},
	{"record_job_info", tBool, rUOM | wM},
	{"record_job_script", tBool, rUOM | wM},
	{"job_log_file_max_size", tLong, rUOM | wOM},
	{"job_log_file_roll_depth", tLong, rUOM | wOM},
	{"job_log_keep_days", tLong, rUOM | wOM},
	{"moab_array_compatible", tBool, rUOM | wOM},
	{"no_mail_force", tBool, rUOM | wM},
})

// Node attribute table (spec 04 §8).
const (
	naState = iota
	naNp
	naProperties
	naNtype
	naJobs
	naStatus
	naNote
	naGpus
	naGpuStatus
	numNodeAttrs
)

var nodeDefs = newDefTable([]attrDef{
	{"state", tNodeState, rUOM | wOM},
	{"np", tLong, rUOM | wOM},
	{"properties", tArst, rUOM | wM},
	{"ntype", tNodeType, rUOM | wOM},
	{"jobs", tJobs, rUOM},
	{"status", tArst, rUOM | wM},
	{"note", tStr, rUOM | wOM},
	{"gpus", tLong, rUOM | wOM},
	{"gpu_status", tArst, rUOM | wM},
})

// resource definitions (spec 04 §9): name → value type and flags.
type rescDef struct {
	typ   valueType
	flags uint32
}

var resources = func() map[string]rescDef {
	m := map[string]rescDef{}
	add := func(t valueType, fl uint32, names ...string) {
		for _, n := range names {
			m[n] = rescDef{t, fl}
		}
	}
	add(tStr, 0, "arch", "host", "mpplabel", "other", "software", "cpapartitionid", "cpaalloccookie",
		"cpaadmincookie", "mppnodes", "mpplabels", "mpphost", "mpparch", "nodes", "pe_mask")
	add(tStr, rM|wM, "neednodes")
	add(tLong, fNoShow, "procct")
	add(tLong, 0, "cpupercent", "ncpus", "nice", "nodemask", "nodect", "taskspn",
		"mta", "mtb", "mtc", "mtd", "mte", "mtf", "mtg", "mth", "procs", "mppe", "size",
		"mppwidth", "mppdepth", "mppnppn", "mppnodect")
	add(tTime, 0, "cput", "walltime", "pcput", "mppt", "pmppt", "mpptime")
	add(tSize, 0, "file", "mem", "pmem", "vmem", "pvmem", "pf", "ppf", "sds", "psds", "mppmem",
		"srfs_tmp", "srfs_big", "srfs_fast")
	add(tBool, 0, "srfs_assist")
	add(tStr, 0, "advres", "deadline", "depend", "ddisk", "dmem", "epilogue", "feature", "flags",
		"gattr", "geometry", "gmetric", "gres", "hostlist", "image", "jgroup", "jobflags", "latency",
		"loglevel", "minprocspeed", "minpreempttime", "minwclimit", "naccesspolicy", "nallocpolicy",
		"nodeset", "opsys", "os", "partition", "pref", "procs_bitmap", "prologue", "qos", "queuejob",
		"reqattr", "retrycount", "retrycc", "rmtype", "select", "sid", "signal", "stagein", "spriority",
		"subnode", "subnode_list", "taskdistpolicy", "template", "termsig", "termtime", "tid", "tpn",
		"trig", "trl", "var", "vcores", "wcrequeue")
	return m
}()
