// Package momlog writes pbs_mom's daily log files (PBS_HOME/mom_logs/YYYYMMDD)
// in TORQUE 2.5.13's line format:
//
//	MM/DD/YYYY HH:MM:SS;EEEE;   pbs_mom;Class;Object;Text
//
// The event field is the event type in four hex digits, the daemon name is
// right-justified in ten characters. Lines whose event type is not enabled by
// the mask ($logevent) are dropped unless they carry logline.EventForce.
package momlog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gopbs/internal/logline"
)

// Class is the object class field of a log line.
type Class int

// Object classes as TORQUE names them.
const (
	ClassNA Class = iota
	ClassServer
	ClassQueue
	ClassJob
	ClassRequest
	ClassFile
	ClassAct
	ClassNode
)

var classNames = [...]string{logline.ClassNA, logline.ClassServer, logline.ClassQueue, logline.ClassJob,
	logline.ClassRequest, logline.ClassFile, logline.ClassAcct, logline.ClassNode}

// String returns the class name written in log lines.
func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "n/a"
	}
	return classNames[c]
}

// Logger writes log lines. The zero value is not usable; use New or NewWriter.
// A Logger is safe for concurrent use.
type Logger struct {
	mu     sync.Mutex
	dir    string // directory of daily files; "" when writing to w
	suffix string
	daemon string
	mask   int
	now    func() time.Time

	w       io.Writer
	f       *os.File
	curName string

	maxSize   int64 // bytes; 0 = no size rolling
	rollDepth int

	syslog *Syslog // nil: no copy to the system logger
}

// SetSyslog makes the Logger copy error, system and administrative
// records that pass its mask to s as well (nil stops it).
func (l *Logger) SetSyslog(s *Syslog) {
	l.mu.Lock()
	l.syslog = s
	l.mu.Unlock()
}

// SyslogEnabled reports whether records are copied to the system logger.
func (l *Logger) SyslogEnabled() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syslog != nil
}

// SetRolling enables size-based rolling ($log_file_max_size in kilobytes,
// $log_file_roll_depth): when the current file exceeds the size it is
// renamed to <name>.1, older ones shifted up to <name>.<depth>.
func (l *Logger) SetRolling(maxSizeKB int64, depth int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if depth < 1 {
		depth = 1
	}
	l.maxSize, l.rollDepth = maxSizeKB*1024, depth
}

// RemoveOlderThan deletes daily log files (and their rolled copies) whose
// modification time is more than days days ago ($log_keep_days).
func (l *Logger) RemoveOlderThan(days int) error {
	if l.dir == "" || days <= 0 {
		return nil
	}
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("momlog: %w", err)
	}
	cutoff := l.now().AddDate(0, 0, -days)
	for _, e := range ents {
		name := e.Name()
		if len(name) < 8 || strings.Trim(name[:8], "0123456789") != "" {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(l.dir, name))
		}
	}
	return nil
}

// roll renames the current file away when it is too large. Called with l.mu
// held after a write.
func (l *Logger) roll() {
	if l.maxSize <= 0 || l.f == nil {
		return
	}
	fi, err := l.f.Stat()
	if err != nil || fi.Size() < l.maxSize {
		return
	}
	_ = l.f.Close()
	base := filepath.Join(l.dir, l.curName)
	for i := l.rollDepth - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", base, i), fmt.Sprintf("%s.%d", base, i+1))
	}
	_ = os.Rename(base, base+".1")
	l.f, l.curName = nil, ""
}

// New returns a Logger writing daily files YYYYMMDD[.suffix] in dir.
// daemon is the daemon name (e.g. "pbs_mom").
func New(dir, suffix, daemon string, mask int) (*Logger, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("momlog: create %s: %w", dir, err)
	}
	return &Logger{dir: dir, suffix: suffix, daemon: daemon, mask: mask, now: time.Now}, nil
}

// NewWriter returns a Logger that writes every line to w (tests, -D mode).
func NewWriter(w io.Writer, daemon string, mask int) *Logger {
	return &Logger{w: w, daemon: daemon, mask: mask, now: time.Now}
}

// Discard returns a Logger that drops everything.
func Discard() *Logger { return NewWriter(io.Discard, "pbs_mom", 0) }

// SetMask changes the event mask ($logevent).
func (l *Logger) SetMask(mask int) {
	l.mu.Lock()
	l.mask = mask
	l.mu.Unlock()
}

// SetClock replaces the time source (tests).
func (l *Logger) SetClock(now func() time.Time) {
	l.mu.Lock()
	l.now = now
	l.mu.Unlock()
}

// Format returns the log line(s) for one record, each terminated by "\n"
// (see package logline).
func Format(t time.Time, event int, daemon string, class Class, object, text string) string {
	return logline.Format(t, event, daemon, class.String(), object, text)
}

// Record writes one record if event is enabled by the mask.
func (l *Logger) Record(event int, class Class, object, text string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if event&logline.EventForce == 0 && event&l.mask == 0 {
		return
	}
	t := l.now()
	if l.syslog != nil {
		if sev, ok := severity(event); ok {
			l.syslog.send(t, sev, syslogText(class, object, text))
		}
	}
	line := Format(t, event, l.daemon, class, object, text)
	w, err := l.writer(t)
	if err != nil {
		return
	}
	_, _ = io.WriteString(w, line)
	l.roll()
}

// Job writes a record of class Job with the job id as object.
func (l *Logger) Job(event int, jobID, text string) { l.Record(event, ClassJob, jobID, text) }

// Error writes an error record in TORQUE's LOG_ERROR form:
// "LOG_ERROR::<strerror> (<errno>) in <function>, <message>", or without errno
// "LOG_ERROR::<function>, <message>" when errno is 0.
func (l *Logger) Error(errno int, errText, function, message string) {
	var text string
	if errno != 0 {
		text = fmt.Sprintf("LOG_ERROR::%s (%d) in %s, %s", errText, errno, function, message)
	} else {
		text = fmt.Sprintf("LOG_ERROR::%s, %s", function, message)
	}
	l.Record(logline.EventError, ClassServer, l.daemon, text)
}

// Close closes the current log file.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		err := l.f.Close()
		l.f = nil
		l.curName = ""
		return err
	}
	return nil
}

// writer returns the destination for a line written at t, switching daily
// files at midnight. Called with l.mu held.
func (l *Logger) writer(t time.Time) (io.Writer, error) {
	if l.w != nil {
		return l.w, nil
	}
	name := fmt.Sprintf("%04d%02d%02d", t.Year(), int(t.Month()), t.Day())
	if l.suffix != "" {
		name += "." + l.suffix
	}
	if l.f != nil && name == l.curName {
		return l.f, nil
	}
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("momlog: open %s: %w", name, err)
	}
	l.f, l.curName = f, name
	return f, nil
}
