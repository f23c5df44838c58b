package momproto

import (
	"fmt"

	"gopbs/batchreq"
	"gopbs/dis"
)

// IM protocol version and commands (spec 10 §11.1).
const (
	IM_PROTOCOL_VER = 1

	IM_ALL_OKAY    = 0
	IM_JOIN_JOB    = 1
	IM_KILL_JOB    = 2
	IM_SPAWN_TASK  = 3
	IM_GET_TASKS   = 4
	IM_SIGNAL_TASK = 5
	IM_OBIT_TASK   = 6
	IM_POLL_JOB    = 7
	IM_GET_INFO    = 8
	IM_GET_RESC    = 9
	IM_ABORT_JOB   = 10
	IM_GET_TID     = 11
	IM_ERROR       = 99
)

var imNames = [...]string{"IM_ALL_OKAY", "IM_JOIN_JOB", "IM_KILL_JOB", "IM_SPAWN_TASK", "IM_GET_TASKS",
	"IM_SIGNAL_TASK", "IM_OBIT_TASK", "IM_POLL_JOB", "IM_GET_INFO", "IM_GET_RESC", "IM_ABORT_JOB", "IM_GET_TID"}

// IMCommandName returns the name of an IM command, e.g. "IM_JOIN_JOB".
func IMCommandName(cmd int) string {
	switch {
	case cmd >= 0 && cmd < len(imNames):
		return imNames[cmd]
	case cmd == IM_ERROR:
		return "IM_ERROR"
	}
	return fmt.Sprintf("IM_UNKNOWN(%d)", cmd)
}

// IMHeader is the header of every IM message.
type IMHeader struct {
	Version  int    // IM_PROTOCOL_VER on the wire
	JobID    string // e.g. "39.vm"
	Cookie   string // the job cookie, 32 upper-case hex digits
	Command  int
	Event    int // correlates a reply with its request
	FromTask int // the originating task
}

// Body is the body of an IM or TM message: Empty, *Ints or one of the
// IM… and TM… body types.
type Body interface {
	// Append appends the body's encoding.
	Append(dst []byte) []byte
}

// IMMessage is one IM message: a request (Command is the request) or a
// reply (Command is IM_ALL_OKAY or IM_ERROR; ReplyTo is the request it
// answers, when known).
type IMMessage struct {
	IMHeader
	ReplyTo int // command of the answered request; -1 if not a reply or unknown
	Body    Body
}

// Empty is an empty body: IM_KILL_JOB, IM_POLL_JOB and IM_ABORT_JOB
// requests, the replies to IM_JOIN_JOB and IM_SIGNAL_TASK, TM_INIT.
type Empty struct{}

// Append implements Body.
func (Empty) Append(dst []byte) []byte { return dst }

// IMJoinJob asks a sister MOM to join a job.
type IMJoinJob struct {
	NodeID     int // the receiver's node number (MS is 0)
	NumNodes   int
	StdoutPort int // where the sister connects the tasks' standard output
	StderrPort int
	Attrs      batchreq.AttrList // job attributes
}

// Append implements Body.
func (b *IMJoinJob) Append(dst []byte) []byte {
	dst = appendInt(dst, b.NodeID)
	dst = appendInt(dst, b.NumNodes)
	dst = appendInt(dst, b.StdoutPort)
	dst = appendInt(dst, b.StderrPort)
	return b.Attrs.Append(dst)
}

// IMSpawnTask asks a sister to start a task.
type IMSpawnTask struct {
	ParentNode int
	TaskID     int
	GlobalID   string
	Argv       []string // terminated on the wire by an empty string
	Env        []string
	// EnvTerminated records that the environment list ended with an
	// empty string; otherwise it ran to the end of the message (as in
	// every captured IM_SPAWN_TASK).
	EnvTerminated bool
}

// Append implements Body.
func (b *IMSpawnTask) Append(dst []byte) []byte {
	dst = appendInt(dst, b.ParentNode)
	dst = appendInt(dst, b.TaskID)
	dst = dis.AppendString(dst, b.GlobalID)
	dst = appendStrs(dst, b.Argv)
	dst = dis.AppendString(dst, "")
	dst = appendStrs(dst, b.Env)
	if b.EnvTerminated {
		dst = dis.AppendString(dst, "")
	}
	return dst
}

