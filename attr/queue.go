package attr

import "strconv"

// Queue attribute numbers: positions in QueueTable (spec 04 §6).
const (
	QueueType               = iota // queue_type
	QueuePriority                  // Priority
	QueueHostlist                  // hostlist
	QueueRestartable               // restartable
	QueueMaxQueuable               // max_queuable
	QueueMaxUserQueuable           // max_user_queuable
	QueueTotalJobs                 // total_jobs
	QueueStateCount                // state_count
	QueueMaxReport                 // max_report
	QueueMaxRunning                // max_running
	QueueACLHostEnable             // acl_host_enable
	QueueACLHosts                  // acl_hosts
	QueueACLUserEnable             // acl_user_enable
	QueueACLUsers                  // acl_users
	QueueFromRouteOnly             // from_route_only
	QueueResourcesMax              // resources_max
	QueueResourcesMin              // resources_min
	QueueResourcesDefault          // resources_default
	QueueACLGroupEnable            // acl_group_enable
	QueueACLGroups                 // acl_groups
	QueueACLLogicOr                // acl_logic_or
	QueueACLGroupSloppy            // acl_group_sloppy
	QueueMtime                     // mtime
	QueueDisallowedTypes           // disallowed_types
	QueueCheckpointDir             // checkpoint_dir
	QueueCheckpointMin             // checkpoint_min
	QueueCheckpointDefaults        // checkpoint_defaults
	QueueRendezvousRetry           // rendezvous_retry
	QueueReservedExpedite          // reserved_expedite
	QueueReservedSync              // reserved_sync
	QueueResourcesAvailable        // resources_available
	QueueResourcesAssigned         // resources_assigned
	QueueKillDelay                 // kill_delay
	QueueMaxUserRun                // max_user_run
	QueueMaxGroupRun               // max_group_run
	QueueKeepCompleted             // keep_completed
	QueueIsTransit                 // is_transit
	QueueRouteDestinations         // route_destinations
	QueueAltRouter                 // alt_router
	QueueRouteHeldJobs             // route_held_jobs
	QueueRouteWaitingJobs          // route_waiting_jobs
	QueueRouteRetryTime            // route_retry_time
	QueueRouteLifetime             // route_lifetime
	QueueEnabled                   // enabled
	QueueStarted                   // started
	QueuePartition                 // partition (seed 003)
	numQueueAttrs
)

// DisallowedTypes lists the words accepted in a queue's disallowed_types.
var DisallowedTypes = []string{"batch", "interactive", "rerunable", "nonrerunable", "fault_tolerant", "fault_intolerant", "job_array"}

func queueDefs() []Def {
	rw := perm("UOM", "OM")
	ro := perm("UOM", "-")
	a := func(name string, t Type) Def { return Def{Name: name, Type: t, Perm: rw} }
	e := func(name string, t Type) Def { return Def{Name: name, Type: t, Perm: rw, Kind: KindExecution} }
	r := func(name string, t Type) Def { return Def{Name: name, Type: t, Perm: rw, Kind: KindRoute} }
	acl := func(name string, k ACLKind) Def { return Def{Name: name, Type: TypeACL, Perm: rw, ACL: k} }
	defs := []Def{
		QueueType:               a("queue_type", TypeQueueType),
		QueuePriority:           a("Priority", TypeLong),
		QueueHostlist:           acl("hostlist", ACLHost),
		QueueRestartable:        a("restartable", TypeBool),
		QueueMaxQueuable:        a("max_queuable", TypeLong),
		QueueMaxUserQueuable:    a("max_user_queuable", TypeLong),
		QueueTotalJobs:          {Name: "total_jobs", Type: TypeLong, Perm: ro},
		QueueStateCount:         {Name: "state_count", Type: TypeString, Perm: ro},
		QueueMaxReport:          a("max_report", TypeLong),
		QueueMaxRunning:         a("max_running", TypeLong),
		QueueACLHostEnable:      a("acl_host_enable", TypeBool),
		QueueACLHosts:           acl("acl_hosts", ACLHost),
		QueueACLUserEnable:      a("acl_user_enable", TypeBool),
		QueueACLUsers:           acl("acl_users", ACLUser),
		QueueFromRouteOnly:      a("from_route_only", TypeBool),
		QueueResourcesMax:       a("resources_max", TypeResourceList),
		QueueResourcesMin:       a("resources_min", TypeResourceList),
		QueueResourcesDefault:   a("resources_default", TypeResourceList),
		QueueACLGroupEnable:     a("acl_group_enable", TypeBool),
		QueueACLGroups:          acl("acl_groups", ACLGroup),
		QueueACLLogicOr:         a("acl_logic_or", TypeBool),
		QueueACLGroupSloppy:     a("acl_group_sloppy", TypeBool),
		QueueMtime:              {Name: "mtime", Type: TypeLong, Perm: ro},
		QueueDisallowedTypes:    {Name: "disallowed_types", Type: TypeACL, Perm: rw, ACL: ACLOther, check: checkDisallowedTypes},
		QueueCheckpointDir:      e("checkpoint_dir", TypeString),
		QueueCheckpointMin:      e("checkpoint_min", TypeLong),
		QueueCheckpointDefaults: e("checkpoint_defaults", TypeString),
		QueueRendezvousRetry:    e("rendezvous_retry", TypeLong),
		QueueReservedExpedite:   e("reserved_expedite", TypeLong),
		QueueReservedSync:       e("reserved_sync", TypeLong),
		QueueResourcesAvailable: e("resources_available", TypeResourceList),
		QueueResourcesAssigned:  {Name: "resources_assigned", Type: TypeResourceList, Perm: ro, Kind: KindExecution},
		QueueKillDelay:          e("kill_delay", TypeLong),
		QueueMaxUserRun:         e("max_user_run", TypeLong),
		QueueMaxGroupRun:        e("max_group_run", TypeLong),
		QueueKeepCompleted:      e("keep_completed", TypeLong),
		QueueIsTransit:          e("is_transit", TypeBool),
		QueueRouteDestinations:  r("route_destinations", TypeStringArray),
		QueueAltRouter:          r("alt_router", TypeBool),
		QueueRouteHeldJobs:      r("route_held_jobs", TypeBool),
		QueueRouteWaitingJobs:   r("route_waiting_jobs", TypeBool),
		QueueRouteRetryTime:     {Name: "route_retry_time", Type: TypeLong, Perm: rw, Kind: KindRoute, Unset: "30"},
		QueueRouteLifetime:      r("route_lifetime", TypeLong),
		QueueEnabled:            a("enabled", TypeBool),
		QueueStarted:            a("started", TypeBool),
		QueuePartition:          {Name: "partition", Type: TypeString, Perm: perm("UOM", "M")},
	}
	return defs[:numQueueAttrs:numQueueAttrs]
}

// checkDisallowedTypes accepts only the words of DisallowedTypes
// (PBSE_BADDISALLOWTYPE otherwise).
func checkDisallowedTypes(v Value) error {
	for _, e := range v.Elements() {
		if !contains(DisallowedTypes, e) {
			return &Error{Code: pbseBadDisallowType, Reason: "bad type " + strconv.Quote(e) + " in disallowed_types"}
		}
	}
	return nil
}
