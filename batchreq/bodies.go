package batchreq

import (
	"fmt"

	"gopbs/dis"
)

// appendInt appends a C int pushed through the unsigned encoder: its
// 32-bit two's complement (spec 01 §3).
func appendU(dst []byte, v int) []byte { return dis.AppendUint(dst, dis.Wrap32(v)) }

// appendS appends a signed integer.
func appendS(dst []byte, v int64) []byte { return dis.AppendInt(dst, v) }

// readU reads an unsigned 32-bit item and returns it as the C int it is
// cast back to by receivers (4294967295 becomes -1).
func readU(r *dis.Reader, what string) (int, error) {
	v, err := r.Uint32()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return int(int32(v)), nil
}

// readCount reads an unsigned count.
func readCount(r *dis.Reader, what string) (int, error) {
	v, err := r.Uint32()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return int(v), nil
}

func readS(r *dis.Reader, what string) (int, error) {
	v, err := r.Int()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

func readStr(r *dis.Reader, capacity int, what string) (string, error) {
	var s string
	var err error
	if capacity < 0 {
		s, err = r.Str()
	} else {
		s, err = r.StrMax(capacity)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return s, nil
}

func readAttrs(r *dis.Reader) (AttrList, error) {
	l, err := ReadAttrList(r)
	if err != nil {
		return nil, fmt.Errorf("attribute list: %w", err)
	}
	return l, nil
}

// QueueJob is the body of QueueJob (1): a new job's id (empty from
// clients), its destination and its attributes (spec 02 §3.3).
type QueueJob struct {
	JobID       string
	Destination string
	Attrs       AttrList
}

// Append implements Body.
func (b *QueueJob) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = dis.AppendString(dst, b.Destination)
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *QueueJob) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	if b.Destination, err = readStr(r, capJobID, "destination"); err != nil {
		return err
	}
	b.Attrs, err = readAttrs(r)
	return err
}

// JobCred is the body of JobCred (2) (spec 02 §3.4).
type JobCred struct {
	CredType int // PBS_CREDTYPE_NONE
	Data     []byte
}

// Append implements Body.
func (b *JobCred) Append(dst []byte) []byte {
	dst = appendU(dst, b.CredType)
	return dis.AppendBytes(dst, b.Data)
}

// Decode implements Body.
func (b *JobCred) Decode(r *dis.Reader) (err error) {
	if b.CredType, err = readU(r, "credential type"); err != nil {
		return err
	}
	if b.Data, err = r.Bytes(); err != nil {
		return fmt.Errorf("credential: %w", err)
	}
	return nil
}

// JobFile is the body of JobScript (3) and MvJobFile (57): one chunk of a
// job file (spec 02 §3.5). The chunk's size field is len(Data).
type JobFile struct {
	Seq      int // chunk number from 0
	FileType int // JScript, StdIn, StdOut, StdErr, Chkpt
	JobID    string
	Data     []byte
}

// Append implements Body.
func (b *JobFile) Append(dst []byte) []byte {
	dst = appendU(dst, b.Seq)
	dst = appendU(dst, b.FileType)
	dst = dis.AppendUint(dst, uint64(len(b.Data)))
	dst = dis.AppendString(dst, b.JobID)
	return dis.AppendBytes(dst, b.Data)
}

// Decode implements Body.
func (b *JobFile) Decode(r *dis.Reader) (err error) {
	if b.Seq, err = readU(r, "sequence"); err != nil {
		return err
	}
	if b.FileType, err = readU(r, "file type"); err != nil {
		return err
	}
	size, err := readCount(r, "size")
	if err != nil {
		return err
	}
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	if b.Data, err = r.Bytes(); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if len(b.Data) != size {
		return fmt.Errorf("data: %d bytes, size field %d: %w", len(b.Data), size, dis.ErrEOD)
	}
	return nil
}

// JobID is the body of RdytoCommit (4), Commit (5), LocateJob (8) and
// Rerun (14): a job id (spec 02 §3.1).
type JobID struct {
	ID string
}

// Append implements Body.
func (b *JobID) Append(dst []byte) []byte { return dis.AppendString(dst, b.ID) }

// Decode implements Body.
func (b *JobID) Decode(r *dis.Reader) (err error) {
	b.ID, err = readStr(r, capJobID, "job id")
	return err
}

// Manage is the body of DeleteJob (6), HoldJob (7), Manager (9),
// ModifyJob (11), ReleaseJob (13), CheckpointJob (27) and AsyModifyJob
// (28) (spec 02 §3.2).
type Manage struct {
	Command int // MGR_CMD_*
	ObjType int // MGR_OBJ_*
	ObjName string
	Attrs   AttrList
}