// Ints is a body of signed integers. IM: the node (IM_GET_TASKS,
// IM_GET_RESC), node and task (IM_OBIT_TASK), node, task and signal
// (IM_SIGNAL_TASK), the node list of IM_GET_TID, the new task id of the
// reply to IM_SPAWN_TASK or IM_GET_TID, the exit status of the reply to
// IM_OBIT_TASK, the task ids of the reply to IM_GET_TASKS, the error code
// of IM_ERROR. TM: node and task of TM_OBIT, the task id of the reply to
// TM_SPAWN, the exit status of the reply to TM_OBIT, the error code of
// TM_ERROR.
type Ints struct {
	Values []int
}

// Append implements Body.
func (b *Ints) Append(dst []byte) []byte {
	for _, v := range b.Values {
		dst = appendInt(dst, v)
	}
	return dst
}

// IMGetInfo asks for a named piece of information a task posted.
type IMGetInfo struct {
	Node, Task int
	Name       string
}

// Append implements Body.
func (b *IMGetInfo) Append(dst []byte) []byte {
	dst = appendInt(dst, b.Node)
	dst = appendInt(dst, b.Task)
	return dis.AppendString(dst, b.Name)
}

// IMUsage is the reply to IM_KILL_JOB (Exiting unused) and IM_POLL_JOB:
// a sister's resource usage.
type IMUsage struct {
	HasExiting bool // the reply carries the "exiting" flag (IM_POLL_JOB)
	Exiting    int
	CPUT       uint64 // seconds
	Mem        uint64 // kb
	Vmem       uint64 // kb
}

// Append implements Body.
func (b *IMUsage) Append(dst []byte) []byte {
	if b.HasExiting {
		dst = appendInt(dst, b.Exiting)
	}
	dst = dis.AppendUint(dst, b.CPUT)
	dst = dis.AppendUint(dst, b.Mem)
	return dis.AppendUint(dst, b.Vmem)
}

// IMData is a reply carrying one counted string: the binary information
// of IM_GET_INFO or the resource description of IM_GET_RESC.
type IMData struct {
	Data []byte
}

// Append implements Body.
func (b *IMData) Append(dst []byte) []byte { return dis.AppendBytes(dst, b.Data) }

// DecodeIM decodes a whole IM message. The body of an IM_ALL_OKAY reply
// depends on the request it answers: answers, if not nil, is asked for the
// command of that request (the caller correlates by job and event) and
// returns -1 when it does not know it; an unknown request with a non-empty
// body is an error wrapping ErrNoContext.
func DecodeIM(b []byte, answers func(h *IMHeader) int) (*IMMessage, error) {
	m := newReader(b)
	proto, err := m.int("IM protocol")
	if err != nil {
		return nil, err
	}
	if proto != IM_PROTOCOL {
		return nil, m.fail("IM protocol", fmt.Errorf("%w %d", ErrBadProtocol, proto))
	}
	msg := &IMMessage{ReplyTo: -1}
	h := &msg.IMHeader
	if h.Version, err = m.int("IM version"); err != nil {
		return nil, err
	}
	if h.JobID, err = m.str("IM job id"); err != nil {
		return nil, err
	}
	if h.Cookie, err = m.str("IM cookie"); err != nil {
		return nil, err
	}
	if h.Command, err = m.int("IM command"); err != nil {
		return nil, err
	}
	cmdAt := m.start
	if h.Event, err = m.int("IM event"); err != nil {
		return nil, err
	}
	if h.FromTask, err = m.int("IM task"); err != nil {
		return nil, err
	}
	what := IMCommandName(h.Command)
	switch h.Command {
	case IM_JOIN_JOB:
		j := &IMJoinJob{}
		msg.Body = j
		for _, f := range []*int{&j.NodeID, &j.NumNodes, &j.StdoutPort, &j.StderrPort} {
			if *f, err = m.int(what); err != nil {
				return msg, err
			}
		}
		m.start = m.r.Offset()
		if j.Attrs, err = batchreq.ReadAttrList(m.r); err != nil {
			return msg, m.fail(what+" attributes", err)
		}
	case IM_KILL_JOB, IM_POLL_JOB, IM_ABORT_JOB:
		msg.Body = Empty{}
	case IM_SPAWN_TASK:
		s := &IMSpawnTask{}
		msg.Body = s
		if s.ParentNode, err = m.int(what + " parent node"); err != nil {
			return msg, err
		}
		if s.TaskID, err = m.int(what + " task"); err != nil {
			return msg, err
		}
		if s.GlobalID, err = m.str(what + " global id"); err != nil {
			return msg, err
		}
		if s.Argv, err = m.strsToEmpty(what + " argv"); err != nil {
			return msg, err
		}
		for !m.end() {
			e, err := m.str(what + " env")
			if err != nil {
				return msg, err
			}
			if e == "" {
				s.EnvTerminated = true
				break
			}
			s.Env = append(s.Env, e)
		}
	case IM_GET_TASKS, IM_GET_RESC:
		if msg.Body, err = m.fixedInts(what, 1); err != nil {
			return msg, err
		}
	case IM_OBIT_TASK:
		if msg.Body, err = m.fixedInts(what, 2); err != nil {
			return msg, err
		}
	case IM_SIGNAL_TASK:
		if msg.Body, err = m.fixedInts(what, 3); err != nil {
			return msg, err
		}
	case IM_GET_INFO:
		g := &IMGetInfo{}
		msg.Body = g
		if g.Node, err = m.int(what + " node"); err != nil {
			return msg, err
		}
		if g.Task, err = m.int(what + " task"); err != nil {
			return msg, err
		}
		if g.Name, err = m.str(what + " name"); err != nil {
			return msg, err
		}
	case IM_GET_TID:
		v, err := m.intsToEnd(what)
		msg.Body = &Ints{Values: v}
		if err != nil {
			return msg, err
		}
	case IM_ERROR:
		if answers != nil {
			msg.ReplyTo = answers(h)
		}
		if msg.Body, err = m.fixedInts(what, 1); err != nil {
			return msg, err
		}
	case IM_ALL_OKAY:
		if answers != nil {
			msg.ReplyTo = answers(h)
		}
		if msg.Body, err = m.okayBody(msg.ReplyTo); err != nil {
			return msg, err
		}
	default:
		m.start = cmdAt
		return msg, m.fail("IM command", fmt.Errorf("%w %d", ErrUnknownCmd, h.Command))
	}
	return msg, m.finish()
}

