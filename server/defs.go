package server

import (
	"strings"

	pbsattr "gopbs/attr"
)

// The attribute and resource definitions — names, order, value types,
// permissions and flags (spec 04) — live in package attr; this file gives
// the server its view of them: a flag word per definition that the request
// handlers test cheaply, short names for the value types they switch on,
// and index constants equal to attr's attribute numbers.

// valueType is the value type of an attribute or resource (attr.Type).
type valueType = pbsattr.Type

// Short names of the value types the server code tests for.
const (
	tLong     = pbsattr.TypeLong
	tLongLong = pbsattr.TypeLongLong
	tBool     = pbsattr.TypeBool
	tChar     = pbsattr.TypeChar
	tStr      = pbsattr.TypeString
	tArst     = pbsattr.TypeStringArray
	tACL      = pbsattr.TypeACL // a string array whose elements are matched as ACL entries
	tSize     = pbsattr.TypeSize
	tTime     = pbsattr.TypeTime
	tResc     = pbsattr.TypeResourceList
	tHold     = pbsattr.TypeHold
	tDepend   = pbsattr.TypeDepend
)

// isList reports whether values of type t are string arrays (ACLs
// included).
func isList(t valueType) bool { return t == tArst || t == tACL }

// Bits of the server's per-definition flag word. The access bits are
// attr.Perm's (spec 04 §2: Read and Write columns), the others stand for
// attr.Flag and attr.QueueKind bits.
const (
	rdU      = uint32(pbsattr.ReadUser)    // user read
	rdO      = uint32(pbsattr.ReadOper)    // operator read
	rdM      = uint32(pbsattr.ReadMgr)     // manager read
	wrU      = uint32(pbsattr.WriteUser)   // user write
	wrO      = uint32(pbsattr.WriteOper)   // operator write
	wrM      = uint32(pbsattr.WriteMgr)    // manager write
	wrS      = uint32(pbsattr.WriteServer) // privileged connections (server, scheduler, MOM)
	permMask = rdU | rdO | rdM | wrU | wrO | wrM | wrS
)

const (
	fCreate uint32 = 1 << (8 + iota) // settable by a user at submission
	fAltRun                          // alterable while running
	fSelEq                           // select EQ/NE only
	fPrivR                           // owner/operator/manager read only
	fNoShow                          // never reported
	fExecQ                           // queue attribute for execution queues only
	fRouteQ                          // queue attribute for route queues only
)

// flagBits translates attr's flag bits into the flag word.
var flagBits = [...]struct {
	f   pbsattr.Flag
	bit uint32
}{
	{pbsattr.FlagCreate, fCreate}, {pbsattr.FlagAltRun, fAltRun}, {pbsattr.FlagSelEQ, fSelEq},
	{pbsattr.FlagPrivRead, fPrivR}, {pbsattr.FlagNoReport, fNoShow},
}

// flagWord returns the flag word of a definition with the given
// permissions, flags and queue kind.
func flagWord(p pbsattr.Perm, f pbsattr.Flag, k pbsattr.QueueKind) uint32 {
	w := uint32(p) & permMask
	for _, b := range flagBits {
		if f&b.f != 0 {
			w |= b.bit
		}
	}
	switch k {
	case pbsattr.KindExecution:
		w |= fExecQ
	case pbsattr.KindRoute:
		w |= fRouteQ
	}
	return w
}

// access returns the attr access level of a requester: a manager has the
// operators' rights too.
func (p perm) access() pbsattr.Access {
	if p.svr {
		return pbsattr.AccessPrivileged
	}
	a := pbsattr.AccessUser
	if p.oper || p.mgr {
		a |= pbsattr.AccessOper
	}
	if p.mgr {
		a |= pbsattr.AccessMgr
	}
	return a
}

// canRead reports whether the requester's access lets it read an
// attribute or resource with the given flag word, by its permissions alone
// (see readable for PRIVR and NOREPORT).
func (p perm) canRead(flags uint32) bool {
	// Fast path: what users may read, everyone may.
	return flags&rdU != 0 || pbsattr.Perm(flags&permMask).Readable(p.access())
}

// writable reports whether the requester may write an attribute or
// resource with the given flag word.
func (p perm) writable(flags uint32) bool {
	return pbsattr.Perm(flags & permMask).Writable(p.access())
}