// Append implements Body.
func (b *Manage) Append(dst []byte) []byte {
	dst = appendU(dst, b.Command)
	dst = appendU(dst, b.ObjType)
	dst = dis.AppendString(dst, b.ObjName)
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *Manage) Decode(r *dis.Reader) (err error) {
	if b.Command, err = readU(r, "command"); err != nil {
		return err
	}
	if b.ObjType, err = readU(r, "object type"); err != nil {
		return err
	}
	if b.ObjName, err = readStr(r, capJobID, "object name"); err != nil {
		return err
	}
	b.Attrs, err = readAttrs(r)
	return err
}

// MessJob is the body of MessJob (10) (spec 02 §3.6).
type MessJob struct {
	JobID   string
	FileOpt int // MSG_OUT, MSG_ERR or both
	Message string
}

// Append implements Body.
func (b *MessJob) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = appendU(dst, b.FileOpt)
	return dis.AppendString(dst, b.Message)
}

// Decode implements Body.
func (b *MessJob) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	if b.FileOpt, err = readU(r, "file option"); err != nil {
		return err
	}
	b.Message, err = readStr(r, -1, "message")
	return err
}

// MoveJob is the body of MoveJob (12) and OrderJob (50); for OrderJob
// Destination holds the second job id (spec 02 §3.7).
type MoveJob struct {
	JobID       string
	Destination string
}

// Append implements Body.
func (b *MoveJob) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	return dis.AppendString(dst, b.Destination)
}

// Decode implements Body.
func (b *MoveJob) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	b.Destination, err = readStr(r, capDest, "destination")
	return err
}

// RunJob is the body of RunJob (15), AsyrunJob (23) and StageIn (48)
// (spec 02 §3.8).
type RunJob struct {
	JobID          string
	Destination    string // "" lets the server choose
	ResourceHandle int    // always 0 from clients
}

// Append implements Body.
func (b *RunJob) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = dis.AppendString(dst, b.Destination)
	return appendU(dst, b.ResourceHandle)
}

// Decode implements Body.
func (b *RunJob) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	if b.Destination, err = readStr(r, -1, "destination"); err != nil {
		return err
	}
	b.ResourceHandle, err = readU(r, "resource handle")
	return err
}

// Select is the body of SelectJobs (16) and SelStat (51): the selection
// criteria (spec 02 §3.9).
type Select struct {
	Attrs AttrList
}

// Append implements Body.
func (b *Select) Append(dst []byte) []byte { return b.Attrs.Append(dst) }

// Decode implements Body.
func (b *Select) Decode(r *dis.Reader) (err error) {
	b.Attrs, err = readAttrs(r)
	return err
}

// Shutdown is the body of Shutdown (17) (spec 02 §3.10).
type Shutdown struct {
	Manner int // SHUT_IMMEDIATE, SHUT_DELAY, SHUT_QUICK
}

// Append implements Body.
func (b *Shutdown) Append(dst []byte) []byte { return appendU(dst, b.Manner) }

// Decode implements Body.
func (b *Shutdown) Decode(r *dis.Reader) (err error) {
	b.Manner, err = readU(r, "manner")
	return err
}

// SignalJob is the body of SignalJob (18) (spec 02 §3.11).
type SignalJob struct {
	JobID  string
	Signal string // "SIGTERM", "9", "suspend", "resume", ...
}

// Append implements Body.
func (b *SignalJob) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	return dis.AppendString(dst, b.Signal)
}

// Decode implements Body.
func (b *SignalJob) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	b.Signal, err = readStr(r, capSignal, "signal")
	return err
}

// StatusReq is the body of StatusJob (19), StatusQue (20), StatusSvr (21)
// and StatusNode (58): the object id and the wanted attributes (empty =
// all) (spec 02 §3.12). Build Attrs with StatusNames to get the sizes
// clients send.
type StatusReq struct {
	ID    string
	Attrs AttrList
}

// Append implements Body.
func (b *StatusReq) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.ID)
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *StatusReq) Decode(r *dis.Reader) (err error) {
	if b.ID, err = readStr(r, capJobID, "object id"); err != nil {
		return err
	}
	b.Attrs, err = readAttrs(r)
	return err
}

// TrackJob is the body of TrackJob (22), server to server (spec 02
// §3.13).
type TrackJob struct {
	JobID    string
	HopCount int
	Location string
	State    byte // job state letter
}

// Append implements Body.
func (b *TrackJob) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = appendU(dst, b.HopCount)
	dst = dis.AppendString(dst, b.Location)
	return dis.AppendUint(dst, uint64(b.State))
}

