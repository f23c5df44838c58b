package server

import (
	"gopbs/server/handler"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// indexNames lists every attribute index constant of the server with the
// attribute it claims to name.
var indexNames = map[*state.DefTable][]struct {
	idx  int
	name string
}{
	state.JobDefs: {
		{pbsattr.JobName, "Job_Name"},
		{pbsattr.JobOwner, "Job_Owner"},
		{pbsattr.JobResourcesUsed, "resources_used"},
		{pbsattr.JobState, "job_state"},
		{pbsattr.JobQueue, "queue"},
		{pbsattr.JobServer, "server"},
		{pbsattr.JobAccountName, "Account_Name"},
		{pbsattr.JobCheckpoint, "Checkpoint"},
		{pbsattr.JobCtime, "ctime"},
		{pbsattr.JobDepend, "depend"},
		{pbsattr.JobErrorPath, "Error_Path"},
		{pbsattr.JobExecHost, "exec_host"},
		{pbsattr.JobExecGpus, "exec_gpus"},
		{pbsattr.JobExecutionTime, "Execution_Time"},
		{pbsattr.JobGroupList, "group_list"},
		{pbsattr.JobHoldTypes, "Hold_Types"},
		{pbsattr.JobInteractive, "interactive"},
		{pbsattr.JobJoinPath, "Join_Path"},
		{pbsattr.JobKeepFiles, "Keep_Files"},
		{pbsattr.JobMailPoints, "Mail_Points"},
		{pbsattr.JobMailUsers, "Mail_Users"},
		{pbsattr.JobMtime, "mtime"},
		{pbsattr.JobOutputPath, "Output_Path"},
		{pbsattr.JobPriority, "Priority"},
		{pbsattr.JobQtime, "qtime"},
		{pbsattr.JobRerunable, "Rerunable"},
		{pbsattr.JobResourceList, "Resource_List"},
		{pbsattr.JobSessionID, "session_id"},
		{pbsattr.JobShellPathList, "Shell_Path_List"},
		{pbsattr.JobStagein, "stagein"},
		{pbsattr.JobStageout, "stageout"},
		{pbsattr.JobSubstate, "substate"},
		{pbsattr.JobUserList, "User_List"},
		{pbsattr.JobVariableList, "Variable_List"},
		{pbsattr.JobEuser, "euser"},
		{pbsattr.JobEgroup, "egroup"},
		{pbsattr.JobHashname, "hashname"},
		{pbsattr.JobHopCount, "hop_count"},
		{pbsattr.JobQueueRank, "queue_rank"},
		{pbsattr.JobQueueType, "queue_type"},
		{pbsattr.JobSchedHint, "sched_hint"},
		{pbsattr.JobSecurity, "security"},
		{pbsattr.JobComment, "comment"},
		{pbsattr.JobCookie, "cookie"},
		{pbsattr.JobAltID, "alt_id"},
		{pbsattr.JobEtime, "etime"},
		{pbsattr.JobExitStatus, "exit_status"},
		{pbsattr.JobForwardX11, "forward_x11"},
		{pbsattr.JobSubmitArgs, "submit_args"},
		{pbsattr.JobArrayID, "job_array_id"},
		{pbsattr.JobArrayRequest, "job_array_request"},
		{pbsattr.JobUmask, "umask"},
		{pbsattr.JobStartTime, "start_time"},
		{pbsattr.JobStartCount, "start_count"},
		{pbsattr.JobCheckpointDir, "checkpoint_dir"},
		{pbsattr.JobCheckpointName, "checkpoint_name"},
		{pbsattr.JobCheckpointTime, "checkpoint_time"},
		{pbsattr.JobCheckpointRestartStatus, "checkpoint_restart_status"},
		{pbsattr.JobRestartName, "restart_name"},
		{pbsattr.JobFaultTolerant, "fault_tolerant"},
		{pbsattr.JobCompTime, "comp_time"},
		{pbsattr.JobReported, "reported"},
		{pbsattr.JobJobtype, "jobtype"},
		{pbsattr.JobInterCmd, "inter_cmd"},
		{pbsattr.JobProxyUser, "proxy_user"},
		{pbsattr.JobSubmitHost, "submit_host"},
		{pbsattr.JobInitWorkDir, "init_work_dir"},
		{pbsattr.JobID, "job_id"},
		{pbsattr.JobArguments, "job_arguments"},
		{pbsattr.JobExtension, "x"},
		{pbsattr.JobReserve, "reserve"},
		{pbsattr.JobEstimatedStartTime, "estimated_start_time"},
		{pbsattr.JobEstimatedExecHost, "estimated_exec_host"},
		{state.UnknownJobAttr, "_other_"},
	},
	state.QueueDefs: {
		{pbsattr.QueueType, "queue_type"},
		{pbsattr.QueuePriority, "Priority"},
		{pbsattr.QueueHostlist, "hostlist"},
		{pbsattr.QueueRestartable, "restartable"},
		{pbsattr.QueueMaxQueuable, "max_queuable"},
		{pbsattr.QueueMaxUserQueuable, "max_user_queuable"},
		{pbsattr.QueueTotalJobs, "total_jobs"},
		{pbsattr.QueueStateCount, "state_count"},
		{pbsattr.QueueMaxReport, "max_report"},
		{pbsattr.QueueMaxRunning, "max_running"},
		{pbsattr.QueueACLHostEnable, "acl_host_enable"},
		{pbsattr.QueueACLHosts, "acl_hosts"},
		{pbsattr.QueueACLUserEnable, "acl_user_enable"},
		{pbsattr.QueueACLUsers, "acl_users"},
		{pbsattr.QueueFromRouteOnly, "from_route_only"},
		{pbsattr.QueueResourcesMax, "resources_max"},
		{pbsattr.QueueResourcesMin, "resources_min"},
		{pbsattr.QueueResourcesDefault, "resources_default"},
		{pbsattr.QueueACLGroupEnable, "acl_group_enable"},
		{pbsattr.QueueACLGroups, "acl_groups"},
		{pbsattr.QueueACLLogicOr, "acl_logic_or"},
		{pbsattr.QueueACLGroupSloppy, "acl_group_sloppy"},
		{pbsattr.QueueMtime, "mtime"},
		{pbsattr.QueueDisallowedTypes, "disallowed_types"},
		{pbsattr.QueueCheckpointDir, "checkpoint_dir"},
		{pbsattr.QueueCheckpointMin, "checkpoint_min"},
		{pbsattr.QueueCheckpointDefaults, "checkpoint_defaults"},
		{pbsattr.QueueRendezvousRetry, "rendezvous_retry"},
		{pbsattr.QueueReservedExpedite, "reserved_expedite"},
		{pbsattr.QueueReservedSync, "reserved_sync"},
		{pbsattr.QueueResourcesAvailable, "resources_available"},
		{pbsattr.QueueResourcesAssigned, "resources_assigned"},
		{pbsattr.QueueKillDelay, "kill_delay"},
		{pbsattr.QueueMaxUserRun, "max_user_run"},
		{pbsattr.QueueMaxGroupRun, "max_group_run"},
		{pbsattr.QueueKeepCompleted, "keep_completed"},
		{pbsattr.QueueIsTransit, "is_transit"},
		{pbsattr.QueueRouteDestinations, "route_destinations"},
		{pbsattr.QueueAltRouter, "alt_router"},
		{pbsattr.QueueRouteHeldJobs, "route_held_jobs"},
		{pbsattr.QueueRouteWaitingJobs, "route_waiting_jobs"},
		{pbsattr.QueueRouteRetryTime, "route_retry_time"},
		{pbsattr.QueueRouteLifetime, "route_lifetime"},
		{pbsattr.QueueEnabled, "enabled"},
		{pbsattr.QueueStarted, "started"},
		{pbsattr.QueuePartition, "partition"},
	},
	state.ServerDefs: {
		{pbsattr.SrvState, "server_state"},
		{pbsattr.SrvScheduling, "scheduling"},
		{pbsattr.SrvMaxRunning, "max_running"},
		{pbsattr.SrvMaxUserRun, "max_user_run"},
		{pbsattr.SrvMaxGroupRun, "max_group_run"},
		{pbsattr.SrvTotalJobs, "total_jobs"},
		{pbsattr.SrvStateCount, "state_count"},
		{pbsattr.SrvACLHostEnable, "acl_host_enable"},
		{pbsattr.SrvACLHosts, "acl_hosts"},
		{pbsattr.SrvACLUserEnable, "acl_user_enable"},
		{pbsattr.SrvACLUsers, "acl_users"},
		{pbsattr.SrvACLRoots, "acl_roots"},
		{pbsattr.SrvManagers, "managers"},
		{pbsattr.SrvOperators, "operators"},
		{pbsattr.SrvDefaultQueue, "default_queue"},
		{pbsattr.SrvLogEvents, "log_events"},
		{pbsattr.SrvMailFrom, "mail_from"},
		{pbsattr.SrvQueryOtherJobs, "query_other_jobs"},
		{pbsattr.SrvResourcesAvailable, "resources_available"},
		{pbsattr.SrvResourcesDefault, "resources_default"},
		{pbsattr.SrvResourcesMax, "resources_max"},
		{pbsattr.SrvResourcesAssigned, "resources_assigned"},
		{pbsattr.SrvResourcesCost, "resources_cost"},
		{pbsattr.SrvSystemCost, "system_cost"},
		{pbsattr.SrvSchedulerIteration, "scheduler_iteration"},
		{pbsattr.SrvNodePingRate, "node_ping_rate"},
		{pbsattr.SrvNodeCheckRate, "node_check_rate"},
		{pbsattr.SrvTCPTimeout, "tcp_timeout"},
		{pbsattr.SrvComment, "comment"},
		{pbsattr.SrvDefaultNode, "default_node"},
		{pbsattr.SrvNodePack, "node_pack"},
		{pbsattr.SrvNodeSuffix, "node_suffix"},
		{pbsattr.SrvJobStatRate, "job_stat_rate"},
		{pbsattr.SrvPollJobs, "poll_jobs"},
		{pbsattr.SrvLogLevel, "log_level"},
		{pbsattr.SrvDownOnError, "down_on_error"},
		{pbsattr.SrvDisableServerIDCheck, "disable_server_id_check"},
		{pbsattr.SrvJobNanny, "job_nanny"},
		{pbsattr.SrvOwnerPurge, "owner_purge"},
		{pbsattr.SrvQueueCentricLimits, "queue_centric_limits"},
		{pbsattr.SrvMomJobSync, "mom_job_sync"},
		{pbsattr.SrvMailDomain, "mail_domain"},
		{pbsattr.SrvPBSVersion, "pbs_version"},
		{pbsattr.SrvKillDelay, "kill_delay"},
		{pbsattr.SrvACLLogicOr, "acl_logic_or"},
		{pbsattr.SrvACLGroupSloppy, "acl_group_sloppy"},
		{pbsattr.SrvKeepCompleted, "keep_completed"},
		{pbsattr.SrvSubmitHosts, "submit_hosts"},
		{pbsattr.SrvAllowNodeSubmit, "allow_node_submit"},
		{pbsattr.SrvAllowProxyUser, "allow_proxy_user"},
		{pbsattr.SrvAutoNodeNP, "auto_node_np"},
		{pbsattr.SrvLogFileMaxSize, "log_file_max_size"},
		{pbsattr.SrvLogFileRollDepth, "log_file_roll_depth"},
		{pbsattr.SrvLogKeepDays, "log_keep_days"},
		{pbsattr.SrvNextJobNumber, "next_job_number"},
		{pbsattr.SrvTokens, "tokens"},
		{pbsattr.SrvNetCounter, "net_counter"},
		{pbsattr.SrvExtraResc, "extra_resc"},
		{pbsattr.SrvServerName, "server_name"},
		{pbsattr.SrvSchedVersion, "sched_version"},
		{pbsattr.SrvAccountingKeepDays, "accounting_keep_days"},
		{pbsattr.SrvLockFile, "lock_file"},
		{pbsattr.SrvLockFileUpdateTime, "lock_file_update_time"},
		{pbsattr.SrvLockFileCheckTime, "lock_file_check_time"},
		{pbsattr.SrvCredentialLifetime, "credential_lifetime"},
		{pbsattr.SrvJobMustReport, "job_must_report"},
		{pbsattr.SrvCheckpointDir, "checkpoint_dir"},
		{pbsattr.SrvDisplayJobServerSuffix, "display_job_server_suffix"},
		{pbsattr.SrvJobSuffixAlias, "job_suffix_alias"},
		{pbsattr.SrvMailSubjectFmt, "mail_subject_fmt"},
		{pbsattr.SrvMailBodyFmt, "mail_body_fmt"},
		{pbsattr.SrvNPDefault, "np_default"},
		{pbsattr.SrvCloneBatchSize, "clone_batch_size"},
		{pbsattr.SrvCloneBatchDelay, "clone_batch_delay"},
		{pbsattr.SrvJobStartTimeout, "job_start_timeout"},
		{pbsattr.SrvJobForceCancelTime, "job_force_cancel_time"},
		{pbsattr.SrvMaxJobArraySize, "max_job_array_size"},
		{pbsattr.SrvMaxSlotLimit, "max_slot_limit"},
		{pbsattr.SrvRecordJobInfo, "record_job_info"},
		{pbsattr.SrvRecordJobScript, "record_job_script"},
		{pbsattr.SrvJobLogFileMaxSize, "job_log_file_max_size"},
		{pbsattr.SrvJobLogFileRollDepth, "job_log_file_roll_depth"},
		{pbsattr.SrvJobLogKeepDays, "job_log_keep_days"},
		{pbsattr.SrvMoabArrayCompatible, "moab_array_compatible"},
		{pbsattr.SrvNoMailForce, "no_mail_force"},
		{pbsattr.SrvHTTPAddress, "http_address"},
	},
	state.NodeDefs: {
		{pbsattr.NodeStateAttr, "state"},
		{pbsattr.NodeNP, "np"},
		{pbsattr.NodeProperties, "properties"},
		{pbsattr.NodeNType, "ntype"},
		{pbsattr.NodeJobs, "jobs"},
		{pbsattr.NodeStatus, "status"},
		{pbsattr.NodeNote, "note"},
		{pbsattr.NodeGPUs, "gpus"},
		{pbsattr.NodeGPUStatus, "gpu_status"},
		{pbsattr.NodePartition, "partition"},
		{pbsattr.NodeQueue, "queue"},
	},
}

// TestIndexNames fails when an index constant does not name the attr
// definition it claims, or the server's tables and attr's disagree.
func TestIndexNames(t *testing.T) {
	tables := map[*state.DefTable]*pbsattr.Table{
		state.JobDefs: pbsattr.JobTable(), state.QueueDefs: pbsattr.QueueTable(),
		state.ServerDefs: pbsattr.ServerTable(), state.NodeDefs: pbsattr.NodeTable(),
	}
	for dt, list := range indexNames {
		at := tables[dt]
		if len(list) != len(dt.Defs) {
			t.Errorf("%v: %d index constants, %d definitions", at.Object, len(list), len(dt.Defs))
		}
		for _, c := range list {
			if c.idx >= len(dt.Defs) || dt.Defs[c.idx].Name != c.name {
				t.Errorf("%v: index %d does not name %s", at.Object, c.idx, c.name)
				continue
			}
			if got := dt.Find(c.name); got != c.idx {
				t.Errorf("%v: find(%q) = %d, want %d", at.Object, c.name, got, c.idx)
			}
			if c.idx < at.Len() && at.Def(c.idx).Name != c.name {
				t.Errorf("%v: attr definition %d is %s, not %s", at.Object, c.idx, at.Def(c.idx).Name, c.name)
			}
		}
	}
	if state.UnknownJobAttr != pbsattr.JobTable().Len() || state.JobDefs.Find("_OTHER_") != state.UnknownJobAttr {
		t.Errorf("unknownJobAttr = %d, attr's job table has %d definitions", state.UnknownJobAttr, pbsattr.JobTable().Len())
	}
	if state.JobDefs.Find("no_such_attribute") != -1 || state.JobDefs.Find("job_name") != pbsattr.JobName {
		t.Error("find: unknown names or case folding")
	}
}

// TestDefAccess checks that the server's definitions grant exactly the
// access attr's definitions grant, to every kind of requester.
func TestDefAccess(t *testing.T) {
	requesters := []struct {
		p handler.Asker
		a pbsattr.Access
	}{
		{handler.Asker{}, pbsattr.AccessUser},
		{handler.Asker{Operator: true}, pbsattr.AccessUser | pbsattr.AccessOper},
		// a manager has the operators' rights too
		{handler.Asker{Manager: true}, pbsattr.AccessUser | pbsattr.AccessOper | pbsattr.AccessMgr},
		{handler.Asker{Operator: true, Manager: true, Privileged: true}, pbsattr.AccessPrivileged},
	}
	for _, at := range []*pbsattr.Table{pbsattr.JobTable(), pbsattr.QueueTable(), pbsattr.ServerTable(), pbsattr.NodeTable()} {
		for i, d := range at.Defs() {
			sd := map[pbsattr.Object]*state.DefTable{pbsattr.ObjJob: state.JobDefs, pbsattr.ObjQueue: state.QueueDefs, pbsattr.ObjServer: state.ServerDefs, pbsattr.ObjNode: state.NodeDefs}[at.Object].Defs[i]
			for _, r := range requesters {
				if got, want := r.p.Writable(sd.Perm), d.Writable(r.a); got != want {
					t.Errorf("%v %s: writable for %+v = %v, attr says %v", at.Object, d.Name, r.p, got, want)
				}
				if got, want := r.p.Readable(sd.Perm, sd.Flags, true), d.Readable(r.a); got != want {
					t.Errorf("%v %s: readable for %+v = %v, attr says %v", at.Object, d.Name, r.p, got, want)
				}
			}
			if (sd.Flags&pbsattr.FlagSelEQ != 0) == d.SelectOpAllowed(pbsattr.OpGT) {
				t.Errorf("%v %s: FlagSelEQ disagrees with attr", at.Object, d.Name)
			}
			if sd.Name != d.Name || sd.Type != d.Type || sd.Perm != d.Perm || sd.Flags != d.Flags || sd.Kind != d.Kind {
				t.Errorf("%v %s: server definition %+v", at.Object, d.Name, sd)
			}
		}
	}
	res := pbsattr.DefaultResources()
	for i := 0; i < res.Len(); i++ {
		d := res.Def(i)
		rd, ok := state.Resources[d.Name]
		if !ok || rd.Type != d.Type || rd.Perm != d.Perm || rd.Flags != d.Flags {
			t.Errorf("resource %s: server definition %+v", d.Name, rd)
		}
	}
	if rd := state.Resources["procct"]; (&handler.Asker{Manager: true}).Readable(rd.Perm, rd.Flags, true) {
		t.Error("procct is reported (NOREPORT)")
	}
	if rd := state.Resources["nodect"]; (&handler.Asker{}).Writable(rd.Perm) || !(&handler.Asker{}).Readable(rd.Perm, rd.Flags, false) {
		t.Error("nodect: users may read but not write it (spec 04 §9)")
	}
}

// TestHoldBits checks the server's hold bit constants against attr's.
func TestHoldBits(t *testing.T) {
	for _, c := range []struct {
		server int
		attr   pbsattr.HoldBits
	}{{state.HoldUser, pbsattr.HoldUser}, {state.HoldOther, pbsattr.HoldOther}, {state.HoldSystem, pbsattr.HoldSystem}, {state.HoldArray, pbsattr.HoldArray}, {state.HoldSlotLimit, pbsattr.HoldSlotLimit}} {
		if c.server != int(c.attr) {
			t.Errorf("hold bit %d, attr has %d", c.server, c.attr)
		}
	}
}

// TestNodeStates checks the server's node state bits against attr's words.
func TestNodeStates(t *testing.T) {
	for _, c := range []struct {
		bits int
		text string
	}{
		{0, "free"}, {state.NodeStateUnknown, "state-unknown"}, {state.NodeStateDown, "down"}, {state.NodeStateOffline, "offline"},
		{state.NodeStateReserve, "reserve"}, {state.NodeStateJobExclusive, "job-exclusive"}, {state.NodeStateJobSharing, "job-sharing"},
		{state.NodeStateBusy, "busy"}, {state.NodeStateDown | state.NodeStateOffline | state.NodeStateBusy, "down,offline,busy"},
	} {
		if got := state.FormatNodeState(c.bits); got != c.text {
			t.Errorf("formatNodeState(%#x) = %q, want %q", c.bits, got, c.text)
		}
		st, err := pbsattr.ParseNodeState(c.text)
		if err != nil || state.NodeStateFromAttr(st) != c.bits {
			t.Errorf("ParseNodeState(%q) = %#x (server %#x), %v; want server bits %#x", c.text, st, state.NodeStateFromAttr(st), err, c.bits)
		}
	}
}

// TestJobStates checks the state_count text and the job_state letters of
// job states and substates.
func TestJobStates(t *testing.T) {
	if got, want := state.StateCount([7]int{1, 2, 3, 4, 5, 6, 7}), "Transit:1 Queued:2 Held:3 Waiting:4 Running:5 Exiting:6 "; got != want {
		t.Errorf("stateCount = %q, want %q", got, want)
	}
	for _, c := range []struct {
		state    pbsattr.JobStateNum
		substate pbsattr.Substate
		letter   string
	}{
		{pbsattr.StateTransit, pbsattr.SubTransIn, "T"}, {pbsattr.StateQueued, pbsattr.SubQueued, "Q"}, {pbsattr.StateHeld, pbsattr.SubHeld, "H"}, {pbsattr.StateWaiting, pbsattr.SubWaiting, "W"},
		{pbsattr.StateRunning, pbsattr.SubRunning, "R"}, {pbsattr.StateRunning, pbsattr.SubSuspend, "S"}, {pbsattr.StateExiting, pbsattr.SubExiting, "E"},
		{pbsattr.StateComplete, pbsattr.SubComplete, "C"}, {9, 0, "U"},
	} {
		j := &state.Job{State: c.state, Substate: c.substate}
		if got := j.StateLetter(); got != c.letter {
			t.Errorf("state %d/%d: letter %q, want %q", c.state, c.substate, got, c.letter)
		}
		if n := testing.AllocsPerRun(10, func() { _ = j.StateLetter() }); n != 0 {
			t.Errorf("stateLetter allocates %v times", n)
		}
	}
}
