// Package pbslog writes the pbs_server log (server_logs/YYYYMMDD) and the
// accounting file (server_priv/accounting/YYYYMMDD) in TORQUE's exact line
// formats (spec 12 §13, §14).
package pbslog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"gopbs/internal/logline"
)

// DefaultEvents is the default value of log_events (all events). Event
// types and object classes are those of package logline.
const DefaultEvents = logline.EventAll

// Logger writes daily log files in a directory. It is safe for concurrent
// use. A nil *Logger discards everything.
type Logger struct {
	dir    string
	fixed  string // a single file (-L) instead of daily files
	daemon string // right-justified, at most 10 characters
	now    func() time.Time

	mu     sync.Mutex
	events int
	day    int // dayOf the open file's day
	f      *os.File
	held   []byte // lines of LogLater not yet written
}

// dayOf returns a number naming t's calendar day (YYYYMMDD), computed
// without formatting: it is compared on every line written.
func dayOf(t time.Time) int {
	y, m, d := t.Date()
	return y*10000 + int(m)*100 + d
}

// NewLogger returns a logger that writes <dir>/YYYYMMDD files with the given
// daemon name (e.g. "PBS_Server"). The directory is created if needed.
func NewLogger(dir, daemon string) (*Logger, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pbslog: create log directory: %w", err)
	}
	if len(daemon) > 10 {
		daemon = daemon[:10]
	}
	return &Logger{dir: dir, daemon: fmt.Sprintf("%10s", daemon), now: time.Now, events: DefaultEvents}, nil
}

// NewLoggerFile returns a logger that appends to one file (pbs_server -L).
func NewLoggerFile(path, daemon string) (*Logger, error) {
	l, err := NewLogger(filepath.Dir(path), daemon)
	if err != nil {
		return nil, err
	}
	l.fixed = path
	return l, nil
}

// SetClock replaces the clock (tests).
func (l *Logger) SetClock(now func() time.Time) { l.now = now }

// SetEvents sets the event mask (server attribute log_events).
func (l *Logger) SetEvents(mask int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.events = mask
	l.mu.Unlock()
}

// Enabled reports whether a line of the given event type would be written.
func (l *Logger) Enabled(event int) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return event&logline.EventForce != 0 || event&l.events != 0
}

// FormatLine returns the log line(s) for one message, each ending in a
// newline (see package logline).
func FormatLine(t time.Time, event int, daemon, class, object, text string) string {
	return logline.Format(t, event, daemon, class, object, text)
}

// Log writes one message if its event type is enabled (after any lines
// LogLater holds, in one write).
func (l *Logger) Log(event int, class, object, text string) {
	l.log(event, class, object, text, false)
}

// LogLater formats a message like Log but keeps the line in memory until
// the next Flush, Log or Close, which write the lines in order. A server
// holds the log lines of a job submission until its store round is
// durable and writes them together: one write for many lines, none
// under its own lock.
func (l *Logger) LogLater(event int, class, object, text string) {
	l.log(event, class, object, text, true)
}

func (l *Logger) log(event int, class, object, text string, later bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if event&logline.EventForce == 0 && event&l.events == 0 {
		return
	}
	t := l.now()
	if err := l.open(t); err != nil {
		return
	}
	line := FormatLine(t, event, l.daemon, class, object, text)
	if later {
		l.held = append(l.held, line...)
		return
	}
	if len(l.held) == 0 {
		_, _ = l.f.WriteString(line)
		return
	}
	l.held = append(l.held, line...)
	l.flushLocked()
}

// Logf is Log with fmt formatting.
func (l *Logger) Logf(event int, class, object, format string, args ...any) {
	if !l.Enabled(event) {
		return
	}
	l.Log(event, class, object, fmt.Sprintf(format, args...))
}

// LogfLater is LogLater with fmt formatting.
func (l *Logger) LogfLater(event int, class, object, format string, args ...any) {
	if !l.Enabled(event) {
		return
	}
	l.LogLater(event, class, object, fmt.Sprintf(format, args...))
}

// Flush writes the lines LogLater holds.
func (l *Logger) Flush() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *Logger) flushLocked() { l.held = writeHeld(l.f, l.held) }

