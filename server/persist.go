package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/state"
	"gopbs/server/store"
)

// The store holds objects in a compact binary form: a version byte, fixed
// fields as varints, then the attributes as (name, resource, value)
// triples so that a change of the definition tables does not break old
// databases.

const recordVersion = 1

type encoder struct{ b []byte }

func (e *encoder) int(v int64) { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) attrs(defs *state.DefTable, l state.Attrs) {
	e.int(int64(len(l)))
	for _, v := range l {
		e.str(defs.Defs[v.Index].Name)
		e.str(v.Resource)
		e.str(v.Value)
	}
}

var errCorrupt = errors.New("corrupt record")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	if d.err != nil {
		return ""
	}
	l, n := binary.Uvarint(d.b)
	if n <= 0 || uint64(len(d.b)-n) < l {
		d.err = errCorrupt
		return ""
	}
	s := string(d.b[n : n+int(l)])
	d.b = d.b[n+int(l):]
	return s
}

func (d *decoder) attrs(defs *state.DefTable) state.Attrs {
	n := d.int()
	if n < 0 || n > 1<<20 {
		d.err = errCorrupt
		return nil
	}
	l := make(state.Attrs, 0, n)
	for i := int64(0); i < n && d.err == nil; i++ {
		name, res, val := d.str(), d.str(), d.str()
		idx := defs.Find(name)
		if idx < 0 {
			continue
		}
		l = append(l, state.AttrValue{Index: idx, Resource: res, Value: val})
	}
	sort.Slice(l, func(a, b int) bool {
		return l[a].Index < l[b].Index || l[a].Index == l[b].Index && l[a].Resource < l[b].Resource
	})
	return l
}

func encodeJob(j *state.Job) []byte {
	e := &encoder{b: make([]byte, 0, 512)}
	e.b = append(e.b, recordVersion)
	e.int(j.Seq)
	e.int(int64(j.State))
	e.int(int64(j.Substate))
	e.int(int64(j.Hold))
	qn := ""
	if j.Queue != nil {
		qn = j.Queue.Name
	}
	e.str(qn)
	e.int(j.Rank)
	e.int(int64(j.ArrayIndex))
	parent := ""
	if j.Parent != nil {
		parent = j.Parent.ID
	}
	e.str(parent)
	req := ""
	if j.Array != nil {
		req = j.Array.Request
	}
	e.str(req)
	e.int(j.PurgeAt)
	e.attrs(state.JobDefs, j.Attrs)
	if j.Array != nil {
		e.int(int64(j.Array.Size))
		e.int(int64(j.Array.OK))
		e.int(int64(j.Array.NotOK))
		e.int(int64(j.Array.Started))
	}
	return e.b
}

type jobRecord struct {
	job    *state.Job
	queue  string
	parent string
	isArr  bool
}

func decodeJob(id string, b []byte) (jobRecord, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return jobRecord{}, errCorrupt
	}
	d := &decoder{b: b[1:]}
	j := &state.Job{ID: id}
	j.Seq = d.int()
	j.State = pbsattr.JobStateNum(d.int())
	j.Substate = pbsattr.Substate(d.int())
	j.Hold = int(d.int())
	r := jobRecord{job: j}
	r.queue = d.str()
	j.Rank = d.int()
	j.ArrayIndex = int(d.int())
	r.parent = d.str()
	if req := d.str(); req != "" {
		j.Array = &state.ArrayInfo{Request: req}
		r.isArr = true
	}
	j.PurgeAt = d.int()
	j.Attrs = d.attrs(state.JobDefs)
	if j.Array != nil && len(d.b) > 0 {
		j.Array.Size = int(d.int())
		j.Array.OK = int(d.int())
		j.Array.NotOK = int(d.int())
		if len(d.b) > 0 {
			j.Array.Started = int(d.int())
		}
	}
	if j.State < 0 || j.State > pbsattr.StateComplete {
		return r, errCorrupt
	}
	return r, d.err
}

