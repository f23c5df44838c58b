package state

import (
	"encoding/binary"
	"errors"
	"sort"

	"gopbs/attr"
)

// The store holds objects in a compact binary form: a version byte, fixed
// fields as varints, then the attributes as (name, resource, value)
// triples so that a change of the definition tables does not break old
// databases.

// RecordVersion is the first byte of every object record.
const RecordVersion = 1

type encoder struct{ b []byte }

func (e *encoder) int(v int64) { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) attrs(defs *DefTable, l Attrs) {
	e.int(int64(len(l)))
	for _, v := range l {
		e.str(defs.Defs[v.Index].Name)
		e.str(v.Resource)
		e.str(v.Value)
	}
}

// ErrCorrupt is the error of a record that does not decode.
var ErrCorrupt = errors.New("corrupt record")

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
		d.err = ErrCorrupt
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
		d.err = ErrCorrupt
		return ""
	}
	s := string(d.b[n : n+int(l)])
	d.b = d.b[n+int(l):]
	return s
}

func (d *decoder) attrs(defs *DefTable) Attrs {
	n := d.int()
	if n < 0 || n > 1<<20 {
		d.err = ErrCorrupt
		return nil
	}
	l := make(Attrs, 0, n)
	for i := int64(0); i < n && d.err == nil; i++ {
		name, res, val := d.str(), d.str(), d.str()
		idx := defs.Find(name)
		if idx < 0 {
			continue
		}
		l = append(l, AttrValue{Index: idx, Resource: res, Value: val})
	}
	sort.Slice(l, func(a, b int) bool {
		return l[a].Index < l[b].Index || l[a].Index == l[b].Index && l[a].Resource < l[b].Resource
	})
	return l
}

// EncodeJob returns the record of a job.
func EncodeJob(j *Job) []byte {
	e := &encoder{b: make([]byte, 0, 512)}
	e.b = append(e.b, RecordVersion)
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
	e.attrs(JobDefs, j.Attrs)
	if j.Array != nil {
		e.int(int64(j.Array.Size))
		e.int(int64(j.Array.OK))
		e.int(int64(j.Array.NotOK))
		e.int(int64(j.Array.Started))
	}
	return e.b
}

// StoredJob is a job decoded from its record, with the names of what it
// refers to: the recovery links them once every job is read.
type StoredJob struct {
	Job     *Job
	Queue   string // queue name
	Parent  string // array template id of a sub-job
	IsArray bool   // an array template
}

// DecodeJob decodes the record of job id.
func DecodeJob(id string, b []byte) (StoredJob, error) {
	if len(b) == 0 || b[0] != RecordVersion {
		return StoredJob{}, ErrCorrupt
	}
	d := &decoder{b: b[1:]}
	j := &Job{ID: id}
	j.Seq = d.int()
	j.State = attr.JobStateNum(d.int())
	j.Substate = attr.Substate(d.int())
	j.Hold = int(d.int())
	r := StoredJob{Job: j}
	r.Queue = d.str()
	j.Rank = d.int()
	j.ArrayIndex = int(d.int())
	r.Parent = d.str()
	if req := d.str(); req != "" {
		j.Array = &ArrayInfo{Request: req}
		r.IsArray = true
	}
	j.PurgeAt = d.int()
	j.Attrs = d.attrs(JobDefs)
	if j.Array != nil && len(d.b) > 0 {
		j.Array.Size = int(d.int())
		j.Array.OK = int(d.int())
		j.Array.NotOK = int(d.int())
		if len(d.b) > 0 {
			j.Array.Started = int(d.int())
		}
	}
	if j.State < 0 || j.State > attr.StateComplete {
		return r, ErrCorrupt
	}
	return r, d.err
}

// EncodeServer returns the record of the server's attributes and next
// job number.
func EncodeServer(l Attrs, next int64) []byte {
	e := &encoder{}
	e.b = append(e.b, RecordVersion)
	e.int(next)
	e.attrs(ServerDefs, l)
	return e.b
}

// EncodeQueue returns the record of a queue.
func EncodeQueue(q *Queue) []byte {
	e := &encoder{}
	e.b = append(e.b, RecordVersion)
	e.int(q.Order)
	e.attrs(QueueDefs, q.Attrs)
	return e.b
}

// EncodeNode returns the record of a node.
func EncodeNode(n *Node) []byte {
	e := &encoder{}
	e.b = append(e.b, RecordVersion)
	e.int(n.Order)
	e.int(int64(n.NP))
	e.int(int64(n.State &^ NodeStateNotReported))
	ts := int64(0)
	if n.TimeShared {
		ts = 1
	}
	e.int(ts)
	e.attrs(NodeDefs, n.Attrs)
	return e.b
}

// DecodeServer decodes the record of the server's attributes.
func DecodeServer(b []byte) (attrs Attrs, next int64, err error) {
	if len(b) == 0 || b[0] != RecordVersion {
		return nil, 0, ErrCorrupt
	}
	d := &decoder{b: b[1:]}
	next = d.int()
	attrs = d.attrs(ServerDefs)
	return attrs, next, d.err
}

// DecodeQueue decodes the record of queue name.
func DecodeQueue(name string, b []byte) (*Queue, error) {
	if len(b) == 0 || b[0] != RecordVersion {
		return nil, ErrCorrupt
	}
	d := &decoder{b: b[1:]}
	q := &Queue{Name: name}
	q.Order = d.int()
	q.Attrs = d.attrs(QueueDefs)
	return q, d.err
}

// DecodeNode decodes the record of node name.
func DecodeNode(name string, b []byte) (*Node, error) {
	if len(b) == 0 || b[0] != RecordVersion {
		return nil, ErrCorrupt
	}
	d := &decoder{b: b[1:]}
	n := &Node{Name: name}
	n.Order = d.int()
	n.NP = int(d.int())
	n.State = int(d.int())
	n.TimeShared = d.int() == 1
	n.Attrs = d.attrs(NodeDefs)
	return n, d.err
}
