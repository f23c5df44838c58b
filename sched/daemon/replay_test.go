package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/internal/capture"
	"gopbs/internal/capture/capturetest"
	"gopbs/sched/config"
)

// eventLog records, in order, the requests the fake server received and
// the MOM queries made.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(s string) { l.mu.Lock(); l.events = append(l.events, s); l.mu.Unlock() }

// fakeMom answers like the MOM of capture 72.
type fakeMom struct {
	log   *eventLog
	mu    sync.Mutex
	hosts []string
	lines [][]string
}

func (m *fakeMom) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	m.log.add("mom " + host)
	m.mu.Lock()
	m.hosts = append(m.hosts, host)
	m.lines = append(m.lines, lines)
	m.mu.Unlock()
	return []string{"ncpus=2", "arch=linux", "physmem=24731708kb", "loadave=0.21", "max_load=? 15201", "ideal_load=? 15201"}, nil
}

// newTestDaemon makes a daemon in a temporary PBS_HOME with the shipped
// sched_config.
func newTestDaemon(t testing.TB, schedConfig string, mom *fakeMom, at time.Time) *Daemon {
	t.Helper()
	home := t.TempDir()
	priv := filepath.Join(home, "sched_priv")
	for _, d := range []string{priv, filepath.Join(home, "sched_logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(priv, "sched_config"), []byte(schedConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Home: home, Stderr: io.Discard}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mom != nil {
		d.Mom = mom
	}
	d.Now = func() time.Time { return at }
	d.Sched.Location = time.UTC
	t.Cleanup(func() { d.Close() })
	return d
}

// replay plays the server side of a captured scheduler connection against
// the daemon: it writes the command, then for every captured request
// checks that the daemon sends exactly those bytes and answers with the
// captured reply; finally it expects the daemon to close.
func replay(t *testing.T, d *Daemon, conn *capture.Conn, log *eventLog) {
	t.Helper()
	srvSide, schedSide := net.Pipe()
	// On a mismatch the daemon must not wait for its alarm (180 s).
	defer srvSide.Close()
	done := make(chan bool, 1)
	go func() { done <- d.Handle(context.Background(), schedSide) }()
	srvSide.SetDeadline(time.Now().Add(10 * time.Second))
	turns := conn.Turns()
	for i, turn := range turns {
		if turn.FromClient { // the server's bytes
			if _, err := srvSide.Write(turn.Data); err != nil {
				t.Fatalf("turn %d: write: %v", i, err)
			}
			continue
		}
		got := make([]byte, len(turn.Data))
		if _, err := io.ReadFull(srvSide, got); err != nil {
			t.Fatalf("turn %d: reading request: %v (want %q)", i, err, turn.Data)
		}
		if !bytes.Equal(got, turn.Data) {
			t.Fatalf("turn %d: request\n got %q\nwant %q", i, got, turn.Data)
		}
		log.add(fmt.Sprintf("req %q", turn.Data[:min(len(turn.Data), 14)]))
	}
	// No Disconnect: the next thing is EOF.
	extra, err := io.ReadAll(srvSide)
	if err != nil || len(extra) != 0 {
		t.Fatalf("after the last reply: %q, %v (want close without Disconnect)", extra, err)
	}
	if quit := <-done; quit {
		t.Fatal("daemon wants to quit")
	}
}

func schedConns(t *testing.T, name string) []*capture.Conn {
	c := capturetest.Read(t, name)
	var out []*capture.Conn
	for _, conn := range c.Conns {
		if conn.Server.Port() == 15004 {
			out = append(out, conn)
		}
	}
	return out
}

func TestReplayCaptures(t *testing.T) {
	tests := []struct {
		pcap  string
		at    string // local time of the cycle
		conns int    // scheduler connections in the capture
		runs  []string
	}{
		{"71-qmgr-set-scheduling-true.pcap", "2026-11-22T01:23:43Z", 1, nil},
		{"72-sched-cycle-qsub.pcap", "2026-11-22T01:24:29Z", 2, []string{"12.vm"}},
		{"73-job-lifecycle-full.pcap", "2026-11-22T01:24:44Z", 3, []string{"13.vm"}},
		{"74-array-job-run.pcap", "2026-11-22T01:24:57Z", 4, []string{"14[0].vm", "14[1].vm"}},
	}
	for _, tt := range tests {
		t.Run(tt.pcap, func(t *testing.T) {
			conns := schedConns(t, tt.pcap)
			if len(conns) != tt.conns {
				t.Fatalf("%d scheduler connections in capture", len(conns))
			}
			at, _ := time.Parse(time.RFC3339, tt.at)
			log := &eventLog{}
			mom := &fakeMom{log: log}
			d := newTestDaemon(t, config.Shipped, mom, at)
			var logBuf bytes.Buffer
			d.Log = newBufLogger(&logBuf, at)
			d.Sched.Log = d.Log
			for _, conn := range conns {
				replay(t, d, conn, log)
			}
			for i, h := range mom.hosts {
				if h != "vm" || strings.Join(mom.lines[i], " ") != "ncpus arch physmem loadave max_load ideal_load" {
					t.Errorf("mom query %d: %s %v", i, h, mom.lines[i])
				}
			}
			var runs []string
			for _, line := range strings.Split(logBuf.String(), "\n") {
				if strings.HasSuffix(line, ";Job Run") {
					f := strings.Split(line, ";")
					runs = append(runs, f[4])
					if f[1] != "0040" || f[2] != " pbs_sched" || f[3] != "Job" {
						t.Errorf("log line %q", line)
					}
				}
			}
			if strings.Join(runs, ",") != strings.Join(tt.runs, ",") {
				t.Errorf("Job Run lines for %v, want %v\n%s", runs, tt.runs, logBuf.String())
			}
			// The MOM query sits between StatusNode and StatusQue.
			for i, e := range log.events {
				if strings.HasPrefix(e, "mom ") && (i == 0 || !strings.Contains(log.events[i-1], "+2+12+58+")) {
					t.Errorf("MOM query after %q", log.events[max(i-1, 0)])
				}
			}
		})
	}
}

// TestReplayAllCaptures replays every scheduler connection of every
// capture, each capture with a fresh daemon (the shipped sched_config),
// the clock set to the connection's start.
func TestReplayAllCaptures(t *testing.T) {
	files := capturetest.PcapFiles(t)
	replayed := 0
	for _, f := range files {
		c, err := capture.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var conns []*capture.Conn
		for _, conn := range c.Conns {
			if conn.Server.Port() == 15004 {
				conns = append(conns, conn)
			}
		}
		if len(conns) == 0 {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			log := &eventLog{}
			d := newTestDaemon(t, config.Shipped, &fakeMom{log: log}, conns[0].Start.UTC())
			for _, conn := range conns {
				at := conn.Start.UTC()
				d.Now = func() time.Time { return at }
				replay(t, d, conn, log)
				replayed++
			}
		})
	}
	t.Logf("%d scheduler connections replayed", replayed)
}