func encodeServer(l state.Attrs, next int64) []byte {
	e := &encoder{}
	e.b = append(e.b, recordVersion)
	e.int(next)
	e.attrs(state.ServerDefs, l)
	return e.b
}

func encodeQueue(q *state.Queue) []byte {
	e := &encoder{}
	e.b = append(e.b, recordVersion)
	e.int(q.Order)
	e.attrs(state.QueueDefs, q.Attrs)
	return e.b
}

func encodeNode(n *state.Node) []byte {
	e := &encoder{}
	e.b = append(e.b, recordVersion)
	e.int(n.Order)
	e.int(int64(n.NP))
	e.int(int64(n.State))
	ts := int64(0)
	if n.TimeShared {
		ts = 1
	}
	e.int(ts)
	e.attrs(state.NodeDefs, n.Attrs)
	return e.b
}

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
		if len(b) == 0 || b[0] != recordVersion {
			return fmt.Errorf("pbs_server: server record: %w", errCorrupt)
		}
		d := &decoder{b: b[1:]}
		s.nextJob = d.int()
		s.attrs = d.attrs(state.ServerDefs)
		if d.err != nil {
			return fmt.Errorf("pbs_server: server record: %w", d.err)
		}
	}
	if err := s.loadTracking(); err != nil {
		return fmt.Errorf("pbs_server: %w", err)
	}
	s.log.Log(logline.EventDebug, logline.ClassRequest, "setup_nodes", "setup_nodes()")
	err = s.store.ForEach(store.Nodes, func(name string, b []byte) error {
		if len(b) == 0 || b[0] != recordVersion {
			return errCorrupt
		}
		d := &decoder{b: b[1:]}
		n := &state.Node{Name: name}
		n.Order = d.int()
		n.NP = int(d.int())
		n.State = int(d.int())
		n.TimeShared = d.int() == 1
		n.Attrs = d.attrs(state.NodeDefs)
		if d.err != nil {
			return d.err
		}
		s.nodes = append(s.nodes, n)
		s.nodeByName[name] = n
		return nil
	})
	if err != nil {
		return fmt.Errorf("pbs_server: nodes: %w", err)
	}
	sort.Slice(s.nodes, func(a, b int) bool { return s.nodes[a].Order < s.nodes[b].Order })
	if err := s.loadNodesFile(); err != nil {
		return err
	}
	err = s.store.ForEach(store.Queues, func(name string, b []byte) error {
		if len(b) == 0 || b[0] != recordVersion {
			return errCorrupt
		}
		d := &decoder{b: b[1:]}
		q := &state.Queue{Name: name}
		q.Order = d.int()
		q.Attrs = d.attrs(state.QueueDefs)
		if d.err != nil {
			return d.err
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

	var recs []jobRecord
	var bad []string
	err = s.store.ForEach(store.Jobs, func(id string, b []byte) error {
		r, err := decodeJob(id, b)
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
		ja, jb := recs[a].job, recs[b].job
		if ja.Seq != jb.Seq {
			return ja.Seq < jb.Seq
		}
		return ja.ArrayIndex < jb.ArrayIndex
	})
	var ops []store.Op
	cold := s.cfg.InitType == InitCold
	for _, r := range recs {
		j := r.job
		q := s.queueByName[r.queue]
		if q == nil || cold {
			ops = append(ops, store.Del(store.Jobs, j.ID), store.Del(store.Script, j.ID))
			if cold {
				s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job aborted on PBS Server initialization")
			}
			continue
		}
		if r.parent != "" {
			p := s.jobs.Get(r.parent)
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
		if err := s.store.Apply(s.saveServerOp()); err != nil {
			return fmt.Errorf("pbs_server: save server: %w", err)
		}
	}
	return nil
}

// jobIDSeq returns the numeric sequence of a job id.
func jobIDSeq(id string) string {
	if i := strings.IndexAny(id, ".["); i >= 0 {
		return id[:i]
	}
	return id
}
