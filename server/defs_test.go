package server

import (
	"testing"

	pbsattr "gopbs/attr"
)

// indexNames lists every attribute index constant of the server with the
// attribute it claims to name.
var indexNames = map[*defTable][]struct {
	idx  int
	name string
}{
	jobDefs: {
		{jaJobName, "Job_Name"},
		{jaJobOwner, "Job_Owner"},
		{jaResourcesUsed, "resources_used"},
		{jaJobState, "job_state"},
		{jaQueue, "queue"},
		{jaServer, "server"},
		{jaAccountName, "Account_Name"},
		{jaCheckpoint, "Checkpoint"},
		{jaCtime, "ctime"},
		{jaDepend, "depend"},
		{jaErrorPath, "Error_Path"},
		{jaExecHost, "exec_host"},
		{jaExecGpus, "exec_gpus"},
		{jaExecutionTime, "Execution_Time"},
		{jaGroupList, "group_list"},
		{jaHoldTypes, "Hold_Types"},
		{jaInteractive, "interactive"},
		{jaJoinPath, "Join_Path"},
		{jaKeepFiles, "Keep_Files"},
		{jaMailPoints, "Mail_Points"},
		{jaMailUsers, "Mail_Users"},
		{jaMtime, "mtime"},
		{jaOutputPath, "Output_Path"},
		{jaPriority, "Priority"},
		{jaQtime, "qtime"},
		{jaRerunable, "Rerunable"},
		{jaResourceList, "Resource_List"},
		{jaSessionID, "session_id"},
		{jaShellPathList, "Shell_Path_List"},
		{jaStagein, "stagein"},
		{jaStageout, "stageout"},
		{jaSubstate, "substate"},
		{jaUserList, "User_List"},
		{jaVariableList, "Variable_List"},
		{jaEuser, "euser"},
		{jaEgroup, "egroup"},
		{jaHashname, "hashname"},
		{jaHopCount, "hop_count"},
		{jaQueueRank, "queue_rank"},
		{jaQueueType, "queue_type"},
		{jaSchedHint, "sched_hint"},
		{jaSecurity, "security"},
		{jaComment, "comment"},
		{jaCookie, "cookie"},
		{jaAltID, "alt_id"},
		{jaEtime, "etime"},
		{jaExitStatus, "exit_status"},
		{jaForwardX11, "forward_x11"},
		{jaSubmitArgs, "submit_args"},
		{jaJobArrayID, "job_array_id"},
		{jaJobArrayRequest, "job_array_request"},
		{jaUmask, "umask"},
		{jaStartTime, "start_time"},
		{jaStartCount, "start_count"},
		{jaCheckpointDir, "checkpoint_dir"},
		{jaCheckpointName, "checkpoint_name"},
		{jaCheckpointTime, "checkpoint_time"},
		{jaCheckpointRestartStatus, "checkpoint_restart_status"},
		{jaRestartName, "restart_name"},
		{jaFaultTolerant, "fault_tolerant"},
		{jaCompTime, "comp_time"},
		{jaReported, "reported"},
		{jaJobtype, "jobtype"},
		{jaInterCmd, "inter_cmd"},
		{jaProxyUser, "proxy_user"},
		{jaSubmitHost, "submit_host"},
		{jaInitWorkDir, "init_work_dir"},
		{jaJobID, "job_id"},
		{jaJobArguments, "job_arguments"},
		{jaReserve, "reserve"},
		{jaEstimatedStartTime, "estimated_start_time"},
		{jaEstimatedExecHost, "estimated_exec_host"},
		{jaOther, "_other_"},
	},
	queueDefs: {
		{qaQueueType, "queue_type"},
		{qaPriority, "Priority"},
		{qaHostlist, "hostlist"},
		{qaRestartable, "restartable"},
		{qaMaxQueuable, "max_queuable"},
		{qaMaxUserQueuable, "max_user_queuable"},
		{qaTotalJobs, "total_jobs"},
		{qaStateCount, "state_count"},
		{qaMaxReport, "max_report"},
		{qaMaxRunning, "max_running"},
		{qaACLHostEnable, "acl_host_enable"},
		{qaACLHosts, "acl_hosts"},
		{qaACLUserEnable, "acl_user_enable"},
		{qaACLUsers, "acl_users"},
		{qaFromRouteOnly, "from_route_only"},
		{qaResourcesMax, "resources_max"},
		{qaResourcesMin, "resources_min"},
		{qaResourcesDefault, "resources_default"},
		{qaACLGroupEnable, "acl_group_enable"},
		{qaACLGroups, "acl_groups"},
		{qaACLLogicOr, "acl_logic_or"},
		{qaACLGroupSloppy, "acl_group_sloppy"},
		{qaMtime, "mtime"},
		{qaDisallowedTypes, "disallowed_types"},
		{qaCheckpointDir, "checkpoint_dir"},
		{qaCheckpointMin, "checkpoint_min"},
		{qaCheckpointDefaults, "checkpoint_defaults"},
		{qaRendezvousRetry, "rendezvous_retry"},
		{qaReservedExpedite, "reserved_expedite"},
		{qaReservedSync, "reserved_sync"},
		{qaResourcesAvailable, "resources_available"},
		{qaResourcesAssigned, "resources_assigned"},
		{qaKillDelay, "kill_delay"},
		{qaMaxUserRun, "max_user_run"},
		{qaMaxGroupRun, "max_group_run"},
		{qaKeepCompleted, "keep_completed"},
		{qaIsTransit, "is_transit"},
		{qaRouteDestinations, "route_destinations"},
		{qaAltRouter, "alt_router"},
		{qaRouteHeldJobs, "route_held_jobs"},
		{qaRouteWaitingJobs, "route_waiting_jobs"},
		{qaRouteRetryTime, "route_retry_time"},
		{qaRouteLifetime, "route_lifetime"},
		{qaEnabled, "enabled"},
		{qaStarted, "started"},
	},
	serverDefs: {
		{saServerState, "server_state"},
		{saScheduling, "scheduling"},
		{saMaxRunning, "max_running"},
		{saMaxUserRun, "max_user_run"},
		{saMaxGroupRun, "max_group_run"},
		{saTotalJobs, "total_jobs"},
		{saStateCount, "state_count"},
		{saACLHostEnable, "acl_host_enable"},
		{saACLHosts, "acl_hosts"},
		{saACLUserEnable, "acl_user_enable"},
		{saACLUsers, "acl_users"},
		{saACLRoots, "acl_roots"},
		{saManagers, "managers"},
		{saOperators, "operators"},
		{saDefaultQueue, "default_queue"},
		{saLogEvents, "log_events"},
		{saMailFrom, "mail_from"},
		{saQueryOtherJobs, "query_other_jobs"},
		{saResourcesAvailable, "resources_available"},
		{saResourcesDefault, "resources_default"},
		{saResourcesMax, "resources_max"},
		{saResourcesAssigned, "resources_assigned"},
		{saResourcesCost, "resources_cost"},
		{saSystemCost, "system_cost"},
		{saSchedulerIteration, "scheduler_iteration"},
		{saNodePingRate, "node_ping_rate"},
		{saNodeCheckRate, "node_check_rate"},
		{saTCPTimeout, "tcp_timeout"},
		{saComment, "comment"},
		{saDefaultNode, "default_node"},
		{saNodePack, "node_pack"},
		{saNodeSuffix, "node_suffix"},
		{saJobStatRate, "job_stat_rate"},
		{saPollJobs, "poll_jobs"},
		{saLogLevel, "log_level"},
		{saDownOnError, "down_on_error"},
		{saDisableServerIDCheck, "disable_server_id_check"},
		{saJobNanny, "job_nanny"},
		{saOwnerPurge, "owner_purge"},
		{saQueueCentricLimits, "queue_centric_limits"},
		{saMomJobSync, "mom_job_sync"},
		{saMailDomain, "mail_domain"},
		{saPbsVersion, "pbs_version"},
		{saKillDelay, "kill_delay"},
		{saACLLogicOr, "acl_logic_or"},
		{saACLGroupSloppy, "acl_group_sloppy"},
		{saKeepCompleted, "keep_completed"},
		{saSubmitHosts, "submit_hosts"},
		{saAllowNodeSubmit, "allow_node_submit"},
		{saAllowProxyUser, "allow_proxy_user"},
		{saAutoNodeNp, "auto_node_np"},
		{saLogFileMaxSize, "log_file_max_size"},
		{saLogFileRollDepth, "log_file_roll_depth"},
		{saLogKeepDays, "log_keep_days"},
		{saNextJobNumber, "next_job_number"},
		{saTokens, "tokens"},
		{saNetCounter, "net_counter"},
		{saExtraResc, "extra_resc"},
		{saServerName, "server_name"},
		{saSchedVersion, "sched_version"},
		{saAccountingKeepDays, "accounting_keep_days"},
		{saLockFile, "lock_file"},
		{saLockFileUpdateTime, "lock_file_update_time"},
		{saLockFileCheckTime, "lock_file_check_time"},
		{saCredentialLifetime, "credential_lifetime"},
		{saJobMustReport, "job_must_report"},
		{saCheckpointDir, "checkpoint_dir"},
		{saDisplayJobServerSuffix, "display_job_server_suffix"},
		{saJobSuffixAlias, "job_suffix_alias"},
		{saMailSubjectFmt, "mail_subject_fmt"},
		{saMailBodyFmt, "mail_body_fmt"},
		{saNpDefault, "np_default"},
		{saCloneBatchSize, "clone_batch_size"},
		{saCloneBatchDelay, "clone_batch_delay"},
		{saJobStartTimeout, "job_start_timeout"},
		{saJobForceCancelTime, "job_force_cancel_time"},
		{saMaxJobArraySize, "max_job_array_size"},
		{saMaxSlotLimit, "max_slot_limit"},
		{saRecordJobInfo, "record_job_info"},
		{saRecordJobScript, "record_job_script"},
		{saJobLogFileMaxSize, "job_log_file_max_size"},
		{saJobLogFileRollDepth, "job_log_file_roll_depth"},
		{saJobLogKeepDays, "job_log_keep_days"},
		{saMoabArrayCompatible, "moab_array_compatible"},
		{saNoMailForce, "no_mail_force"},
	},
	nodeDefs: {
		{naState, "state"},
		{naNp, "np"},
		{naProperties, "properties"},
		{naNtype, "ntype"},
		{naJobs, "jobs"},
		{naStatus, "status"},
		{naNote, "note"},
		{naGpus, "gpus"},
		{naGpuStatus, "gpu_status"},
	},
}

