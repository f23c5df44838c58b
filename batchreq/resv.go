package batchreq

import (
	"fmt"

	"gopbs/dis"
)

// GoPBS's own batch request types: advance reservations (issue 17, seed
// 002). They are numbered from 1000, far outside TORQUE's 0–62 (and the
// types later PBS versions added), so that no TORQUE program can take
// one for its own; a TORQUE 2.5.13 server answers them PBSE_DISPROTO, as
// any type out of its range. ReadRequest and ReadServerRequest keep
// refusing them as TORQUE does; ReadAnyRequest decodes them.
//
// plus_account needs no request: it reads the accounting files, as
// tracejob does.
const (
	PBS_BATCH_ResvSubmit     = 1000 // plus_reserve: ResvSubmit body; reply Queue with the id
	PBS_BATCH_ResvCommit     = 1001 // plus_commit: ResvID body
	PBS_BATCH_ResvAbort      = 1002 // plus_abort: ResvID body
	PBS_BATCH_ResvModify     = 1003 // plus_modify: ResvModify body
	PBS_BATCH_ResvCancel     = 1004 // plus_cancel: ResvID body
	PBS_BATCH_ResvDestroy    = 1005 // plus_destroy: ResvID body
	PBS_BATCH_ResvStatus     = 1006 // plus_status: ResvStatus body; reply Status of MGR_OBJ_RESV objects
	PBS_BATCH_ResvAvailNodes = 1007 // plus_availnodes: ResvAvail body; reply Status of MGR_OBJ_NODE objects

	// PBS_BATCH_GoPBSFirst and PBS_BATCH_GoPBSCeiling bound GoPBS's own
	// request types: first … ceiling-1.
	PBS_BATCH_GoPBSFirst   = PBS_BATCH_ResvSubmit
	PBS_BATCH_GoPBSCeiling = PBS_BATCH_SchedHello + 1
)

// MGR_OBJ_RESV is the object type of reservations in Status replies, a
// GoPBS value outside TORQUE's object types.
const MGR_OBJ_RESV = 1000

// Flags of reservation requests.
const (
	// ResvFlagTransaction asks for a two-phase operation (-T): the server
	// keeps it pending until ResvCommit or ResvAbort (seed §2.4).
	ResvFlagTransaction = 1
)

// Attribute names of reservations, in ResvSubmit, ResvModify and Status
// replies. Times are seconds since the epoch; lists are comma-separated
// (users) or "+"-separated (nodes), as TORQUE writes its lists.
const (
	ATTR_resv_owner     = "resv_owner"      // status: the owner
	ATTR_resv_users     = "resv_users"      // -U: users besides the owner, "u1,u2"
	ATTR_resv_start     = "resv_start"      // -s
	ATTR_resv_end       = "resv_end"        // -e, or the start plus -D
	ATTR_resv_duration  = "resv_duration"   // status: end - start, seconds
	ATTR_resv_nodect    = "resv_nodect"     // -n count
	ATTR_resv_nodes     = "resv_nodes"      // -n node list, "n1+n2"
	ATTR_resv_mem       = "resv_mem"        // -mem, bytes
	ATTR_resv_ncpu      = "resv_ncpu"       // -ncpu
	ATTR_resv_slots     = "resv_slots"      // -sn
	ATTR_resv_arch      = "resv_arch"       // -arch
	ATTR_resv_opsys     = "resv_opsys"      // -os
	ATTR_resv_resources = "resv_resources"  // -l, "attr=value,prop"
	ATTR_resv_partition = "resv_partition"  // -partition: the partition whose nodes it holds (seed 003)
	ATTR_resv_state     = "resv_state"      // status: WAIT_COMMIT, CONFIRMED, RUNNING, DONE, CANCELED
	ATTR_resv_pending   = "resv_pending"    // status: the operation waiting for commit (reserve, modify, cancel, destroy)
	ATTR_resv_exec      = "resv_exec_nodes" // status: the nodes assigned, "n1+n2"
	ATTR_resv_ctime     = "resv_ctime"      // status: when it was made
)

var goPBSRequestNames = [...]string{
	PBS_BATCH_ResvSubmit - PBS_BATCH_GoPBSFirst:     "ResvSubmit",
	PBS_BATCH_ResvCommit - PBS_BATCH_GoPBSFirst:     "ResvCommit",
	PBS_BATCH_ResvAbort - PBS_BATCH_GoPBSFirst:      "ResvAbort",
	PBS_BATCH_ResvModify - PBS_BATCH_GoPBSFirst:     "ResvModify",
	PBS_BATCH_ResvCancel - PBS_BATCH_GoPBSFirst:     "ResvCancel",
	PBS_BATCH_ResvDestroy - PBS_BATCH_GoPBSFirst:    "ResvDestroy",
	PBS_BATCH_ResvStatus - PBS_BATCH_GoPBSFirst:     "ResvStatus",
	PBS_BATCH_ResvAvailNodes - PBS_BATCH_GoPBSFirst: "ResvAvailNodes",
	PBS_BATCH_StatusSched - PBS_BATCH_GoPBSFirst:    "StatusSched",
	PBS_BATCH_SchedHello - PBS_BATCH_GoPBSFirst:     "SchedHello",
}

// IsGoPBSRequest reports whether reqType is one of GoPBS's own request
// types.
func IsGoPBSRequest(reqType int) bool {
	return reqType >= PBS_BATCH_GoPBSFirst && reqType < PBS_BATCH_GoPBSCeiling &&
		goPBSRequestNames[reqType-PBS_BATCH_GoPBSFirst] != ""
}

