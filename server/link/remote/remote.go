// Package remote is pbs_server's link to other servers: the move of a
// job to another server's queue (a route_destinations entry or a qmove
// destination `queue@server[:port]`) and the hop count of a job received
// from one.
//
// Jobs move to another server the way a client submits one: the sending
// server connects from a privileged port, which makes it a trusted daemon
// for the receiver (spec 03), and sends QueueJob (with the job id, the
// destination queue and the job's attributes), JobScript, RdytoCommit and
// Commit (spec 02 §6.1, spec 12 §5). The receiver keeps the job id and
// counts one more hop; a job that has hopped more than MaxHops times is
// refused with PBSE_HOPCOUNT.
//
// The package knows neither the server's tables nor its lock: the server
// captures what a move sends (a Move) under its lock and calls Send
// without it.
package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
	"gopbs/server/state"
)

// MaxHops is the largest hop_count a server accepts (spec 02 §10:
// PBSE_HOPCOUNT "max job hop reached" beyond 10).
const MaxHops = 10

// timeout bounds one server-to-server move.
const timeout = 10 * time.Second

// user is the header user of the requests of a move (as of every request
// the server sends to another daemon, spec 10 §4).
const user = "PBS_Server"

// Destination is a parsed queue destination.
type Destination struct {
	Queue  string
	Addr   string // host:port of another server; "" for this server
	Server string // the other server as written (host or host:port)
	Bad    bool   // the host part is no host name or address
}

// String writes the destination as queue@host:port.
func (d Destination) String() string {
	if d.Addr == "" {
		return d.Queue
	}
	return d.Queue + "@" + d.Addr
}

// notSent are the attributes a server does not send with a moved job: the
// receiver sets them itself (state, place, times of this queue, the
// execution of a run that has not happened).
var notSent = map[int]bool{
	pbsattr.JobState: true, pbsattr.JobQueue: true, pbsattr.JobServer: true, pbsattr.JobHoldTypes: true, pbsattr.JobSubstate: true,
	pbsattr.JobQueueRank: true, pbsattr.JobQueueType: true, pbsattr.JobQtime: true, pbsattr.JobMtime: true, pbsattr.JobEtime: true,
	pbsattr.JobExecHost: true, pbsattr.JobSessionID: true,
}

// Sent reports whether the job attribute of index i is sent with a moved
// job.
func Sent(i int) bool { return !notSent[i] }

// Move is a job being sent to another server, captured under the
// server's lock.
type Move struct {
	ID        string
	Dest      Destination
	Attrs     batchreq.AttrList
	ScriptKey string // the job's script in the store
	// the state to return to when the move fails
	State    pbsattr.JobStateNum
	Substate pbsattr.Substate
}

// moveRefused wraps the receiving server's refusal of a moved job.
type moveRefused struct{ reply *batchreq.Reply }

func (e *moveRefused) Error() string {
	return fmt.Sprintf("refused with %d %s", e.reply.Code, e.reply.Text)
}

// Refusal returns the reply with which another server refused a move,
// or nil when err is a transport failure.
func Refusal(err error) *batchreq.Reply {
	var r *moveRefused
	if errors.As(err, &r) {
		return r.reply
	}
	return nil
}

// Send sends the job of m, whose script is script, to another server:
// QueueJob, JobScript, RdytoCommit, Commit, then Disconnect. An error
// that the other server refused the job carries its reply (Refusal).
func Send(m *Move, script []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d := iff.ReservedDialer{Unprivileged: true}
	nc, err := d.Dial(ctx, m.Dest.Addr)
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", m.ID, m.Dest, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(timeout))
	r := dis.NewReader(nc)
	steps := []struct {
		typ  int
		body batchreq.Body
	}{
		{batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: m.ID, Destination: m.Dest.Queue, Attrs: m.Attrs}},
		{batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{JobID: m.ID, Data: script}},
		{batchreq.PBS_BATCH_RdytoCommit, &batchreq.JobID{ID: m.ID}},
		{batchreq.PBS_BATCH_Commit, &batchreq.JobID{ID: m.ID}},
	}
	for _, st := range steps {
		req := batchreq.NewRequest(st.typ, user, st.body)
		if _, err := nc.Write(req.Append(nil)); err != nil {
			return fmt.Errorf("move %s to %s: send %s: %w", m.ID, m.Dest, batchreq.RequestName(st.typ), err)
		}
		p, err := batchreq.ReadReply(r)
		if err != nil {
			return fmt.Errorf("move %s to %s: reply to %s: %w", m.ID, m.Dest, batchreq.RequestName(st.typ), err)
		}
		if p.Code != 0 {
			return &moveRefused{p}
		}
	}
	nc.Write(batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, user, nil).Append(nil))
	return nil
}

// Request sends one request to the server at addr (host:port) from a
// reserved port and returns its reply.
func Request(addr string, typ int, body batchreq.Body) (*batchreq.Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d := iff.ReservedDialer{Unprivileged: true}
	nc, err := d.Dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(timeout))
	if _, err := nc.Write(batchreq.NewRequest(typ, user, body).Append(nil)); err != nil {
		return nil, fmt.Errorf("send to %s: %w", addr, err)
	}
	p, err := batchreq.ReadReply(dis.NewReader(nc))
	if err != nil {
		return nil, fmt.Errorf("reply from %s: %w", addr, err)
	}
	nc.Write(batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, user, nil).Append(nil))
	return p, nil
}

// CountHop raises the hop_count of a job received from another server
// and refuses it when it has hopped too often. Called with the server's
// lock held.
func CountHop(j *state.Job) *batchreq.Reply {
	n, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobHopCount))
	n++
	if n > MaxHops {
		return batchreq.ErrorReply(batchreq.PBSE_HOPCOUNT, "", "max job hop reached")
	}
	j.Attrs.Set(pbsattr.JobHopCount, strconv.Itoa(n))
	return nil
}

// Message is the MSG part of another server's refusal, passed on to
// the client.
func Message(p *batchreq.Reply) string {
	if _, msg, ok := strings.Cut(p.Text, " MSG="); ok {
		return msg
	}
	return ""
}

// HopCount is a job's hop_count as the "enqueuing into" log line shows
// it: 1 for a job submitted here.
func HopCount(j *state.Job) string {
	if h := j.Attrs.Get(pbsattr.JobHopCount); h != "" {
		return h
	}
	return "1"
}
