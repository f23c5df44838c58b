// Package monitor is what pbs_server shows of itself to its monitoring
// tools (the Prometheus metrics of package server/metrics and the status
// page of package server/statuspage): point-in-time snapshots of its
// queues, nodes and jobs (a Source), and the events it reports as they
// happen (an Observer). It holds types and interfaces only, so that the
// tools depend on them and not on the server.
package monitor

import (
	"strings"
	"time"
)

// JobStates are the job state letters in the order of a Queue's Counts:
// transit, queued, held, waiting, running, exiting, complete.
const JobStates = "TQHWREC"

// NumJobStates is the number of job states counted per queue.
const NumJobStates = len(JobStates)

// Cluster is a snapshot of a server's queues and nodes.
type Cluster struct {
	Server string    // the server's name
	Taken  time.Time // when the snapshot was taken
	Queues []Queue   // in creation order
	Nodes  []Node    // in creation order
}

// Queue is one queue in a snapshot.
type Queue struct {
	Name    string
	Type    string // "Execution", "Route" or "" when not set
	Enabled bool
	Started bool
	// Counts holds the number of jobs in each state, indexed like
	// JobStates.
	Counts [NumJobStates]int
}

// Total returns the number of jobs in the queue.
func (q Queue) Total() int {
	n := 0
	for _, c := range q.Counts {
		n += c
	}
	return n
}

// Node is one compute node in a snapshot.
type Node struct {
	Name string
	// States are the node's state words ("free", "down", "offline",
	// "job-exclusive", ...); never empty.
	States []string
	NP     int // virtual processors
	Jobs   int // virtual processors assigned to jobs
	// Load is the MOM's last reported one-minute load average (loadave),
	// valid when HasLoad.
	Load    float64
	HasLoad bool
	// PhysMem and AvailMem are the MOM's last reported physical and
	// available memory in bytes, 0 when not reported.
	PhysMem  int64
	AvailMem int64
}

// State returns the node's state words joined by commas, as pbsnodes
// prints them.
func (n Node) State() string { return strings.Join(n.States, ",") }

// Job is one job in a snapshot.
type Job struct {
	ID    string
	Name  string
	Owner string // the user part of Job_Owner
	Queue string
	// State is the job_state letter (one of JobStates, or S for a
	// suspended job).
	State    string
	ExecHost string // exec_host, empty unless the job has nodes
	// Walltime is the requested walltime (Resource_List.walltime) as
	// given, empty when none.
	Walltime string
	// Queued is when the job entered its queue (qtime).
	Queued time.Time
}

// JobFilter selects jobs; empty fields select everything.
type JobFilter struct {
	User  string // the owner's user name
	State string // a job_state letter
}

// Match reports whether j passes the filter.
func (f JobFilter) Match(j Job) bool {
	return (f.User == "" || f.User == j.Owner) && (f.State == "" || f.State == j.State)
}

// Source gives snapshots of a server's state. Its methods are safe for
// concurrent use and never block for long: a server takes them under its
// state lock.
type Source interface {
	// Cluster returns the queues and nodes with their counts.
	Cluster() Cluster
	// Jobs returns the jobs that pass f, in submission order.
	Jobs(f JobFilter) []Job
}

// Observer receives the events a server reports as they happen. Its
// methods are safe for concurrent use and return quickly; they are called
// on the server's request paths.
type Observer interface {
	// Request reports that a batch request of type reqType (a
	// batchreq.PBS_BATCH_* number) was served in d.
	Request(reqType int, d time.Duration)
	// StoreCommit reports one group commit of the store: its batches
	// (one per acknowledged change) took d to reach the disk.
	StoreCommit(d time.Duration, batches int)
	// SchedCycle reports a scheduling cycle of the named scheduler that
	// lasted d.
	SchedCycle(scheduler string, d time.Duration)
	// MomLinkError reports a failure on the link to a MOM, of kind
	// MomConnect, MomRequest or MomSilent.
	MomLinkError(kind string)
}

// Kinds of MOM link errors (Observer.MomLinkError).
const (
	MomConnect = "connect" // the server could not connect to a MOM
	MomRequest = "request" // a request to a MOM failed or got no reply
	MomSilent  = "silent"  // a node was marked down: its MOM stopped reporting
)

// Discard is an Observer that ignores everything.
type Discard struct{}

// Request implements Observer.
func (Discard) Request(int, time.Duration) {}

// StoreCommit implements Observer.
func (Discard) StoreCommit(time.Duration, int) {}

// SchedCycle implements Observer.
func (Discard) SchedCycle(string, time.Duration) {}

// MomLinkError implements Observer.
func (Discard) MomLinkError(string) {}
