package momlog

import (
	"bytes"
	"gopbs/internal/logline"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFormatMatchesCapturedLines(t *testing.T) {
	ts := time.Date(2026, 11, 22, 2, 35, 57, 0, time.Local)
	tests := []struct {
		event  int
		class  Class
		object string
		text   string
		want   string
	}{
		{logline.EventJob, ClassJob, "31.vm", "walltime 9 exceeded limit 5",
			"11/22/2026 02:35:57;0008;   pbs_mom;Job;31.vm;walltime 9 exceeded limit 5\n"},
		{logline.EventSystem, ClassNA, "initialize", "independent",
			"11/22/2026 02:35:57;0002;   pbs_mom;n/a;initialize;independent\n"},
		{logline.EventError | logline.EventForce, ClassJob, "TMomFinalizeJob3", "job 13.vm started, pid = 21203",
			"11/22/2026 02:35:57;0001;   pbs_mom;Job;TMomFinalizeJob3;job 13.vm started, pid = 21203\n"},
		{logline.EventDebug, ClassServer, "x", "a\nb\n",
			"11/22/2026 02:35:57;0080;   pbs_mom;Svr;x;a\n11/22/2026 02:35:57;0080;   pbs_mom;Svr;x;[continued]b\n"},
	}
	for _, tc := range tests {
		if got := Format(ts, tc.event, "pbs_mom", tc.class, tc.object, tc.text); got != tc.want {
			t.Errorf("Format = %q, want %q", got, tc.want)
		}
	}
}

func TestMaskAndErrorForm(t *testing.T) {
	var buf bytes.Buffer
	l := NewWriter(&buf, "pbs_mom", 0x00ff)
	l.SetClock(func() time.Time { return time.Date(2026, 11, 22, 2, 27, 58, 0, time.Local) })
	l.Record(logline.EventDebug2, ClassServer, "x", "dropped")
	l.Error(99, "Cannot assign requested address", "scan_for_exiting", "")
	want := "11/22/2026 02:27:58;0001;   pbs_mom;Svr;pbs_mom;LOG_ERROR::Cannot assign requested address (99) in scan_for_exiting, \n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestDailyFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := New(dir, "", "pbs_mom", logline.EventAll)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 22, 23, 59, 59, 0, time.Local)
	l.SetClock(func() time.Time { return day })
	l.Record(logline.EventSystem, ClassServer, "Log", "Log opened")
	day = day.Add(2 * time.Second)
	l.Record(logline.EventSystem, ClassServer, "Log", "next day")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"20261122", "20261123"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) == 0 {
			t.Errorf("file %s: %v, %d bytes", name, err, len(b))
		}
	}
}

func TestRollingAndKeepDays(t *testing.T) {
	dir := t.TempDir()
	l, err := New(dir, "", "pbs_mom", logline.EventAll)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.Local)
	l.SetClock(func() time.Time { return now })
	l.SetRolling(1, 2) // 1 kB, keep .1 and .2
	long := string(bytes.Repeat([]byte("x"), 600))
	for i := 0; i < 7; i++ {
		l.Record(logline.EventSystem, ClassServer, "t", long)
	}
	l.Close()
	for _, name := range []string{"20261122", "20261122.1", "20261122.2"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "20261122.3")); err == nil {
		t.Error("roll depth exceeded")
	}
	old := filepath.Join(dir, "20261001")
	if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := now.AddDate(0, 0, -30)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if err := l.RemoveOlderThan(7); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("old log kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "20261122.1")); err != nil {
		t.Error("recent log removed")
	}
}
