// Package world is the scheduler's snapshot of the batch system at the
// start of a cycle: the server, its queues with their jobs, and the nodes
// (with what their MOMs reported). It is built from status replies (see
// Attr and the From* constructors) or directly by tests and benchmarks.
package world

import (
	"math"
	"strconv"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/resv"
)

// Unlimited is the value of a run limit that is not set.
const Unlimited = -1

// Attr is one attribute of a status reply, as package batchreq decodes
// it (Name, Resource and Value are what the world is built from): the
// scheduler's replies are used without copying their attributes.
type Attr = batchreq.Attr

// Limits are the resource amounts the scheduler checks (mem, ncpus,
// nodect); a negative amount means "not set". Values holds every resource
// as reported, for the checks a sched_config resources line asks for.
type Limits struct {
	Mem    int64 // bytes
	NCPUs  int64
	NodeCt int64
	Values map[string]string
}

// NotSet returns Limits with every amount unset.
func NotSet() Limits { return Limits{Mem: -1, NCPUs: -1, NodeCt: -1} }

// set stores resource value v into the matching field of l.
func (l *Limits) set(resource, v string) {
	if resource != "" {
		if l.Values == nil {
			l.Values = map[string]string{}
		}
		l.Values[resource] = v
	}
	switch resource {
	case "mem":
		if n, ok := ParseSize(v); ok {
			l.Mem = n
		}
	case "ncpus":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			l.NCPUs = n
		}
	case "nodect":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			l.NodeCt = n
		}
	}
}

// ResourceSet is the resources_available / resources_max /
// resources_assigned triple of a server or queue.
type ResourceSet struct {
	Available, Max, Assigned Limits
}

func newResourceSet() ResourceSet {
	return ResourceSet{Available: NotSet(), Max: NotSet(), Assigned: NotSet()}
}

// RunLimits are max_running, max_user_run and max_group_run.
type RunLimits struct {
	MaxRunning, MaxUserRun, MaxGroupRun int
}

func unlimited() RunLimits { return RunLimits{Unlimited, Unlimited, Unlimited} }

// Server is the batch server as reported by StatusServer.
type Server struct {
	Name         string
	DefaultQueue string
	// DefaultNode is the default_node attribute: the node specification
	// the server allocates for a job that requests no nodes ("" if unset).
	DefaultNode string
	RunLimits
	Resources ResourceSet
	// Tokens is the server's tokens attribute: class → count.
	Tokens map[string]float64
}

// Queue is one queue as reported by StatusQue, with its jobs.
type Queue struct {
	Name     string
	Type     string // "Execution" or "Route"
	Started  bool
	Priority int
	RunLimits
	Resources ResourceSet
	Jobs      []*Job
}

// Execution reports whether the queue is an execution queue.
func (q *Queue) Execution() bool { return strings.HasPrefix(strings.ToLower(q.Type), "e") }

// Job is one job as reported by SelStat.
type Job struct {
	ID      string
	Queue   *Queue
	State   byte // job_state letter
	Comment string
	User    string // euser
	Group   string // egroup
	// Owner is the Job_Owner attribute (user@host, "" if not reported).
	Owner    string
	Priority int
	QTime    time.Time
	ExecHost string
	// StartTime is when a running job started (start_time), zero if
	// unknown; with Walltime it tells when its resources free up.
	StartTime time.Time
	// ETime, CTime and MTime are the job's etime (eligible since), ctime
	// (created) and mtime (last modified) attributes, zero if not
	// reported.
	ETime, CTime, MTime time.Time
	// Interactive is the interactive attribute (qsub -I).
	Interactive bool
	// Account is the Account_Name attribute ("" if none).
	Account string

	// Requested resources (Resource_List); unset sizes/times are -1.
	CPUT     time.Duration
	Walltime time.Duration
	Mem      int64
	NCPUs    int64 // -1 if not requested
	NodeCt   int64
	Nodes    string // nodes spec, "" if none
	// NeedNodes is Resource_List.neednodes, the specification the
	// server allocates from ("" if none).
	NeedNodes string
	Host      string
	Arch      string
	Tokens    string

	// UsedCPUT is resources_used.cput (-1 if not reported).
	UsedCPUT time.Duration

	// Request is every Resource_List entry as reported.
	Request map[string]string

	// Reserve is the reserve attribute (y): the job asks for a
	// reservation when it cannot start at once.
	Reserve bool
	// EstStart and EstHosts are the scheduler's previous plan for the
	// job (estimated_start_time, estimated_exec_host); zero and "" when
	// it has none.
	EstStart time.Time
	EstHosts string
}

