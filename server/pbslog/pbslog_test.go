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

// TestHeldLines: lines and records held by LogLater and RecordLater are
// written by Flush, by the next immediate line (before it, in order) or
// at Close, and on a change of day into the file of the day they were
// made.
func TestHeldLines(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLogger(dir, "PBS_Server")
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAccounting(filepath.Join(dir, "acct"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 23, 59, 58, 0, time.Local)
	l.SetClock(func() time.Time { return now })
	a.SetClock(func() time.Time { return now })
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	l.Log(logline.EventJob, logline.ClassJob, "0.vm", "first")
	l.LogLater(logline.EventJob, logline.ClassJob, "1.vm", "held a")
	l.LogfLater(logline.EventJob, logline.ClassJob, "1.vm", "held %s", "b")
	a.RecordLater(AcctQueue, "1.vm", "queue=batch")
	if got := read("20261122"); strings.Contains(got, "held") {
		t.Fatalf("held lines written before Flush:\n%s", got)
	}
	if got := read("acct/20261122"); got != "" {
		t.Fatalf("held record written before Flush: %q", got)
	}
	l.Flush()
	a.Flush()
	want := "11/22/2026 23:59:58;0008;PBS_Server;Job;0.vm;first\n" +
		"11/22/2026 23:59:58;0008;PBS_Server;Job;1.vm;held a\n" +
		"11/22/2026 23:59:58;0008;PBS_Server;Job;1.vm;held b\n"
	if got := read("20261122"); got != want {
		t.Fatalf("after Flush:\n%s\nwant:\n%s", got, want)
	}
	if got := read("acct/20261122"); got != "11/22/2026 23:59:58;Q;1.vm;queue=batch\n" {
		t.Fatalf("accounting after Flush: %q", got)
	}
	// An immediate line writes the held ones first; a new day's line
	// sends the held ones to the old day's file.
	l.LogLater(logline.EventJob, logline.ClassJob, "2.vm", "held c")
	l.Log(logline.EventJob, logline.ClassJob, "2.vm", "now")
	l.LogLater(logline.EventJob, logline.ClassJob, "3.vm", "held d")
	a.RecordLater(AcctQueue, "3.vm", "queue=batch")
	now = now.Add(2 * time.Second)
	l.Log(logline.EventJob, logline.ClassJob, "4.vm", "next day")
	a.Record(AcctDelete, "3.vm", "requestor=root@vm")
	l.LogLater(logline.EventJob, logline.ClassJob, "5.vm", "held at close")
	l.Close()
	a.Close()
	want += "11/22/2026 23:59:58;0008;PBS_Server;Job;2.vm;held c\n" +
		"11/22/2026 23:59:58;0008;PBS_Server;Job;2.vm;now\n" +
		"11/22/2026 23:59:58;0008;PBS_Server;Job;3.vm;held d\n"
	if got := read("20261122"); got != want {
		t.Fatalf("first day:\n%s\nwant:\n%s", got, want)
	}
	if got, want := read("20261123"), "11/23/2026 00:00:00;0008;PBS_Server;Job;4.vm;next day\n"+
		"11/23/2026 00:00:00;0008;PBS_Server;Job;5.vm;held at close\n"; got != want {
		t.Fatalf("second day:\n%s\nwant:\n%s", got, want)
	}
	if got := read("acct/20261122"); !strings.HasSuffix(got, "11/22/2026 23:59:58;Q;3.vm;queue=batch\n") {
		t.Fatalf("held record of the first day: %q", got)
	}
	if got := read("acct/20261123"); got != "11/23/2026 00:00:00;D;3.vm;requestor=root@vm\n" {
		t.Fatalf("second day's accounting: %q", got)
	}
}