// TestIndexNames fails when an index constant does not name the attr
// definition it claims, or the server's tables and attr's disagree.
func TestIndexNames(t *testing.T) {
	tables := map[*defTable]*pbsattr.Table{
		jobDefs: pbsattr.JobTable(), queueDefs: pbsattr.QueueTable(),
		serverDefs: pbsattr.ServerTable(), nodeDefs: pbsattr.NodeTable(),
	}
	for dt, list := range indexNames {
		at := tables[dt]
		if len(list) != len(dt.defs) {
			t.Errorf("%v: %d index constants, %d definitions", at.Object, len(list), len(dt.defs))
		}
		for _, c := range list {
			if c.idx >= len(dt.defs) || dt.defs[c.idx].name != c.name {
				t.Errorf("%v: index %d does not name %s", at.Object, c.idx, c.name)
				continue
			}
			if got := dt.find(c.name); got != c.idx {
				t.Errorf("%v: find(%q) = %d, want %d", at.Object, c.name, got, c.idx)
			}
			if c.idx < at.Len() && at.Def(c.idx).Name != c.name {
				t.Errorf("%v: attr definition %d is %s, not %s", at.Object, c.idx, at.Def(c.idx).Name, c.name)
			}
		}
	}
	if jaOther != pbsattr.JobTable().Len() || jobDefs.find("_OTHER_") != jaOther {
		t.Errorf("jaOther = %d, attr's job table has %d definitions", jaOther, pbsattr.JobTable().Len())
	}
	if jobDefs.find("no_such_attribute") != -1 || jobDefs.find("job_name") != jaJobName {
		t.Error("find: unknown names or case folding")
	}
}

