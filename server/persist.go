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

// Recovery at start: recover is the wiring that fills the server's
// tables from the store (and server_priv/nodes) through the functions
// below, which know the store and the state but not the Server.

// recover loads the server, queues, nodes and jobs from the store.
func (s *Server) recover() error {
	b, err := s.store.Get(store.Server, "attributes")
	if err != nil {
		return fmt.Errorf("pbs_server: read server: %w", err)
	}
	if b == nil {
		s.attrs, s.nextJob = state.DefaultServerAttrs(), 0
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
	if s.nodes, err = recoverNodes(s.store); err != nil {
		return err
	}
	for _, n := range s.nodes {
		s.nodeByName[n.Name] = n
	}
	// nodes an administrator listed in server_priv/nodes before
	// starting the server, as with TORQUE, are created
	listed, err := nodesfile.Load(filepath.Join(s.cfg.Home, "server_priv", "nodes"))
	if err != nil {
		return fmt.Errorf("pbs_server: %w", err)
	}
	added := nodesfile.Fresh(listed, s.nodeByName, &s.order)
	tx := s.db.Begin()
	for _, n := range added {
		s.nodes = append(s.nodes, n)
		s.nodeByName[n.Name] = n
		tx.SaveNode(n)
	}
	if ops := tx.Ops(); len(ops) > 0 {
		if err := s.store.Apply(ops...); err != nil {
			return err
		}
	}
	if s.queues, err = recoverQueues(s.store); err != nil {
		return err
	}
	for _, q := range s.queues {
		s.queueByName[q.Name] = q
	}
	for _, q := range s.queues {
		s.order.Recovered(q.Order)
		s.log.Logf(logline.EventSystem|logline.EventAdmin|logline.EventDebug, logline.ClassServer, "PBS_Server", "Recovered queue %s", q.Name)
	}
	for _, n := range s.nodes {
		s.order.Recovered(n.Order)
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
	// clean holds the clean-up: the jobs dropped, and those whose move
	// was cut short saved as they are now
	clean := s.db.Begin()
	cold := s.cfg.InitType == InitCold
	for _, r := range recs {
		j := r.Job
		q := s.queueByName[r.Queue]
		if q == nil || cold {
			clean.Put(store.Del(store.Jobs, j.ID), store.Del(store.Script, j.ID))
			if cold {
				s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job aborted on PBS Server initialization")
			}
			continue
		}
		if r.Parent != "" {
			p := s.jobs.Get(r.Parent)
			if p == nil || p.Array == nil {
				clean.Put(store.Del(store.Jobs, j.ID))
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
			// queued, held or waiting
			clean.SaveJob(j)
			s.life.Evaluate(clean, j)
		}
	}
	for j := s.jobs.First(); j != nil; j = j.Next() {
		s.jobs.Watch(j)
	}
	s.log.Logf(logline.EventSystem, logline.ClassServer, "PBS_Server", "Expected %d, recovered %d jobs", len(recs), s.jobs.Len())
	if ops := clean.Ops(); len(ops) > 0 {
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

// recoverNodes returns the nodes of the store in their creation order. No
// MOM has reported to this server yet (spec 12 §9: a node is down until
// its MOM's hello, offline until its first status).
func recoverNodes(st store.AsyncStore) ([]*state.Node, error) {
	var nodes []*state.Node
	err := st.ForEach(store.Nodes, func(name string, b []byte) error {
		n, err := state.DecodeNode(name, b)
		if err != nil {
			return err
		}
		n.State = n.State&^(state.NodeStateBusy|state.NodeStateUnknown) | state.NodeStateUnreported
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pbs_server: nodes: %w", err)
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].Order < nodes[b].Order })
	return nodes, nil
}

// recoverQueues returns the queues of the store in their creation order.
func recoverQueues(st store.AsyncStore) ([]*state.Queue, error) {
	var queues []*state.Queue
	err := st.ForEach(store.Queues, func(name string, b []byte) error {
		q, err := state.DecodeQueue(name, b)
		if err != nil {
			return err
		}
		queues = append(queues, q)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pbs_server: queues: %w", err)
	}
	sort.Slice(queues, func(a, b int) bool { return queues[a].Order < queues[b].Order })
	return queues, nil
}

// jobIDSeq returns the numeric sequence of a job id.
func jobIDSeq(id string) string { return state.JobIDSeq(id) }
