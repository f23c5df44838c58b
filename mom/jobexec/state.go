// This file holds the engine's errors and what it reports about a job: its
// State, its Usage, its Exit and its Status.

package jobexec

import (
	"errors"
	"strings"
	"time"

	"gopbs/mom/resc"
)

// Errors returned by Engine methods; the protocol layer maps them to PBSE
// codes (PBSE_UNKJOBID, PBSE_JOBEXIST, PBSE_BADSTATE, PBSE_UNKSIG).
var (
	ErrUnknownJob    = errors.New("unknown job")
	ErrJobExists     = errors.New("job is running")
	ErrBadState      = errors.New("job is not in a state allowing this request")
	ErrUnknownSignal = errors.New("unknown signal")
)

// State is the execution state of a job in the engine.
type State int

// Job states.
const (
	StateStarting  State = iota // prologues / starter running
	StateRunning                // processes running (substate RUNNING 42)
	StateSuspended              // stopped by "suspend" (substate SUSPEND 43)
	StateExited                 // ended; Exit available
)

func (s State) String() string {
	switch s {
	case StateStarting:
		return "starting"
	case StateRunning:
		return "running"
	case StateSuspended:
		return "suspended"
	}
	return "exited"
}

// Usage is a job's resources_used.
type Usage struct {
	CPUTime  int64  // seconds (× $cputmult)
	Mem      uint64 // bytes, high-water mark of Σ rss
	VMem     uint64 // bytes, high-water mark of Σ vsize
	Walltime int64  // seconds (× $wallmult), suspended time excluded
}

// Resources returns the four resources_used entries in TORQUE's order and
// text form: cput HH:MM:SS, mem <n>kb, vmem <n>kb, walltime HH:MM:SS.
func (u Usage) Resources() []Resource {
	return []Resource{
		{"cput", resc.FormatHMS(u.CPUTime)},
		{"mem", resc.FormatKB(u.Mem)},
		{"vmem", resc.FormatKB(u.VMem)},
		{"walltime", resc.FormatHMS(u.Walltime)},
	}
}

// String returns "cput=…,mem=…,vmem=…,walltime=…" (epilogue argument 7).
func (u Usage) String() string {
	rs := u.Resources()
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Name + "=" + r.Value
	}
	return strings.Join(parts, ",")
}

// Exit reports the end of a job (OnExit). Every job given to Start or Adopt
// produces exactly one Exit.
type Exit struct {
	JobID     string
	SessionID int // 0 if the job never got a session
	Status    int // exit_status for the obit (spec 11 §10)
	Usage     Usage
	// StartFailed is set when the job failed before its shell ran; Status is
	// then one of the negative JOB_EXEC_* codes.
	StartFailed bool
	Message     string // reason for start failures and limit kills
	// CheckpointName is the job's last checkpoint (taken in this run or
	// restarted from), "" if none; CheckpointTime when it was taken.
	CheckpointName string
	CheckpointTime time.Time
}

// Status is a snapshot of one job.
type Status struct {
	JobID     string
	SessionID int
	State     State
	Usage     Usage
	Started   time.Time
	// Terminal is the pseudo-terminal of an interactive job (reported once
	// as Output_Path/Error_Path), "" for batch jobs.
	Terminal string
	// CheckpointName and CheckpointTime are as in Exit.
	CheckpointName string
	CheckpointTime time.Time
}
