package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Layout of a TORQUE 2.5.13 job file on x86_64 (spec 13 §6.1, §2.1).
const (
	jobFixedSize   = 2240 // fixed part; attribute records follow
	attrHeaderSize = 88   // header of every attribute record
	attrEndMarker  = -711 // tsize of the end-of-attributes header

	offVersion  = 0
	offState    = 4
	offSubstate = 8
	offSvrflags = 12
	offOrdering = 20
	offPriority = 24
	offStime    = 32
	offJobID    = 40
	lenJobID    = 1047
	offPrefix   = 1087
	lenPrefix   = 62
	offQueue    = 1149
	lenQueue    = 16
	offDestin   = 1165
	lenDestin   = 1047
	offUnType   = 2212
	offUnion    = 2216
)

// Union members of the fixed part (spec 13 §6.2).
const (
	unionNew   = 0
	unionExec  = 1
	unionRoute = 2
	unionMom   = 3
)

// torqueJob is a decoded TORQUE job file.
type torqueJob struct {
	Version  uint32
	State    int32
	Substate int32
	Svrflags int32
	Ordering int32
	Priority int32
	Stime    int64
	JobID    string
	Prefix   string
	Queue    string
	Destin   string
	UnType   int32
	Union    [24]byte
	Attrs    []jobAttr
	// Extra holds the bytes after the end marker (a MOM's copy of an
	// interactive or TM job keeps four integers there).
	Extra []byte
}

// jobAttr is one attribute record.
type jobAttr struct {
	Name, Resource, Value string
	Flags                 uint32
}

// errNotTorque reports data that does not start like a TORQUE job file.
var errNotTorque = errors.New("not a TORQUE job file")

