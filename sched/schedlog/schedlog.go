// Package schedlog writes the scheduler's log, sched_logs/YYYYMMDD, in the
// line format shared by all TORQUE daemons:
//
//	MM/DD/YYYY HH:MM:SS;EEEE; pbs_sched;Class;Object;Text
//
// with the event type in four hex digits and the daemon name right-aligned
// in ten columns. Files switch at local midnight; messages whose event
// bits intersect the filter (sched_config log_filter) are dropped.
package schedlog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"gopbs/internal/logline"
)

// DaemonName is the name written in the daemon column.
const DaemonName = "pbs_sched"

// Logger writes log lines. The zero value is not usable; use New or
// NewWriter. A Logger is safe for concurrent use.
type Logger struct {
	mu     sync.Mutex
	dir    string // "" when writing to a fixed writer
	fixed  string // -L file name, if any
	w      io.Writer
	f      *os.File
	day    string
	filter int
	now    func() time.Time

	// While held (Hold), lines collect in buf and are written in large
	// pieces: a cycle logs a line per job.
	held bool
	buf  []byte
}

// heldFlushSize is the amount of held log text written at once.
const heldFlushSize = 64 << 10

// New returns a Logger writing daily files in dir (sched_logs). If file
// is not empty it is used instead of the daily files (pbs_sched -L).
func New(dir, file string) *Logger {
	return &Logger{dir: dir, fixed: file, now: time.Now}
}

// NewWriter returns a Logger writing to w (tests, foreground runs).
func NewWriter(w io.Writer) *Logger {
	return &Logger{w: w, now: time.Now}
}

// SetClock replaces the time source (tests).
func (l *Logger) SetClock(now func() time.Time) { l.mu.Lock(); l.now = now; l.mu.Unlock() }

// SetFilter sets the log_filter mask.
func (l *Logger) SetFilter(mask int) { l.mu.Lock(); l.filter = mask; l.mu.Unlock() }

// Open opens the current file and writes "Log opened".
func (l *Logger) Open() error {
	l.mu.Lock()
	err := l.ensure(l.now())
	l.mu.Unlock()
	if err != nil {
		return err
	}
	l.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "Log", "Log opened")
	return nil
}

// Reopen closes and reopens the file (SIGHUP).
func (l *Logger) Reopen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	if l.f != nil {
		l.f.Close()
		l.f, l.w, l.day = nil, nil, ""
	}
	return l.ensure(l.now())
}

// SetDir makes the logger write its daily files in dir from now on (a
// sched object's new sched_log). It opens today's file there first: on
// failure the logger goes on in its old directory and the error is
// returned. A logger of a fixed file (-L) or writer keeps it.
func (l *Logger) SetDir(dir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fixed != "" || l.dir == "" {
		l.dir = dir
		return nil
	}
	day := l.now().Format("20060102")
	f, err := os.OpenFile(filepath.Join(dir, day), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open scheduler log: %w", err)
	}
	l.flush() // the lines so far go to the old directory
	if l.f != nil {
		l.f.Close()
	}
	l.dir, l.f, l.w, l.day = dir, f, f, day
	return nil
}

// Hold makes the logger collect lines in memory until Release, writing
// them in large pieces instead of one write per line; the lines and
// their order are the same. The scheduler holds its log during a cycle.
func (l *Logger) Hold() {
	l.mu.Lock()
	l.held = true
	l.mu.Unlock()
}

// Release writes the lines collected since Hold and goes back to writing
// each line at once.
func (l *Logger) Release() {
	l.mu.Lock()
	l.held = false
	l.flush()
	l.mu.Unlock()
}

// flush writes the collected lines; l.mu is held.
func (l *Logger) flush() {
	if len(l.buf) > 0 && l.w != nil {
		l.w.Write(l.buf)
	}
	l.buf = l.buf[:0]
}

// Close writes "Log closed" and closes the file.
func (l *Logger) Close() error {
	l.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "Log", "Log closed")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	if l.f != nil {
		err := l.f.Close()
		l.f, l.w = nil, nil
		return err
	}
	return nil
}

// ensure opens the file for the day of t when writing to files.
func (l *Logger) ensure(t time.Time) error {
	if l.dir == "" && l.fixed == "" {
		return nil
	}
	day := t.Format("20060102")
	if l.f != nil && (l.fixed != "" || day == l.day) {
		return nil
	}
	name := l.fixed
	if name == "" {
		name = filepath.Join(l.dir, day)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open scheduler log: %w", err)
	}
	l.flush() // the lines of the previous day go to its file
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.w, l.day = f, f, day
	return nil
}

// Format returns the log line(s) for one message, each ending in '\n'
// (see package logline).
func Format(t time.Time, event int, class, object, text string) string {
	return logline.Format(t, event, DaemonName, class, object, text)
}

// Log writes one message unless it is filtered out.
func (l *Logger) Log(event int, class, object, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if event&logline.EventForce == 0 && event&l.filter != 0 {
		return
	}
	t := l.now()
	if err := l.ensure(t); err != nil {
		return
	}
	if l.w == nil {
		return
	}
	line := Format(t, event, class, object, text)
	if !l.held {
		io.WriteString(l.w, line)
		return
	}
	l.buf = append(l.buf, line...)
	if len(l.buf) >= heldFlushSize {
		l.flush()
	}
}

// Logf formats and writes one message.
func (l *Logger) Logf(event int, class, object, format string, args ...any) {
	l.Log(event, class, object, fmt.Sprintf(format, args...))
}
