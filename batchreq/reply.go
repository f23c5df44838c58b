package batchreq

import (
	"errors"
	"fmt"

	"gopbs/dis"
)

// Reply is one batch reply (spec 02 §4). Choice selects which of the
// body fields travel:
//
//	BATCH_REPLY_CHOICE_NULL                      nothing
//	BATCH_REPLY_CHOICE_Queue/RdytoCommit/Commit  JobID
//	BATCH_REPLY_CHOICE_Select                    JobIDs
//	BATCH_REPLY_CHOICE_Status                    Status
//	BATCH_REPLY_CHOICE_Text                      Text
//	BATCH_REPLY_CHOICE_Locate                    Location
//	BATCH_REPLY_CHOICE_RescQuery                 Resc
type Reply struct {
	Code    int // 0, a PBSE_* code or an errno value
	AuxCode int
	Choice  int // BATCH_REPLY_CHOICE_*

	JobID    string
	JobIDs   []string
	Status   []StatusObject
	Text     string // may hold any byte
	Location string
	Resc     RescQueryReply
}

// StatusObject is one object of a Status reply.
type StatusObject struct {
	ObjType int // MGR_OBJ_*
	Name    string
	Attrs   AttrList
}

// RescQueryReply is the body of a RescQuery reply: four arrays of equal
// length, one element per query. Negative values travel through the
// unsigned encoder as their 32-bit two's complement.
type RescQueryReply struct {
	Avail, Alloc, Resvd, Down []int
}

// NullReply returns a successful reply with no body.
func NullReply() *Reply { return &Reply{Choice: BATCH_REPLY_CHOICE_NULL} }

// TextReply returns a reply with the given code and text (choice Text).
func TextReply(code int, text string) *Reply {
	return &Reply{Code: code, Choice: BATCH_REPLY_CHOICE_Text, Text: text}
}

// JobIDReply returns a successful Queue, RdytoCommit or Commit reply.
func JobIDReply(choice int, jobID string) *Reply {
	return &Reply{Choice: choice, JobID: jobID}
}

// Append appends the reply's DIS encoding to dst.
func (p *Reply) Append(dst []byte) []byte {
	dst = append(dst, "+2+1"...)
	dst = appendS(dst, int64(p.Code))
	dst = appendS(dst, int64(p.AuxCode))
	dst = appendU(dst, p.Choice)
	switch p.Choice {
	case BATCH_REPLY_CHOICE_Queue, BATCH_REPLY_CHOICE_RdytoCommit, BATCH_REPLY_CHOICE_Commit:
		dst = dis.AppendString(dst, p.JobID)
	case BATCH_REPLY_CHOICE_Select:
		dst = dis.AppendUint(dst, uint64(len(p.JobIDs)))
		for _, id := range p.JobIDs {
			dst = dis.AppendString(dst, id)
		}
	case BATCH_REPLY_CHOICE_Status:
		dst = dis.AppendUint(dst, uint64(len(p.Status)))
		for i := range p.Status {
			o := &p.Status[i]
			dst = appendU(dst, o.ObjType)
			dst = dis.AppendString(dst, o.Name)
			dst = o.Attrs.Append(dst)
		}
	case BATCH_REPLY_CHOICE_Text:
		dst = dis.AppendString(dst, p.Text)
	case BATCH_REPLY_CHOICE_Locate:
		dst = dis.AppendString(dst, p.Location)
	case BATCH_REPLY_CHOICE_RescQuery:
		n := len(p.Resc.Avail)
		dst = dis.AppendUint(dst, uint64(n))
		for _, a := range [...][]int{p.Resc.Avail, p.Resc.Alloc, p.Resc.Resvd, p.Resc.Down} {
			for i := 0; i < n; i++ {
				v := 0
				if i < len(a) {
					v = a[i]
				}
				dst = appendU(dst, v)
			}
		}
	}
	return dst
}

// Encode appends the reply to w's pending message; the caller flushes w.
func (p *Reply) Encode(w *dis.Writer) {
	w.PutRaw(p.Append(make([]byte, 0, 128)))
}

// ErrBadReply is wrapped by errors about replies that decode as DIS but
// break the reply grammar (wrong protocol, unknown choice).
var ErrBadReply = errors.New("malformed batch reply")

// ReadReply decodes one reply as the client library does. Any error
// means the client reports PBSE_PROTOCOL; a dis.ErrEOF at the start
// means the peer closed instead of answering.
func ReadReply(r *dis.Reader) (*Reply, error) {
	pt, err := r.Uint32()
	if err != nil {
		return nil, fmt.Errorf("reply protocol type: %w", err)
	}
	pv, err := r.Uint32()
	if err != nil {
		return nil, fmt.Errorf("reply protocol version: %w", err)
	}
	if pt != PBS_BATCH_PROT_TYPE || pv != PBS_BATCH_PROT_VER {
		return nil, fmt.Errorf("reply protocol %d version %d: %w", pt, pv, ErrBadReply)
	}
	p := new(Reply)
	if p.Code, err = readS(r, "reply code"); err != nil {
		return nil, err
	}
	if p.AuxCode, err = readS(r, "reply auxcode"); err != nil {
		return nil, err
	}
	if p.Choice, err = readU(r, "reply choice"); err != nil {
		return nil, err
	}
	if err := p.decodeBody(r); err != nil {
		return nil, fmt.Errorf("reply choice %d: %w", p.Choice, err)
	}
	return p, nil
}