// fixedInts reads exactly n signed integers.
func (m *reader) fixedInts(what string, n int) (*Ints, error) {
	b := &Ints{Values: make([]int, n)}
	for i := range b.Values {
		v, err := m.int(what)
		if err != nil {
			b.Values = b.Values[:i]
			return b, err
		}
		b.Values[i] = v
	}
	return b, nil
}

// okayBody decodes the body of an IM_ALL_OKAY answering request cmd.
func (m *reader) okayBody(cmd int) (Body, error) {
	what := "IM_ALL_OKAY to " + IMCommandName(cmd)
	switch cmd {
	case IM_JOIN_JOB, IM_SIGNAL_TASK, IM_ABORT_JOB:
		return Empty{}, nil
	case IM_SPAWN_TASK, IM_OBIT_TASK, IM_GET_TID:
		return m.fixedInts(what, 1)
	case IM_GET_TASKS:
		v, err := m.intsToEnd(what)
		return &Ints{Values: v}, err
	case IM_KILL_JOB, IM_POLL_JOB:
		u := &IMUsage{HasExiting: cmd == IM_POLL_JOB}
		var err error
		if u.HasExiting {
			if u.Exiting, err = m.int(what + " exiting"); err != nil {
				return u, err
			}
		}
		for _, f := range []*uint64{&u.CPUT, &u.Mem, &u.Vmem} {
			if *f, err = m.uint64(what); err != nil {
				return u, err
			}
		}
		return u, nil
	case IM_GET_INFO, IM_GET_RESC:
		d, err := m.bytes(what)
		return &IMData{Data: d}, err
	}
	if m.end() {
		return Empty{}, nil
	}
	m.start = m.r.Offset()
	return nil, m.fail("IM_ALL_OKAY body", ErrNoContext)
}

// Append appends the encoding of the message to dst.
func (msg *IMMessage) Append(dst []byte) []byte {
	h := &msg.IMHeader
	dst = appendInt(dst, IM_PROTOCOL)
	dst = appendInt(dst, h.Version)
	dst = dis.AppendString(dst, h.JobID)
	dst = dis.AppendString(dst, h.Cookie)
	dst = appendInt(dst, h.Command)
	dst = appendInt(dst, h.Event)
	dst = appendInt(dst, h.FromTask)
	if msg.Body != nil {
		dst = msg.Body.Append(dst)
	}
	return dst
}
