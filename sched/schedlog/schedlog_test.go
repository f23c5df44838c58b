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
