package state

import (
	"strconv"

	"gopbs/attr"
)

// HoldsState reports whether a job in this state may hold nodes (running
// or exiting): the jobs that node allocation, resources_assigned and the
// MOM polling look at, kept in a set of their own so that they never walk
// the whole job list.
func HoldsState(state attr.JobStateNum) bool {
	return state == attr.StateRunning || state == attr.StateExiting
}

// ExecTime returns a job's Execution_Time (Unix seconds), 0 if unset.
func ExecTime(j *Job) int64 {
	v := j.Attrs.Get(attr.JobExecutionTime)
	if v == "" {
		return 0
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// QueueName returns the name of a job's queue, "" if it has none.
func QueueName(j *Job) string {
	if j.Queue == nil {
		return ""
	}
	return j.Queue.Name
}

// ScriptKey is the key of a job's script: array sub-jobs share the
// template's.
func ScriptKey(j *Job) string {
	if j.Parent != nil {
		return j.Parent.ID
	}
	return j.ID
}

// StateName returns the name of a job state as the log writes it
// (QUEUED, RUNNING...).
func StateName(st attr.JobStateNum) string {
	return [...]string{"TRANSIT", "QUEUED", "HELD", "WAITING", "RUNNING", "EXITING", "COMPLETE"}[st]
}
