package batchreq

import (
	"errors"
	"fmt"
	"io"

	"gopbs/dis"
)

// Header is the part every request starts with. Protocol type and
// version are implied (PBS_BATCH_PROT_TYPE, PBS_BATCH_PROT_VER).
type Header struct {
	Type int    // request type, PBS_BATCH_*
	User string // requesting user as the sender believes it to be
}

// Request is one decoded batch request.
type Request struct {
	Header
	// Body holds the type's body, a pointer to one of the body structs
	// (see NewBody). It is nil for Disconnect and for types without a
	// body kind.
	Body Body
	// HasExtension reports whether the extension block carried a string
	// (has_extension != 0); an empty Extension with HasExtension set
	// encodes as "+1+0".
	HasExtension bool
	Extension    string
}

// Body is implemented by every request body kind.
type Body interface {
	// Append appends the body's DIS encoding to dst.
	Append(dst []byte) []byte
	// Decode reads the body as a receiver (server or MOM) does,
	// enforcing the receiver's string capacities.
	Decode(r *dis.Reader) error
}

// NewRequest returns a request of type reqType from user with body b and
// no extension.
func NewRequest(reqType int, user string, b Body) *Request {
	return &Request{Header: Header{Type: reqType, User: user}, Body: b}
}

// SetExtension sets the extension string; an empty string means no
// extension, as clients send it.
func (q *Request) SetExtension(ext string) {
	q.Extension = ext
	q.HasExtension = ext != ""
}

// Append appends the whole request (header, body, extension) to dst.
// Disconnect is header only.
func (q *Request) Append(dst []byte) []byte {
	dst = append(dst, "+2+1"...)
	dst = dis.AppendUint(dst, uint64(uint32(q.Type)))
	dst = dis.AppendString(dst, q.User)
	if q.Type == PBS_BATCH_Disconnect {
		return dst
	}
	if q.Body != nil {
		dst = q.Body.Append(dst)
	}
	if q.HasExtension {
		dst = append(dst, "+1"...)
		return dis.AppendString(dst, q.Extension)
	}
	return append(dst, "+0"...)
}

// Encode appends the request to w's pending message; the caller
// flushes w.
func (q *Request) Encode(w *dis.Writer) {
	w.PutRaw(q.Append(make([]byte, 0, 256)))
}

// NewBody returns a new, empty body of the kind request type reqType
// carries, or nil if the type has none (Disconnect, and the types no
// TORQUE program decodes: Connect, 29–47, and those out of range).
// AsySignalJob, which pbs_server refuses and 2.5.13 clients never send,
// has the SignalJob body.
func NewBody(reqType int) Body {
	switch reqType {
	case PBS_BATCH_QueueJob:
		return new(QueueJob)
	case PBS_BATCH_JobCred:
		return new(JobCred)
	case PBS_BATCH_jobscript, PBS_BATCH_MvJobFile:
		return new(JobFile)
	case PBS_BATCH_RdytoCommit, PBS_BATCH_Commit, PBS_BATCH_LocateJob, PBS_BATCH_Rerun:
		return new(JobID)
	case PBS_BATCH_DeleteJob, PBS_BATCH_HoldJob, PBS_BATCH_Manager, PBS_BATCH_ModifyJob,
		PBS_BATCH_ReleaseJob, PBS_BATCH_CheckpointJob, PBS_BATCH_AsyModifyJob:
		return new(Manage)
	case PBS_BATCH_MessJob:
		return new(MessJob)
	case PBS_BATCH_MoveJob, PBS_BATCH_OrderJob:
		return new(MoveJob)
	case PBS_BATCH_RunJob, PBS_BATCH_AsyrunJob, PBS_BATCH_StageIn:
		return new(RunJob)
	case PBS_BATCH_SelectJobs, PBS_BATCH_SelStat:
		return new(Select)
	case PBS_BATCH_Shutdown:
		return new(Shutdown)
	case PBS_BATCH_SignalJob, PBS_BATCH_AsySignalJob:
		return new(SignalJob)
	case PBS_BATCH_StatusJob, PBS_BATCH_StatusQue, PBS_BATCH_StatusSvr, PBS_BATCH_StatusNode:
		return new(StatusReq)
	case PBS_BATCH_TrackJob:
		return new(TrackJob)
	case PBS_BATCH_Rescq, PBS_BATCH_ReserveResc, PBS_BATCH_ReleaseResc:
		return new(Resc)
	case PBS_BATCH_AuthenUser:
		return new(AuthenUser)
	case PBS_BATCH_RegistDep:
		return new(RegistDep)
	case PBS_BATCH_ReturnFiles:
		return new(ReturnFiles)
	case PBS_BATCH_CopyFiles, PBS_BATCH_DelFiles:
		return new(CopyFiles)
	case PBS_BATCH_JobObit:
		return new(JobObit)
	case PBS_BATCH_AltAuthenUser:
		return new(AltAuthenUser)
	case PBS_BATCH_GpuCtrl:
		return new(GpuCtrl)
	}
	return nil
}

// ErrUnknownRequest is wrapped by the RequestError of a request whose type
// is valid but not decoded (PBSE_UNKREQ).
var ErrUnknownRequest = errors.New("request type not decoded")

