package torque

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"gopbs/jobfile"
)

// ServerDB is the decoded serverdb file (spec 13 §3.1).
type ServerDB struct {
	NumJobs, NumQueues int32
	// NextJobID is the next job sequence number; it overrides a saved
	// next_job_number attribute.
	NextJobID int32
	SaveTime  int64 // Unix time of the save
	Attrs     []Attr
}

// Layout of serverdb and queue files (spec 13 §3.1, §4).
const (
	serverDBFixed = 24
	queueFixed    = 40
	queueNameSize = 15
	queueNameOff  = 24
)

// errXML reports the XML form of serverdb, which the package does not read.
var errXML = errors.New("serverdb is in the XML form (--enable-server-xml), which is not supported")

// ParseServerDB decodes the binary form of serverdb.
func ParseServerDB(b []byte) (*ServerDB, error) {
	if bytes.Contains(b[:min(len(b), serverDBFixed)], []byte("<server_db>")) {
		return nil, errXML
	}
	if len(b) < serverDBFixed {
		return nil, fmt.Errorf("%d bytes, shorter than the fixed part (%d): %w", len(b), serverDBFixed, io.ErrUnexpectedEOF)
	}
	le := binary.LittleEndian
	s := &ServerDB{
		NumJobs:   int32(le.Uint32(b[0:])),
		NumQueues: int32(le.Uint32(b[4:])),
		NextJobID: int32(le.Uint32(b[8:])),
		SaveTime:  int64(le.Uint64(b[16:])),
	}
	if s.NumJobs < 0 || s.NumQueues < 0 || s.NextJobID < 0 {
		return nil, fmt.Errorf("negative count in the fixed part (jobs %d, queues %d, next job %d)", s.NumJobs, s.NumQueues, s.NextJobID)
	}
	attrs, end, err := jobfile.ParseAttrs(b, serverDBFixed)
	if err != nil {
		return nil, err
	}
	if end != len(b) {
		return nil, fmt.Errorf("%d bytes after the end marker", len(b)-end)
	}
	s.Attrs = attrs
	return s, nil
}

// Queue types of a queue file's fixed part (spec 13 §4).
const (
	QueueUnset   = 0
	QueueExec    = 1
	QueueRoute   = 2
	QueueRoutePl = 3
)

// Queue is a decoded queue file (spec 13 §4) with its ACL files.
type Queue struct {
	// Name is the queue's name: the file name (the fixed field may be
	// truncated).
	Name         string
	Type         int32
	CTime, MTime int64
	Attrs        []Attr
	// ACLs maps a queue ACL attribute (acl_hosts, acl_users, acl_groups,
	// disallowed_types, hostlist) to the content of its file (save
	// encoding, one entry a line), for the files present.
	ACLs map[string]string
}

// QueueACLDirs are the server_priv directories holding queue ACL and list
// attributes, one file per queue (spec 13 §5).
var QueueACLDirs = []string{"acl_hosts", "acl_users", "acl_groups", "disallowed_types", "hostlist"}

// ParseQueue decodes a queue file. Name is taken from the fixed field.
func ParseQueue(b []byte) (*Queue, error) {
	if len(b) < queueFixed {
		return nil, fmt.Errorf("%d bytes, shorter than the fixed part (%d): %w", len(b), queueFixed, io.ErrUnexpectedEOF)
	}
	le := binary.LittleEndian
	q := &Queue{
		Type:  int32(le.Uint32(b[4:])),
		CTime: int64(le.Uint64(b[8:])),
		MTime: int64(le.Uint64(b[16:])),
		Name:  cstring(b[queueNameOff : queueNameOff+queueNameSize]),
	}
	if q.Type < QueueUnset || q.Type > QueueRoutePl {
		return nil, fmt.Errorf("unknown queue type %d", q.Type)
	}
	attrs, end, err := jobfile.ParseAttrs(b, queueFixed)
	if err != nil {
		return nil, err
	}
	if end != len(b) {
		return nil, fmt.Errorf("%d bytes after the end marker", len(b)-end)
	}
	q.Attrs = attrs
	return q, nil
}

