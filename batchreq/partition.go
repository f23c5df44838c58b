package batchreq

import "gopbs/dis"

// Several schedulers over partitions (issue 18, seed 003): the scheduler
// object type, GoPBS's request types that read sched objects, and the
// error codes of sched objects and partitions.
//
// The error codes 15215–15221 are those of the seed; GoPBS adds 15222–
// 15226 for the refusals the seed describes without a number. They lie
// above TORQUE's resource-monitor codes (PBSE_RMFLOOR … PBSE_RMCEILING,
// 15200–15207) and far above TORQUE 2.5.13's batch codes (PBSE_CEILING),
// so that no TORQUE program can mistake one for its own.

// MGR_OBJ_SCHED is the object type of scheduler objects in Manager
// requests and Status replies. TORQUE's object types are -1 … 3 (later
// PBS versions number theirs up to about 10); GoPBS's own start at 1000
// (MGR_OBJ_RESV), and sched objects are the next.
const MGR_OBJ_SCHED = 1001

// GoPBS request types of scheduler objects. Both carry a StatusReq body.
const (
	// PBS_BATCH_StatusSched asks for the status of one sched object (ID
	// is its name) or of all (ID ""); the reply is a Status of
	// MGR_OBJ_SCHED objects. qmgr's list and print use it.
	PBS_BATCH_StatusSched = 1020
	// PBS_BATCH_SchedHello is sent by a scheduler that names itself
	// (ID is its name) on a connection to the server: from then on the
	// connection sees only that scheduler's slice of the cluster (its
	// partitions' queues, their jobs and nodes), and RunJob on a node
	// outside it is refused. The reply is the scheduler's own object, as
	// StatusSched gives it. A TORQUE-era scheduler never sends it and is
	// the "default" scheduler on the connection the server opens to it.
	PBS_BATCH_SchedHello = 1021
)

// Error codes of sched objects and partitions.
const (
	PBSE_SCHED_LOG_EXIST   = 15215 // sched_log used by another sched object
	PBSE_SCHED_PRIV_EXIST  = 15216 // sched_priv used by another sched object
	PBSE_ROUTE_QUE_NO_PART = 15217 // partition set on a route queue
	PBSE_CANNOT_SET_ROUTE  = 15218 // route type set on a queue with a partition
	PBSE_QUE_NOT_IN_PART   = 15219 // node's queue is not in the node's new partition
	PBSE_PART_NOT_IN_QUE   = 15220 // node's partition is not the new queue's
	PBSE_INVALID_PART_QUE  = 15221 // queue's new partition differs from its nodes'
	PBSE_PART_ALREADY_USED = 15222 // partition already associated with another scheduler (GoPBS)
	PBSE_SCHED_OP_DEFAULT  = 15223 // operation not permitted on the default scheduler (GoPBS)
	PBSE_SCHED_NAME_BIG    = 15224 // scheduler name longer than PBS_MAXSCHEDNAME (GoPBS)
	PBSE_UNKSCHED          = 15225 // unknown scheduler (GoPBS)
	PBSE_SCHED_EXIST       = 15226 // scheduler already exists (GoPBS)

	PBSE_SCHEDFLOOR   = PBSE_SCHED_LOG_EXIST
	PBSE_SCHEDCEILING = PBSE_SCHED_EXIST + 1
)

// SHUT_WHO_SCHED is or-ed into a Shutdown request's manner by qterm -s:
// the server stops its schedulers too (GoPBS; the value later PBS
// versions give it). A TORQUE 2.5.13 server does not know it.
const SHUT_WHO_SCHED = 0x10

// PBS_MAXSCHEDNAME is the longest name of a sched object (seed 003).
const PBS_MAXSCHEDNAME = 15

// schedText holds the texts of PBSE_SCHEDFLOOR … PBSE_SCHEDCEILING-1.
// Where the seed's reply names an object ("Queue q1 is not part of
// partition for node"), the server sends the text with the name in its
// reply; the table has the general form.
var schedText = [PBSE_SCHEDCEILING - PBSE_SCHEDFLOOR]string{
	PBSE_SCHED_LOG_EXIST - PBSE_SCHEDFLOOR:   "Another Sched object also has same value for its sched_log directory",
	PBSE_SCHED_PRIV_EXIST - PBSE_SCHEDFLOOR:  "Another Sched object also has same value for its sched_priv directory",
	PBSE_ROUTE_QUE_NO_PART - PBSE_SCHEDFLOOR: "Can not assign a partition to route queue",
	PBSE_CANNOT_SET_ROUTE - PBSE_SCHEDFLOOR:  "Route queues are incompatible with the partition attribute ",
	PBSE_QUE_NOT_IN_PART - PBSE_SCHEDFLOOR:   "Queue is not part of partition for node",
	PBSE_PART_NOT_IN_QUE - PBSE_SCHEDFLOOR:   "Partition is not part of queue for node",
	PBSE_INVALID_PART_QUE - PBSE_SCHEDFLOOR:  "Invalid partition in queue",
	PBSE_PART_ALREADY_USED - PBSE_SCHEDFLOOR: "Partition is already associated with another scheduler",
	PBSE_SCHED_OP_DEFAULT - PBSE_SCHEDFLOOR:  "Operation is not permitted on default scheduler",
	PBSE_SCHED_NAME_BIG - PBSE_SCHEDFLOOR:    "Scheduler name is too long",
	PBSE_UNKSCHED - PBSE_SCHEDFLOOR:          "Unknown scheduler",
	PBSE_SCHED_EXIST - PBSE_SCHEDFLOOR:       "Scheduler already exists",
}

// IsSchedError reports whether code is one of the sched object and
// partition codes (PBSE_SCHEDFLOOR … PBSE_SCHEDCEILING-1).
func IsSchedError(code int) bool { return code >= PBSE_SCHEDFLOOR && code < PBSE_SCHEDCEILING }

// ReadGoPBSServerRequest decodes one request as GoPBS's pbs_server does:
// TORQUE's request types as ReadServerRequest, and GoPBS's own
// (IsGoPBSRequest) besides; a server answers those it does not serve
// PBSE_UNKREQ through its mux.
func ReadGoPBSServerRequest(r *dis.Reader) (*Request, error) {
	return readRequestIn(r, func(t int) bool { return ServerDecodes(t) || IsGoPBSRequest(t) }, true)
}
