// Package schedulers keeps the server's scheduler objects (issue 18, seed
// 003): several schedulers, each with its own policy, each scheduling one
// slice of the cluster, its partitions. It holds the sched objects and
// their rules (Table), the partition rules of queues and nodes
// (partition.go), what one scheduler sees (Slice), and the running of the
// scheduler processes (Supervisor); their cycles are the server's
// scheduler link's (server/link/sched).
//
// The server calls it through a narrow interface: Manager requests on
// sched objects, their status, the store records, the partition checks
// of queue and node changes, the slice of a scheduler's connection, and
// the supervision of the processes. The "default" scheduler is the one
// TORQUE has: the site runs it (TORQUE's pbs_sched, Maui or GoPBS's), the
// server's scheduler link drives it as it drives the others, and its scheduling and
// scheduler_iteration are the server's attributes.
package schedulers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultName is the name of the scheduler every server has.
const DefaultName = "default"

// FirstPort is the first port given to a new scheduler that names none.
const FirstPort = 15050

// DefaultIteration is scheduler_iteration's default, in seconds.
const DefaultIteration = 600

// States of a scheduler (attribute state, set by the server only).
const (
	StateDown       = "DOWN"
	StateIdle       = "IDLE"
	StateScheduling = "SCHEDULING"
)

// Attribute names of sched objects.
const (
	AttrHost       = "host"
	AttrPort       = "port"
	AttrPartitions = "partitions"
	AttrPriv       = "sched_priv"
	AttrLog        = "sched_log"
	AttrScheduling = "scheduling"
	AttrIteration  = "scheduler_iteration"
	// AttrAccumulation is job_accumulation_time: how many seconds a
	// cycle asked for by job events waits for more of them (seed 003,
	// interface 7); unset or 0, none.
	AttrAccumulation = "job_accumulation_time"
	AttrUser         = "sched_user"
	AttrComment      = "comment"
	AttrState        = "state"
)

// attrOrder is the order of attributes in status replies.
var attrOrder = []string{AttrHost, AttrPort, AttrPartitions, AttrPriv, AttrLog, AttrScheduling, AttrIteration, AttrAccumulation, AttrUser, AttrComment, AttrState}

// Sched is one scheduler object.
type Sched struct {
	Name       string   `json:"name"`
	Host       string   `json:"host"`
	Port       int      `json:"port"`
	Partitions []string `json:"partitions,omitempty"`
	Priv       string   `json:"sched_priv"`
	Log        string   `json:"sched_log"`
	Scheduling bool     `json:"scheduling"`
	Iteration  int64    `json:"scheduler_iteration"`
	// Accumulation is job_accumulation_time in seconds (0: none).
	Accumulation int64  `json:"job_accumulation_time,omitempty"`
	User         string `json:"sched_user"`
	Comment      string `json:"comment,omitempty"`
	Order        int64  `json:"order"`
}

// IsDefault reports whether s is the default scheduler.
func (s *Sched) IsDefault() bool { return s.Name == DefaultName }

// Encode returns the store record of a sched object.
func (s *Sched) Encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("schedulers: encode: " + err.Error()) // plain struct: cannot fail
	}
	return b
}

// Decode reads a store record written by Encode.
func Decode(b []byte) (*Sched, error) {
	var s Sched
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("sched record: %w", err)
	}
	if s.Name == "" || len(s.Name) > 15 {
		return nil, fmt.Errorf("sched record: bad name %q", s.Name)
	}
	return &s, nil
}

// value returns an attribute's text as status replies show it ("" when
// unset).
func (s *Sched) value(name string) string {
	switch name {
	case AttrHost:
		return s.Host
	case AttrPort:
		return strconv.Itoa(s.Port)
	case AttrPartitions:
		return strings.Join(s.Partitions, ",")
	case AttrPriv:
		return s.Priv
	case AttrLog:
		return s.Log
	case AttrScheduling:
		if s.Scheduling {
			return "True"
		}
		return "False"
	case AttrIteration:
		return strconv.FormatInt(s.Iteration, 10)
	case AttrAccumulation:
		if s.Accumulation == 0 {
			return ""
		}
		return strconv.FormatInt(s.Accumulation, 10)
	case AttrUser:
		return s.User
	case AttrComment:
		return s.Comment
	}
	return ""
}

// HasPartition reports whether the scheduler serves partition p.
func (s *Sched) HasPartition(p string) bool { return slices.Contains(s.Partitions, p) }

// clone returns a deep copy.
func (s *Sched) clone() *Sched {
	c := *s
	c.Partitions = slices.Clone(s.Partitions)
	return &c
}

// parseList splits a comma-separated partition list, dropping blanks and
// repeats.
func parseList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// parseBool reads a boolean as qmgr sends it (True/False, t/f, 1/0,
// y/n, case-insensitive).
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "t", "1", "y", "yes":
		return true, true
	case "false", "f", "0", "n", "no":
		return false, true
	}
	return false, false
}
