package server

import (
	"fmt"
	"path/filepath"
	"sort"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/nodesfile"
	"gopbs/server/state"
	"gopbs/server/store"
)

// setDefaults sets the server attribute defaults of a new database.
func (s *Server) setDefaults() {
	s.attrs.Set(pbsattr.SrvSchedulerIteration, "600")
	s.attrs.Set(pbsattr.SrvNodeCheckRate, "150")
	s.attrs.Set(pbsattr.SrvTCPTimeout, "6")
	s.attrs.Set(pbsattr.SrvLogEvents, "511")
	s.attrs.Set(pbsattr.SrvMailFrom, "adm")
	s.attrs.Set(pbsattr.SrvScheduling, "False")
	s.nextJob = 0
}

// recover loads the server, queues, nodes and jobs from the store.
func (s *Server) recover() error {
	b, err := s.store.Get(store.Server, "attributes")
	if err != nil {
		return fmt.Errorf("pbs_server: read server: %w", err)
	}
	if b == nil {
		s.setDefaults()
	} else {
		attrs, next, err := state.DecodeServer(b)
		if err != nil {
			return fmt.Errorf("pbs_server: server record: %w", err)
		}
		s.attrs, s.nextJob = attrs, next
	}
	if err := s.tracking.Load(s.store); err != nil {
		return fmt.Errorf("pbs_server: %w", err)
	}
	if err := s.deps.Sync().Load(s.store); err != nil {
		return fmt.Errorf("pbs_server: %w", err)
	}
	s.log.Log(logline.EventDebug, logline.ClassRequest, "setup_nodes", "setup_nodes()")
	err = s.store.ForEach(store.Nodes, func(name string, b []byte) error {
		n, err := state.DecodeNode(name, b)
		if err != nil {
			return err
		}
		// No MOM has reported to this server yet (spec 12 §9: a node is
		// down until its MOM's hello, offline until its first status).
		n.State = n.State&^(state.NodeStateBusy|state.NodeStateUnknown) | state.NodeStateUnreported
		s.nodes = append(s.nodes, n)
		s.nodeByName[name] = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("pbs_server: nodes: %w", err)
	}
	sort.Slice(s.nodes, func(a, b int) bool { return s.nodes[a].Order < s.nodes[b].Order })
	if err := s.loadNodesFile(); err != nil {
		return fmt.Errorf("pbs_server: %w", err)
	}
	err = s.store.ForEach(store.Queues, func(name string, b []byte) error {
		q, err := state.DecodeQueue(name, b)
		if err != nil {
			return err
		}
		s.queues = append(s.queues, q)
		s.queueByName[name] = q
		return nil
	})
	if err != nil {
		return fmt.Errorf("pbs_server: queues: %w", err)
	}
	sort.Slice(s.queues, func(a, b int) bool { return s.queues[a].Order < s.queues[b].Order })
	for _, q := range s.queues {
		if q.Order >= s.orderSeq {
			s.orderSeq = q.Order + 1
		}
		s.log.Logf(logline.EventSystem|logline.EventAdmin|logline.EventDebug, logline.ClassServer, "PBS_Server", "Recovered queue %s", q.Name)
	}
	for _, n := range s.nodes {
		if n.Order >= s.orderSeq {
			s.orderSeq = n.Order + 1
		}
	}
	s.log.Logf(logline.EventSystem, logline.ClassServer, "PBS_Server", "Expected %d, recovered %d queues", len(s.queues), len(s.queues))

	var recs []state.StoredJob
	var bad []string
	err = s.store.ForEach(store.Jobs, func(id string, b []byte) error {
		r, err := state.DecodeJob(id, b)
		if err != nil {
			bad = append(bad, id)
			return nil
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("pbs_server: jobs: %w", err)
	}
	for _, id := range bad {
		s.log.Logf(logline.EventError, logline.ClassJob, id, "Unable to recover job: corrupt record")
	}
	sort.Slice(recs, func(a, b int) bool {
		ja, jb := recs[a].Job, recs[b].Job
		if ja.Seq != jb.Seq {
			return ja.Seq < jb.Seq
		}
		return ja.ArrayIndex < jb.ArrayIndex
	})
	var ops []store.Op
	cold := s.cfg.InitType == InitCold
	for _, r := range recs {
		j := r.Job
		q := s.queueByName[r.Queue]
		if q == nil || cold {
			ops = append(ops, store.Del(store.Jobs, j.ID), store.Del(store.Script, j.ID))
			if cold {
				s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job aborted on PBS Server initialization")
			}
			continue
		}
		if r.Parent != "" {
			p := s.jobs.Get(r.Parent)
			if p == nil || p.Array == nil {
				ops = append(ops, store.Del(store.Jobs, j.ID))
				continue
			}
			j.Parent = p
			p.Array.Subjobs = append(p.Array.Subjobs, j)
		}
		if j.Rank >= s.rankCounter {
			s.rankCounter = j.Rank + 1
		}
		moving := j.State == pbsattr.StateTransit && j.Substate == pbsattr.SubTrnOut
		if moving {
			// a move to another server was cut short (spec 12 §14:
			// TRNOUT goes back to queued); the job is re-evaluated
			j.State, j.Substate = pbsattr.StateQueued, pbsattr.SubQueued
		}
		s.jobs.Link(j)
		s.jobs.Enqueue(j, q)
		if moving {
			s.evaluate(j)
		}
	}
	for j := s.jobs.First(); j != nil; j = j.Next() {
		s.jobs.Watch(j)
	}
	s.log.Logf(logline.EventSystem, logline.ClassServer, "PBS_Server", "Expected %d, recovered %d jobs", len(recs), s.jobs.Len())
	if len(ops) > 0 {
		if err := s.store.Apply(ops...); err != nil {
			return fmt.Errorf("pbs_server: clean up jobs: %w", err)
		}
	}
	if b == nil {
		if err := s.store.Apply(state.SaveServer(s.attrs, s.nextJob)); err != nil {
			return fmt.Errorf("pbs_server: save server: %w", err)
		}
	}
	return nil
}

// loadNodesFile adds the nodes listed in server_priv/nodes that the store
// does not know (an administrator may write the file before starting the
// server, as with TORQUE), numbered in creation order from s.orderSeq.
func (s *Server) loadNodesFile() error {
	nodes, err := nodesfile.Load(filepath.Join(s.cfg.Home, "server_priv", "nodes"))
	if err != nil {
		return err
	}
	var ops []store.Op
	for _, n := range nodes {
		if s.nodeByName[n.Name] != nil {
			continue
		}
		n.Order = s.orderSeq
		s.orderSeq++
		s.nodes = append(s.nodes, n)
		s.nodeByName[n.Name] = n
		ops = append(ops, state.SaveNode(n))
	}
	if len(ops) > 0 {
		return s.store.Apply(ops...)
	}
	return nil
}

// jobIDSeq returns the numeric sequence of a job id.
func jobIDSeq(id string) string { return state.JobIDSeq(id) }
