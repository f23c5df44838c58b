package policy

// Job comments the FIFO scheduler sets, exactly as TORQUE writes them.
const (
	CommentServerJobLimit    = "Not Running: Server job limit has been reached."
	CommentServerUserLimit   = "Not Running: User has reached server running job limit."
	CommentServerGroupLimit  = "Not Running: Group has reached server running limit."
	CommentQueueJobLimit     = "Not Running: Queue job limit has been reached."
	CommentQueueUserLimit    = "Not Running: User has reached queue running job limit."
	CommentQueueGroupLimit   = "Not Running: Group has reached queue running limit."
	CommentDedicatedCross    = "Not Running: Job would cross dedicated time boundry"
	CommentDraining          = "Not Running: Draining system to allow starving job to run"
	CommentNodes             = "Not Running: Not enough of the right type of nodes are available"
	CommentTimesharing       = "Not Running: All timesharing nodes are too loaded to run job"
	CommentMemory            = "Not Running: Not enough memory available"
	CommentCPUs              = "Not Running: Not enough cpus available"
	CommentNodect            = "Not Running: Not enough nodes available"
	CommentTokens            = "Not Running: Max token usage reached"
	CommentStrictFIFO        = "Not Running: Strict fifo order"
	CommentQueueNotStarted   = "Not Running: Queue not started."
	CommentQueueNotExec      = "Not Running: Queue not an execution queue."
	CommentDedicatedConflict = "Not Running: Dedicated time conflict"
	CommentQueueIgnored      = "Not Running: Queue is configured to be ignored"
	CommentInternalError     = "Not Running: An internal scheduling error has occured"
	// CommentResourceValuePrefix precedes "name=value" when a job asks
	// for a value of a string resource (sched_config resources line)
	// that the server or queue does not have.
	CommentResourceValuePrefix = "Not Running: Requested resource not available: "
	// CommentRunFailedPrefix precedes the server's error text when RunJob
	// fails.
	CommentRunFailedPrefix = "Not Running - PBS Error: "
)

// Log texts (SCHED event) matching the comments above.
const (
	LogServerJobLimit   = "Server job limit reached"
	LogServerUserLimit  = "Server user limit reached"
	LogServerGroupLimit = "Server group limit reached"
	LogQueueJobLimit    = "Queue job limit reached"
	LogQueueUserLimit   = "Queue user limit reached"
	LogQueueGroupLimit  = "Queue group limit reached"
	LogDedicatedCross   = "Job would not finish before dedicated time"
	LogNodes            = "Not enough of the right type of nodes available"
	LogTimesharing      = "No available node to run job"
	LogMemory           = "Not enough memory available"
	LogCPUs             = "Not enough cpus available"
	LogNodect           = "Not enough nodes available"
	LogTokens           = "Max token usage reached"
	// LogResourceValuePrefix goes with CommentResourceValuePrefix.
	LogResourceValuePrefix = "Requested resource not available: "
	LogJobRun              = "Job Run"
	LogNeverRun            = "Job Deleted because it would never run"
	// MessageNeverRun is the DeleteJob message for a job that can never
	// run.
	MessageNeverRun = "Job could never run"
)

// resourceComment returns the comment for a job whose request for the
// consumable resource name exceeds what is left: TORQUE's wording for
// mem, ncpus and nodect, the same pattern for other resources.
func resourceComment(name string) string {
	switch name {
	case "mem":
		return CommentMemory
	case "ncpus":
		return CommentCPUs
	case "nodect":
		return CommentNodect
	}
	return "Not Running: Not enough " + name + " available"
}

// resourceLog is the log text that goes with resourceComment.
func resourceLog(name string) string {
	switch name {
	case "mem":
		return LogMemory
	case "ncpus":
		return LogCPUs
	case "nodect":
		return LogNodect
	}
	return "Not enough " + name + " available"
}

// startedComment is the comment set just before RunJob: "Job started on
// Tue Jun 11 at 14:02", or with a load-balancing node "Job run on node n01
// - started on Tue Jun 11 at 14:02".
func startedComment(node, date string) string {
	if node != "" {
		return "Job run on node " + node + " - started on " + date
	}
	return "Job started on " + date
}
