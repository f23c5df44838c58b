package attr

// Server attribute numbers: positions in ServerTable (spec 04 §7).
const (
	SrvState                  = iota // server_state
	SrvScheduling                    // scheduling
	SrvMaxRunning                    // max_running
	SrvMaxUserRun                    // max_user_run
	SrvMaxGroupRun                   // max_group_run
	SrvTotalJobs                     // total_jobs
	SrvStateCount                    // state_count
	SrvACLHostEnable                 // acl_host_enable
	SrvACLHosts                      // acl_hosts
	SrvACLUserEnable                 // acl_user_enable
	SrvACLUsers                      // acl_users
	SrvACLRoots                      // acl_roots
	SrvManagers                      // managers
	SrvOperators                     // operators
	SrvDefaultQueue                  // default_queue
	SrvLogEvents                     // log_events
	SrvMailFrom                      // mail_from
	SrvQueryOtherJobs                // query_other_jobs
	SrvResourcesAvailable            // resources_available
	SrvResourcesDefault              // resources_default
	SrvResourcesMax                  // resources_max
	SrvResourcesAssigned             // resources_assigned
	SrvResourcesCost                 // resources_cost
	SrvSystemCost                    // system_cost
	SrvSchedulerIteration            // scheduler_iteration
	SrvNodePingRate                  // node_ping_rate
	SrvNodeCheckRate                 // node_check_rate
	SrvTCPTimeout                    // tcp_timeout
	SrvComment                       // comment
	SrvDefaultNode                   // default_node
	SrvNodePack                      // node_pack
	SrvNodeSuffix                    // node_suffix
	SrvJobStatRate                   // job_stat_rate
	SrvPollJobs                      // poll_jobs
	SrvLogLevel                      // log_level
	SrvDownOnError                   // down_on_error
	SrvDisableServerIDCheck          // disable_server_id_check
	SrvJobNanny                      // job_nanny
	SrvOwnerPurge                    // owner_purge
	SrvQueueCentricLimits            // queue_centric_limits
	SrvMomJobSync                    // mom_job_sync
	SrvMailDomain                    // mail_domain
	SrvPBSVersion                    // pbs_version
	SrvKillDelay                     // kill_delay
	SrvACLLogicOr                    // acl_logic_or
	SrvACLGroupSloppy                // acl_group_sloppy
	SrvKeepCompleted                 // keep_completed
	SrvSubmitHosts                   // submit_hosts
	SrvAllowNodeSubmit               // allow_node_submit
	SrvAllowProxyUser                // allow_proxy_user
	SrvAutoNodeNP                    // auto_node_np
	SrvLogFileMaxSize                // log_file_max_size
	SrvLogFileRollDepth              // log_file_roll_depth
	SrvLogKeepDays                   // log_keep_days
	SrvNextJobNumber                 // next_job_number
	SrvTokens                        // tokens
	SrvNetCounter                    // net_counter
	SrvExtraResc                     // extra_resc
	SrvServerName                    // server_name
	SrvSchedVersion                  // sched_version
	SrvAccountingKeepDays            // accounting_keep_days
	SrvLockFile                      // lock_file
	SrvLockFileUpdateTime            // lock_file_update_time
	SrvLockFileCheckTime             // lock_file_check_time
	SrvCredentialLifetime            // credential_lifetime
	SrvJobMustReport                 // job_must_report
	SrvCheckpointDir                 // checkpoint_dir
	SrvDisplayJobServerSuffix        // display_job_server_suffix
	SrvJobSuffixAlias                // job_suffix_alias
	SrvMailSubjectFmt                // mail_subject_fmt
	SrvMailBodyFmt                   // mail_body_fmt
	SrvNPDefault                     // np_default
	SrvCloneBatchSize                // clone_batch_size
	SrvCloneBatchDelay               // clone_batch_delay
	SrvJobStartTimeout               // job_start_timeout
	SrvJobForceCancelTime            // job_force_cancel_time
	SrvMaxJobArraySize               // max_job_array_size
	SrvMaxSlotLimit                  // max_slot_limit
	SrvRecordJobInfo                 // record_job_info
	SrvRecordJobScript               // record_job_script
	SrvJobLogFileMaxSize             // job_log_file_max_size
	SrvJobLogFileRollDepth           // job_log_file_roll_depth
	SrvJobLogKeepDays                // job_log_keep_days
	SrvMoabArrayCompatible           // moab_array_compatible
	SrvNoMailForce                   // no_mail_force
	SrvHTTPAddress                   // http_address (GoPBS: the metrics and status page listener)
	numServerAttrs
)

