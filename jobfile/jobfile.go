// Package jobfile reads and writes TORQUE 2.5.13 job files: the
// <prefix>.JB (and .TA) files of server_priv/jobs and mom_priv/jobs, in the
// native x86_64 layout of spec 13 §6 — a 2240-byte fixed part, attribute
// records (§2) closed by an end marker, and for some MOM copies four
// trailing integers (§6.3).
//
// The package only knows the layout; what the attributes mean, and how
// their values are converted to and from other forms, is up to the
// caller.
package jobfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// Layout of a job file on x86_64 (spec 13 §6.1, §2.1).
const (
	// FixedSize is the size of the fixed part; attribute records follow.
	FixedSize = 2240
	// AttrHeaderSize is the size of the header of every attribute record.
	AttrHeaderSize = 88
	// AttrEndMarker is the tsize of the header that ends the attributes.
	AttrEndMarker = -711
	// QSVersion is the qs_version word of a 2.5.13 job file.
	QSVersion = 0x00020302

	offVersion  = 0
	offState    = 4
	offSubstate = 8
	offSvrflags = 12
	offNumattr  = 16
	offOrdering = 20
	offPriority = 24
	offStime    = 32
	offJobID    = 40
	offPrefix   = 1087
	offQueue    = 1149
	offDestin   = 1165
	offUnType   = 2212
	offUnion    = 2216

	// Field sizes, terminating NUL included.
	JobIDSize  = 1047
	PrefixSize = 62
	QueueSize  = 16
	DestinSize = 1047
)

// Union members of the fixed part (spec 13 §6.2): the value of UnType.
const (
	UnionNew   = 0 // being received
	UnionExec  = 1 // in an execution queue (server)
	UnionRoute = 2 // in a routing queue
	UnionMom   = 3 // MOM's copy
)

// Attribute value flags stored in a record (spec 13 §2.1).
const (
	FlagSet     = 0x01
	FlagModify  = 0x02
	FlagDefault = 0x04
	FlagSend    = 0x08
)

// DependFieldSize is the fixed size (NUL padding included) of the value
// field in which TORQUE stores the depend attribute (spec 13 §2.3).
const DependFieldSize = 2085

// Job is a decoded job file.
type Job struct {
	Version  uint32
	State    int32
	Substate int32
	Svrflags int32
	Ordering int32
	Priority int32
	Stime    int64 // execution start time (seconds since the epoch)
	ID       string
	Prefix   string // file name without suffix
	Queue    string
	Destin   string
	UnType   int32
	// Union holds the 24 union bytes as stored; Mom and Exec interpret
	// them. Bytes outside the current member keep whatever they held.
	Union [24]byte
	Attrs []Attr
	// Extra holds the bytes after the end marker: a MOM's copy of an
	// interactive or TM job keeps four integers there (see TM).
	Extra []byte
}

// Attr is one attribute record. Value is taken up to its first NUL.
type Attr struct {
	Name     string
	Resource string // "" when the record has no resource part
	Value    string
	Flags    uint32
	// Size, when larger than len(Value)+1, is the size of the value field
	// written (NUL padded), as for depend (DependFieldSize).
	Size int
}

// ErrNotJobFile reports data that does not start like a TORQUE 2.x job
// file.
var ErrNotJobFile = errors.New("not a TORQUE job file")

