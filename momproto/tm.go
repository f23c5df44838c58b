package momproto

import (
	"fmt"

	"gopbs/dis"
)

// TM protocol version, commands, reply codes and errors (spec 10 §11.2).
const (
	TM_PROTOCOL_VER = 1

	TM_INIT        = 100
	TM_TASKS       = 101
	TM_SPAWN       = 102
	TM_SIGNAL      = 103
	TM_OBIT        = 104
	TM_RESOURCES   = 105
	TM_POSTINFO    = 106
	TM_GETINFO     = 107
	TM_GETTID      = 108
	TM_REGISTER    = 109
	TM_RECONFIG    = 110
	TM_ACK         = 111
	TM_FINALIZE    = 112
	TM_ADOPT_ALTID = 113
	TM_ADOPT_JOBID = 114

	TM_OKAY  = 0
	TM_ERROR = 999

	TM_ESYSTEM         = 17000
	TM_ENOEVENT        = 17001
	TM_ENOTCONNECTED   = 17002
	TM_EUNKNOWNCMD     = 17003
	TM_ENOTIMPLEMENTED = 17004
	TM_EBADENVIRONMENT = 17005
	TM_ENOTFOUND       = 17006
	TM_BADINIT         = 17007
)

var tmNames = [...]string{"TM_INIT", "TM_TASKS", "TM_SPAWN", "TM_SIGNAL", "TM_OBIT", "TM_RESOURCES",
	"TM_POSTINFO", "TM_GETINFO", "TM_GETTID", "TM_REGISTER", "TM_RECONFIG", "TM_ACK", "TM_FINALIZE",
	"TM_ADOPT_ALTID", "TM_ADOPT_JOBID"}

// TMCommandName returns the name of a TM command, e.g. "TM_SPAWN".
func TMCommandName(cmd int) string {
	if cmd >= TM_INIT && cmd <= TM_ADOPT_JOBID {
		return tmNames[cmd-TM_INIT]
	}
	return fmt.Sprintf("TM_UNKNOWN(%d)", cmd)
}

// TMRequest is a request a job task sends to its MOM over TCP.
type TMRequest struct {
	Version  int // TM_PROTOCOL_VER on the wire
	JobID    string
	Cookie   string
	Command  int
	Event    int
	FromTask uint32
	Body     Body
}

// TMSpawn asks the MOM to start a task on a node of the job.
type TMSpawn struct {
	Node int
	Argv []string // preceded on the wire by its count
	// Env is terminated on the wire by an empty string. (Every captured
	// TM_SPAWN has an empty environment, which is the single "+0"; a
	// count of zero would look the same.)
	Env []string
}

// Append implements Body.
func (b *TMSpawn) Append(dst []byte) []byte {
	dst = appendInt(dst, b.Node)
	dst = appendInt(dst, len(b.Argv))
	dst = appendStrs(dst, b.Argv)
	dst = appendStrs(dst, b.Env)
	return dis.AppendString(dst, "")
}

