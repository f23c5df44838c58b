package pbslog

import (
	"bufio"
	"gopbs/internal/logline"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func logsDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			logs := filepath.Join(filepath.Dir(dir), "shared", "captures", "logs")
			if _, err := os.Stat(logs); err != nil {
				t.Skip("../shared/captures/logs not available")
			}
			return logs
		}
		if filepath.Dir(dir) == dir {
			t.Skip("module root not found")
		}
	}
}

// TestFormatLineMatchesCapturedLogs re-renders every line of the captured
// server logs from its parsed fields and requires byte equality.
func TestFormatLineMatchesCapturedLogs(t *testing.T) {
	dir := logsDir(t)
	for _, name := range []string{"server_logs-20261122.log", "round2-server_logs.txt"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			fields := strings.SplitN(line, ";", 6)
			if len(fields) != 6 {
				t.Fatalf("%s: odd line %q", name, line)
			}
			ts, err := time.ParseInLocation("01/02/2006 15:04:05", fields[0], time.Local)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := strconv.ParseInt(fields[1], 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			got := FormatLine(ts, int(ev), "PBS_Server", fields[3], fields[4], fields[5])
			if got != line+"\n" {
				t.Fatalf("%s line %d:\n got %q\nwant %q", name, n+1, got, line)
			}
			n++
		}
		f.Close()
		if n < 100 {
			t.Fatalf("%s: only %d lines", name, n)
		}
	}
}

func TestFormatRecordMatchesCapturedAccounting(t *testing.T) {
	dir := logsDir(t)
	for _, name := range []string{"accounting-20261122.txt", "round2-accounting.txt"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			f := strings.SplitN(line, ";", 4)
			ts, err := time.ParseInLocation("01/02/2006 15:04:05", f[0], time.Local)
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatRecord(ts, f[1][0], f[2], f[3]); got != line+"\n" {
				t.Fatalf("got %q want %q", got, line)
			}
		}
	}
}

func TestLoggerEventsAndContinuation(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLogger(dir, "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 1, 18, 18, 0, time.Local)
	l.SetClock(func() time.Time { return now })
	l.SetEvents(logline.EventJob)
	l.Log(logline.EventSystem, logline.ClassServer, "Log", "dropped")
	l.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "Log", "Log opened")
	l.Log(logline.EventJob, logline.ClassJob, "1.vm", "a\r\nb")
	l.Close()
	data, err := os.ReadFile(filepath.Join(dir, "20261122"))
	if err != nil {
		t.Fatal(err)
	}
	want := "11/22/2026 01:18:18;0002;PBS_Server;Svr;Log;Log opened\n" +
		"11/22/2026 01:18:18;0008;PBS_Server;Job;1.vm;a\n" +
		"11/22/2026 01:18:18;0008;PBS_Server;Job;1.vm;[continued]b\n"
	if string(data) != want {
		t.Fatalf("got\n%s\nwant\n%s", data, want)
	}
	var nilLogger *Logger
	nilLogger.Log(logline.EventError, logline.ClassServer, "x", "no panic")
}

func TestAccountingDailyFile(t *testing.T) {
	dir := t.TempDir()
	a, err := NewAccounting(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 23, 59, 59, 0, time.Local)
	a.SetClock(func() time.Time { return now })
	a.Record(AcctQueue, "1.vm", "queue=batch")
	now = now.Add(time.Second)
	a.Record(AcctDelete, "1.vm", "requestor=alice@vm")
	a.Close()
	d1, _ := os.ReadFile(filepath.Join(dir, "20261122"))
	d2, _ := os.ReadFile(filepath.Join(dir, "20261123"))
	if string(d1) != "11/22/2026 23:59:59;Q;1.vm;queue=batch\n" || string(d2) != "11/23/2026 00:00:00;D;1.vm;requestor=alice@vm\n" {
		t.Fatalf("got %q / %q", d1, d2)
	}
}

func TestLoggerDailyFile(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLogger(dir, "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 31, 23, 59, 59, 0, time.Local)
	l.SetClock(func() time.Time { return now })
	l.Log(logline.EventSystem, logline.ClassServer, "PBS_Server", "before")
	l.Log(logline.EventSystem, logline.ClassServer, "PBS_Server", "still before")
	now = now.Add(time.Second)
	l.Log(logline.EventSystem, logline.ClassServer, "PBS_Server", "after")
	l.Close()
	d1, _ := os.ReadFile(filepath.Join(dir, "20261231"))
	d2, _ := os.ReadFile(filepath.Join(dir, "20270101"))
	if strings.Count(string(d1), "\n") != 2 || !strings.Contains(string(d1), "still before") ||
		strings.Count(string(d2), "\n") != 1 || !strings.Contains(string(d2), ";after") {
		t.Fatalf("got %q / %q", d1, d2)
	}
}

func TestFixedFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLoggerFile(filepath.Join(dir, "srv.log"), "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	l.Log(logline.EventSystem, logline.ClassServer, "PBS_Server", "hello")
	l.Close()
	a, err := NewAccountingFile(filepath.Join(dir, "acct"))
	if err != nil {
		t.Fatal(err)
	}
	a.Record(AcctQueue, "1.vm", "queue=batch")
	a.Close()
	for _, f := range []string{"srv.log", "acct"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(b) == 0 {
			t.Fatalf("%s: %q %v", f, b, err)
		}
	}
}