func (p *Reply) decodeBody(r *dis.Reader) (err error) {
	var ar arena
	switch p.Choice {
	case BATCH_REPLY_CHOICE_NULL:
	case BATCH_REPLY_CHOICE_Queue:
		p.JobID, err = readStr(r, capJobID, "job id")
	case BATCH_REPLY_CHOICE_RdytoCommit, BATCH_REPLY_CHOICE_Commit:
		p.JobID, err = readStr(r, -1, "job id")
	case BATCH_REPLY_CHOICE_Select:
		n, err := readCount(r, "count")
		if err != nil {
			return err
		}
		p.JobIDs = make([]string, 0, min(n, maxPrealloc))
		for i := 0; i < n; i++ {
			id, err := ar.str(r)
			if err != nil {
				return fmt.Errorf("job id: %w", err)
			}
			p.JobIDs = append(p.JobIDs, id)
		}
	case BATCH_REPLY_CHOICE_Status:
		n, err := readCount(r, "count")
		if err != nil {
			return err
		}
		p.Status = make([]StatusObject, 0, min(n, maxPrealloc))
		for i := 0; i < n; i++ {
			var o StatusObject
			if o.ObjType, err = readU(r, "object type"); err != nil {
				return err
			}
			if o.Name, err = readStr(r, capJobID, "object name"); err != nil {
				return err
			}
			if o.Attrs, err = readReplyAttrList(r, &ar); err != nil {
				return fmt.Errorf("object %s: %w", o.Name, err)
			}
			p.Status = append(p.Status, o)
		}
	case BATCH_REPLY_CHOICE_Text:
		var b []byte
		if b, err = r.Bytes(); err != nil {
			return fmt.Errorf("text: %w", err)
		}
		p.Text = string(b)
	case BATCH_REPLY_CHOICE_Locate:
		p.Location, err = readStr(r, capDest, "location")
	case BATCH_REPLY_CHOICE_RescQuery:
		n, err := readCount(r, "count")
		if err != nil {
			return err
		}
		arrays := [...]*[]int{&p.Resc.Avail, &p.Resc.Alloc, &p.Resc.Resvd, &p.Resc.Down}
		for _, a := range arrays {
			*a = make([]int, 0, min(n, maxPrealloc))
			for i := 0; i < n; i++ {
				v, err := readU(r, "resource value")
				if err != nil {
					return err
				}
				*a = append(*a, v)
			}
		}
	default:
		return ErrBadReply
	}
	return err
}

// ClientAcceptsChoice reports whether the 2.5.13 client library accepts a
// reply with the given choice to a request of type reqType (spec 02 §4):
// status calls (StatusJob/Que/Svr/Node, SelStat) accept NULL, Status and
// Text; LocateJob NULL, Text and Locate; SelectJobs Select and Text;
// QueueJob Queue and Text; the other requests any choice 1–9. GoPBS's
// own: ResvSubmit Queue (the new id) and Text; ResvStatus and
// ResvAvailNodes as the status calls. A client
// receiving a choice it does not accept reports PBSE_PROTOCOL instead of
// the reply's code.
func ClientAcceptsChoice(reqType, choice int) bool {
	if choice < BATCH_REPLY_CHOICE_NULL || choice > BATCH_REPLY_CHOICE_RescQuery {
		return false
	}
	switch reqType {
	case PBS_BATCH_StatusJob, PBS_BATCH_StatusQue, PBS_BATCH_StatusSvr, PBS_BATCH_StatusNode, PBS_BATCH_SelStat:
		return choice == BATCH_REPLY_CHOICE_NULL || choice == BATCH_REPLY_CHOICE_Status || choice == BATCH_REPLY_CHOICE_Text
	case PBS_BATCH_LocateJob:
		return choice == BATCH_REPLY_CHOICE_NULL || choice == BATCH_REPLY_CHOICE_Locate || choice == BATCH_REPLY_CHOICE_Text
	case PBS_BATCH_SelectJobs:
		return choice == BATCH_REPLY_CHOICE_Select || choice == BATCH_REPLY_CHOICE_Text
	case PBS_BATCH_QueueJob, PBS_BATCH_ResvSubmit:
		return choice == BATCH_REPLY_CHOICE_Queue || choice == BATCH_REPLY_CHOICE_Text
	case PBS_BATCH_ResvStatus, PBS_BATCH_ResvAvailNodes:
		return choice == BATCH_REPLY_CHOICE_NULL || choice == BATCH_REPLY_CHOICE_Status || choice == BATCH_REPLY_CHOICE_Text
	}
	return true
}