// TestFlagWord checks that the server's flag words grant exactly the
// access attr's definitions grant, to every kind of requester.
func TestFlagWord(t *testing.T) {
	requesters := []struct {
		p perm
		a pbsattr.Access
	}{
		{perm{}, pbsattr.AccessUser},
		{perm{oper: true}, pbsattr.AccessUser | pbsattr.AccessOper},
		// a manager has the operators' rights too
		{perm{mgr: true}, pbsattr.AccessUser | pbsattr.AccessOper | pbsattr.AccessMgr},
		{perm{oper: true, mgr: true, svr: true}, pbsattr.AccessPrivileged},
	}
	for _, at := range []*pbsattr.Table{pbsattr.JobTable(), pbsattr.QueueTable(), pbsattr.ServerTable(), pbsattr.NodeTable()} {
		for i, d := range at.Defs() {
			w := flagWord(d.Perm, d.Flags, d.Kind)
			for _, r := range requesters {
				if got, want := r.p.writable(w), d.Writable(r.a); got != want {
					t.Errorf("%v %s: writable for %+v = %v, attr says %v", at.Object, d.Name, r.p, got, want)
				}
				if got, want := r.p.readable(w, true), d.Readable(r.a); got != want {
					t.Errorf("%v %s: readable for %+v = %v, attr says %v", at.Object, d.Name, r.p, got, want)
				}
			}
			if (w&fSelEq != 0) == d.SelectOpAllowed(pbsattr.OpGT) {
				t.Errorf("%v %s: fSelEq disagrees with attr", at.Object, d.Name)
			}
			if (w&fPrivR != 0) != (d.Flags&pbsattr.FlagPrivRead != 0) || (w&fAltRun != 0) != (d.Flags&pbsattr.FlagAltRun != 0) {
				t.Errorf("%v %s: PRIVR/ALTRUN bits disagree with attr", at.Object, d.Name)
			}
			if (w&fExecQ != 0) != (d.Kind == pbsattr.KindExecution) || (w&fRouteQ != 0) != (d.Kind == pbsattr.KindRoute) {
				t.Errorf("%v %s: queue kind bits disagree with attr", at.Object, d.Name)
			}
			if dt := map[pbsattr.Object]*defTable{pbsattr.ObjJob: jobDefs, pbsattr.ObjQueue: queueDefs, pbsattr.ObjServer: serverDefs, pbsattr.ObjNode: nodeDefs}[at.Object]; dt.defs[i].flags != w || dt.defs[i].typ != d.Type {
				t.Errorf("%v %s: server definition %+v", at.Object, d.Name, dt.defs[i])
			}
		}
	}
	res := pbsattr.DefaultResources()
	for i := 0; i < res.Len(); i++ {
		d := res.Def(i)
		rd, ok := resources[d.Name]
		if !ok || rd.typ != d.Type || rd.flags != flagWord(d.Perm, d.Flags, pbsattr.KindAny) {
			t.Errorf("resource %s: server definition %+v", d.Name, rd)
		}
	}
	if rd := resources["procct"]; (perm{mgr: true}).readable(rd.flags, true) {
		t.Error("procct is reported (NOREPORT)")
	}
	if rd := resources["nodect"]; (perm{}).writable(rd.flags) || !(perm{}).readable(rd.flags, false) {
		t.Error("nodect: users may read but not write it (spec 04 §9)")
	}
}

