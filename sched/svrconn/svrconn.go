// Package svrconn is the scheduler's side of the connection the server
// opens to it: after the 4-byte command, the scheduler sends its batch
// requests back over the same socket, as user "Scheduler", with no
// Connect or authentication exchange, and closes it at the end of the
// cycle without a Disconnect request (spec 14 §2–3).
//
// The requests are encoded exactly as the FIFO scheduler sends them, e.g.
// StatusServer "+2+12+21+9Scheduler+0+0+0" and SelStat
// "+2+12+51+9Scheduler+12+182+11destination+0+5batch+4+0".
package svrconn

import (
	"errors"
	"fmt"
	"net"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/sched/world"
)

// User is the header user name of every scheduler request.
const User = "Scheduler"

// Conn sends batch requests over an accepted server connection.
type Conn struct {
	c   net.Conn
	r   *dis.Reader
	buf []byte
}

// New wraps an accepted connection.
func New(c net.Conn) *Conn {
	return &Conn{c: c, r: dis.NewReader(c)}
}

// SetDeadline bounds everything still to be done on the connection (the
// scheduler's -a alarm for a whole cycle).
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// ReadCommand reads the 4-byte scheduler command from the connection.
func (c *Conn) ReadCommand() (int, error) {
	return batchreq.ReadSchedCommand(c.c)
}

// Close closes the socket (no Disconnect request, as TORQUE's scheduler).
func (c *Conn) Close() error { return c.c.Close() }

// ReplyError is a reply with a non-zero code.
type ReplyError struct {
	Code int
	Text string
}

func (e *ReplyError) Error() string { return e.Text }

// exchange sends one request and reads its reply; a non-zero code is
// returned as *ReplyError carrying the server's message.
func (c *Conn) exchange(reqType int, body batchreq.Body, ext string) (*batchreq.Reply, error) {
	req := batchreq.NewRequest(reqType, User, body)
	if ext != "" {
		req.SetExtension(ext)
	}
	c.buf = req.Append(c.buf[:0])
	if _, err := c.c.Write(c.buf); err != nil {
		return nil, fmt.Errorf("send request %d: %w", reqType, err)
	}
	rep, err := batchreq.ReadReply(c.r)
	if err != nil {
		return nil, fmt.Errorf("reply to request %d: %w", reqType, err)
	}
	if rep.Code != 0 {
		text := rep.Text
		if rep.Choice != batchreq.BATCH_REPLY_CHOICE_Text || text == "" {
			text = batchreq.ErrorText(rep.Code)
		}
		return rep, &ReplyError{Code: rep.Code, Text: text}
	}
	return rep, nil
}

// Object is one object of a status reply, its attributes converted for
// the world model.
type Object struct {
	Name  string
	Attrs []world.Attr
}

// objects returns the objects of a status reply; their attribute lists
// are the decoded ones, not copies.
func objects(rep *batchreq.Reply) []Object {
	out := make([]Object, 0, len(rep.Status))
	for _, s := range rep.Status {
		out = append(out, Object{Name: s.Name, Attrs: s.Attrs})
	}
	return out
}

func (c *Conn) status(reqType int, body batchreq.Body) ([]Object, error) {
	rep, err := c.exchange(reqType, body, "")
	if err != nil {
		return nil, err
	}
	return objects(rep), nil
}

// StatusServer requests every attribute of the server.
func (c *Conn) StatusServer() ([]Object, error) {
	return c.status(batchreq.PBS_BATCH_StatusSvr, &batchreq.StatusReq{})
}

// SchedHello names the scheduler to the server (a GoPBS request, issue
// 18): the connection then sees only the scheduler's slice. It returns
// the scheduler's object.
func (c *Conn) SchedHello(name string) ([]Object, error) {
	return c.status(batchreq.PBS_BATCH_SchedHello, &batchreq.StatusReq{ID: name})
}

// StatusNode requests every node.
func (c *Conn) StatusNode() ([]Object, error) {
	return c.status(batchreq.PBS_BATCH_StatusNode, &batchreq.StatusReq{})
}

// StatusQueue requests every queue.
func (c *Conn) StatusQueue() ([]Object, error) {
	return c.status(batchreq.PBS_BATCH_StatusQue, &batchreq.StatusReq{})
}

// ResvStatus requests the advance reservations that are not over
// (GoPBS's own request type; a TORQUE server refuses it).
func (c *Conn) ResvStatus() ([]Object, error) {
	return c.status(batchreq.PBS_BATCH_ResvStatus, &batchreq.ResvStatus{})
}

// SelStatQueue requests every job of queue with all attributes (SelStat
// with the single criterion destination EQ queue).
func (c *Conn) SelStatQueue(queue string) ([]Object, error) {
	sel := batchreq.Attr{Name: "destination", Value: queue, Op: batchreq.EQ}
	return c.status(batchreq.PBS_BATCH_SelStat, &batchreq.Select{Attrs: batchreq.AttrList{sel}})
}

// ResourceQuery asks whether the node specification can be satisfied and
// returns the server's "available" count (>0 now, 0 later, <0 never).
func (c *Conn) ResourceQuery(spec string) (int, error) {
	rep, err := c.exchange(batchreq.PBS_BATCH_Rescq, &batchreq.Resc{Queries: []string{"nodes=" + spec}}, "")
	if err != nil {
		return 0, err
	}
	if len(rep.Resc.Avail) != 1 {
		return 0, errors.New("resource query: malformed reply")
	}
	return int(int32(rep.Resc.Avail[0])), nil
}

// SetComment sets the comment of a job (ModifyJob).
func (c *Conn) SetComment(jobID, comment string) error {
	_, err := c.exchange(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: jobID,
		Attrs: batchreq.AttrList{batchreq.NewAttr("comment", comment)},
	}, "")
	return err
}

// SetPlan records a job's reservation (ModifyJob of
// estimated_start_time, seconds since the epoch, and estimated_exec_host);
// empty values remove them.
func (c *Conn) SetPlan(jobID, start, hosts string) error {
	_, err := c.exchange(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: jobID,
		Attrs: batchreq.AttrList{batchreq.NewAttr("estimated_start_time", start), batchreq.NewAttr("estimated_exec_host", hosts)},
	}, "")
	return err
}

// SetSched sets attributes of a sched object (Manager request; the
// scheduler's own object, issue 18).
func (c *Conn) SetSched(name string, attrs ...batchreq.Attr) error {
	_, err := c.exchange(batchreq.PBS_BATCH_Manager, &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: name, Attrs: attrs,
	}, "")
	return err
}

// RunJob asks the server to run a job, on dest if not empty. The server
// answers after the MOM accepted the job.
func (c *Conn) RunJob(jobID, dest string) error {
	_, err := c.exchange(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: jobID, Destination: dest}, "")
	return err
}

// MoveJob moves a queued job to another queue of the same server
// (MoveJob, type 12), as the NAS scheduler does before it runs a job.
func (c *Conn) MoveJob(jobID, queue string) error {
	_, err := c.exchange(batchreq.PBS_BATCH_MoveJob, &batchreq.MoveJob{JobID: jobID, Destination: queue}, "")
	return err
}

// DeleteJob deletes a job; message travels as the request extension (it
// is mailed to the owner).
func (c *Conn) DeleteJob(jobID, message string) error {
	_, err := c.exchange(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{
		Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: jobID,
	}, message)
	return err
}