// Node states the scheduler distinguishes.
const (
	NodeFree = 1 << iota
	NodeDown
	NodeOffline
	NodeJobExclusive
	NodeJobSharing
	NodeBusy
	NodeReserve
	NodeUnknown
)

// Node is one node as reported by StatusNode, plus its MOM's answers.
type Node struct {
	Name       string
	State      int // NodeFree | NodeDown | ...
	NP         int
	Properties []string
	TimeShared bool
	// UsedSlots is the number of allocated virtual processors (entries
	// of the jobs attribute).
	UsedSlots int
	// JobExclusive marks nodes whose VPs are taken by exclusive jobs.
	JobExclusive bool

	// MOM data (RM query); MomOK is false when the MOM could not be
	// asked.
	MomOK     bool
	NCPUs     int
	Arch      string
	PhysMem   int64
	LoadAve   float64
	MaxLoad   float64
	IdealLoad float64
	// SysTime is the percentage of CPU time spent in system mode, from
	// the MOM's "systime" resource (asked by the NAS policy for
	// HIGH_SYSTIME); HasSysTime is false when the MOM did not report it.
	SysTime    float64
	HasSysTime bool
}

// Up reports whether the node can take jobs at all.
func (n *Node) Up() bool { return n.State&(NodeDown|NodeOffline|NodeUnknown|NodeReserve) == 0 }

// HasProperty reports whether the node has property p (the node's own name
// counts as a property).
func (n *Node) HasProperty(p string) bool {
	if p == n.Name {
		return true
	}
	for _, q := range n.Properties {
		if q == p {
			return true
		}
	}
	return false
}

// World is the whole snapshot.
type World struct {
	Now    time.Time
	Server *Server
	Queues []*Queue // in server order
	Nodes  []*Node  // in server order
	// Reservations are the server's advance reservations that are not
	// over (issue 17); their queues are named by their ids.
	Reservations []*resv.Reservation
}

// Jobs returns every job of every queue.
func (w *World) Jobs() []*Job {
	var out []*Job
	for _, q := range w.Queues {
		out = append(out, q.Jobs...)
	}
	return out
}

// ParseSize reads a size such as 16432940kb, 2gb, 512 (bytes) or 4mw
// (words of 8 bytes).
func ParseSize(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	unit := s[i:]
	word := int64(1)
	if strings.HasSuffix(unit, "w") {
		word = 8
		unit = strings.TrimSuffix(unit, "w")
	} else {
		unit = strings.TrimSuffix(unit, "b")
	}
	shift := 0
	switch unit {
	case "":
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	case "t":
		shift = 40
	case "p":
		shift = 50
	default:
		return 0, false
	}
	v := n * word
	if v < 0 || (shift > 0 && v > (1<<62)>>shift) {
		return 0, false
	}
	return v << shift, true
}

