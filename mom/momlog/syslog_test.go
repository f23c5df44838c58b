package momlog

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/logline"
)

// listenSyslog plays the system logger on a socket in a temporary
// directory.
func listenSyslog(t *testing.T, path string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readSyslog(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no syslog message: %v", err)
	}
	return string(buf[:n])
}

func TestSyslog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	srv := listenSyslog(t, path)
	l := NewWriter(io.Discard, "pbs_mom", logline.EventAll)
	if l.SyslogEnabled() {
		t.Fatal("syslog enabled before SetSyslog")
	}
	s := NewSyslog(path, "pbs_mom")
	defer s.Close()
	l.SetSyslog(s)
	if !l.SyslogEnabled() {
		t.Fatal("SyslogEnabled false after SetSyslog")
	}
	l.SetClock(func() time.Time { return time.Date(2026, 11, 22, 5, 6, 7, 0, time.UTC) })
	pid := strconv.Itoa(os.Getpid())

	l.Record(logline.EventDebug, ClassJob, "1.vm", "debug lines stay in the file")
	l.Error(0, "", "mom_main", "cannot bind")
	if got, want := readSyslog(t, srv), "<27>Nov 22 05:06:07 pbs_mom["+pid+"]: Svr;pbs_mom;LOG_ERROR::mom_main, cannot bind"; got != want {
		t.Errorf("error record:\n got %q\nwant %q", got, want)
	}
	l.Record(logline.EventSystem, ClassServer, "pbs_mom", "Is up\nand running")
	if got, want := readSyslog(t, srv), "<29>Nov 22 05:06:07 pbs_mom["+pid+"]: Svr;pbs_mom;Is up and running"; got != want {
		t.Errorf("system record:\n got %q\nwant %q", got, want)
	}
	// Masked records are not copied either.
	l.SetMask(logline.EventDebug)
	l.Record(logline.EventAdmin, ClassServer, "pbs_mom", "masked")
	l.Record(logline.EventAdmin|logline.EventForce, ClassServer, "pbs_mom", "forced")
	if got := readSyslog(t, srv); got != "<29>Nov 22 05:06:07 pbs_mom["+pid+"]: Svr;pbs_mom;forced" {
		t.Errorf("after the mask: %q", got)
	}
}

// TestSyslogAbsent: without a system logger lines are dropped, logging
// goes on, and a logger that appears later gets the next lines.
func TestSyslogAbsent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	l := NewWriter(io.Discard, "pbs_mom", logline.EventAll)
	s := NewSyslog(path, "pbs_mom")
	defer s.Close()
	l.SetSyslog(s)
	l.Error(0, "", "f", "nobody listens")
	srv := listenSyslog(t, path)
	l.Error(0, "", "f", "now someone does")
	if got := readSyslog(t, srv); !strings.Contains(got, "now someone does") {
		t.Errorf("got %q", got)
	}
	// The logger restarts: the next line reconnects.
	srv.Close()
	os.Remove(path)
	srv = listenSyslog(t, path)
	l.Error(0, "", "f", "after the restart")
	if got := readSyslog(t, srv); !strings.Contains(got, "after the restart") {
		t.Errorf("got %q", got)
	}
}