// TestHoldBits checks the server's hold bit constants against attr's.
func TestHoldBits(t *testing.T) {
	for _, c := range []struct {
		server int
		attr   pbsattr.HoldBits
	}{{holdUser, pbsattr.HoldUser}, {holdOther, pbsattr.HoldOther}, {holdSystem, pbsattr.HoldSystem}, {holdArray, pbsattr.HoldArray}, {holdSlot, pbsattr.HoldSlotLimit}} {
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
		{0, "free"}, {nsUnknown, "state-unknown"}, {nsDown, "down"}, {nsOffline, "offline"},
		{nsReserve, "reserve"}, {nsJobExclusive, "job-exclusive"}, {nsJobSharing, "job-sharing"},
		{nsBusy, "busy"}, {nsDown | nsOffline | nsBusy, "down,offline,busy"},
	} {
		if got := formatNodeState(c.bits); got != c.text {
			t.Errorf("formatNodeState(%#x) = %q, want %q", c.bits, got, c.text)
		}
		st, err := pbsattr.ParseNodeState(c.text)
		if err != nil || nodeStateFromAttr(st) != c.bits {
			t.Errorf("ParseNodeState(%q) = %#x (server %#x), %v; want server bits %#x", c.text, st, nodeStateFromAttr(st), err, c.bits)
		}
	}
}