// attrDef is the server's view of one attribute definition.
type attrDef struct {
	name  string
	typ   valueType
	flags uint32
	def   *pbsattr.Def // nil for server-only definitions
}

// decode checks a value sent for the attribute, its syntax and any
// further rule of its definition (reserve takes y or n only), and returns
// its canonical text.
func (d *attrDef) decode(v string) (string, bool) {
	val, err := pbsattr.Parse(d.typ, v)
	if err != nil || d.def != nil && d.def.Check(val) != nil {
		return "", false
	}
	return val.Encode(pbsattr.ModeServer), true
}

// defTable is the server's view of one of attr's definition tables, in
// definition (= reporting) order, possibly followed by server-only
// definitions.
type defTable struct {
	table *pbsattr.Table
	defs  []attrDef
	extra map[string]int // server-only names
}

// newDefTable builds the server's view of t followed by the server-only
// definitions extra.
func newDefTable(t *pbsattr.Table, extra ...attrDef) *defTable {
	dt := &defTable{table: t, defs: make([]attrDef, 0, t.Len()+len(extra)), extra: map[string]int{}}
	for i, d := range t.Defs() {
		dt.defs = append(dt.defs, attrDef{name: d.Name, typ: d.Type, flags: flagWord(d.Perm, d.Flags, d.Kind), def: t.Def(i)})
	}
	for _, d := range extra {
		dt.extra[strings.ToLower(d.name)] = len(dt.defs)
		dt.defs = append(dt.defs, d)
	}
	return dt
}

