package config

import (
	"fmt"
	"slices"
	"strings"
)

// PluS's scheduler keys (seed 002 §3.2): JobSortKey, NodeSortKey and the
// orders OwnersOrder, GroupsOrder and HostsOrder, written in sched_config
// as PluS wrote them in its sched_conf ("JobSortKey: QueuePriority,
// ByQueue, JobPriority"). A JobSortKey that is one of the forms of the
// seed's §3.3 table sets round_robin, by_queue, sort_queues and
// strict_fifo as the table says (and sort_by high_priority_first for
// JobPriority), so that the FIFO policy orders jobs as PluS would; the
// combinations the table forbids are refused.

// JobSortKey is one key of PluS's JobSortKey.
type JobSortKey string

// PluS's job sort keys.
const (
	JobPriority        JobSortKey = "JobPriority"
	SubmitTime         JobSortKey = "SubmitTime"
	LeastCPURequested  JobSortKey = "LeastCPURequested"
	MostCPURequested   JobSortKey = "MostCPURequested"
	LeastNodeRequested JobSortKey = "LeastNodeRequested"
	MostNodeRequested  JobSortKey = "MostNodeRequested"
	LeastTimeRequested JobSortKey = "LeastTimeRequested"
	MostTimeRequested  JobSortKey = "MostTimeRequested"
	QueuePriority      JobSortKey = "QueuePriority"
	QueueRoundRobin    JobSortKey = "QueueRoundRobin"
	ByQueue            JobSortKey = "ByQueue"
	OwnersName         JobSortKey = "OwnersName"
	OwnersGroup        JobSortKey = "OwnersGroup"
	OwnersHost         JobSortKey = "OwnersHost"
)

var jobSortKeys = []JobSortKey{JobPriority, SubmitTime, LeastCPURequested, MostCPURequested,
	LeastNodeRequested, MostNodeRequested, LeastTimeRequested, MostTimeRequested,
	QueuePriority, QueueRoundRobin, ByQueue, OwnersName, OwnersGroup, OwnersHost}

// NodeSortKey is one key of PluS's NodeSortKey.
type NodeSortKey string

// PluS's node sort keys.
const (
	NodeName              NodeSortKey = "NodeName"
	LowestLoadAverage     NodeSortKey = "LowestLoadAverage"
	LongestIdleTime       NodeSortKey = "LongestIdleTime"
	LargestPhysicalMemory NodeSortKey = "LargestPhysicalMemory"
)

var nodeSortKeys = []NodeSortKey{NodeName, LowestLoadAverage, LongestIdleTime, LargestPhysicalMemory}

// PluS holds the PluS keys of a sched_config.
type PluS struct {
	JobSortKey  []JobSortKey
	NodeSortKey []NodeSortKey
	OwnersOrder []string
	GroupsOrder []string
	HostsOrder  []string

	jobSortLine int // line of JobSortKey, for errors found at the end
}

// FIFOFlags are the four FIFO settings of the seed's §3.3 table.
type FIFOFlags struct {
	RoundRobin, ByQueue, SortQueues, StrictFIFO bool
}

// ErrRoundRobinByQueue is the table's refusal: round_robin and by_queue
// (QueueRoundRobin and ByQueue) must not be set together.
var ErrRoundRobinByQueue = fmt.Errorf("rr and bq must not be specified at the same time")

// JobSortKeyFor returns the JobSortKey of the seed's §3.3 table for the
// FIFO settings: [QueuePriority,] [ByQueue | QueueRoundRobin,] then
// JobPriority or SubmitTime. Round robin with by_queue is refused.
func JobSortKeyFor(f FIFOFlags) ([]JobSortKey, error) {
	if f.RoundRobin && f.ByQueue {
		return nil, ErrRoundRobinByQueue
	}
	var keys []JobSortKey
	if f.SortQueues {
		keys = append(keys, QueuePriority)
	}
	switch {
	case f.ByQueue:
		keys = append(keys, ByQueue)
	case f.RoundRobin:
		keys = append(keys, QueueRoundRobin)
	}
	if f.StrictFIFO {
		return append(keys, SubmitTime), nil
	}
	return append(keys, JobPriority), nil
}

// FIFOFlagsFor is the inverse of JobSortKeyFor: the FIFO settings of a
// JobSortKey that is one of the table's forms, and false for any other
// list.
func FIFOFlagsFor(keys []JobSortKey) (FIFOFlags, bool) {
	var f FIFOFlags
	rest := keys
	if len(rest) > 0 && rest[0] == QueuePriority {
		f.SortQueues, rest = true, rest[1:]
	}
	if len(rest) > 0 && (rest[0] == ByQueue || rest[0] == QueueRoundRobin) {
		f.ByQueue, f.RoundRobin, rest = rest[0] == ByQueue, rest[0] == QueueRoundRobin, rest[1:]
	}
	if len(rest) != 1 || (rest[0] != JobPriority && rest[0] != SubmitTime) {
		return FIFOFlags{}, false
	}
	f.StrictFIFO = rest[0] == SubmitTime
	return f, true
}

// splitList splits "a, b,c" into its items; an empty item is an error.
func splitList(v string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("empty item in %q", v)
		}
		out = append(out, s)
	}
	return out, nil
}