// ParseAmount reads the value of a consumable resource as a number: a
// time ([[HH:]MM:]SS) in seconds, a size (512, 16432940kb, 2gb) in
// bytes, or a plain decimal number. It reports false for a value that is
// none of these (a string resource such as arch).
func ParseAmount(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ":") {
		d, ok := ParseDuration(s)
		return d.Seconds(), ok
	}
	if n, ok := ParseSize(s); ok {
		return float64(n), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// ParseDuration reads a time resource: [[HH:]MM:]SS or plain seconds.
func ParseDuration(s string) (time.Duration, bool) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 {
		return 0, false
	}
	var secs int64
	for i, p := range parts {
		if i == len(parts)-1 {
			// seconds may carry a fraction
			if f, err := strconv.ParseFloat(p, 64); err == nil && f >= 0 && f < 1e15 {
				return time.Duration((float64(secs*60) + f) * float64(time.Second)), true
			}
			return 0, false
		}
		v, err := strconv.ParseUint(p, 10, 31)
		if err != nil {
			return 0, false
		}
		secs = secs*60 + int64(v)
	}
	return 0, false
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil
}

func parseTrue(s string) bool {
	switch strings.ToLower(s) {
	case "true", "t", "1", "y", "yes":
		return true
	}
	return false
}

// FromServer builds the Server from a StatusServer object.
func FromServer(name string, attrs []Attr) *Server {
	s := &Server{Name: name, RunLimits: unlimited(), Resources: newResourceSet()}
	for _, a := range attrs {
		switch a.Name {
		case "default_queue":
			s.DefaultQueue = a.Value
		case "default_node":
			s.DefaultNode = a.Value
		case "max_running", "max_user_run", "max_group_run":
			setLimit(&s.RunLimits, a.Name, a.Value)
		case "resources_available":
			s.Resources.Available.set(a.Resource, a.Value)
		case "resources_max":
			s.Resources.Max.set(a.Resource, a.Value)
		case "resources_assigned":
			s.Resources.Assigned.set(a.Resource, a.Value)
		case "tokens":
			s.Tokens = ParseTokens(a.Value)
		}
	}
	return s
}

func setLimit(l *RunLimits, name, v string) {
	n, ok := atoi(v)
	if !ok {
		return
	}
	switch name {
	case "max_running":
		l.MaxRunning = n
	case "max_user_run":
		l.MaxUserRun = n
	case "max_group_run":
		l.MaxGroupRun = n
	}
}

// ParseTokens reads a tokens value "class:count[,class:count…]".
func ParseTokens(v string) map[string]float64 {
	m := map[string]float64{}
	for _, e := range strings.Split(v, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok || name == "" {
			continue
		}
		if f, err := strconv.ParseFloat(count, 64); err == nil {
			m[name] = f
		}
	}
	return m
}

// FromQueue builds a Queue (without jobs) from a StatusQue object.
func FromQueue(name string, attrs []Attr) *Queue {
	q := &Queue{Name: name, RunLimits: unlimited(), Resources: newResourceSet()}
	for _, a := range attrs {
		switch a.Name {
		case "queue_type":
			q.Type = a.Value
		case "started":
			q.Started = parseTrue(a.Value)
		case "Priority":
			q.Priority, _ = atoi(a.Value)
		case "max_running", "max_user_run", "max_group_run":
			setLimit(&q.RunLimits, a.Name, a.Value)
		case "resources_available":
			q.Resources.Available.set(a.Resource, a.Value)
		case "resources_max":
			q.Resources.Max.set(a.Resource, a.Value)
		case "resources_assigned":
			q.Resources.Assigned.set(a.Resource, a.Value)
		}
	}
	return q
}

