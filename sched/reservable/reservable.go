// Package reservable is PluS's node reservability policy (seed 002 §3.4):
// which nodes a new advance reservation may have. A node must first meet
// the normal conditions (Normal: alive, not reserved in an overlapping
// window, and offering what the reservation asks of every node); then,
// if the site wrote sched_priv/reservable.ad, the ClassAd attribute
// PLUS_NODE_RESERVABLE must be true for it, evaluated with the special
// variables of the reservation and the candidate node record.
//
// The special variables (seed §3.4.2, §3.4.3):
//
//	PLUS_CANDIDATE_NODE    the node being checked, a record:
//	                       name, isAlive, loadavg, nRunJobs, ncpu (np),
//	                       physmem (bytes), arch, os, properties (list),
//	                       reserved (in another reservation that overlaps),
//	                       idletime (seconds without a job)
//	PLUS_ALLOCATED_NODES   the nodes chosen for this reservation so far (records)
//	PLUS_ALL_NODES         every execution node (records)
//	PLUS_RSV_ID            the reservation's id ("" while it is made)
//	PLUS_RSV_OWNER         its owner
//	PLUS_RSV_USERS         its users (list of names)
//	PLUS_RSV_START         its start, seconds since the epoch
//	PLUS_RSV_END           its end, seconds since the epoch
//	PLUS_RSV_NODES         the number of nodes it asks for
//
// time() is the scheduler's clock (Input.Now), so policies are tested in
// simulated time, and plus_rsvutil(owner, start, end) answers from
// Input.RsvUtil.
package reservable

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"gopbs/resv"
	"gopbs/sched/classad"
)

// FileName is the policy file in sched_priv.
const FileName = "reservable.ad"

// Attribute is the attribute that decides.
const Attribute = "PLUS_NODE_RESERVABLE"

// Specials are the variables the evaluator sets.
var Specials = []string{
	"PLUS_CANDIDATE_NODE", "PLUS_ALLOCATED_NODES", "PLUS_ALL_NODES",
	"PLUS_RSV_ID", "PLUS_RSV_OWNER", "PLUS_RSV_USERS", "PLUS_RSV_START", "PLUS_RSV_END", "PLUS_RSV_NODES",
}

// Node is what the policy knows of an execution node.
type Node struct {
	Name       string
	IsAlive    bool    // up: not down, offline or unknown
	LoadAvg    float64 // one-minute load the MOM reported
	NRunJobs   int     // jobs running on it
	NCPU       int     // processors (np)
	PhysMem    int64   // bytes
	Arch       string
	OS         string
	Properties []string
	Resources  map[string]string // other resources the node reports, for -l attr=value
	Reserved   bool              // held by a reservation overlapping the window
	Partition  string            // the node's partition (seed 003), "" for none
	// IdleSeconds is how long the node has run no job (LongestIdleTime).
	IdleSeconds int64
}

func (n *Node) record() map[string]any {
	props := make([]any, len(n.Properties))
	for i, p := range n.Properties {
		props[i] = p
	}
	return map[string]any{
		"name": n.Name, "isalive": n.IsAlive, "loadavg": n.LoadAvg, "nrunjobs": n.NRunJobs,
		"ncpu": n.NCPU, "physmem": n.PhysMem, "arch": n.Arch, "os": n.OS, "properties": props,
		"reserved": n.Reserved, "idletime": n.IdleSeconds,
	}
}

// Policy is a loaded reservable.ad; the zero Policy (no file) has only
// the normal conditions.
type Policy struct {
	ad   *classad.Ad
	name string
}

// Load reads a policy file. A missing file is the policy without custom
// conditions; a malformed one is an error naming the file and line.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Policy{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reservability policy: %w", err)
	}
	return Parse(string(b), path)
}