// Array is a decoded array descriptor, arrays/<prefix>.AR (spec 13 §8).
type Array struct {
	Version            int32
	Size               int32 // highest index + 1
	NumJobs            int32 // sub-jobs requested
	SlotLimit          int32 // -1 for none
	Running, Done      int32
	Cloned, Started    int32
	Failed, Successful int32
	Purged             int32
	Owner, ParentID    string
	Prefix, SubmitHost string
	// Pending lists the index ranges not yet cloned.
	Pending []IndexRange
}

// IndexRange is an inclusive range of array indexes.
type IndexRange struct{ Start, End int32 }

// Layout of an array file (spec 13 §8).
const (
	arrayVersion     = 4
	arrayOwnerOff    = 64
	arrayOwnerSize   = 1058
	arrayParentOff   = 1122
	arrayParentSize  = 1047
	arrayPrefixOff   = 2169
	arrayPrefixSize  = 62
	arraySubmitOff   = 2231
	arraySubmitSize  = 1025
	arrayPurgedOff   = 3256
	arrayTokensOff   = 3264
	arrayFixed       = 3268
	arrayTokenSize   = 32
	arrayTokenFields = 24
	maxArrayIndex    = 1 << 24
)

// ParseArray decodes an array descriptor of struct version 4 (2.5.10 and
// later).
func ParseArray(b []byte) (*Array, error) {
	if len(b) < arrayFixed {
		return nil, fmt.Errorf("%d bytes, shorter than the fixed part (%d): %w", len(b), arrayFixed, io.ErrUnexpectedEOF)
	}
	le := binary.LittleEndian
	i32 := func(off int) int32 { return int32(le.Uint32(b[off:])) }
	a := &Array{
		Version: i32(0), Size: i32(4), NumJobs: i32(8), SlotLimit: i32(12),
		Running: i32(16), Done: i32(20), Cloned: i32(24), Started: i32(28),
		Failed: i32(32), Successful: i32(36),
		Owner:      cstring(b[arrayOwnerOff : arrayOwnerOff+arrayOwnerSize]),
		ParentID:   cstring(b[arrayParentOff : arrayParentOff+arrayParentSize]),
		Prefix:     cstring(b[arrayPrefixOff : arrayPrefixOff+arrayPrefixSize]),
		SubmitHost: cstring(b[arraySubmitOff : arraySubmitOff+arraySubmitSize]),
		Purged:     i32(arrayPurgedOff),
	}
	if a.Version != arrayVersion {
		return nil, fmt.Errorf("array file version %d, want %d (convert older files with TORQUE's pbs_server -u first)", a.Version, arrayVersion)
	}
	for _, c := range []struct {
		name string
		v    int32
	}{{"array_size", a.Size}, {"num_jobs", a.NumJobs}, {"jobs_running", a.Running}, {"jobs_done", a.Done},
		{"num_cloned", a.Cloned}, {"num_started", a.Started}, {"num_failed", a.Failed},
		{"num_successful", a.Successful}, {"num_purged", a.Purged}} {
		if c.v < 0 || c.v > maxArrayIndex {
			return nil, fmt.Errorf("%s %d out of range", c.name, c.v)
		}
	}
	if a.ParentID == "" || a.Prefix == "" {
		return nil, errors.New("no parent id or file prefix")
	}
	n := i32(arrayTokensOff)
	if n < 0 || int64(n)*arrayTokenSize != int64(len(b)-arrayFixed) {
		return nil, fmt.Errorf("%d pending index ranges do not fit the %d bytes after the fixed part", n, len(b)-arrayFixed)
	}
	for k := 0; k < int(n); k++ {
		off := arrayFixed + k*arrayTokenSize + arrayTokenFields
		r := IndexRange{Start: i32(off), End: i32(off + 4)}
		if r.Start < 0 || r.End < r.Start || r.End >= maxArrayIndex {
			return nil, fmt.Errorf("pending index range %d-%d out of range", r.Start, r.End)
		}
		a.Pending = append(a.Pending, r)
	}
	return a, nil
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