// find returns the index of a name (case-insensitive), or -1.
func (t *defTable) find(name string) int {
	if i := t.table.Index(name); i >= 0 {
		return i
	}
	if i, ok := t.extra[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

var (
	// jobDefs ends with _other_ (jaOther), the slot in which the server
	// keeps attributes it does not know, by name.
	jobDefs    = newDefTable(pbsattr.JobTable(), attrDef{name: "_other_", typ: tStr, flags: rdU | rdO | rdM | wrU | wrO | wrM | fSelEq})
	queueDefs  = newDefTable(pbsattr.QueueTable())
	serverDefs = newDefTable(pbsattr.ServerTable())
	nodeDefs   = newDefTable(pbsattr.NodeTable())
)

// rescDef is the server's view of a resource definition (spec 04 §9).
type rescDef struct {
	typ   valueType
	flags uint32
}

// resources maps the names of the resources known by default to their
// definitions.
var resources = func() map[string]rescDef {
	res := pbsattr.DefaultResources()
	m := make(map[string]rescDef, res.Len())
	for i := 0; i < res.Len(); i++ {
		d := res.Def(i)
		if _, dup := m[d.Name]; !dup {
			m[d.Name] = rescDef{typ: d.Type, flags: flagWord(d.Perm, d.Flags, pbsattr.KindAny)}
		}
	}
	return m
}()

// Job attribute indexes: positions in attr.JobTable (spec 04 §3), which is also
// the reporting order; jaOther follows as the server's own slot for unknown names.
const (
	jaJobName                 = pbsattr.JobName
	jaJobOwner                = pbsattr.JobOwner
	jaResourcesUsed           = pbsattr.JobResourcesUsed
	jaJobState                = pbsattr.JobState
	jaQueue                   = pbsattr.JobQueue
	jaServer                  = pbsattr.JobServer
	jaAccountName             = pbsattr.JobAccountName
	jaCheckpoint              = pbsattr.JobCheckpoint
	jaCtime                   = pbsattr.JobCtime
	jaDepend                  = pbsattr.JobDepend
	jaErrorPath               = pbsattr.JobErrorPath
	jaExecHost                = pbsattr.JobExecHost
	jaExecGpus                = pbsattr.JobExecGpus
	jaExecutionTime           = pbsattr.JobExecutionTime
	jaGroupList               = pbsattr.JobGroupList
	jaHoldTypes               = pbsattr.JobHoldTypes
	jaInteractive             = pbsattr.JobInteractive
	jaJoinPath                = pbsattr.JobJoinPath
	jaKeepFiles               = pbsattr.JobKeepFiles
	jaMailPoints              = pbsattr.JobMailPoints
	jaMailUsers               = pbsattr.JobMailUsers
	jaMtime                   = pbsattr.JobMtime
	jaOutputPath              = pbsattr.JobOutputPath
	jaPriority                = pbsattr.JobPriority
	jaQtime                   = pbsattr.JobQtime
	jaRerunable               = pbsattr.JobRerunable
	jaResourceList            = pbsattr.JobResourceList
	jaSessionID               = pbsattr.JobSessionID
	jaShellPathList           = pbsattr.JobShellPathList
	jaStagein                 = pbsattr.JobStagein
	jaStageout                = pbsattr.JobStageout
	jaSubstate                = pbsattr.JobSubstate
	jaUserList                = pbsattr.JobUserList
	jaVariableList            = pbsattr.JobVariableList
	jaEuser                   = pbsattr.JobEuser
	jaEgroup                  = pbsattr.JobEgroup
	jaHashname                = pbsattr.JobHashname
	jaHopCount                = pbsattr.JobHopCount
	jaQueueRank               = pbsattr.JobQueueRank
	jaQueueType               = pbsattr.JobQueueType
	jaSchedHint               = pbsattr.JobSchedHint
	jaSecurity                = pbsattr.JobSecurity
	jaComment                 = pbsattr.JobComment
	jaCookie                  = pbsattr.JobCookie
	jaAltID                   = pbsattr.JobAltID
	jaEtime                   = pbsattr.JobEtime
	jaExitStatus              = pbsattr.JobExitStatus
	jaForwardX11              = pbsattr.JobForwardX11
	jaSubmitArgs              = pbsattr.JobSubmitArgs
	jaJobArrayID              = pbsattr.JobArrayID
	jaJobArrayRequest         = pbsattr.JobArrayRequest
	jaUmask                   = pbsattr.JobUmask
	jaStartTime               = pbsattr.JobStartTime
	jaStartCount              = pbsattr.JobStartCount
	jaCheckpointDir           = pbsattr.JobCheckpointDir
	jaCheckpointName          = pbsattr.JobCheckpointName
	jaCheckpointTime          = pbsattr.JobCheckpointTime
	jaCheckpointRestartStatus = pbsattr.JobCheckpointRestartStatus
	jaRestartName             = pbsattr.JobRestartName
	jaFaultTolerant           = pbsattr.JobFaultTolerant
	jaCompTime                = pbsattr.JobCompTime
	jaReported                = pbsattr.JobReported
	jaJobtype                 = pbsattr.JobJobtype
	jaInterCmd                = pbsattr.JobInterCmd
	jaProxyUser               = pbsattr.JobProxyUser
	jaSubmitHost              = pbsattr.JobSubmitHost
	jaInitWorkDir             = pbsattr.JobInitWorkDir
	jaJobID                   = pbsattr.JobID
	jaJobArguments            = pbsattr.JobArguments
	jaReserve                 = pbsattr.JobReserve
	jaEstimatedStartTime      = pbsattr.JobEstimatedStartTime
	jaEstimatedExecHost       = pbsattr.JobEstimatedExecHost
	jaOther                   = pbsattr.NumJobAttrs // unknown names, kept verbatim (not in attr's table)
)

// Queue attribute indexes: positions in attr.QueueTable (spec 04 §6).
const (
	qaQueueType          = pbsattr.QueueType
	qaPriority           = pbsattr.QueuePriority
	qaHostlist           = pbsattr.QueueHostlist
	qaRestartable        = pbsattr.QueueRestartable
	qaMaxQueuable        = pbsattr.QueueMaxQueuable
	qaMaxUserQueuable    = pbsattr.QueueMaxUserQueuable
	qaTotalJobs          = pbsattr.QueueTotalJobs
	qaStateCount         = pbsattr.QueueStateCount
	qaMaxReport          = pbsattr.QueueMaxReport
	qaMaxRunning         = pbsattr.QueueMaxRunning
	qaACLHostEnable      = pbsattr.QueueACLHostEnable
	qaACLHosts           = pbsattr.QueueACLHosts
	qaACLUserEnable      = pbsattr.QueueACLUserEnable
	qaACLUsers           = pbsattr.QueueACLUsers
	qaFromRouteOnly      = pbsattr.QueueFromRouteOnly
	qaResourcesMax       = pbsattr.QueueResourcesMax
	qaResourcesMin       = pbsattr.QueueResourcesMin
	qaResourcesDefault   = pbsattr.QueueResourcesDefault
	qaACLGroupEnable     = pbsattr.QueueACLGroupEnable
	qaACLGroups          = pbsattr.QueueACLGroups
	qaACLLogicOr         = pbsattr.QueueACLLogicOr
	qaACLGroupSloppy     = pbsattr.QueueACLGroupSloppy
	qaMtime              = pbsattr.QueueMtime
	qaDisallowedTypes    = pbsattr.QueueDisallowedTypes
	qaCheckpointDir      = pbsattr.QueueCheckpointDir
	qaCheckpointMin      = pbsattr.QueueCheckpointMin
	qaCheckpointDefaults = pbsattr.QueueCheckpointDefaults
	qaRendezvousRetry    = pbsattr.QueueRendezvousRetry
	qaReservedExpedite   = pbsattr.QueueReservedExpedite
	qaReservedSync       = pbsattr.QueueReservedSync
	qaResourcesAvailable = pbsattr.QueueResourcesAvailable
	qaResourcesAssigned  = pbsattr.QueueResourcesAssigned
	qaKillDelay          = pbsattr.QueueKillDelay
	qaMaxUserRun         = pbsattr.QueueMaxUserRun
	qaMaxGroupRun        = pbsattr.QueueMaxGroupRun
	qaKeepCompleted      = pbsattr.QueueKeepCompleted
	qaIsTransit          = pbsattr.QueueIsTransit
	qaRouteDestinations  = pbsattr.QueueRouteDestinations
	qaAltRouter          = pbsattr.QueueAltRouter
	qaRouteHeldJobs      = pbsattr.QueueRouteHeldJobs
	qaRouteWaitingJobs   = pbsattr.QueueRouteWaitingJobs
	qaRouteRetryTime     = pbsattr.QueueRouteRetryTime
	qaRouteLifetime      = pbsattr.QueueRouteLifetime
	qaEnabled            = pbsattr.QueueEnabled
	qaStarted            = pbsattr.QueueStarted
)

// Server attribute indexes: positions in attr.ServerTable (spec 04 §7).
const (
	saServerState            = pbsattr.SrvState
	saScheduling             = pbsattr.SrvScheduling
	saMaxRunning             = pbsattr.SrvMaxRunning
	saMaxUserRun             = pbsattr.SrvMaxUserRun
	saMaxGroupRun            = pbsattr.SrvMaxGroupRun
	saTotalJobs              = pbsattr.SrvTotalJobs
	saStateCount             = pbsattr.SrvStateCount
	saACLHostEnable          = pbsattr.SrvACLHostEnable
	saACLHosts               = pbsattr.SrvACLHosts
	saACLUserEnable          = pbsattr.SrvACLUserEnable
	saACLUsers               = pbsattr.SrvACLUsers
	saACLRoots               = pbsattr.SrvACLRoots
	saManagers               = pbsattr.SrvManagers
	saOperators              = pbsattr.SrvOperators
	saDefaultQueue           = pbsattr.SrvDefaultQueue
	saLogEvents              = pbsattr.SrvLogEvents
	saMailFrom               = pbsattr.SrvMailFrom
	saQueryOtherJobs         = pbsattr.SrvQueryOtherJobs
	saResourcesAvailable     = pbsattr.SrvResourcesAvailable
	saResourcesDefault       = pbsattr.SrvResourcesDefault
	saResourcesMax           = pbsattr.SrvResourcesMax
	saResourcesAssigned      = pbsattr.SrvResourcesAssigned
	saResourcesCost          = pbsattr.SrvResourcesCost
	saSystemCost             = pbsattr.SrvSystemCost
	saSchedulerIteration     = pbsattr.SrvSchedulerIteration
	saNodePingRate           = pbsattr.SrvNodePingRate
	saNodeCheckRate          = pbsattr.SrvNodeCheckRate
	saTCPTimeout             = pbsattr.SrvTCPTimeout
	saComment                = pbsattr.SrvComment
	saDefaultNode            = pbsattr.SrvDefaultNode
	saNodePack               = pbsattr.SrvNodePack
	saNodeSuffix             = pbsattr.SrvNodeSuffix
	saJobStatRate            = pbsattr.SrvJobStatRate
	saPollJobs               = pbsattr.SrvPollJobs
	saLogLevel               = pbsattr.SrvLogLevel
	saDownOnError            = pbsattr.SrvDownOnError
	saDisableServerIDCheck   = pbsattr.SrvDisableServerIDCheck
	saJobNanny               = pbsattr.SrvJobNanny
	saOwnerPurge             = pbsattr.SrvOwnerPurge
	saQueueCentricLimits     = pbsattr.SrvQueueCentricLimits
	saMomJobSync             = pbsattr.SrvMomJobSync
	saMailDomain             = pbsattr.SrvMailDomain
	saPbsVersion             = pbsattr.SrvPBSVersion
	saKillDelay              = pbsattr.SrvKillDelay
	saACLLogicOr             = pbsattr.SrvACLLogicOr
	saACLGroupSloppy         = pbsattr.SrvACLGroupSloppy
	saKeepCompleted          = pbsattr.SrvKeepCompleted
	saSubmitHosts            = pbsattr.SrvSubmitHosts
	saAllowNodeSubmit        = pbsattr.SrvAllowNodeSubmit
	saAllowProxyUser         = pbsattr.SrvAllowProxyUser
	saAutoNodeNp             = pbsattr.SrvAutoNodeNP
	saLogFileMaxSize         = pbsattr.SrvLogFileMaxSize
	saLogFileRollDepth       = pbsattr.SrvLogFileRollDepth
	saLogKeepDays            = pbsattr.SrvLogKeepDays
	saNextJobNumber          = pbsattr.SrvNextJobNumber
	saTokens                 = pbsattr.SrvTokens
	saNetCounter             = pbsattr.SrvNetCounter
	saExtraResc              = pbsattr.SrvExtraResc
	saServerName             = pbsattr.SrvServerName
	saSchedVersion           = pbsattr.SrvSchedVersion
	saAccountingKeepDays     = pbsattr.SrvAccountingKeepDays
	saLockFile               = pbsattr.SrvLockFile
	saLockFileUpdateTime     = pbsattr.SrvLockFileUpdateTime
	saLockFileCheckTime      = pbsattr.SrvLockFileCheckTime
	saCredentialLifetime     = pbsattr.SrvCredentialLifetime
	saJobMustReport          = pbsattr.SrvJobMustReport
	saCheckpointDir          = pbsattr.SrvCheckpointDir
	saDisplayJobServerSuffix = pbsattr.SrvDisplayJobServerSuffix
	saJobSuffixAlias         = pbsattr.SrvJobSuffixAlias
	saMailSubjectFmt         = pbsattr.SrvMailSubjectFmt
	saMailBodyFmt            = pbsattr.SrvMailBodyFmt
	saNpDefault              = pbsattr.SrvNPDefault
	saCloneBatchSize         = pbsattr.SrvCloneBatchSize
	saCloneBatchDelay        = pbsattr.SrvCloneBatchDelay
	saJobStartTimeout        = pbsattr.SrvJobStartTimeout
	saJobForceCancelTime     = pbsattr.SrvJobForceCancelTime
	saMaxJobArraySize        = pbsattr.SrvMaxJobArraySize
	saMaxSlotLimit           = pbsattr.SrvMaxSlotLimit
	saRecordJobInfo          = pbsattr.SrvRecordJobInfo
	saRecordJobScript        = pbsattr.SrvRecordJobScript
	saJobLogFileMaxSize      = pbsattr.SrvJobLogFileMaxSize
	saJobLogFileRollDepth    = pbsattr.SrvJobLogFileRollDepth
	saJobLogKeepDays         = pbsattr.SrvJobLogKeepDays
	saMoabArrayCompatible    = pbsattr.SrvMoabArrayCompatible
	saNoMailForce            = pbsattr.SrvNoMailForce
)

// Node attribute indexes: positions in attr.NodeTable (spec 04 §8).
const (
	naState      = pbsattr.NodeStateAttr
	naNp         = pbsattr.NodeNP
	naProperties = pbsattr.NodeProperties
	naNtype      = pbsattr.NodeNType
	naJobs       = pbsattr.NodeJobs
	naStatus     = pbsattr.NodeStatus
	naNote       = pbsattr.NodeNote
	naGpus       = pbsattr.NodeGPUs
	naGpuStatus  = pbsattr.NodeGPUStatus
)