// isTorqueJob reports whether b starts with a TORQUE 2.x quick-save
// version word (0x0002xxxx, little-endian).
func isTorqueJob(b []byte) bool {
	return len(b) >= 4 && b[2] == 0x02 && b[3] == 0x00
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parseTorqueJob decodes a TORQUE job file. A file cut short in the
// attribute section returns the job decoded so far and an error wrapping
// io.ErrUnexpectedEOF.
func parseTorqueJob(b []byte) (*torqueJob, error) {
	if !isTorqueJob(b) {
		return nil, errNotTorque
	}
	if len(b) < jobFixedSize {
		return nil, fmt.Errorf("job file of %d bytes is shorter than its fixed part (%d): %w", len(b), jobFixedSize, io.ErrUnexpectedEOF)
	}
	le := binary.LittleEndian
	j := &torqueJob{
		Version:  le.Uint32(b[offVersion:]),
		State:    int32(le.Uint32(b[offState:])),
		Substate: int32(le.Uint32(b[offSubstate:])),
		Svrflags: int32(le.Uint32(b[offSvrflags:])),
		Ordering: int32(le.Uint32(b[offOrdering:])),
		Priority: int32(le.Uint32(b[offPriority:])),
		Stime:    int64(le.Uint64(b[offStime:])),
		JobID:    cstring(b[offJobID : offJobID+lenJobID]),
		Prefix:   cstring(b[offPrefix : offPrefix+lenPrefix]),
		Queue:    cstring(b[offQueue : offQueue+lenQueue]),
		Destin:   cstring(b[offDestin : offDestin+lenDestin]),
		UnType:   int32(le.Uint32(b[offUnType:])),
	}
	copy(j.Union[:], b[offUnion:jobFixedSize])
	rest := b[jobFixedSize:]
	off := jobFixedSize
	for {
		if len(rest) < attrHeaderSize {
			return j, fmt.Errorf("attribute header at offset %d: %w", off, io.ErrUnexpectedEOF)
		}
		tsize := int32(le.Uint32(rest[64:]))
		if tsize == attrEndMarker {
			j.Extra = rest[attrHeaderSize:]
			return j, nil
		}
		nameln := int32(le.Uint32(rest[68:]))
		rescln := int32(le.Uint32(rest[72:]))
		valln := int32(le.Uint32(rest[76:]))
		flags := le.Uint32(rest[80:]) & 0xffff
		if tsize <= attrHeaderSize || nameln <= 0 || rescln < 0 || valln < 0 ||
			int64(nameln)+int64(rescln)+int64(valln) != int64(tsize)-attrHeaderSize {
			return j, fmt.Errorf("corrupt attribute record at offset %d (size %d, lengths %d/%d/%d)", off, tsize, nameln, rescln, valln)
		}
		if int(tsize) > len(rest) {
			return j, fmt.Errorf("attribute record at offset %d needs %d bytes, %d left: %w", off, tsize, len(rest), io.ErrUnexpectedEOF)
		}
		data := rest[attrHeaderSize:tsize]
		a := jobAttr{Name: cstring(data[:nameln]), Flags: flags}
		data = data[nameln:]
		if rescln > 0 {
			a.Resource = cstring(data[:rescln])
		}
		a.Value = cstring(data[rescln:])
		j.Attrs = append(j.Attrs, a)
		rest = rest[tsize:]
		off += int(tsize)
	}
}

// appendAttrRecord appends the record of one attribute (test helper and
// the inverse of the reader): zeroed pointers, lengths including NULs.
func appendAttrRecord(dst []byte, a jobAttr) []byte {
	nameln := len(a.Name) + 1
	rescln := 0
	if a.Resource != "" {
		rescln = len(a.Resource) + 1
	}
	valln := len(a.Value) + 1
	var h [attrHeaderSize]byte
	le := binary.LittleEndian
	le.PutUint32(h[64:], uint32(attrHeaderSize+nameln+rescln+valln))
	le.PutUint32(h[68:], uint32(nameln))
	le.PutUint32(h[72:], uint32(rescln))
	le.PutUint32(h[76:], uint32(valln))
	le.PutUint32(h[80:], a.Flags)
	dst = append(dst, h[:]...)
	dst = append(append(dst, a.Name...), 0)
	if rescln > 0 {
		dst = append(append(dst, a.Resource...), 0)
	}
	return append(append(dst, a.Value...), 0)
}

// appendEndMarker appends the end-of-attributes header.
func appendEndMarker(dst []byte) []byte {
	var h [attrHeaderSize]byte
	binary.LittleEndian.PutUint32(h[64:], uint32(0xFFFFFD39))
	return append(dst, h[:]...)
}

const rule = "---------------------------------------------------\n"

// print writes the job as TORQUE's printjob does (the layout of the
// capture's "printjob 2.vm.JB"): the fixed part, then every attribute as
// "name[.resource] = value". With noAttrs only the fixed part is printed.
func (j *torqueJob) print(w io.Writer, noAttrs bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sjobid:\t%s\n%s", rule, j.JobID, rule)
	fmt.Fprintf(&b, "ji_qs version:\t0x%08x\n", j.Version)
	fmt.Fprintf(&b, "state:\t\t0x%x\n", j.State)
	fmt.Fprintf(&b, "substate:\t0x%x (%d)\n", j.Substate, j.Substate)
	fmt.Fprintf(&b, "svrflgs:\t0x%x (%d)\n", j.Svrflags, j.Svrflags)
	fmt.Fprintf(&b, "ordering:\t%d\n", j.Ordering)
	fmt.Fprintf(&b, "inter prior:\t%d\n", j.Priority)
	fmt.Fprintf(&b, "stime:\t\t%d\n", j.Stime)
	fmt.Fprintf(&b, "file base:\t%s\n", j.Prefix)
	fmt.Fprintf(&b, "queue:\t\t%s\n", j.Queue)
	fmt.Fprintf(&b, "destin:\t\t%s\n", j.Destin)
	le := binary.LittleEndian
	u := j.Union[:]
	switch j.UnType {
	case unionNew:
		fmt.Fprintf(&b, "union type new:\n\tfromsock\t%d\n\tfromaddr\t%s\n\tscriptsz\t%d\n",
			int32(le.Uint32(u[8:])), ipv4(le.Uint64(u[0:])), int32(le.Uint32(u[12:])))
	case unionExec:
		fmt.Fprintf(&b, "union type exec:\n\tmomaddr\t%d\n\texits\t%d\n", le.Uint64(u[0:]), int32(le.Uint32(u[8:])))
	case unionRoute:
		fmt.Fprintf(&b, "union type route:\n\tquetime\t%d\n\tretry\t%d\n", int64(le.Uint64(u[0:])), int64(le.Uint64(u[8:])))
	case unionMom:
		fmt.Fprintf(&b, "union type mom:\n\tsvraddr\t%d\n\texitst\t%d\n\tuid\t%d\n\tgid\t%d\n",
			le.Uint64(u[0:]), int32(le.Uint32(u[8:])), le.Uint32(u[12:]), le.Uint32(u[16:]))
	default:
		fmt.Fprintf(&b, "union type %d: unknown\n", j.UnType)
	}
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			writeAttr(&b, a.Name, a.Resource, a.Value)
		}
		if len(j.Extra) >= 16 {
			fmt.Fprintf(&b, "--mom tm info--\nstdout\t%d\nstderr\t%d\ntaskid\t%d\nnodeid\t%d\n",
				int32(le.Uint32(j.Extra[0:])), int32(le.Uint32(j.Extra[4:])),
				int32(le.Uint32(j.Extra[8:])), int32(le.Uint32(j.Extra[12:])))
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// ipv4 formats an address kept in host order in a 64-bit field.
func ipv4(v uint64) string {
	return fmt.Sprintf("%d.%d.%d.%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// writeAttr writes the line "name[.resource] = value" of an attribute
// list (no resource part when resource is empty).
func writeAttr(b *strings.Builder, name, resource, value string) {
	b.WriteString(name)
	if resource != "" {
		b.WriteString(".")
		b.WriteString(resource)
	}
	b.WriteString(" = ")
	b.WriteString(value)
	b.WriteString("\n")
}
