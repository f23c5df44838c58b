package pbs

import (
	"fmt"

	"gopbs/dis"
)

// Batch request types (spec 02 §1.1) sent by clients.
const (
	PBS_BATCH_QueueJob      = 1
	PBS_BATCH_jobscript     = 3
	PBS_BATCH_RdytoCommit   = 4
	PBS_BATCH_Commit        = 5
	PBS_BATCH_DeleteJob     = 6
	PBS_BATCH_HoldJob       = 7
	PBS_BATCH_LocateJob     = 8
	PBS_BATCH_Manager       = 9
	PBS_BATCH_MessJob       = 10
	PBS_BATCH_ModifyJob     = 11
	PBS_BATCH_MoveJob       = 12
	PBS_BATCH_ReleaseJob    = 13
	PBS_BATCH_Rerun         = 14
	PBS_BATCH_RunJob        = 15
	PBS_BATCH_SelectJobs    = 16
	PBS_BATCH_Shutdown      = 17
	PBS_BATCH_SignalJob     = 18
	PBS_BATCH_StatusJob     = 19
	PBS_BATCH_StatusQue     = 20
	PBS_BATCH_StatusSvr     = 21
	PBS_BATCH_AsyrunJob     = 23
	PBS_BATCH_Rescq         = 24
	PBS_BATCH_CheckpointJob = 27
	PBS_BATCH_AsyModifyJob  = 28
	PBS_BATCH_AuthenUser    = 49
	PBS_BATCH_OrderJob      = 50
	PBS_BATCH_SelStat       = 51
	PBS_BATCH_StatusNode    = 58
	PBS_BATCH_Disconnect    = 59
)

// Reply choices (spec 02 §4).
const (
	BATCH_REPLY_CHOICE_NULL        = 1
	BATCH_REPLY_CHOICE_Queue       = 2
	BATCH_REPLY_CHOICE_RdytoCommit = 3
	BATCH_REPLY_CHOICE_Commit      = 4
	BATCH_REPLY_CHOICE_Select      = 5
	BATCH_REPLY_CHOICE_Status      = 6
	BATCH_REPLY_CHOICE_Text        = 7
	BATCH_REPLY_CHOICE_Locate      = 8
	BATCH_REPLY_CHOICE_RescQuery   = 9
)

// Op is a batch_op: how an attribute entry is applied or compared.
type Op int

// The batch_op values (spec 02 §2.2).
const (
	SET      Op = 0
	UNSET    Op = 1
	INCR     Op = 2
	DECR     Op = 3
	EQ       Op = 4
	NE       Op = 5
	GE       Op = 6
	GT       Op = 7
	LE       Op = 8
	LT       Op = 9
	DFLT     Op = 10
	MERGE    Op = 11
	INCR_OLD Op = 12
)

// Object types of Manager requests and status replies (spec 02 §2.3).
const (
	MGR_OBJ_SERVER = 0
	MGR_OBJ_QUEUE  = 1
	MGR_OBJ_JOB    = 2
	MGR_OBJ_NODE   = 3
)

// Manager commands (spec 02 §2.4).
const (
	MGR_CMD_CREATE = 0
	MGR_CMD_DELETE = 1
	MGR_CMD_SET    = 2
	MGR_CMD_UNSET  = 3
)

// Attr is one attribute list entry: attribute name, optional resource,
// value and operator.
type Attr struct {
	Name     string
	Resource string
	Value    string
	Op       Op
	// ValueSet makes an empty Value count in the entry size of status
	// requests, as qmgr's empty strings do; other clients send a NULL
	// value there. Submit, manager and select lists always count it.
	ValueSet bool
}

// FullName returns "name" or "name.resource".
func (a Attr) FullName() string {
	if a.Resource != "" {
		return a.Name + "." + a.Resource
	}
	return a.Name
}

// Status is one object of a status reply.
type Status struct {
	ObjType int
	Name    string
	Attrs   []Attr
}

// Get returns the value of the first attribute called name (with the given
// resource, "" for none) and whether it is present.
func (s *Status) Get(name, resource string) (string, bool) {
	for _, a := range s.Attrs {
		if a.Name == name && a.Resource == resource {
			return a.Value, true
		}
	}
	return "", false
}

// encoder assembles one request.
type encoder struct{ b []byte }

func (e *encoder) u(v int)      { e.b = dis.AppendUint(e.b, uint64(v)) }
func (e *encoder) s(str string) { e.b = dis.AppendString(e.b, str) }

func (e *encoder) header(typ int, user string) {
	e.u(PBS_BATCH_PROT_TYPE)
	e.u(PBS_BATCH_PROT_VER)
	e.u(typ)
	e.s(user)
}

// ext writes the extension block: absent for "".
func (e *encoder) ext(ext string) {
	if ext == "" {
		e.u(0)
		return
	}
	e.u(1)
	e.s(ext)
}