// newGoPBSBody returns the body of a GoPBS request type, or nil.
func newGoPBSBody(reqType int) Body {
	switch reqType {
	case PBS_BATCH_ResvSubmit:
		return new(ResvSubmit)
	case PBS_BATCH_ResvCommit, PBS_BATCH_ResvAbort, PBS_BATCH_ResvCancel, PBS_BATCH_ResvDestroy:
		return new(ResvID)
	case PBS_BATCH_ResvModify:
		return new(ResvModify)
	case PBS_BATCH_ResvStatus:
		return new(ResvStatus)
	case PBS_BATCH_ResvAvailNodes:
		return new(ResvAvail)
	case PBS_BATCH_StatusSched, PBS_BATCH_SchedHello:
		return new(StatusReq)
	}
	return nil
}

// ReadAnyRequest decodes one request of any type this package knows:
// TORQUE's, as ReadRequest, and GoPBS's own (IsGoPBSRequest). pbsdump and
// fake servers in tests read with it.
func ReadAnyRequest(r *dis.Reader) (*Request, error) {
	return readRequestIn(r, func(t int) bool {
		return NewBody(t) != nil || t == PBS_BATCH_Disconnect || IsGoPBSRequest(t)
	}, true)
}

// capResvID bounds reservation ids and owner names in requests.
const capResvID = capJobID

// ResvSubmit is the body of ResvSubmit: the reservation's attributes
// (ATTR_resv_*) and flags (ResvFlagTransaction).
type ResvSubmit struct {
	Flags int
	Attrs AttrList
}

// Append implements Body.
func (b *ResvSubmit) Append(dst []byte) []byte {
	dst = appendU(dst, b.Flags)
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *ResvSubmit) Decode(r *dis.Reader) (err error) {
	if b.Flags, err = readU(r, "flags"); err != nil {
		return err
	}
	b.Attrs, err = readAttrs(r)
	return err
}

// ResvID is the body of ResvCommit, ResvAbort, ResvCancel and
// ResvDestroy: a reservation id, or (cancel and destroy with -o) an owner
// whose reservations are meant, and flags.
type ResvID struct {
	ID    string // "R12", or "" with Owner
	Owner string // "" unless -o
	Flags int
}

// Append implements Body.
func (b *ResvID) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.ID)
	dst = dis.AppendString(dst, b.Owner)
	return appendU(dst, b.Flags)
}

// Decode implements Body.
func (b *ResvID) Decode(r *dis.Reader) (err error) {
	if b.ID, err = readStr(r, capResvID, "reservation id"); err != nil {
		return err
	}
	if b.Owner, err = readStr(r, capUser, "owner"); err != nil {
		return err
	}
	b.Flags, err = readU(r, "flags")
	return err
}

// ResvModify is the body of ResvModify: the reservation, flags and the
// attributes to change (resv_start, resv_end, resv_nodect, resv_users;
// an empty resv_users clears the list).
type ResvModify struct {
	ID    string
	Flags int
	Attrs AttrList
}

// Append implements Body.
func (b *ResvModify) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.ID)
	dst = appendU(dst, b.Flags)
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *ResvModify) Decode(r *dis.Reader) (err error) {
	if b.ID, err = readStr(r, capResvID, "reservation id"); err != nil {
		return err
	}
	if b.Flags, err = readU(r, "flags"); err != nil {
		return err
	}
	b.Attrs, err = readAttrs(r)
	return err
}

// ResvStatus is the body of ResvStatus: which reservations to show.
// Zero values select everything: ID "" all ids, Owner "" all owners,
// Start/End 0 no window (else reservations overlapping [Start, End),
// seconds since the epoch). Expired is how many of the most recently
// ended or cancelled reservations to include (-ne); -1 is the server's
// default.
type ResvStatus struct {
	ID      string
	Owner   string
	Start   int64
	End     int64
	Expired int
}

// Append implements Body.
func (b *ResvStatus) Append(dst []byte) []byte {
	dst = dis.AppendString(dst, b.ID)
	dst = dis.AppendString(dst, b.Owner)
	dst = appendS(dst, b.Start)
	dst = appendS(dst, b.End)
	return appendS(dst, int64(b.Expired))
}

// Decode implements Body.
func (b *ResvStatus) Decode(r *dis.Reader) (err error) {
	if b.ID, err = readStr(r, capResvID, "reservation id"); err != nil {
		return err
	}
	if b.Owner, err = readStr(r, capUser, "owner"); err != nil {
		return err
	}
	if b.Start, err = r.Int64(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if b.End, err = r.Int64(); err != nil {
		return fmt.Errorf("end: %w", err)
	}
	b.Expired, err = readS(r, "expired")
	return err
}

// ResvAvail is the body of ResvAvailNodes: a window (seconds since the
// epoch) and the per-node requirements (resv_mem, resv_ncpu, ...), for
// the nodes that could be reserved in it.
type ResvAvail struct {
	Start int64
	End   int64
	Attrs AttrList
}

// Append implements Body.
func (b *ResvAvail) Append(dst []byte) []byte {
	dst = appendS(dst, b.Start)
	dst = appendS(dst, b.End)
	return b.Attrs.Append(dst)
}

// Decode implements Body.
func (b *ResvAvail) Decode(r *dis.Reader) (err error) {
	if b.Start, err = r.Int64(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if b.End, err = r.Int64(); err != nil {
		return fmt.Errorf("end: %w", err)
	}
	b.Attrs, err = readAttrs(r)
	return err
}
