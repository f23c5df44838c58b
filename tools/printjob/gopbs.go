package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// --- GoPBS pbs_mom job files ---------------------------------------------

// momJob is a GoPBS MOM's job file (mom_priv/jobs/<prefix>.JB): DIS
// strings job id and server address, DIS unsigned server port and session
// id, then the job's attribute list as in a batch reply.
type momJob struct {
	ID     string
	Server string
	Port   uint64
	SID    uint64
	Attrs  batchreq.AttrList
}

// parseMomJob decodes a GoPBS MOM job file.
func parseMomJob(b []byte) (*momJob, error) {
	r := dis.NewReader(bytes.NewReader(b))
	j := &momJob{}
	var err error
	if j.ID, err = r.Str(); err != nil {
		return nil, fmt.Errorf("job id: %w", err)
	}
	if j.Server, err = r.Str(); err != nil {
		return nil, fmt.Errorf("server address: %w", err)
	}
	if j.Port, err = r.Uint64(); err != nil {
		return nil, fmt.Errorf("server port: %w", err)
	}
	if j.SID, err = r.Uint64(); err != nil {
		return nil, fmt.Errorf("session id: %w", err)
	}
	if j.Attrs, err = batchreq.ReadReplyAttrList(r); err != nil {
		return nil, fmt.Errorf("attributes: %w", err)
	}
	return j, nil
}

func (j *momJob) print(w io.Writer, noAttrs bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sjobid:\t%s\n%s", rule, j.ID, rule)
	b.WriteString("format:\t\tGoPBS pbs_mom job file\n")
	fmt.Fprintf(&b, "server:\t\t%s:%d\n", j.Server, j.Port)
	fmt.Fprintf(&b, "session id:\t%d\n", j.SID)
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			name := a.Name
			if a.HasResource {
				name += "." + a.Resource
			}
			fmt.Fprintf(&b, "%s = %s\n", name, a.Value)
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// --- GoPBS pbs_server store records --------------------------------------

// Layout of the GoPBS server database (package server/store): bbolt file
// server_priv/serverdb.bolt with bucket "jobs" (job id → record) and a
// write-ahead log serverdb.bolt.wal of batches not yet applied.
const (
	storeFile     = "serverdb.bolt"
	storeJobs     = "jobs"
	storeScripts  = "script"
	recordVersion = 1
)

// serverJob is a job record of the GoPBS server store (server/persist.go
// encodeJob, record version 1).
type serverJob struct {
	ID                  string
	Seq                 int64
	State, Substate     int64
	Hold                int64
	Queue               string
	Rank                int64
	ArrayIndex          int64
	Parent              string
	ArrayRequest        string
	PurgeAt             int64
	Attrs               []jobAttr
	ArrayCounts         []int64 // size, ok, not ok, started (array templates)
	FromLog, FromBucket bool
}

// errCorruptRecord reports a record that does not decode.
var errCorruptRecord = errors.New("corrupt job record")

type recordReader struct {
	b   []byte
	err error
}

func (d *recordReader) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorruptRecord
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recordReader) str() string {
	if d.err != nil {
		return ""
	}
	l, n := binary.Uvarint(d.b)
	if n <= 0 || uint64(len(d.b)-n) < l {
		d.err = errCorruptRecord
		return ""
	}
	s := string(d.b[n : n+int(l)])
	d.b = d.b[n+int(l):]
	return s
}

// parseServerJob decodes a job record of the GoPBS server store.
func parseServerJob(id string, b []byte) (*serverJob, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, fmt.Errorf("%w (unknown record version)", errCorruptRecord)
	}
	d := &recordReader{b: b[1:]}
	j := &serverJob{ID: id}
	j.Seq = d.int()
	j.State = d.int()
	j.Substate = d.int()
	j.Hold = d.int()
	j.Queue = d.str()
	j.Rank = d.int()
	j.ArrayIndex = d.int()
	j.Parent = d.str()
	j.ArrayRequest = d.str()
	j.PurgeAt = d.int()
	n := d.int()
	if n < 0 || n > int64(len(b)) {
		return nil, errCorruptRecord
	}
	for i := int64(0); i < n && d.err == nil; i++ {
		a := jobAttr{Name: d.str(), Resource: d.str(), Value: d.str()}
		j.Attrs = append(j.Attrs, a)
	}
	for j.ArrayRequest != "" && len(d.b) > 0 && d.err == nil {
		j.ArrayCounts = append(j.ArrayCounts, d.int())
	}
	if d.err != nil {
		return nil, d.err
	}
	return j, nil
}

const stateLetters = "TQHWREC"