// attrl writes a status-request name list (client attrl encoding).
func (e *encoder) attrl(list []Attr) {
	e.u(len(list))
	for _, a := range list {
		size := len(a.Name) + 1
		if a.Resource != "" {
			size += len(a.Resource) + 1
		}
		if a.Value != "" || a.ValueSet {
			size += len(a.Value) + 1
		}
		e.entry(size, a)
	}
}

// attropl writes an operator list (submit, manager, select encoding).
func (e *encoder) attropl(list []Attr) {
	e.u(len(list))
	for _, a := range list {
		size := len(a.Name) + 1 + len(a.Value) + 1
		if a.Resource != "" {
			size += len(a.Resource) + 1
		}
		e.entry(size, a)
	}
}

func (e *encoder) entry(size int, a Attr) {
	e.u(size)
	e.s(a.Name)
	if a.Resource != "" {
		e.u(1)
		e.s(a.Resource)
	} else {
		e.u(0)
	}
	e.s(a.Value)
	e.u(int(a.Op))
}

// reply is a decoded batch reply.
type reply struct {
	code, aux int
	choice    int
	text      string   // Text
	id        string   // Queue, RdytoCommit, Commit, Locate
	selected  []string // Select
	status    []Status // Status
	rescq     [4][]int // RescQuery: available, allocated, reserved, down
}

// maxListLen bounds counts in replies so that garbage cannot make the
// client allocate without limit.
const maxListLen = 1 << 24

func decodeReply(r *dis.Reader) (*reply, error) {
	typ, err := r.Uint()
	if err != nil {
		return nil, err
	}
	ver, err := r.Uint()
	if err != nil {
		return nil, err
	}
	if typ != PBS_BATCH_PROT_TYPE || ver != PBS_BATCH_PROT_VER {
		return nil, fmt.Errorf("reply protocol %d version %d", typ, ver)
	}
	rp := &reply{}
	if rp.code, err = r.Int(); err != nil {
		return nil, err
	}
	if rp.aux, err = r.Int(); err != nil {
		return nil, err
	}
	if rp.choice, err = r.Uint(); err != nil {
		return nil, err
	}
	switch rp.choice {
	case BATCH_REPLY_CHOICE_NULL:
	case BATCH_REPLY_CHOICE_Queue, BATCH_REPLY_CHOICE_RdytoCommit,
		BATCH_REPLY_CHOICE_Commit, BATCH_REPLY_CHOICE_Locate:
		rp.id, err = r.Str()
	case BATCH_REPLY_CHOICE_Text:
		rp.text, err = r.Str()
	case BATCH_REPLY_CHOICE_Select:
		var n int
		if n, err = count(r); err != nil {
			return nil, err
		}
		for i := 0; i < n && err == nil; i++ {
			var id string
			id, err = r.Str()
			rp.selected = append(rp.selected, id)
		}
	case BATCH_REPLY_CHOICE_Status:
		rp.status, err = decodeStatus(r)
	case BATCH_REPLY_CHOICE_RescQuery:
		var n int
		if n, err = count(r); err != nil {
			return nil, err
		}
		for k := 0; k < 4 && err == nil; k++ {
			for i := 0; i < n && err == nil; i++ {
				var v int
				v, err = r.Uint()
				rp.rescq[k] = append(rp.rescq[k], v)
			}
		}
	default:
		return nil, fmt.Errorf("reply choice %d", rp.choice)
	}
	if err != nil {
		return nil, err
	}
	return rp, nil
}

func count(r *dis.Reader) (int, error) {
	n, err := r.Uint()
	if err != nil {
		return 0, err
	}
	if n > maxListLen {
		return 0, dis.ErrOverflow
	}
	return n, nil
}

func decodeStatus(r *dis.Reader) ([]Status, error) {
	n, err := count(r)
	if err != nil {
		return nil, err
	}
	var out []Status
	for i := 0; i < n; i++ {
		var st Status
		if st.ObjType, err = r.Uint(); err != nil {
			return nil, err
		}
		if st.Name, err = r.Str(); err != nil {
			return nil, err
		}
		if st.Attrs, err = decodeAttrList(r); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func decodeAttrList(r *dis.Reader) ([]Attr, error) {
	n, err := count(r)
	if err != nil {
		return nil, err
	}
	var out []Attr
	for i := 0; i < n; i++ {
		var a Attr
		if _, err = r.Uint(); err != nil { // size: ignored by clients
			return nil, err
		}
		if a.Name, err = r.Str(); err != nil {
			return nil, err
		}
		hasRes, err := r.Uint()
		if err != nil {
			return nil, err
		}
		if hasRes != 0 {
			if a.Resource, err = r.Str(); err != nil {
				return nil, err
			}
		}
		if a.Value, err = r.Str(); err != nil {
			return nil, err
		}
		op, err := r.Uint()
		if err != nil {
			return nil, err
		}
		a.Op = Op(op)
		out = append(out, a)
	}
	return out, nil
}