// DecodeTMRequest decodes one TM request from the start of b and returns
// it with the number of bytes it took. The request types seen in the
// captures (TM_INIT, TM_SPAWN, TM_OBIT) and, after the outline of spec 10
// §11.2, TM_TASKS, TM_SIGNAL, TM_RESOURCES and TM_FINALIZE are decoded;
// others are an error wrapping ErrUnknownCmd (the header is still
// returned), since TCP gives no message boundary to skip to. A request
// cut short is an error wrapping dis.ErrEOF or dis.ErrEOD: the caller may
// read more and try again.
func DecodeTMRequest(b []byte) (*TMRequest, int, error) {
	m := newReader(b)
	proto, err := m.int("TM protocol")
	if err != nil {
		return nil, 0, err
	}
	if proto != TM_PROTOCOL {
		return nil, 0, m.fail("TM protocol", fmt.Errorf("%w %d", ErrBadProtocol, proto))
	}
	req := &TMRequest{}
	if req.Version, err = m.int("TM version"); err != nil {
		return nil, 0, err
	}
	if req.JobID, err = m.str("TM job id"); err != nil {
		return nil, 0, err
	}
	if req.Cookie, err = m.str("TM cookie"); err != nil {
		return nil, 0, err
	}
	if req.Command, err = m.int("TM command"); err != nil {
		return nil, 0, err
	}
	cmdAt := m.start
	if req.Event, err = m.int("TM event"); err != nil {
		return nil, 0, err
	}
	if req.FromTask, err = m.uint32("TM task"); err != nil {
		return nil, 0, err
	}
	what := TMCommandName(req.Command)
	switch req.Command {
	case TM_INIT:
		req.Body = Empty{}
	case TM_SPAWN:
		s := &TMSpawn{}
		req.Body = s
		if s.Node, err = m.int(what + " node"); err != nil {
			return req, 0, err
		}
		argc, err := m.int(what + " argc")
		if err != nil {
			return req, 0, err
		}
		if argc < 0 {
			return req, 0, m.fail(what+" argc", dis.ErrBadSign)
		}
		for range argc {
			a, err := m.str(what + " argv")
			if err != nil {
				return req, 0, err
			}
			s.Argv = append(s.Argv, a)
		}
		if s.Env, err = m.strsToEmpty(what + " env"); err != nil {
			return req, 0, err
		}
	case TM_OBIT:
		if req.Body, err = m.fixedInts(what, 2); err != nil {
			return req, 0, err
		}
	case TM_TASKS, TM_RESOURCES:
		// The node asked about (outline; not in the captures).
		if req.Body, err = m.fixedInts(what, 1); err != nil {
			return req, 0, err
		}
	case TM_SIGNAL:
		// Node, task and signal (outline; not in the captures).
		if req.Body, err = m.fixedInts(what, 3); err != nil {
			return req, 0, err
		}
	case TM_FINALIZE:
		req.Body = Empty{}
	default:
		m.start = cmdAt
		return req, 0, m.fail("TM command", fmt.Errorf("%w %d", ErrUnknownCmd, req.Command))
	}
	return req, m.off(), nil
}

// Append appends the encoding of the request to dst.
func (req *TMRequest) Append(dst []byte) []byte {
	dst = appendInt(dst, TM_PROTOCOL)
	dst = appendInt(dst, req.Version)
	dst = dis.AppendString(dst, req.JobID)
	dst = dis.AppendString(dst, req.Cookie)
	dst = appendInt(dst, req.Command)
	dst = appendInt(dst, req.Event)
	dst = dis.AppendUint(dst, uint64(req.FromTask))
	if req.Body != nil {
		dst = req.Body.Append(dst)
	}
	return dst
}

// TMReply is a MOM's answer to a TM request.
type TMReply struct {
	Version int // TM_PROTOCOL_VER on the wire
	Code    int // TM_OKAY or TM_ERROR
	Event   int
	ReplyTo int // command of the answered request, -1 if unknown
	Body    Body
}

// TMInitReply is the body of the reply to TM_INIT.
type TMInitReply struct {
	Nodes []int // the job's node numbers, preceded on the wire by their count
	JobID string
	// Parent and Last are the two integers that follow the job id: -1
	// and 0 in every capture (the caller's parent task, TM_NULL_TASK,
	// and a value whose meaning the captures do not show).
	Parent int
	Last   int
}

// Append implements Body.
func (b *TMInitReply) Append(dst []byte) []byte {
	dst = appendInt(dst, len(b.Nodes))
	for _, n := range b.Nodes {
		dst = appendInt(dst, n)
	}
	dst = dis.AppendString(dst, b.JobID)
	dst = appendInt(dst, b.Parent)
	return appendInt(dst, b.Last)
}

// TMTasksReply is the body of the reply to TM_TASKS: the tasks of a node.
type TMTasksReply struct {
	Tasks []int // preceded on the wire by their count
}

// Append implements Body.
func (b *TMTasksReply) Append(dst []byte) []byte {
	dst = appendInt(dst, len(b.Tasks))
	for _, t := range b.Tasks {
		dst = appendInt(dst, t)
	}
	return dst
}