// Server states reported in server_state.
const (
	ServerStateActive           = "Active"
	ServerStateIdle             = "Idle"
	ServerStateScheduling       = "Scheduling"
	ServerStateHotStart         = "Hot_Start"
	ServerStateTerminatingDelay = "Terminating_Delay"
	ServerStateTerminating      = "Terminating"
)

// PBSVersion is the version the server reports in pbs_version.
const PBSVersion = "2.5.13"

func serverDefs() []Def {
	om := perm("UOM", "OM")
	m := perm("UOM", "M")
	ro := perm("UOM", "-")
	d := func(name string, t Type, p Perm) Def { return Def{Name: name, Type: t, Perm: p} }
	acl := func(name string, k ACLKind) Def { return Def{Name: name, Type: TypeACL, Perm: m, ACL: k} }
	defs := []Def{
		SrvState:                  d("server_state", TypeString, ro),
		SrvScheduling:             {Name: "scheduling", Type: TypeBool, Perm: om, Unset: "False"},
		SrvMaxRunning:             d("max_running", TypeLong, om),
		SrvMaxUserRun:             d("max_user_run", TypeLong, om),
		SrvMaxGroupRun:            d("max_group_run", TypeLong, om),
		SrvTotalJobs:              d("total_jobs", TypeLong, ro),
		SrvStateCount:             d("state_count", TypeString, ro),
		SrvACLHostEnable:          d("acl_host_enable", TypeBool, m),
		SrvACLHosts:               acl("acl_hosts", ACLHost),
		SrvACLUserEnable:          d("acl_user_enable", TypeBool, m),
		SrvACLUsers:               acl("acl_users", ACLUser),
		SrvACLRoots:               acl("acl_roots", ACLUser),
		SrvManagers:               acl("managers", ACLUser),
		SrvOperators:              acl("operators", ACLUser),
		SrvDefaultQueue:           d("default_queue", TypeString, om),
		SrvLogEvents:              {Name: "log_events", Type: TypeLong, Perm: om, Default: "511"},
		SrvMailFrom:               {Name: "mail_from", Type: TypeString, Perm: om, Default: "adm"},
		SrvQueryOtherJobs:         d("query_other_jobs", TypeBool, m),
		SrvResourcesAvailable:     d("resources_available", TypeResourceList, om),
		SrvResourcesDefault:       d("resources_default", TypeResourceList, om),
		SrvResourcesMax:           d("resources_max", TypeResourceList, om),
		SrvResourcesAssigned:      d("resources_assigned", TypeResourceList, ro),
		SrvResourcesCost:          d("resources_cost", TypeResourceList, om),
		SrvSystemCost:             d("system_cost", TypeLong, om),
		SrvSchedulerIteration:     {Name: "scheduler_iteration", Type: TypeLong, Perm: om, Default: "600"},
		SrvNodePingRate:           d("node_ping_rate", TypeLong, om),
		SrvNodeCheckRate:          {Name: "node_check_rate", Type: TypeLong, Perm: om, Default: "150"},
		SrvTCPTimeout:             {Name: "tcp_timeout", Type: TypeLong, Perm: om, Default: "6"},
		SrvComment:                d("comment", TypeString, m),
		SrvDefaultNode:            {Name: "default_node", Type: TypeString, Perm: m, Unset: "1#shared"},
		SrvNodePack:               d("node_pack", TypeBool, m),
		SrvNodeSuffix:             d("node_suffix", TypeString, m),
		SrvJobStatRate:            {Name: "job_stat_rate", Type: TypeLong, Perm: m, Unset: "45"},
		SrvPollJobs:               {Name: "poll_jobs", Type: TypeBool, Perm: m, Unset: "True"},
		SrvLogLevel:               d("log_level", TypeLong, m),
		SrvDownOnError:            d("down_on_error", TypeBool, m),
		SrvDisableServerIDCheck:   d("disable_server_id_check", TypeBool, m),
		SrvJobNanny:               d("job_nanny", TypeBool, m),
		SrvOwnerPurge:             d("owner_purge", TypeBool, m),
		SrvQueueCentricLimits:     d("queue_centric_limits", TypeBool, m),
		SrvMomJobSync:             d("mom_job_sync", TypeBool, m),
		SrvMailDomain:             d("mail_domain", TypeString, m),
		SrvPBSVersion:             {Name: "pbs_version", Type: TypeString, Perm: ro, Default: PBSVersion},
		SrvKillDelay:              {Name: "kill_delay", Type: TypeLong, Perm: om, Unset: "2"},
		SrvACLLogicOr:             d("acl_logic_or", TypeBool, om),
		SrvACLGroupSloppy:         d("acl_group_sloppy", TypeBool, om),
		SrvKeepCompleted:          {Name: "keep_completed", Type: TypeLong, Perm: om, Unset: "0"},
		SrvSubmitHosts:            {Name: "submit_hosts", Type: TypeStringArray, Perm: om, ACL: ACLHost},
		SrvAllowNodeSubmit:        d("allow_node_submit", TypeBool, om),
		SrvAllowProxyUser:         d("allow_proxy_user", TypeBool, om),
		SrvAutoNodeNP:             d("auto_node_np", TypeBool, m),
		SrvLogFileMaxSize:         d("log_file_max_size", TypeLong, om),
		SrvLogFileRollDepth:       d("log_file_roll_depth", TypeLong, om),
		SrvLogKeepDays:            d("log_keep_days", TypeLong, om),
		SrvNextJobNumber:          d("next_job_number", TypeLong, m),
		SrvTokens:                 d("tokens", TypeStringArray, m),
		SrvNetCounter:             d("net_counter", TypeString, ro),
		SrvExtraResc:              d("extra_resc", TypeStringArray, om),
		SrvServerName:             d("server_name", TypeString, m),
		SrvSchedVersion:           d("sched_version", TypeString, m),
		SrvAccountingKeepDays:     d("accounting_keep_days", TypeLong, om),
		SrvLockFile:               d("lock_file", TypeString, m),
		SrvLockFileUpdateTime:     d("lock_file_update_time", TypeLong, m),
		SrvLockFileCheckTime:      d("lock_file_check_time", TypeLong, m),
		SrvCredentialLifetime:     {Name: "credential_lifetime", Type: TypeLong, Perm: m, Unset: "3600"},
		SrvJobMustReport:          d("job_must_report", TypeBool, m),
		SrvCheckpointDir:          d("checkpoint_dir", TypeString, m),
		SrvDisplayJobServerSuffix: {Name: "display_job_server_suffix", Type: TypeBool, Perm: m, Unset: "True"},
		SrvJobSuffixAlias:         d("job_suffix_alias", TypeString, m),
		SrvMailSubjectFmt:         {Name: "mail_subject_fmt", Type: TypeString, Perm: m, Unset: "PBS JOB %i"},
		SrvMailBodyFmt:            d("mail_body_fmt", TypeString, m),
		SrvNPDefault:              d("np_default", TypeLong, m),
		SrvCloneBatchSize:         {Name: "clone_batch_size", Type: TypeLong, Perm: m, Unset: "256"},
		SrvCloneBatchDelay:        {Name: "clone_batch_delay", Type: TypeLong, Perm: m, Unset: "1"},
		SrvJobStartTimeout:        d("job_start_timeout", TypeLong, om),
		SrvJobForceCancelTime:     d("job_force_cancel_time", TypeLong, m),
		SrvMaxJobArraySize:        d("max_job_array_size", TypeLong, m),
		SrvMaxSlotLimit:           d("max_slot_limit", TypeLong, m),
		SrvRecordJobInfo:          d("record_job_info", TypeBool, m),
		SrvRecordJobScript:        d("record_job_script", TypeBool, m),
		SrvJobLogFileMaxSize:      d("job_log_file_max_size", TypeLong, om),
		SrvJobLogFileRollDepth:    d("job_log_file_roll_depth", TypeLong, om),
		SrvJobLogKeepDays:         d("job_log_keep_days", TypeLong, om),
		SrvMoabArrayCompatible:    {Name: "moab_array_compatible", Type: TypeBool, Perm: om, Unset: "True"},
		SrvNoMailForce:            d("no_mail_force", TypeBool, m),
		SrvHTTPAddress:            d("http_address", TypeString, m),
	}
	return defs[:numServerAttrs:numServerAttrs]
}