// Decode implements Body.
func (b *TrackJob) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capJobID, "job id"); err != nil {
		return err
	}
	if b.HopCount, err = readU(r, "hop count"); err != nil {
		return err
	}
	if b.Location, err = readStr(r, capDest, "location"); err != nil {
		return err
	}
	st, err := r.Uint32()
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if st > 255 {
		return fmt.Errorf("state %d: %w", st, dis.ErrOverflow)
	}
	b.State = byte(st)
	return nil
}

// Resc is the body of Rescq (24), ReserveResc (25) and ReleaseResc (26)
// (spec 02 §3.14).
type Resc struct {
	Handle  int      // 0 for a query or a new reservation
	Queries []string // e.g. "nodes=2:ppn=4"
}

// Append implements Body.
func (b *Resc) Append(dst []byte) []byte {
	dst = appendS(dst, int64(b.Handle))
	dst = dis.AppendUint(dst, uint64(len(b.Queries)))
	for _, s := range b.Queries {
		dst = dis.AppendString(dst, s)
	}
	return dst
}

// Decode implements Body.
func (b *Resc) Decode(r *dis.Reader) (err error) {
	if b.Handle, err = readS(r, "handle"); err != nil {
		return err
	}
	n, err := readCount(r, "count")
	if err != nil {
		return err
	}
	b.Queries = make([]string, 0, min(n, maxPrealloc))
	for i := 0; i < n; i++ {
		s, err := readStr(r, -1, "resource query")
		if err != nil {
			return err
		}
		b.Queries = append(b.Queries, s)
	}
	return nil
}

// AuthenUser is the body of AuthenUser (49): the client-side port of the
// connection to authenticate (spec 02 §3.15, spec 03).
type AuthenUser struct {
	Port int
}

// Append implements Body.
func (b *AuthenUser) Append(dst []byte) []byte { return appendU(dst, b.Port) }

// Decode implements Body.
func (b *AuthenUser) Decode(r *dis.Reader) (err error) {
	b.Port, err = readCount(r, "port")
	return err
}

// RegistDep is the body of RegistDep (52), server to server (spec 02
// §3.16).
type RegistDep struct {
	Owner    string
	ParentID string
	ChildID  string
	DepType  int // JOB_DEPEND_TYPE_*
	Op       int // JOB_DEPEND_OP_*
	Cost     int64
}

// Append implements Body.
func (b *RegistDep) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.Owner)
	dst = dis.AppendString(dst, b.ParentID)
	dst = dis.AppendString(dst, b.ChildID)
	dst = appendU(dst, b.DepType)
	dst = appendU(dst, b.Op)
	return appendS(dst, b.Cost)
}

// Decode implements Body.
func (b *RegistDep) Decode(r *dis.Reader) (err error) {
	if b.Owner, err = readStr(r, PBS_MAXUSER, "owner"); err != nil {
		return err
	}
	if b.ParentID, err = readStr(r, capSvrJobID, "parent job id"); err != nil {
		return err
	}
	if b.ChildID, err = readStr(r, capCltJobID, "child job id"); err != nil {
		return err
	}
	if b.DepType, err = readU(r, "dependency type"); err != nil {
		return err
	}
	if b.Op, err = readU(r, "operation"); err != nil {
		return err
	}
	if b.Cost, err = r.Int64(); err != nil {
		return fmt.Errorf("cost: %w", err)
	}
	return nil
}

// ReturnFiles is the body of ReturnFiles (53), server to MOM (spec 02
// §3.17). The flags are C booleans (0 or 1).
type ReturnFiles struct {
	JobID        string
	ReturnStdout int
	ReturnStderr int
}

// Append implements Body.
func (b *ReturnFiles) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = appendS(dst, int64(b.ReturnStdout))
	return appendS(dst, int64(b.ReturnStderr))
}

// Decode implements Body.
func (b *ReturnFiles) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capSvrJobID, "job id"); err != nil {
		return err
	}
	if b.ReturnStdout, err = readS(r, "return stdout"); err != nil {
		return err
	}
	b.ReturnStderr, err = readS(r, "return stderr")
	return err
}

// FilePair is one file of a CopyFiles or DelFiles request.
type FilePair struct {
	Flag   int    // STDJOBFILE, JOBCKPFILE or STAGEFILE
	Local  string // spool file name or local path
	Remote string // host:path, "" if none
}

// CopyFiles is the body of CopyFiles (54) and DelFiles (55), server to
// MOM (spec 02 §3.18). ExecGroup may be empty.
type CopyFiles struct {
	JobID     string
	Owner     string
	ExecUser  string
	ExecGroup string
	Direction int // STAGE_DIR_IN, STAGE_DIR_OUT, CKPT_DIR_IN, CKPT_DIR_OUT
	Pairs     []FilePair
}