// applyPluS interprets a PluS key line. handled is false for other
// lines; reason is set when the line is unusable.
func (c *Config) applyPluS(line string, n int) (handled bool, reason string) {
	name, value, ok := strings.Cut(line, ":")
	if !ok {
		return false, ""
	}
	name = strings.TrimSpace(name)
	switch name {
	case "JobSortKey", "NodeSortKey", "OwnersOrder", "GroupsOrder", "HostsOrder":
	default:
		return false, ""
	}
	items, err := splitList(value)
	if err != nil {
		return true, err.Error()
	}
	if c.PluS == nil {
		c.PluS = &PluS{}
	}
	p := c.PluS
	switch name {
	case "JobSortKey":
		var keys []JobSortKey
		for _, it := range items {
			i := slices.IndexFunc(jobSortKeys, func(k JobSortKey) bool { return strings.EqualFold(string(k), it) })
			if i < 0 {
				return true, "unknown JobSortKey " + it
			}
			if slices.Contains(keys, jobSortKeys[i]) {
				return true, "JobSortKey " + it + " given twice"
			}
			keys = append(keys, jobSortKeys[i])
		}
		if slices.Contains(keys, QueueRoundRobin) && slices.Contains(keys, ByQueue) {
			return true, "QueueRoundRobin and ByQueue: " + ErrRoundRobinByQueue.Error()
		}
		if slices.Contains(keys, JobPriority) && slices.Contains(keys, SubmitTime) &&
			slices.Index(keys, SubmitTime) < slices.Index(keys, JobPriority) {
			return true, "SubmitTime before JobPriority leaves JobPriority without effect"
		}
		p.JobSortKey, p.jobSortLine = keys, n
	case "NodeSortKey":
		var keys []NodeSortKey
		for _, it := range items {
			i := slices.IndexFunc(nodeSortKeys, func(k NodeSortKey) bool { return strings.EqualFold(string(k), it) })
			if i < 0 {
				return true, "unknown NodeSortKey " + it
			}
			if slices.Contains(keys, nodeSortKeys[i]) {
				return true, "NodeSortKey " + it + " given twice"
			}
			keys = append(keys, nodeSortKeys[i])
		}
		p.NodeSortKey = keys
	case "OwnersOrder":
		p.OwnersOrder = items
	case "GroupsOrder":
		p.GroupsOrder = items
	case "HostsOrder":
		p.HostsOrder = items
	}
	return true, ""
}

// finishPluS checks what needs the whole file (OwnersXxx needs
// XxxsOrder) and applies a JobSortKey of the table's forms to the FIFO
// settings. It returns the line and reason of a problem, or 0 and "".
func (c *Config) finishPluS() (int, string) {
	p := c.PluS
	if p == nil {
		return 0, ""
	}
	for _, need := range []struct {
		key   JobSortKey
		order []string
		name  string
	}{{OwnersName, p.OwnersOrder, "OwnersOrder"}, {OwnersGroup, p.GroupsOrder, "GroupsOrder"}, {OwnersHost, p.HostsOrder, "HostsOrder"}} {
		if slices.Contains(p.JobSortKey, need.key) && len(need.order) == 0 {
			line := p.jobSortLine
			p.JobSortKey = nil
			return line, fmt.Sprintf("JobSortKey %s needs %s", need.key, need.name)
		}
	}
	f, ok := FIFOFlagsFor(p.JobSortKey)
	if !ok {
		// A list outside the table: its queue keys, if it has any, choose
		// the queue order; its job keys order the jobs (JobOrder).
		if slices.ContainsFunc(p.JobSortKey, isQueueKey) {
			sq, bq, rr := slices.Contains(p.JobSortKey, QueuePriority), slices.Contains(p.JobSortKey, ByQueue), slices.Contains(p.JobSortKey, QueueRoundRobin)
			c.SortQueues = Periodic[bool]{sq, sq}
			c.ByQueue = Periodic[bool]{bq, bq}
			c.RoundRobin = Periodic[bool]{rr, rr}
			c.StrictFIFO = Periodic[bool]{false, false}
		}
		return 0, ""
	}
	c.RoundRobin = Periodic[bool]{f.RoundRobin, f.RoundRobin}
	c.ByQueue = Periodic[bool]{f.ByQueue, f.ByQueue}
	c.SortQueues = Periodic[bool]{f.SortQueues, f.SortQueues}
	c.StrictFIFO = Periodic[bool]{f.StrictFIFO, f.StrictFIFO}
	if !f.StrictFIFO {
		c.SortBy = Periodic[SortKey]{HighPriorityFirst, HighPriorityFirst}
	}
	return 0, ""
}

// isQueueKey reports whether k orders queues rather than jobs.
func isQueueKey(k JobSortKey) bool {
	return k == QueuePriority || k == ByQueue || k == QueueRoundRobin
}

// JobOrder returns the job keys of a JobSortKey that is not one of the
// §3.3 table's forms (those are FIFO settings), in their order, or nil.
// The policy sorts the jobs by them, the first key first.
func (p *PluS) JobOrder() []JobSortKey {
	if p == nil || len(p.JobSortKey) == 0 {
		return nil
	}
	if _, ok := FIFOFlagsFor(p.JobSortKey); ok {
		return nil
	}
	var keys []JobSortKey
	for _, k := range p.JobSortKey {
		if !isQueueKey(k) {
			keys = append(keys, k)
		}
	}
	return keys
}
