package jobexec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// TaskRecordSize is the size of one record of a <prefix>.TK task file
// (spec 13 §7, x86_64).
const TaskRecordSize = 1136

// Task status values of the task file.
const (
	TaskEmbryo  = 0
	TaskRunning = 1
	TaskExited  = 2
	TaskDead    = 3
)

// TaskRecord is one task of a job as stored in mom_priv/jobs/<prefix>.TK.
type TaskRecord struct {
	JobID      string
	ParentNode int32
	ParentTask uint32
	TaskID     uint32
	Status     int32
	SessionID  int
	ExitStatus int
}

// MarshalBinary encodes the record (host byte order is little-endian on the
// supported platforms).
func (t TaskRecord) MarshalBinary() ([]byte, error) {
	if len(t.JobID) >= 1047 {
		return nil, fmt.Errorf("task record: job id too long")
	}
	b := make([]byte, TaskRecordSize)
	copy(b, t.JobID)
	le := binary.LittleEndian
	le.PutUint32(b[1048:], uint32(t.ParentNode))
	le.PutUint32(b[1052:], t.ParentTask)
	le.PutUint32(b[1056:], t.TaskID)
	le.PutUint32(b[1060:], uint32(t.Status))
	le.PutUint32(b[1064:], uint32(int32(t.SessionID)))
	le.PutUint32(b[1068:], uint32(int32(t.ExitStatus)))
	return b, nil
}

// UnmarshalBinary decodes one record.
func (t *TaskRecord) UnmarshalBinary(b []byte) error {
	if len(b) != TaskRecordSize {
		return fmt.Errorf("task record: %d bytes, want %d", len(b), TaskRecordSize)
	}
	id := b[:1047]
	if i := bytes.IndexByte(id, 0); i >= 0 {
		id = id[:i]
	}
	le := binary.LittleEndian
	*t = TaskRecord{
		JobID:      string(id),
		ParentNode: int32(le.Uint32(b[1048:])),
		ParentTask: le.Uint32(b[1052:]),
		TaskID:     le.Uint32(b[1056:]),
		Status:     int32(le.Uint32(b[1060:])),
		SessionID:  int(int32(le.Uint32(b[1064:]))),
		ExitStatus: int(int32(le.Uint32(b[1068:]))),
	}
	return nil
}

// WriteTaskRecord writes a record at offset TaskID × TaskRecordSize.
func WriteTaskRecord(path string, t TaskRecord) error {
	b, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("task file: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(t.TaskID%900000000)*TaskRecordSize); err != nil {
		return fmt.Errorf("task file: %w", err)
	}
	return nil
}

// ReadTaskFile returns the records of a task file whose job id is set.
func ReadTaskFile(path string) ([]TaskRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("task file: %w", err)
	}
	defer f.Close()
	var out []TaskRecord
	buf := make([]byte, TaskRecordSize)
	for {
		_, err := io.ReadFull(f, buf)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("task file %s: %w", path, err)
		}
		var t TaskRecord
		if err := t.UnmarshalBinary(buf); err != nil {
			return out, err
		}
		if t.JobID != "" {
			out = append(out, t)
		}
	}
}
