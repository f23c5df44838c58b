// Package logline formats the lines of TORQUE's daemon logs (server_logs,
// mom_logs and sched_logs share one format, spec 12 §13):
//
//	MM/DD/YYYY HH:MM:SS;EEEE;    daemon;Class;object;text
//
// EEEE is the event type in hexadecimal, the daemon name is right-justified
// in ten columns, and a text of several lines becomes several log lines,
// the later ones starting with "[continued]".
package logline

import (
	"fmt"
	"strings"
	"time"
)

// Event types of a log line, a bit mask as log_events, $logevent and
// log_filter select them.
const (
	EventError    = 0x0001
	EventSystem   = 0x0002
	EventAdmin    = 0x0004
	EventJob      = 0x0008
	EventJobUsage = 0x0010
	EventSecurity = 0x0020
	EventSched    = 0x0040
	EventDebug    = 0x0080
	EventDebug2   = 0x0100
	// EventForce makes a line be written whatever the mask says; the bit
	// is not printed.
	EventForce = 0x8000

	// EventAll is every event type (0x1ff), the default mask.
	EventAll = 0x01ff
)

// Object classes of a log line, as TORQUE names them.
const (
	ClassNA      = "n/a"
	ClassServer  = "Svr"
	ClassQueue   = "Que"
	ClassJob     = "Job"
	ClassRequest = "Req"
	ClassFile    = "Fil"
	ClassAcct    = "Act"
	ClassNode    = "node"
)

// Format returns the log line(s) for one message, each ending in a newline.
// "\r\n" counts as one line break, and a final line break adds no empty
// continuation line.
func Format(t time.Time, event int, daemon, class, object, text string) string {
	prefix := fmt.Sprintf("%02d/%02d/%04d %02d:%02d:%02d;%04x;%10.10s;%s;%s;",
		int(t.Month()), t.Day(), t.Year(), t.Hour(), t.Minute(), t.Second(),
		event&^EventForce, daemon, class, object)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 1 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var b strings.Builder
	for i, ln := range lines {
		b.WriteString(prefix)
		if i > 0 {
			b.WriteString("[continued]")
		}
		b.WriteString(ln)
		b.WriteByte('\n')
	}
	return b.String()
}