// Parse reads a policy from src; name is used in errors.
func Parse(src, name string) (*Policy, error) {
	ad, err := classad.Parse(src)
	if err == nil && !ad.Has(Attribute) {
		err = fmt.Errorf("%s is not defined", Attribute)
	}
	if err == nil {
		err = ad.Check(Specials...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Policy{ad: ad, name: name}, nil
}

// Custom reports whether the policy has a reservable.ad.
func (p *Policy) Custom() bool { return p.ad != nil }

// Request is the reservation being placed.
type Request struct {
	ID        string
	Owner     string
	Users     []string
	Start     time.Time
	End       time.Time
	NodeCount int
	Req       resv.Requirements
}

// Input is one question to the policy.
type Input struct {
	Now       time.Time
	Request   *Request
	Candidate *Node
	Allocated []*Node
	All       []*Node
	RsvUtil   func(owner string, start, end int64) (count int, seconds int64, nodeHours float64)
}

func records(nodes []*Node) []any {
	out := make([]any, len(nodes))
	for i, n := range nodes {
		out[i] = n.record()
	}
	return out
}

// Reservable evaluates PLUS_NODE_RESERVABLE for in.Candidate (true
// without a reservable.ad). A result that is not a boolean is an error.
func (p *Policy) Reservable(in *Input) (bool, error) {
	if p.ad == nil {
		return true, nil
	}
	r := in.Request
	users := make([]any, len(r.Users))
	for i, u := range r.Users {
		users[i] = u
	}
	vars := map[string]any{
		"PLUS_CANDIDATE_NODE":  in.Candidate.record(),
		"PLUS_ALLOCATED_NODES": records(in.Allocated),
		"PLUS_ALL_NODES":       records(in.All),
		"PLUS_RSV_ID":          r.ID,
		"PLUS_RSV_OWNER":       r.Owner,
		"PLUS_RSV_USERS":       users,
		"PLUS_RSV_START":       r.Start.Unix(),
		"PLUS_RSV_END":         r.End.Unix(),
		"PLUS_RSV_NODES":       r.NodeCount,
	}
	v, err := p.ad.Eval(Attribute, vars, &classad.Env{Now: in.Now, RsvUtil: in.RsvUtil})
	if err != nil {
		return false, fmt.Errorf("%s: %w", p.name, err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s: %s is %v (%T), not a boolean", p.name, Attribute, v, v)
	}
	return b, nil
}

// Normal checks the normal reservation conditions, which reservable.ad
// cannot change (seed §3.4.4): the node is alive, not held by an
// overlapping reservation, and meets every requirement. It returns why
// not, or "".
func Normal(n *Node, q *resv.Requirements) string {
	switch {
	case !n.IsAlive:
		return "not alive"
	case n.Reserved:
		return "reserved by another reservation in that window"
	case q.MemBytes > 0 && n.PhysMem < q.MemBytes:
		return fmt.Sprintf("physical memory %d bytes, %d wanted", n.PhysMem, q.MemBytes)
	case q.NCPU > 0 && n.NCPU < q.NCPU:
		return fmt.Sprintf("%d processors, %d wanted", n.NCPU, q.NCPU)
	case q.Slots > 0 && n.NCPU < q.Slots:
		return fmt.Sprintf("%d slots, %d wanted", n.NCPU, q.Slots)
	case q.Arch != "" && n.Arch != q.Arch:
		return fmt.Sprintf("arch %q, %q wanted", n.Arch, q.Arch)
	case q.OS != "" && n.OS != q.OS:
		return fmt.Sprintf("os %q, %q wanted", n.OS, q.OS)
	}
	for _, prop := range q.Props {
		if !slices.Contains(n.Properties, prop) {
			return fmt.Sprintf("no property %s", prop)
		}
	}
	for _, a := range q.Attrs {
		if v, ok := n.Resources[a.Name]; ok && v == a.Value {
			continue
		}
		if a.Value == "true" && slices.Contains(n.Properties, a.Name) {
			continue
		}
		return fmt.Sprintf("no %s=%s", a.Name, a.Value)
	}
	return ""
}

// Choose picks the nodes of a reservation among candidates, in their
// order (the caller sorts them, e.g. by NodeSortKey): each node that
// meets the normal conditions and for which PLUS_NODE_RESERVABLE holds,
// with the nodes chosen before it as PLUS_ALLOCATED_NODES, until
// in.Request.NodeCount are chosen. It returns the chosen nodes and, for
// each refused node, why. An evaluation error refuses that node (its
// reason is the error) and does not stop the others.
func (p *Policy) Choose(in Input, candidates []*Node) (chosen []*Node, refused map[string]string) {
	refused = map[string]string{}
	for _, n := range candidates {
		if len(chosen) >= in.Request.NodeCount {
			break
		}
		if why := Normal(n, &in.Request.Req); why != "" {
			refused[n.Name] = why
			continue
		}
		in.Candidate, in.Allocated = n, chosen
		ok, err := p.Reservable(&in)
		switch {
		case err != nil:
			refused[n.Name] = err.Error()
		case !ok:
			refused[n.Name] = Attribute + " is false"
		default:
			chosen = append(chosen, n)
		}
	}
	return chosen, refused
}
