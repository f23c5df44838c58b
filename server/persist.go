package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
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
func (e *encoder) attrs(defs *defTable, l attrList) {
	e.int(int64(len(l)))
	for _, v := range l {
		e.str(defs.defs[v.idx].name)
		e.str(v.res)
		e.str(v.val)
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

func (d *decoder) attrs(defs *defTable) attrList {
	n := d.int()
	if n < 0 || n > 1<<20 {
		d.err = errCorrupt
		return nil
	}
	l := make(attrList, 0, n)
	for i := int64(0); i < n && d.err == nil; i++ {
		name, res, val := d.str(), d.str(), d.str()
		idx := defs.find(name)
		if idx < 0 {
			continue
		}
		l = append(l, attrVal{idx: idx, res: res, val: val})
	}
	sort.Slice(l, func(a, b int) bool {
		return l[a].idx < l[b].idx || l[a].idx == l[b].idx && l[a].res < l[b].res
	})
	return l
}

func encodeJob(j *Job) []byte {
	e := &encoder{b: make([]byte, 0, 512)}
	e.b = append(e.b, recordVersion)
	e.int(j.seq)
	e.int(int64(j.state))
	e.int(int64(j.substate))
	e.int(int64(j.hold))
	qn := ""
	if j.queue != nil {
		qn = j.queue.name
	}
	e.str(qn)
	e.int(j.rank)
	e.int(int64(j.arrayIdx))
	parent := ""
	if j.parent != nil {
		parent = j.parent.id
	}
	e.str(parent)
	req := ""
	if j.array != nil {
		req = j.array.request
	}
	e.str(req)
	e.int(j.purgeAt)
	e.attrs(jobDefs, j.attrs)
	if j.array != nil {
		e.int(int64(j.array.size))
		e.int(int64(j.array.ok))
		e.int(int64(j.array.notOK))
		e.int(int64(j.array.started))
	}
	return e.b
}

type jobRecord struct {
	job    *Job
	queue  string
	parent string
	isArr  bool
}

func decodeJob(id string, b []byte) (jobRecord, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return jobRecord{}, errCorrupt
	}
	d := &decoder{b: b[1:]}
	j := &Job{id: id}
	j.seq = d.int()
	j.state = pbsattr.JobStateNum(d.int())
	j.substate = pbsattr.Substate(d.int())
	j.hold = int(d.int())
	r := jobRecord{job: j}
	r.queue = d.str()
	j.rank = d.int()
	j.arrayIdx = int(d.int())
	r.parent = d.str()
	if req := d.str(); req != "" {
		j.array = &arrayInfo{request: req}
		r.isArr = true
	}
	j.purgeAt = d.int()
	j.attrs = d.attrs(jobDefs)
	if j.array != nil && len(d.b) > 0 {
		j.array.size = int(d.int())
		j.array.ok = int(d.int())
		j.array.notOK = int(d.int())
		if len(d.b) > 0 {
			j.array.started = int(d.int())
		}
	}
	if j.state < 0 || j.state > pbsattr.StateComplete {
		return r, errCorrupt
	}
	return r, d.err
}

func encodeServer(l attrList, next int64) []byte {
	e := &encoder{}
	e.b = append(e.b, recordVersion)
	e.int(next)
	e.attrs(serverDefs, l)
	return e.b
}

func encodeQueue(q *Queue) []byte {
	e := &encoder{}
	e.b = append(e.b, recordVersion)
	e.int(q.order)
	e.attrs(queueDefs, q.attrs)
	return e.b
}

func encodeNode(n *Node) []byte {
	e := &encoder{}
	e.b = append(e.b, recordVersion)
	e.int(n.order)
	e.int(int64(n.np))
	e.int(int64(n.state &^ nsNotReported))
	ts := int64(0)
	if n.timeShared {
		ts = 1
	}
	e.int(ts)
	e.attrs(nodeDefs, n.attrs)
	return e.b
}

// setDefaults sets the server attribute defaults of a new database.
func (s *Server) setDefaults() {
	s.attrs.set(pbsattr.SrvSchedulerIteration, "600")
	s.attrs.set(pbsattr.SrvNodeCheckRate, "150")
	s.attrs.set(pbsattr.SrvTCPTimeout, "6")
	s.attrs.set(pbsattr.SrvLogEvents, "511")
	s.attrs.set(pbsattr.SrvMailFrom, "adm")
	s.attrs.set(pbsattr.SrvScheduling, "False")
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
		s.attrs = d.attrs(serverDefs)
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
		n := &Node{name: name}
		n.order = d.int()
		n.np = int(d.int())
		// No MOM has reported to this server yet (spec 12 §9: a node is
		// down until its MOM's hello, offline until its first status).
		n.state = int(d.int())&^(nsBusy|nsUnknown) | nsUnreported
		n.timeShared = d.int() == 1
		n.attrs = d.attrs(nodeDefs)
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
	sort.Slice(s.nodes, func(a, b int) bool { return s.nodes[a].order < s.nodes[b].order })
	if err := s.loadNodesFile(); err != nil {
		return err
	}
	err = s.store.ForEach(store.Queues, func(name string, b []byte) error {
		if len(b) == 0 || b[0] != recordVersion {
			return errCorrupt
		}
		d := &decoder{b: b[1:]}
		q := &Queue{name: name}
		q.order = d.int()
		q.attrs = d.attrs(queueDefs)
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
	sort.Slice(s.queues, func(a, b int) bool { return s.queues[a].order < s.queues[b].order })
	for _, q := range s.queues {
		if q.order >= s.orderSeq {
			s.orderSeq = q.order + 1
		}
		s.log.Logf(logline.EventSystem|logline.EventAdmin|logline.EventDebug, logline.ClassServer, "PBS_Server", "Recovered queue %s", q.name)
	}
	for _, n := range s.nodes {
		if n.order >= s.orderSeq {
			s.orderSeq = n.order + 1
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
		if ja.seq != jb.seq {
			return ja.seq < jb.seq
		}
		return ja.arrayIdx < jb.arrayIdx
	})
	var ops []store.Op
	cold := s.cfg.InitType == InitCold
	for _, r := range recs {
		j := r.job
		q := s.queueByName[r.queue]
		if q == nil || cold {
			ops = append(ops, store.Del(store.Jobs, j.id), store.Del(store.Script, j.id))
			if cold {
				s.log.Log(logline.EventJob, logline.ClassJob, j.id, "Job aborted on PBS Server initialization")
			}
			continue
		}
		if r.parent != "" {
			p := s.jobs[r.parent]
			if p == nil || p.array == nil {
				ops = append(ops, store.Del(store.Jobs, j.id))
				continue
			}
			j.parent = p
			p.array.subjobs = append(p.array.subjobs, j)
		}
		if j.rank >= s.rankCounter {
			s.rankCounter = j.rank + 1
		}
		moving := j.state == pbsattr.StateTransit && j.substate == pbsattr.SubTrnOut
		if moving {
			// a move to another server was cut short (spec 12 §14:
			// TRNOUT goes back to queued); the job is re-evaluated
			j.state, j.substate = pbsattr.StateQueued, pbsattr.SubQueued
		}
		s.linkJob(j)
		s.enqueue(j, q)
		if moving {
			s.evaluate(j)
		}
	}
	for j := s.head; j != nil; j = j.next {
		s.watchJob(j)
	}
	s.log.Logf(logline.EventSystem, logline.ClassServer, "PBS_Server", "Expected %d, recovered %d jobs", len(recs), len(s.jobs))
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
