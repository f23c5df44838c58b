package policy

import (
	"errors"
	"fmt"
	"time"

	"gopbs/sched/placement"
	"gopbs/sched/world"
)

// Simulator carries out Actions on an in-memory world: node queries and
// allocations use a placement.Pool built from the world's nodes; like the
// server, RunJob without a destination allocates the job's neednodes,
// nodes, the server's default_node or one node (nothing when there are
// no cluster nodes), and RunJob to a cluster node one VP of it. It
// records every call, which makes it the reference for tests and the
// engine of benchmarks and dry runs.
type Simulator struct {
	Pool *placement.Pool
	// Calls lists the actions in order, e.g. "query 12.vm nodes=1",
	// "comment 12.vm Job started on …", "run 12.vm", "delete 12.vm".
	Calls []string
	// Record enables Calls (off in benchmarks).
	Record bool
	// RunError, if set, makes RunJob of the named job fail.
	RunError map[string]error
	// DefaultNode is the server's default_node.
	DefaultNode string
}

// NewSimulator returns a Simulator over the nodes of w.
func NewSimulator(w *world.World) *Simulator {
	s := &Simulator{Pool: placement.NewPool(w.Nodes), Record: true}
	if w.Server != nil {
		s.DefaultNode = w.Server.DefaultNode
	}
	return s
}

func (s *Simulator) record(format string, args ...any) {
	if s.Record {
		s.Calls = append(s.Calls, fmt.Sprintf(format, args...))
	}
}

// QueryNodes implements Actions.
func (s *Simulator) QueryNodes(j *world.Job, spec string) (placement.Availability, error) {
	s.record("query %s nodes=%s", j.ID, spec)
	sp, err := s.Pool.Parse(spec)
	if err != nil {
		return placement.Never, nil
	}
	return s.Pool.Query(sp), nil
}

// SetComment implements Actions.
func (s *Simulator) SetComment(j *world.Job, comment string) error {
	s.record("comment %s %s", j.ID, comment)
	return nil
}

// RunJob implements Actions.
func (s *Simulator) RunJob(j *world.Job, dest string) error {
	if err := s.RunError[j.ID]; err != nil {
		s.record("run %s %s (refused)", j.ID, dest)
		return err
	}
	spec, named := s.allocSpec(j), ""
	if dest != "" && !s.Pool.IsNode(dest) && s.Pool.Len() > 0 {
		// a node specification naming the nodes (reservations)
		spec, named, dest = dest, dest, ""
	}
	if dest == "" && spec != "" {
		sp, err := s.Pool.Parse(spec)
		if err != nil {
			return errors.New("unknown node")
		}
		if _, ok := s.Pool.Allocate(sp); !ok {
			s.record("run %s %s (no nodes)", j.ID, dest)
			return errors.New("no nodes can be allocated to job")
		}
	}
	if dest != "" && s.Pool.IsNode(dest) {
		// a cluster node named as destination gives one VP there
		if !s.Pool.Take(dest, 1) {
			s.record("run %s %s (no nodes)", j.ID, dest)
			return errors.New("no nodes can be allocated to job")
		}
	}
	if dest != "" || named != "" {
		s.record("run %s %s", j.ID, dest+named)
	} else {
		s.record("run %s", j.ID)
	}
	return nil
}

// SetPlan implements PlanActions: it records the plan on the job, as
// the server keeps estimated_start_time and estimated_exec_host.
func (s *Simulator) SetPlan(j *world.Job, start time.Time, hosts string) error {
	if start.IsZero() {
		s.record("plan %s none", j.ID)
	} else {
		s.record("plan %s %d %s", j.ID, start.Unix(), hosts)
	}
	j.EstStart, j.EstHosts = start, hosts
	return nil
}

// DeleteJob implements Actions.
func (s *Simulator) DeleteJob(j *world.Job, message string) error {
	s.record("delete %s %s", j.ID, message)
	return nil
}

// MoveJob implements Actions: it records the move (e.g. "move 12.vm
// batch"); the policy that moves a job keeps its own world in step.
func (s *Simulator) MoveJob(j *world.Job, queue string) error {
	s.record("move %s %s", j.ID, queue)
	return nil
}

// allocSpec is the node specification RunJob allocates for j, or "" for
// none (no cluster nodes).
func (s *Simulator) allocSpec(j *world.Job) string {
	switch {
	case s.Pool.Len() == 0:
		return ""
	case j.NeedNodes != "":
		return j.NeedNodes
	case j.Nodes != "":
		return j.Nodes
	case s.DefaultNode != "":
		return s.DefaultNode
	}
	return "1"
}
