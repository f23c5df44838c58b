package schedlog

import (
	"bytes"
	"gopbs/internal/logline"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFormatMatchesCapture(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 24, 29, 0, time.Local)
	tests := []struct {
		event         int
		class, object string
		text, want    string
	}{
		{logline.EventSched, logline.ClassJob, "12.vm", "Job Run", "11/22/2026 01:24:29;0040; pbs_sched;Job;12.vm;Job Run\n"},
		{logline.EventSystem | logline.EventForce, logline.ClassServer, "Log", "Log opened", "11/22/2026 01:24:29;0002; pbs_sched;Svr;Log;Log opened\n"},
		{logline.EventDebug, logline.ClassServer, "main", "brk point 94431654903808", "11/22/2026 01:24:29;0080; pbs_sched;Svr;main;brk point 94431654903808\n"},
		{logline.EventError, logline.ClassServer, "x", "a\r\nb", "11/22/2026 01:24:29;0001; pbs_sched;Svr;x;a\n11/22/2026 01:24:29;0001; pbs_sched;Svr;x;[continued]b\n"},
	}
	for _, tt := range tests {
		if got := Format(at, tt.event, tt.class, tt.object, tt.text); got != tt.want {
			t.Errorf("Format = %q, want %q", got, tt.want)
		}
	}
}

func TestFilter(t *testing.T) {
	var buf bytes.Buffer
	l := NewWriter(&buf)
	l.SetFilter(logline.EventDebug2)
	l.Log(logline.EventDebug2, logline.ClassServer, "x", "dropped")
	l.Log(logline.EventDebug2|logline.EventForce, logline.ClassServer, "x", "forced")
	l.Log(logline.EventSched, logline.ClassJob, "1.vm", "kept")
	out := buf.String()
	if strings.Contains(out, "dropped") || !strings.Contains(out, "forced") || !strings.Contains(out, "kept") {
		t.Errorf("filter wrong:\n%s", out)
	}
}

func TestDailyFiles(t *testing.T) {
	dir := t.TempDir()
	l := New(dir, "")
	now := time.Date(2026, 11, 22, 23, 59, 59, 0, time.Local)
	l.SetClock(func() time.Time { return now })
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	l.Log(logline.EventSched, logline.ClassJob, "1.vm", "Job Run")
	l.Close()
	a, _ := os.ReadFile(filepath.Join(dir, "20261122"))
	b, _ := os.ReadFile(filepath.Join(dir, "20261123"))
	if !strings.HasSuffix(string(a), ";Log;Log opened\n") || !strings.Contains(string(b), "Job Run") {
		t.Errorf("files:\n%s\n---\n%s", a, b)
	}
}

// countingWriter counts the writes it is given.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func (w *countingWriter) WriteString(s string) (int, error) {
	w.writes++
	return w.Buffer.WriteString(s)
}

func TestHold(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.Local)
	line := func(i int) string {
		return Format(at, logline.EventSched, logline.ClassJob, strings.Repeat("9", 5)+".vm", "Not Running: job "+strings.Repeat("x", i%7))
	}
	for _, tc := range []struct {
		name       string
		lines      int
		maxWrites  int // writes during the hold, before Release
		wantWrites int // writes in all
	}{
		{"nothing", 0, 0, 0},
		{"a few", 3, 0, 1},
		{"many", 10000, 10000 * 100 / heldFlushSize, 10000*100/heldFlushSize + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w countingWriter
			l := NewWriter(&w)
			l.SetClock(func() time.Time { return at })
			var want strings.Builder
			l.Hold()
			for i := range tc.lines {
				l.Log(logline.EventSched, logline.ClassJob, "99999.vm", "Not Running: job "+strings.Repeat("x", i%7))
				want.WriteString(line(i))
			}
			if w.writes > tc.maxWrites {
				t.Errorf("%d writes while held, want at most %d", w.writes, tc.maxWrites)
			}
			l.Release()
			if w.String() != want.String() {
				t.Errorf("held lines differ: %d bytes, want %d", w.Len(), want.Len())
			}
			if w.writes > tc.wantWrites {
				t.Errorf("%d writes, want at most %d", w.writes, tc.wantWrites)
			}
			// After the release each line is written at once again.
			before := w.writes
			l.Log(logline.EventSched, logline.ClassJob, "1.vm", "after")
			if w.writes != before+1 || !strings.HasSuffix(w.String(), ";1.vm;after\n") {
				t.Errorf("line after Release not written at once")
			}
		})
	}
}

// TestHoldAcrossMidnight: held lines of the previous day go to its file,
// and Close writes what is still held.
func TestHoldAcrossMidnight(t *testing.T) {
	dir := t.TempDir()
	l := New(dir, "")
	now := time.Date(2026, 11, 22, 23, 59, 59, 0, time.Local)
	l.SetClock(func() time.Time { return now })
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	l.Hold()
	l.Log(logline.EventSched, logline.ClassJob, "1.vm", "before midnight")
	now = now.Add(2 * time.Second)
	l.Log(logline.EventSched, logline.ClassJob, "2.vm", "after midnight")
	l.Close()
	a, _ := os.ReadFile(filepath.Join(dir, "20261122"))
	b, _ := os.ReadFile(filepath.Join(dir, "20261123"))
	if !strings.HasSuffix(string(a), ";1.vm;before midnight\n") || strings.Contains(string(a), "after midnight") {
		t.Errorf("first day's file:\n%s", a)
	}
	if !strings.Contains(string(b), ";2.vm;after midnight\n") || !strings.HasSuffix(string(b), ";Log;Log closed\n") {
		t.Errorf("second day's file:\n%s", b)
	}
}
