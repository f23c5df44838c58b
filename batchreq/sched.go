package batchreq

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Scheduler commands: the 4-byte big-endian integer the server writes on
// a new connection to pbs_sched (spec 12 §10.1, spec 14 §2).
const (
	SCH_ERROR          = -1
	SCH_SCHEDULE_NULL  = 0
	SCH_SCHEDULE_NEW   = 1
	SCH_SCHEDULE_TERM  = 2
	SCH_SCHEDULE_TIME  = 3
	SCH_SCHEDULE_RECYC = 4
	SCH_SCHEDULE_CMD   = 5
	SCH_CONFIGURE      = 7
	SCH_QUIT           = 8
	SCH_RULESET        = 9
	SCH_SCHEDULE_FIRST = 10
)

var schedNames = [...]string{"NULL", "new", "term", "time", "recyc", "cmd", "N/A", "configure", "quit", "ruleset", "scheduler_first"}

// SchedCommandName returns the name the server logs for a scheduler
// command ("Scheduler was sent the command <name>"): "NULL", "new",
// "term", "time", "recyc", "cmd", "N/A" (6), "configure", "quit",
// "ruleset", "scheduler_first"; "" for other values.
func SchedCommandName(cmd int) string {
	if cmd < 0 || cmd >= len(schedNames) {
		return ""
	}
	return schedNames[cmd]
}

// AppendSchedCommand appends the 4-byte big-endian encoding of cmd.
func AppendSchedCommand(dst []byte, cmd int) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(int32(cmd)))
}

// WriteSchedCommand writes the 4-byte command with one Write.
func WriteSchedCommand(w io.Writer, cmd int) error {
	var b [4]byte
	if _, err := w.Write(AppendSchedCommand(b[:0], cmd)); err != nil {
		return fmt.Errorf("send scheduler command: %w", err)
	}
	return nil
}

// ReadSchedCommand reads exactly 4 bytes and returns the command they
// hold as a signed 32-bit value.
func ReadSchedCommand(r io.Reader) (int, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("read scheduler command: %w", err)
	}
	return int(int32(binary.BigEndian.Uint32(b[:]))), nil
}
