package server

import (
	"strconv"

	pbsattr "gopbs/attr"
)

// Job is one job. It is owned by the Server and only touched under its
// lock.
type Job struct {
	id       string
	seq      int64
	state    pbsattr.JobStateNum
	substate pbsattr.Substate
	hold     int
	// lateHold holds the bits of hold set after the job's state was
	// computed, by a dependency registration its parent refused
	// (capture 82): the evaluation that follows the registration leaves
	// them out, so the job stays queued; later ones count them.
	lateHold int
	queue    *Queue
	rank     int64
	attrs    attrList

	// array bookkeeping
	array    *arrayInfo // set on an array template
	parent   *Job       // set on an array sub-job
	arrayIdx int

	// pending submission (state TRANSIT)
	conn   *conn
	script []byte

	// list links (all jobs in submission order)
	prev, next *Job

	// completed-job purge time (unix seconds), 0 if none
	purgeAt int64

	// routing bookkeeping: when to try again, destinations that refused
	// the job for good, and those (other servers) that refused it for now
	// in the current round
	routeRetryAt int64
	routeTried   map[string]bool
	routeLater   map[string]bool
}

type arrayInfo struct {
	request string
	subjobs []*Job // by position in request order
	size    int    // sub-jobs created
	// counters of started and ended sub-jobs for the array dependency
	// types
	started, ok, notOK int
}

// stateLetter returns the job_state letter; a running job suspended by
// qsig -s suspend shows S (spec 10 §9.1).
func (j *Job) stateLetter() string {
	return pbsattr.JobStateNum(j.state).StateValue(j.substate == pbsattr.SubSuspend).Str()
}

// owner returns Job_Owner.
func (j *Job) owner() string { return j.attrs.get(pbsattr.JobOwner) }

// ownerUser returns the user part of Job_Owner.
func (j *Job) ownerUser() string {
	o := j.owner()
	for i := 0; i < len(o); i++ {
		if o[i] == '@' {
			return o[:i]
		}
	}
	return o
}

func (j *Job) name() string { return j.attrs.get(pbsattr.JobName) }

// Queue is one queue.
type Queue struct {
	name  string
	attrs attrList
	count [7]int         // jobs per state
	users map[string]int // non-complete jobs per owner user
	order int64          // creation order
}

func (q *Queue) isRoute() bool {
	t := q.attrs.get(pbsattr.QueueType)
	return len(t) > 0 && (t[0] == 'R' || t[0] == 'r')
}

func (q *Queue) isExec() bool {
	t := q.attrs.get(pbsattr.QueueType)
	return len(t) > 0 && (t[0] == 'E' || t[0] == 'e')
}

func (q *Queue) total() int {
	n := 0
	for _, c := range q.count {
		n += c
	}
	return n
}

func (q *Queue) active() int { return q.total() - q.count[pbsattr.StateComplete] }

func (q *Queue) long(idx int) (int64, bool) {
	v := q.attrs.get(idx)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// stateCount returns the state_count text of per-state job counts.
func stateCount(c [7]int) string { return pbsattr.StateCount(c).String() }

// Node state bits (spec 04 §8.1, order of the encoding).
const (
	nsUnknown = 1 << iota
	nsDown
	nsOffline
	nsReserve
	nsJobExclusive
	nsJobSharing
	nsBusy
	// nsNotReported marks a node whose MOM has not sent a status since the
	// node was created or the server started. TORQUE shows such a node as
	// offline ("down,offline" until its MOM's hello, "offline" until its
	// first status) and runs nothing there. It is the MOM's to clear, not
	// kept in the node's record.
	nsNotReported
)

// nsUnreported is the state of a node that has not reported: down until
// its MOM says hello, and not reported until its first status.
const nsUnreported = nsDown | nsNotReported

// nodeStateBits gives attr's node state bit for each of the server's
// (bit i of the server's state is nodeStateBits[i]). The server keeps its
// own numbering because node records store it.
var nodeStateBits = [...]pbsattr.NodeState{
	pbsattr.NodeUnknown, pbsattr.NodeDown, pbsattr.NodeOffline, pbsattr.NodeReserve,
	pbsattr.NodeJob, pbsattr.NodeJobShare, pbsattr.NodeBusy,
}

// nodeStateToAttr converts the server's node state bits to attr's.
func nodeStateToAttr(s int) pbsattr.NodeState {
	var st pbsattr.NodeState
	for i, b := range nodeStateBits {
		if s&(1<<i) != 0 {
			st |= b
		}
	}
	if s&nsNotReported != 0 {
		st |= pbsattr.NodeOffline
	}
	return st
}

// nodeStateFromAttr converts attr's node state bits to the server's; bits
// the server does not keep are dropped.
func nodeStateFromAttr(st pbsattr.NodeState) int {
	s := 0
	for i, b := range nodeStateBits {
		if st&b != 0 {
			s |= 1 << i
		}
	}
	return s
}

// formatNodeState returns the state words of the server's node state bits
// ("free" for none).
func formatNodeState(s int) string { return nodeStateToAttr(s).String() }

// Node is one compute node.
type Node struct {
	name       string
	np         int
	state      int
	timeShared bool
	attrs      attrList // properties, status, note, gpus, gpu_status
	order      int64
}