// writeHeld writes the held lines or records to f (dropped if f is not
// open) and returns the buffer to hold the next ones in (nil once it grew
// past maxHeld).
func writeHeld(f *os.File, held []byte) []byte {
	if len(held) == 0 {
		return held
	}
	if f != nil {
		_, _ = f.Write(held)
	}
	if cap(held) > maxHeld {
		return nil
	}
	return held[:0]
}

// maxHeld is the capacity of a held-lines buffer kept after a flush.
const maxHeld = 64 << 10

func (l *Logger) open(t time.Time) error {
	day := dayOf(t)
	if l.f != nil && (day == l.day || l.fixed != "") {
		return nil
	}
	if l.f != nil {
		l.flushLocked() // held lines belong to the day they were logged
		l.f.Close()
		l.f = nil
	}
	path := filepath.Join(l.dir, t.Format("20060102"))
	if l.fixed != "" {
		path = l.fixed
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	l.f, l.day = f, day
	return nil
}

// Close closes the current file.
func (l *Logger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	l.flushLocked()
	err := l.f.Close()
	l.f = nil
	return err
}

// Accounting record types (spec 12 §14.2).
const (
	AcctQueue      = 'Q'
	AcctStart      = 'S'
	AcctRestart    = 'T'
	AcctRerun      = 'R'
	AcctCheckpoint = 'C'
	AcctDelete     = 'D'
	AcctAbort      = 'A'
	AcctEnd        = 'E'
)

// Accounting appends records to daily accounting files.
type Accounting struct {
	dir   string
	fixed string // a single file (-A) instead of daily files
	now   func() time.Time

	mu   sync.Mutex
	day  int // dayOf the open file's day
	f    *os.File
	held []byte // records of RecordLater not yet written
}

// NewAccounting returns an accounting writer for the directory (normally
// server_priv/accounting), creating it if needed.
func NewAccounting(dir string) (*Accounting, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pbslog: create accounting directory: %w", err)
	}
	return &Accounting{dir: dir, now: time.Now}, nil
}

// NewAccountingFile returns an accounting writer appending to one file
// (pbs_server -A).
func NewAccountingFile(path string) (*Accounting, error) {
	a, err := NewAccounting(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	a.fixed = path
	return a, nil
}

// SetClock replaces the clock (tests).
func (a *Accounting) SetClock(now func() time.Time) { a.now = now }

// Path returns the file the next record goes to.
func (a *Accounting) Path() string {
	if a.fixed != "" {
		return a.fixed
	}
	return filepath.Join(a.dir, a.now().Format("20060102"))
}

// FormatRecord returns one accounting line: "MM/DD/YYYY HH:MM:SS;T;JOBID;MESSAGE\n".
func FormatRecord(t time.Time, typ byte, jobid, msg string) string {
	return fmt.Sprintf("%02d/%02d/%04d %02d:%02d:%02d;%c;%s;%s\n",
		int(t.Month()), t.Day(), t.Year(), t.Hour(), t.Minute(), t.Second(), typ, jobid, msg)
}

// Record appends one record (after any records RecordLater holds, in one
// write).
func (a *Accounting) Record(typ byte, jobid, msg string) { a.record(typ, jobid, msg, false) }

// RecordLater formats a record like Record but keeps it in memory until
// the next Flush, Record or Close (see Logger.LogLater).
func (a *Accounting) RecordLater(typ byte, jobid, msg string) { a.record(typ, jobid, msg, true) }

func (a *Accounting) record(typ byte, jobid, msg string, later bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.now()
	day := dayOf(t)
	if a.f == nil || day != a.day && a.fixed == "" {
		if a.f != nil {
			a.flushLocked() // held records belong to the day they were made
			a.f.Close()
		}
		f, err := os.OpenFile(a.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			a.f = nil
			return
		}
		a.f, a.day = f, day
	}
	rec := FormatRecord(t, typ, jobid, msg)
	if later {
		a.held = append(a.held, rec...)
		return
	}
	if len(a.held) == 0 {
		_, _ = a.f.WriteString(rec)
		return
	}
	a.held = append(a.held, rec...)
	a.flushLocked()
}

// Flush writes the records RecordLater holds.
func (a *Accounting) Flush() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushLocked()
}

func (a *Accounting) flushLocked() { a.held = writeHeld(a.f, a.held) }

// Close closes the current file.
func (a *Accounting) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	a.flushLocked()
	err := a.f.Close()
	a.f = nil
	return err
}