// TestJobStates checks the server's job state and substate numbers and
// the state_count text against attr's.
func TestJobStates(t *testing.T) {
	for _, c := range []struct{ server, attr int }{
		{stTransit, int(pbsattr.StateTransit)}, {stQueued, int(pbsattr.StateQueued)}, {stHeld, int(pbsattr.StateHeld)},
		{stWaiting, int(pbsattr.StateWaiting)}, {stRunning, int(pbsattr.StateRunning)}, {stExiting, int(pbsattr.StateExiting)},
		{stComplete, int(pbsattr.StateComplete)},
		{ssTransIn, int(pbsattr.SubTransIn)}, {ssTransICM, int(pbsattr.SubTransICM)}, {ssTrnOut, int(pbsattr.SubTrnOut)},
		{ssQueued, int(pbsattr.SubQueued)}, {ssHeld, int(pbsattr.SubHeld)}, {ssSyncHold, int(pbsattr.SubSyncHold)},
		{ssDepnHold, int(pbsattr.SubDepnHold)}, {ssWaiting, int(pbsattr.SubWaiting)}, {ssPrerun, int(pbsattr.SubPreRun)},
		{ssRunning, int(pbsattr.SubRunning)}, {ssSuspend, int(pbsattr.SubSuspend)}, {ssExiting, int(pbsattr.SubExiting)},
		{ssStageOut, int(pbsattr.SubStageOut)}, {ssExited, int(pbsattr.SubExited)}, {ssAbort, int(pbsattr.SubAbort)},
		{ssComplete, int(pbsattr.SubComplete)}, {ssRerun, int(pbsattr.SubRerun)}, {ssRerun3, int(pbsattr.SubRerun3)},
		{ssArrayTemp, int(pbsattr.SubArrayTemplate)},
	} {
		if c.server != c.attr {
			t.Errorf("server state number %d, attr has %d", c.server, c.attr)
		}
	}
	if got, want := stateCount([7]int{1, 2, 3, 4, 5, 6, 7}), "Transit:1 Queued:2 Held:3 Waiting:4 Running:5 Exiting:6 "; got != want {
		t.Errorf("stateCount = %q, want %q", got, want)
	}
	for _, c := range []struct {
		state, substate int
		letter          string
	}{
		{stTransit, ssTransIn, "T"}, {stQueued, ssQueued, "Q"}, {stHeld, ssHeld, "H"}, {stWaiting, ssWaiting, "W"},
		{stRunning, ssRunning, "R"}, {stRunning, ssSuspend, "S"}, {stExiting, ssExiting, "E"},
		{stComplete, ssComplete, "C"}, {9, 0, "U"},
	} {
		j := &Job{state: c.state, substate: c.substate}
		if got := j.stateLetter(); got != c.letter {
			t.Errorf("state %d/%d: letter %q, want %q", c.state, c.substate, got, c.letter)
		}
		if n := testing.AllocsPerRun(10, func() { _ = j.stateLetter() }); n != 0 {
			t.Errorf("stateLetter allocates %v times", n)
		}
	}
}
