package main

// Attribute names qmgr knows per object type (spec 05 §6.5): the public
// ones, which "print" writes back, and the read-only ones, which are
// accepted as names only.
var (
	serverPublic = []string{"acl_host_enable", "acl_hosts", "acl_user_enable", "acl_users", "acl_roots",
		"comment", "default_node", "default_queue", "location_servers", "log_events", "log_level",
		"managers", "mail_from", "max_running", "max_user_run", "max_group_run", "node_pack",
		"node_suffix", "operators", "query_other_jobs", "resources_available", "resources_cost",
		"resources_default", "resources_max", "scheduler_iteration", "scheduling", "system_cost",
		"node_ping_rate", "node_check_rate", "tcp_timeout", "job_stat_rate", "poll_jobs",
		"down_on_error", "disable_server_id_check", "job_nanny", "owner_purge", "queue_centric_limits",
		"mom_job_sync", "mail_domain", "kill_delay", "acl_logic_or", "acl_group_sloppy",
		"keep_completed", "submit_hosts", "allow_node_submit", "allow_proxy_user", "server_name",
		"auto_node_np", "log_file_max_size", "log_file_roll_depth", "log_keep_days",
		"next_job_number", "tokens", "extra_resc", "sched_version", "accounting_keep_days",
		"lock_file", "lock_file_update_time", "lock_file_check_time", "credential_lifetime",
		"job_must_report", "checkpoint_dir", "display_job_server_suffix", "job_suffix_alias",
		"mail_subject_fmt", "mail_body_fmt", "np_default", "clone_batch_size", "clone_batch_delay",
		"job_start_timeout", "job_force_cancel_time", "max_job_array_size", "max_slot_limit",
		"record_job_info", "record_job_script", "job_log_file_max_size", "job_log_file_roll_depth",
		"job_log_keep_days", "authorized_users", "moab_array_compatible", "no_mail_force",
		"http_address"}
	serverRO = []string{"resources_assigned", "state_count", "server_state", "total_jobs",
		"net_counter", "pbs_version"}
	queuePublic = []string{"acl_group_enable", "acl_groups", "acl_host_enable", "acl_hosts",
		"acl_user_enable", "acl_users", "checkpoint_dir", "checkpoint_min", "checkpoint_defaults",
		"enabled", "from_route_only", "kill_delay", "max_queuable", "max_user_queuable",
		"max_group_run", "max_report", "max_running", "max_user_run", "Priority", "queue_type",
		"resources_available", "resources_default", "resources_max", "resources_min",
		"restartable", "rendezvous_retry", "route_destinations", "alt_router", "route_held_jobs",
		"route_waiting_jobs", "route_retry_time", "route_lifetime", "reserved_expedite",
		"reserved_sync", "started", "acl_logic_or", "acl_group_sloppy", "keep_completed",
		"disallowed_types", "hostlist", "is_transit", "partition"}
	queueRO    = []string{"total_jobs", "state_count", "resources_assigned", "mtime"}
	nodePublic = []string{"state", "properties", "np", "ntype", "status", "note", "gpus", "gpu_status", "partition", "queue"}
	nodeRO     = []string{"jobs"}
	// schedPublic are the attributes of sched objects (GoPBS, seed 003).
	schedPublic = []string{"host", "port", "partitions", "sched_priv", "sched_log", "scheduling",
		"scheduler_iteration", "job_accumulation_time", "sched_user", "comment"}
	schedRO = []string{"state"}
)

func set(lists ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, n := range l {
			m[n] = true
		}
	}
	return m
}

var (
	knownAttrs = [...]map[string]bool{
		objServer: set(serverPublic, serverRO),
		objQueue:  set(queuePublic, queueRO),
		objNode:   set(nodePublic, nodeRO),
		objSched:  set(schedPublic, schedRO),
	}
	publicAttrs = [...]map[string]bool{
		objServer: set(serverPublic),
		objQueue:  set(queuePublic),
		objNode:   set(nodePublic),
		objSched:  set(schedPublic),
	}
)