// RequestError reports a request that could not be decoded. Code is the
// PBSE code the receiver answers with (PBSE_DISPROTO or PBSE_UNKREQ)
// before closing the connection; Header holds whatever of the header was
// decoded (Type is -1 if the type itself was not).
type RequestError struct {
	Code   int
	Header Header
	Err    error
}

func (e *RequestError) Error() string {
	if e.Header.Type < 0 {
		return fmt.Sprintf("batch request: %v", e.Err)
	}
	return fmt.Sprintf("batch request %s (%d): %v", RequestName(e.Header.Type), e.Header.Type, e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// ErrorCode returns the PBSE code a receiver answers a failed request
// decode with: the RequestError's Code, or PBSE_DISPROTO for any other
// error.
func ErrorCode(err error) int {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return PBSE_DISPROTO
}

// ReadRequest decodes one request, with the body of every type that has
// a body kind (the set pbs_mom and servers together understand).
//
// If the stream ends cleanly before or within the four header items the
// error is io.EOF and the receiver closes silently. Any other failure is
// a *RequestError whose Code the receiver replies with before closing.
func ReadRequest(r *dis.Reader) (*Request, error) {
	return readRequestIn(r, func(t int) bool { return NewBody(t) != nil || t == PBS_BATCH_Disconnect }, false)
}

// ReadServerRequest decodes one request as a 2.5.13 pbs_server does:
// the types ServerDecodes rejects end in a RequestError with Code
// PBSE_UNKREQ without their body being read.
func ReadServerRequest(r *dis.Reader) (*Request, error) {
	return readRequestIn(r, ServerDecodes, false)
}

// readRequestIn decodes one request whose type decodes accepts; with
// goPBS, GoPBS's own types (IsGoPBSRequest) are in range too.
func readRequestIn(r *dis.Reader, decodes func(int) bool, goPBS bool) (*Request, error) {
	q := &Request{Header: Header{Type: -1}}
	fail := func(code int, err error) (*Request, error) {
		return q, &RequestError{Code: code, Header: q.Header, Err: err}
	}
	hdr := func(what string, err error) (*Request, error) {
		if errors.Is(err, dis.ErrEOF) {
			return nil, io.EOF
		}
		return fail(PBSE_DISPROTO, fmt.Errorf("%s: %w", what, err))
	}
	pt, err := r.Uint32()
	if err != nil {
		return hdr("protocol type", err)
	}
	pv, err := r.Uint32()
	if err != nil {
		return hdr("protocol version", err)
	}
	t, err := r.Uint32()
	if err != nil {
		return hdr("request type", err)
	}
	user, err := r.StrMax(capUser)
	if err != nil {
		return hdr("user name", err)
	}
	switch {
	case pt != PBS_BATCH_PROT_TYPE:
		return fail(PBSE_DISPROTO, fmt.Errorf("protocol type %d", pt))
	case pv != PBS_BATCH_PROT_VER:
		return fail(PBSE_DISPROTO, fmt.Errorf("protocol version %d", pv))
	case t >= PBS_BATCH_CEILING && !(goPBS && t < PBS_BATCH_GoPBSCeiling && IsGoPBSRequest(int(t))):
		return fail(PBSE_DISPROTO, fmt.Errorf("request type %d out of range", t))
	}
	q.Type = int(t)
	q.User = user
	if q.Type == PBS_BATCH_Disconnect {
		return q, nil
	}
	if !decodes(q.Type) {
		return fail(PBSE_UNKREQ, ErrUnknownRequest)
	}
	b := NewBody(q.Type)
	if goPBS && IsGoPBSRequest(q.Type) {
		b = newGoPBSBody(q.Type)
	}
	if b != nil {
		if err := b.Decode(r); err != nil {
			return fail(PBSE_DISPROTO, fmt.Errorf("body: %w", err))
		}
		q.Body = b
	}
	has, err := r.Uint32()
	if err != nil {
		return fail(PBSE_DISPROTO, fmt.Errorf("extension flag: %w", err))
	}
	if has != 0 {
		q.HasExtension = true
		if q.Extension, err = r.Str(); err != nil {
			return fail(PBSE_DISPROTO, fmt.Errorf("extension: %w", err))
		}
	}
	return q, nil
}

// ObjectID returns the job id, queue, node or other object name the
// request is about, as servers print it in their logs, or "" for bodies
// without one.
func (q *Request) ObjectID() string {
	switch b := q.Body.(type) {
	case *QueueJob:
		return b.JobID
	case *JobFile:
		return b.JobID
	case *JobID:
		return b.ID
	case *Manage:
		return b.ObjName
	case *MessJob:
		return b.JobID
	case *MoveJob:
		return b.JobID
	case *RunJob:
		return b.JobID
	case *SignalJob:
		return b.JobID
	case *StatusReq:
		return b.ID
	case *TrackJob:
		return b.JobID
	case *RegistDep:
		return b.ParentID
	case *ReturnFiles:
		return b.JobID
	case *CopyFiles:
		return b.JobID
	case *JobObit:
		return b.JobID
	case *GpuCtrl:
		return b.MomNode
	case *ResvID:
		if b.ID == "" {
			return b.Owner
		}
		return b.ID
	case *ResvModify:
		return b.ID
	case *ResvStatus:
		return b.ID
	}
	return ""
}