// maxPrealloc bounds slices sized from counts read off the wire.
const maxPrealloc = 64

// DecodeTMReply decodes one TM reply from the start of b and returns it
// with the number of bytes it took. answers, if not nil, returns the
// command of the request with the given event (-1 if unknown); the body
// of a TM_OKAY reply depends on it.
func DecodeTMReply(b []byte, answers func(event int) int) (*TMReply, int, error) {
	m := newReader(b)
	proto, err := m.int("TM protocol")
	if err != nil {
		return nil, 0, err
	}
	if proto != TM_PROTOCOL {
		return nil, 0, m.fail("TM protocol", fmt.Errorf("%w %d", ErrBadProtocol, proto))
	}
	rep := &TMReply{ReplyTo: -1}
	if rep.Version, err = m.int("TM version"); err != nil {
		return nil, 0, err
	}
	if rep.Code, err = m.int("TM reply code"); err != nil {
		return nil, 0, err
	}
	codeAt := m.start
	if rep.Event, err = m.int("TM event"); err != nil {
		return nil, 0, err
	}
	if answers != nil {
		rep.ReplyTo = answers(rep.Event)
	}
	what := "TM reply to " + TMCommandName(rep.ReplyTo)
	switch {
	case rep.Code == TM_ERROR:
		if rep.Body, err = m.fixedInts("TM_ERROR code", 1); err != nil {
			return rep, 0, err
		}
	case rep.Code != TM_OKAY:
		m.start = codeAt
		return rep, 0, m.fail("TM reply code", fmt.Errorf("%w %d", ErrUnknownCmd, rep.Code))
	case rep.ReplyTo == TM_INIT:
		r := &TMInitReply{}
		rep.Body = r
		n, err := m.int(what + " node count")
		if err != nil {
			return rep, 0, err
		}
		if n < 0 {
			return rep, 0, m.fail(what+" node count", dis.ErrBadSign)
		}
		r.Nodes = make([]int, 0, min(n, maxPrealloc))
		for range n {
			v, err := m.int(what + " node")
			if err != nil {
				return rep, 0, err
			}
			r.Nodes = append(r.Nodes, v)
		}
		if r.JobID, err = m.str(what + " job id"); err != nil {
			return rep, 0, err
		}
		if r.Parent, err = m.int(what); err != nil {
			return rep, 0, err
		}
		if r.Last, err = m.int(what); err != nil {
			return rep, 0, err
		}
	case rep.ReplyTo == TM_SPAWN, rep.ReplyTo == TM_OBIT:
		if rep.Body, err = m.fixedInts(what, 1); err != nil {
			return rep, 0, err
		}
	case rep.ReplyTo == TM_TASKS:
		// A count, then the task ids (outline; not in the captures).
		n, err := m.int(what + " task count")
		if err != nil {
			return rep, 0, err
		}
		if n < 0 {
			return rep, 0, m.fail(what+" task count", dis.ErrBadSign)
		}
		t := &TMTasksReply{Tasks: make([]int, 0, min(n, maxPrealloc))}
		rep.Body = t
		for range n {
			v, err := m.int(what + " task")
			if err != nil {
				return rep, 0, err
			}
			t.Tasks = append(t.Tasks, v)
		}
	case rep.ReplyTo == TM_SIGNAL:
		rep.Body = Empty{}
	default:
		m.start = m.r.Offset()
		return rep, 0, m.fail("TM reply body", ErrNoContext)
	}
	return rep, m.off(), nil
}

// Append appends the encoding of the reply to dst.
func (rep *TMReply) Append(dst []byte) []byte {
	dst = appendInt(dst, TM_PROTOCOL)
	dst = appendInt(dst, rep.Version)
	dst = appendInt(dst, rep.Code)
	dst = appendInt(dst, rep.Event)
	if rep.Body != nil {
		dst = rep.Body.Append(dst)
	}
	return dst
}