func (j *serverJob) print(w io.Writer, noAttrs bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sjobid:\t%s\n%s", rule, j.ID, rule)
	b.WriteString("format:\t\tGoPBS pbs_server store record\n")
	letter := "?"
	if j.State >= 0 && int(j.State) < len(stateLetters) {
		letter = stateLetters[j.State : j.State+1]
	}
	fmt.Fprintf(&b, "state:\t\t0x%x (%s)\n", j.State, letter)
	fmt.Fprintf(&b, "substate:\t0x%x (%d)\n", j.Substate, j.Substate)
	fmt.Fprintf(&b, "hold:\t\t0x%x\n", j.Hold)
	fmt.Fprintf(&b, "queue:\t\t%s\n", j.Queue)
	fmt.Fprintf(&b, "queue rank:\t%d\n", j.Rank)
	if j.Parent != "" {
		fmt.Fprintf(&b, "array:\t\t%s index %d\n", j.Parent, j.ArrayIndex)
	}
	if j.ArrayRequest != "" {
		fmt.Fprintf(&b, "array request:\t%s\n", j.ArrayRequest)
		if len(j.ArrayCounts) >= 3 {
			fmt.Fprintf(&b, "array counts:\tsize %d, ok %d, not ok %d", j.ArrayCounts[0], j.ArrayCounts[1], j.ArrayCounts[2])
			if len(j.ArrayCounts) >= 4 {
				fmt.Fprintf(&b, ", started %d", j.ArrayCounts[3])
			}
			b.WriteString("\n")
		}
	}
	if j.PurgeAt != 0 {
		fmt.Fprintf(&b, "purge at:\t%d\n", j.PurgeAt)
	}
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			name := a.Name
			if a.Resource != "" {
				name += "." + a.Resource
			}
			fmt.Fprintf(&b, "%s = %s\n", name, a.Value)
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// storeLookup reads records of the GoPBS server store read-only: the
// bbolt file (which pbs_server keeps locked while it runs) and then the
// write-ahead log, whose batches are newer.
type storeLookup struct {
	path string // serverdb.bolt
}

// errServerRunning reports a database locked by a running pbs_server.
var errServerRunning = errors.New("the server database is in use by a running pbs_server (use qstat -f instead)")

// get returns the value of key in bucket (nil when absent) and the ids of
// the jobs whose id starts with prefix (for unqualified job ids).
func (s storeLookup) get(bucket, key string) ([]byte, []string, error) {
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, nil, errServerRunning
		}
		return nil, nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	defer db.Close()
	var val []byte
	keys := map[string]bool{}
	err = db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(bucket))
		if bk == nil {
			return nil
		}
		if v := bk.Get([]byte(key)); v != nil {
			val = bytes.Clone(v)
		}
		c := bk.Cursor()
		for k, _ := c.Seek([]byte(key + ".")); k != nil && bytes.HasPrefix(k, []byte(key+".")); k, _ = c.Next() {
			keys[string(k)] = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", s.path, err)
	}
	if err := replayLog(s.path+".wal", func(op logOp) {
		if op.bucket != bucket {
			return
		}
		if op.key == key {
			val = op.value
			if op.del {
				val = nil
			}
		}
		if strings.HasPrefix(op.key, key+".") {
			keys[op.key] = !op.del
		}
	}); err != nil {
		return nil, nil, err
	}
	var matches []string
	for k, ok := range keys {
		if ok {
			matches = append(matches, k)
		}
	}
	return val, matches, nil
}

// logOp is one operation of the store's write-ahead log.
type logOp struct {
	del         bool
	bucket, key string
	value       []byte
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// replayLog calls fn for every operation of the complete records of the
// log at path (record: 4-byte big-endian length, 4-byte CRC-32C, payload =
// uvarint count, then per op a kind byte (0 put, 1 delete) and bucket,
// key, value as uvarint-length-prefixed bytes). A torn or corrupt record
// ends the log, as for the server.
func replayLog(path string, fn func(logOp)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n > 1<<30 {
			return nil
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			return nil
		}
		if crc32.Checksum(p, crcTable) != binary.BigEndian.Uint32(hdr[4:]) {
			return nil
		}
		ops, ok := decodeLogOps(p)
		if !ok {
			return nil
		}
		for _, op := range ops {
			fn(op)
		}
	}
}

func decodeLogOps(b []byte) ([]logOp, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, false
	}
	b = b[k:]
	var ops []logOp
	for i := uint64(0); i < n; i++ {
		if len(b) < 1 {
			return nil, false
		}
		op := logOp{del: b[0] == 1}
		b = b[1:]
		var fields [3][]byte
		for f := range fields {
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return nil, false
			}
			fields[f] = b[k : k+int(l)]
			b = b[k+int(l):]
		}
		op.bucket, op.key, op.value = string(fields[0]), string(fields[1]), bytes.Clone(fields[2])
		ops = append(ops, op)
	}
	return ops, true
}