// Append implements Body.
func (b *CopyFiles) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = dis.AppendString(dst, b.Owner)
	dst = dis.AppendString(dst, b.ExecUser)
	dst = dis.AppendString(dst, b.ExecGroup)
	dst = appendU(dst, b.Direction)
	dst = dis.AppendUint(dst, uint64(len(b.Pairs)))
	for _, p := range b.Pairs {
		dst = appendU(dst, p.Flag)
		dst = dis.AppendString(dst, p.Local)
		dst = dis.AppendString(dst, p.Remote)
	}
	return dst
}

// Decode implements Body.
func (b *CopyFiles) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capSvrJobID, "job id"); err != nil {
		return err
	}
	if b.Owner, err = readStr(r, PBS_MAXUSER, "owner"); err != nil {
		return err
	}
	if b.ExecUser, err = readStr(r, PBS_MAXUSER, "execution user"); err != nil {
		return err
	}
	if b.ExecGroup, err = readStr(r, capGroup, "execution group"); err != nil {
		return err
	}
	if b.Direction, err = readU(r, "direction"); err != nil {
		return err
	}
	n, err := readCount(r, "pair count")
	if err != nil {
		return err
	}
	b.Pairs = make([]FilePair, 0, min(n, maxPrealloc))
	for i := 0; i < n; i++ {
		var p FilePair
		if p.Flag, err = readU(r, "pair flag"); err != nil {
			return err
		}
		if p.Local, err = readStr(r, -1, "local file"); err != nil {
			return err
		}
		if p.Remote, err = readStr(r, -1, "remote file"); err != nil {
			return err
		}
		b.Pairs = append(b.Pairs, p)
	}
	return nil
}

// JobObit is the body of JobObit (56), MOM to server (spec 02 §3.19).
type JobObit struct {
	JobID      string
	ExitStatus int
	Attrs      AttrList // resources_used.* and unsent "send once" attributes
}

// Append implements Body.
func (b *JobObit) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.JobID)
	dst = appendS(dst, int64(b.ExitStatus))
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *JobObit) Decode(r *dis.Reader) (err error) {
	if b.JobID, err = readStr(r, capSvrJobID, "job id"); err != nil {
		return err
	}
	if b.ExitStatus, err = readS(r, "exit status"); err != nil {
		return err
	}
	b.Attrs, err = readAttrs(r)
	return err
}

// AltAuthenUser is the body of AltAuthenUser (61), the MUNGE variant of
// AuthenUser (spec 02 §3.21).
type AltAuthenUser struct {
	Port       int
	Credential string
}

// Append implements Body.
func (b *AltAuthenUser) Append(dst []byte) []byte {
	dst = appendU(dst, b.Port)
	return dis.AppendString(dst, b.Credential)
}

// Decode implements Body.
func (b *AltAuthenUser) Decode(r *dis.Reader) (err error) {
	if b.Port, err = readCount(r, "port"); err != nil {
		return err
	}
	b.Credential, err = readStr(r, capMungeCred, "credential")
	return err
}

// GpuCtrl is the body of GpuCtrl (62) (spec 02 §3.22). Mode, ResetPerm
// and ResetVol are -1 when unused (sent as 4294967295).
//
// The 2.5.13 client writes an extra extension block "+0" inside the body;
// set ClientQuirk to reproduce it when encoding. Receivers read that
// block as the request's extension and discard the real one with the
// rest of the input buffer, so Decode never sets ClientQuirk.
type GpuCtrl struct {
	MomNode     string
	GpuID       string
	Mode        int
	ResetPerm   int
	ResetVol    int
	ClientQuirk bool
}

// Append implements Body.
func (b *GpuCtrl) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.MomNode)
	dst = dis.AppendString(dst, b.GpuID)
	dst = appendU(dst, b.Mode)
	dst = appendU(dst, b.ResetPerm)
	dst = appendU(dst, b.ResetVol)
	if b.ClientQuirk {
		dst = append(dst, "+0"...)
	}
	return dst
}

// Decode implements Body.
func (b *GpuCtrl) Decode(r *dis.Reader) (err error) {
	if b.MomNode, err = readStr(r, capHost, "mom node"); err != nil {
		return err
	}
	if b.GpuID, err = readStr(r, capGPUID, "gpu id"); err != nil {
		return err
	}
	if b.Mode, err = readU(r, "gpu mode"); err != nil {
		return err
	}
	if b.ResetPerm, err = readU(r, "reset permanent"); err != nil {
		return err
	}
	b.ResetVol, err = readU(r, "reset volatile")
	return err
}