// IsJobFile reports whether b starts with a TORQUE 2.x qs_version word
// (0x0002xxxx, little-endian).
func IsJobFile(b []byte) bool {
	return len(b) >= 4 && b[2] == 0x02 && b[3] == 0x00
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Parse decodes a job file. A file cut short or corrupt in the attribute
// section returns the job decoded so far with the error (wrapping
// io.ErrUnexpectedEOF for a short file).
func Parse(b []byte) (*Job, error) {
	if !IsJobFile(b) {
		return nil, ErrNotJobFile
	}
	if len(b) < FixedSize {
		return nil, fmt.Errorf("job file of %d bytes is shorter than its fixed part (%d): %w", len(b), FixedSize, io.ErrUnexpectedEOF)
	}
	le := binary.LittleEndian
	j := &Job{
		Version:  le.Uint32(b[offVersion:]),
		State:    int32(le.Uint32(b[offState:])),
		Substate: int32(le.Uint32(b[offSubstate:])),
		Svrflags: int32(le.Uint32(b[offSvrflags:])),
		Ordering: int32(le.Uint32(b[offOrdering:])),
		Priority: int32(le.Uint32(b[offPriority:])),
		Stime:    int64(le.Uint64(b[offStime:])),
		ID:       cstring(b[offJobID : offJobID+JobIDSize]),
		Prefix:   cstring(b[offPrefix : offPrefix+PrefixSize]),
		Queue:    cstring(b[offQueue : offQueue+QueueSize]),
		Destin:   cstring(b[offDestin : offDestin+DestinSize]),
		UnType:   int32(le.Uint32(b[offUnType:])),
	}
	copy(j.Union[:], b[offUnion:FixedSize])
	attrs, end, err := ParseAttrs(b, FixedSize)
	j.Attrs = attrs
	if err != nil {
		return j, err
	}
	if end < len(b) {
		j.Extra = append([]byte(nil), b[end:]...)
	}
	return j, nil
}

// ParseAttrs decodes the attribute records (spec 13 §2) that start at
// offset off of b, up to and including the end marker, as they follow the
// fixed part of job, queue and serverdb files. It returns the records and
// the offset just past the end marker. A corrupt record, or data that ends
// before the end marker (the error then wraps io.ErrUnexpectedEOF),
// returns the records decoded so far with the error, which names the
// offset.
func ParseAttrs(b []byte, off int) ([]Attr, int, error) {
	if off < 0 || off > len(b) {
		return nil, off, fmt.Errorf("attribute records at offset %d of %d bytes: %w", off, len(b), io.ErrUnexpectedEOF)
	}
	le := binary.LittleEndian
	rest := b[off:]
	var attrs []Attr
	for {
		if len(rest) < AttrHeaderSize {
			return attrs, off, fmt.Errorf("attribute header at offset %d: %w", off, io.ErrUnexpectedEOF)
		}
		tsize := int32(le.Uint32(rest[64:]))
		if tsize == AttrEndMarker {
			return attrs, off + AttrHeaderSize, nil
		}
		nameln := int32(le.Uint32(rest[68:]))
		rescln := int32(le.Uint32(rest[72:]))
		valln := int32(le.Uint32(rest[76:]))
		flags := le.Uint32(rest[80:]) & 0xffff
		if tsize <= AttrHeaderSize || nameln <= 0 || rescln < 0 || valln < 0 ||
			int64(nameln)+int64(rescln)+int64(valln) != int64(tsize)-AttrHeaderSize {
			return attrs, off, fmt.Errorf("corrupt attribute record at offset %d (size %d, lengths %d/%d/%d)", off, tsize, nameln, rescln, valln)
		}
		if int(tsize) > len(rest) {
			return attrs, off, fmt.Errorf("attribute record at offset %d needs %d bytes, %d left: %w", off, tsize, len(rest), io.ErrUnexpectedEOF)
		}
		data := rest[AttrHeaderSize:tsize]
		a := Attr{Name: cstring(data[:nameln]), Flags: flags, Size: int(valln)}
		data = data[nameln:]
		if rescln > 0 {
			a.Resource = cstring(data[:rescln])
		}
		a.Value = cstring(data[rescln:])
		if a.Size == len(a.Value)+1 {
			a.Size = 0
		}
		attrs = append(attrs, a)
		rest = rest[tsize:]
		off += int(tsize)
	}
}

// Marshal encodes the job file: the fixed part, every attribute record,
// the end marker and Extra. It fails when a string does not fit its
// fixed field.
func (j *Job) Marshal() ([]byte, error) {
	b := make([]byte, FixedSize, FixedSize+AttrHeaderSize*(len(j.Attrs)+1)+64*len(j.Attrs)+len(j.Extra))
	le := binary.LittleEndian
	le.PutUint32(b[offVersion:], j.Version)
	le.PutUint32(b[offState:], uint32(j.State))
	le.PutUint32(b[offSubstate:], uint32(j.Substate))
	le.PutUint32(b[offSvrflags:], uint32(j.Svrflags))
	le.PutUint32(b[offOrdering:], uint32(j.Ordering))
	le.PutUint32(b[offPriority:], uint32(j.Priority))
	le.PutUint64(b[offStime:], uint64(j.Stime))
	for _, f := range []struct {
		name string
		s    string
		off  int
		size int
	}{
		{"job id", j.ID, offJobID, JobIDSize},
		{"file prefix", j.Prefix, offPrefix, PrefixSize},
		{"queue", j.Queue, offQueue, QueueSize},
		{"destination", j.Destin, offDestin, DestinSize},
	} {
		if len(f.s) >= f.size || bytes.IndexByte([]byte(f.s), 0) >= 0 {
			return nil, fmt.Errorf("job file: %s %q does not fit %d bytes", f.name, f.s, f.size)
		}
		copy(b[f.off:], f.s)
	}
	le.PutUint32(b[offUnType:], uint32(j.UnType))
	copy(b[offUnion:], j.Union[:])
	for _, a := range j.Attrs {
		if a.Name == "" {
			return nil, fmt.Errorf("job file: attribute record without a name")
		}
		b = AppendAttr(b, a)
	}
	b = AppendEndMarker(b)
	return append(b, j.Extra...), nil
}

// AppendAttr appends the record of one attribute: zeroed pointers,
// lengths including the NULs, the value NUL-padded to a.Size.
func AppendAttr(dst []byte, a Attr) []byte {
	nameln := len(a.Name) + 1
	rescln := 0
	if a.Resource != "" {
		rescln = len(a.Resource) + 1
	}
	valln := max(len(a.Value)+1, a.Size)
	var h [AttrHeaderSize]byte
	le := binary.LittleEndian
	le.PutUint32(h[64:], uint32(AttrHeaderSize+nameln+rescln+valln))
	le.PutUint32(h[68:], uint32(nameln))
	le.PutUint32(h[72:], uint32(rescln))
	le.PutUint32(h[76:], uint32(valln))
	le.PutUint32(h[80:], a.Flags)
	dst = append(dst, h[:]...)
	dst = append(append(dst, a.Name...), 0)
	if rescln > 0 {
		dst = append(append(dst, a.Resource...), 0)
	}
	dst = append(dst, a.Value...)
	for range valln - len(a.Value) {
		dst = append(dst, 0)
	}
	return dst
}

// AppendEndMarker appends the header that ends the attribute records.
func AppendEndMarker(dst []byte) []byte {
	var h [AttrHeaderSize]byte
	binary.LittleEndian.PutUint32(h[64:], uint32(0xFFFFFD39))
	return append(dst, h[:]...)
}

// Get returns the value of the first record named name (with resource
// res, "" for none).
func (j *Job) Get(name, res string) (string, bool) {
	for _, a := range j.Attrs {
		if a.Name == name && a.Resource == res {
			return a.Value, true
		}
	}
	return "", false
}

// Mom is the MOM member of the union (UnType UnionMom).
type Mom struct {
	ServerAddr netip.Addr // the server's IPv4 address; invalid when 0
	ExitStatus int32
	UID, GID   uint32 // the job's execution user and group
}

// Exec is the execution-queue member of the union (UnType UnionExec).
type Exec struct {
	MomAddr    netip.Addr // mother superior's IPv4 address; invalid when 0
	ExitStatus int32
}

// New is the member of a job being received (UnType UnionNew).
type New struct {
	FromAddr   netip.Addr
	FromSock   int32
	ScriptSize int32
}

// Route is the routing-queue member (UnType UnionRoute).
type Route struct {
	QueueTime, RetryTime int64
}

func ipv4(v uint64) netip.Addr {
	if v == 0 || v > 0xFFFFFFFF {
		return netip.Addr{}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func hostOrder(a netip.Addr) uint64 {
	if !a.Is4() && !a.Is4In6() {
		return 0
	}
	b := a.Unmap().As4()
	return uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
}

// Mom interprets the union as the MOM member.
func (j *Job) Mom() Mom {
	le := binary.LittleEndian
	u := j.Union[:]
	return Mom{ServerAddr: ipv4(le.Uint64(u[0:])), ExitStatus: int32(le.Uint32(u[8:])),
		UID: le.Uint32(u[12:]), GID: le.Uint32(u[16:])}
}

// SetMom stores m as the union and sets UnType to UnionMom.
func (j *Job) SetMom(m Mom) {
	le := binary.LittleEndian
	u := j.Union[:]
	j.UnType = UnionMom
	le.PutUint64(u[0:], hostOrder(m.ServerAddr))
	le.PutUint32(u[8:], uint32(m.ExitStatus))
	le.PutUint32(u[12:], m.UID)
	le.PutUint32(u[16:], m.GID)
}

// Exec interprets the union as the execution-queue member.
func (j *Job) Exec() Exec {
	le := binary.LittleEndian
	return Exec{MomAddr: ipv4(le.Uint64(j.Union[0:])), ExitStatus: int32(le.Uint32(j.Union[8:]))}
}

// New interprets the union as the member of a job being received.
func (j *Job) New() New {
	le := binary.LittleEndian
	u := j.Union[:]
	return New{FromAddr: ipv4(le.Uint64(u[0:])), FromSock: int32(le.Uint32(u[8:])), ScriptSize: int32(le.Uint32(u[12:]))}
}

// Route interprets the union as the routing-queue member.
func (j *Job) Route() Route {
	le := binary.LittleEndian
	return Route{QueueTime: int64(le.Uint64(j.Union[0:])), RetryTime: int64(le.Uint64(j.Union[8:]))}
}

// TM is the information a MOM keeps after the end marker for jobs whose
// standard output goes to a port (interactive jobs, spec 13 §6.3).
type TM struct {
	Stdout, Stderr int32 // ports (or descriptors)
	NextTaskID     int32
	NodeID         int32
}

// TMSize is the size of the trailing TM information.
const TMSize = 16

// TM decodes the trailing TM information; ok is false when the file has
// none.
func (j *Job) TM() (tm TM, ok bool) {
	if len(j.Extra) < TMSize {
		return TM{}, false
	}
	le := binary.LittleEndian
	return TM{Stdout: int32(le.Uint32(j.Extra[0:])), Stderr: int32(le.Uint32(j.Extra[4:])),
		NextTaskID: int32(le.Uint32(j.Extra[8:])), NodeID: int32(le.Uint32(j.Extra[12:]))}, true
}

// SetTM stores tm as the trailing information.
func (j *Job) SetTM(tm TM) {
	b := make([]byte, TMSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(tm.Stdout))
	le.PutUint32(b[4:], uint32(tm.Stderr))
	le.PutUint32(b[8:], uint32(tm.NextTaskID))
	le.PutUint32(b[12:], uint32(tm.NodeID))
	j.Extra = b
}