// FromJob builds a Job of queue q from a SelStat object.
func FromJob(id string, q *Queue, attrs []Attr) *Job {
	j := &Job{ID: id, Queue: q, CPUT: -1, Walltime: -1, Mem: -1, NCPUs: -1, NodeCt: -1, UsedCPUT: -1}
	for _, a := range attrs {
		switch a.Name {
		case "job_state":
			if a.Value != "" {
				j.State = a.Value[0]
			}
		case "comment":
			j.Comment = a.Value
		case "euser":
			j.User = a.Value
		case "egroup":
			j.Group = a.Value
		case "Job_Owner":
			j.Owner = a.Value
		case "Priority":
			j.Priority, _ = atoi(a.Value)
		case "qtime":
			if n, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
				j.QTime = time.Unix(n, 0)
			}
		case "exec_host":
			j.ExecHost = a.Value
		case "start_time":
			j.StartTime = unixTime(a.Value)
		case "etime":
			j.ETime = unixTime(a.Value)
		case "ctime":
			j.CTime = unixTime(a.Value)
		case "mtime":
			j.MTime = unixTime(a.Value)
		case "interactive":
			j.Interactive = parseTrue(a.Value)
		case "Account_Name":
			j.Account = a.Value
		case "Resource_List":
			j.setRequest(a.Resource, a.Value)
		case "reserve":
			j.Reserve = a.Value == "y"
		case "estimated_start_time":
			if n, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
				j.EstStart = time.Unix(n, 0)
			}
		case "estimated_exec_host":
			j.EstHosts = a.Value
		case "resources_used":
			if a.Resource == "cput" {
				if d, ok := ParseDuration(a.Value); ok {
					j.UsedCPUT = d
				}
			}
		}
	}
	return j
}

// unixTime reads a time attribute (seconds since the epoch); zero if it
// is not a number.
func unixTime(v string) time.Time {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(n, 0)
}

func (j *Job) setRequest(resource, v string) {
	if resource != "" {
		if j.Request == nil {
			j.Request = map[string]string{}
		}
		j.Request[resource] = v
	}
	switch resource {
	case "cput":
		if d, ok := ParseDuration(v); ok {
			j.CPUT = d
		}
	case "walltime":
		if d, ok := ParseDuration(v); ok {
			j.Walltime = d
		}
	case "mem":
		if n, ok := ParseSize(v); ok {
			j.Mem = n
		}
	case "ncpus":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			j.NCPUs = n
		}
	case "nodect":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			j.NodeCt = n
		}
	case "nodes":
		j.Nodes = v
	case "neednodes":
		j.NeedNodes = v
	case "host":
		j.Host = v
	case "arch":
		j.Arch = v
	case "tokens":
		j.Tokens = v
	}
}

// FromNode builds a Node from a StatusNode object.
func FromNode(name string, attrs []Attr) *Node {
	n := &Node{Name: name, NP: 1}
	for _, a := range attrs {
		switch a.Name {
		case "state":
			n.State = ParseNodeState(a.Value)
		case "np":
			if v, ok := atoi(a.Value); ok {
				n.NP = v
			}
		case "properties":
			for _, p := range strings.Split(a.Value, ",") {
				if p = strings.TrimSpace(p); p != "" {
					n.Properties = append(n.Properties, p)
				}
			}
		case "ntype":
			n.TimeShared = a.Value == "time-shared"
		case "jobs":
			for _, e := range strings.Split(a.Value, ",") {
				if strings.TrimSpace(e) != "" {
					n.UsedSlots++
				}
			}
		}
	}
	n.JobExclusive = n.State&NodeJobExclusive != 0
	return n
}

// ParseNodeState reads a node state list such as "job-exclusive,busy".
func ParseNodeState(v string) int {
	st := 0
	for _, s := range strings.Split(v, ",") {
		switch strings.TrimSpace(s) {
		case "free":
			st |= NodeFree
		case "down":
			st |= NodeDown
		case "offline":
			st |= NodeOffline
		case "job-exclusive":
			st |= NodeJobExclusive
		case "job-sharing":
			st |= NodeJobSharing
		case "busy":
			st |= NodeBusy
		case "reserve":
			st |= NodeReserve
		case "state-unknown", "unknown":
			st |= NodeUnknown
		}
	}
	return st
}

// AllocSpec is the node specification the server allocates for job j: its
// neednodes, its nodes, the server's default_node, or one node.
func (w *World) AllocSpec(j *Job) string {
	switch {
	case j.NeedNodes != "":
		return j.NeedNodes
	case j.Nodes != "":
		return j.Nodes
	case w.Server != nil && w.Server.DefaultNode != "":
		return w.Server.DefaultNode
	}
	return "1"
}
