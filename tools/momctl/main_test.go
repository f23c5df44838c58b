package main

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/momproto"
	"gopbs/rpp"
)

// fakeRM is a resource monitor answering one stream at a time with a
// fixed reply, recording the messages it receives.
type fakeRM struct {
	ep    *rpp.Endpoint
	port  int
	reply []byte
	got   chan []string // the quoted messages of each stream
}

func newFakeRM(t *testing.T, reply []byte) *fakeRM {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRM{ep: rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40}),
		port: pc.LocalAddr().(*net.UDPAddr).Port, reply: reply, got: make(chan []string, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); f.ep.Close() })
	go func() {
		for {
			s, err := f.ep.Accept(ctx)
			if err != nil {
				return
			}
			var msgs []string
			for {
				m, err := s.Recv(ctx)
				if err != nil {
					break
				}
				msgs = append(msgs, string(m))
				if req, err := momproto.DecodeRMRequest(m); err == nil && req.Command != momproto.RM_CMD_CLOSE && f.reply != nil {
					s.Send(f.reply)
				}
			}
			s.Close()
			f.got <- msgs
		}
	}()
	return f
}

func testClient() *client {
	return &client{
		dial: func(mom netip.AddrPort) (*net.UDPConn, error) {
			return net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(mom))
		},
		rpp:     &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 10},
		timeout: 5 * time.Second,
	}
}

func reply(code int, answers ...string) []byte {
	return (&momproto.RMReply{Code: code, Answers: answers}).Append(nil)
}

func TestMomctl(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("$pbsserver vm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		reply  []byte
		sent   []string // messages MOM receives
		stdout string
		stderr string
		status int
	}{
		{"query one (capture 24)", []string{"-q", "loadave"}, reply(100, "loadave=0.37"),
			[]string{"+1+1+2+7loadave", "+1+1+1"}, "   localhost:      loadave = 'loadave=0.37'\n", "", 0},
		{"query several (capture 25)", []string{"-q", "physmem", "-q", "ncpus", "-q", "arch"},
			reply(100, "physmem=24731708kb", "ncpus=2", "arch=linux"),
			[]string{"+1+1+2+7physmem+5ncpus+4arch", "+1+1+1"},
			"   localhost:      physmem = 'physmem=24731708kb'\n   localhost:        ncpus = 'ncpus=2'\n   localhost:         arch = 'arch=linux'\n", "", 0},
		{"unknown resource", []string{"-q", "bogusname"}, reply(100, "bogusname=? 15201"),
			[]string{"+1+1+2+9bogusname", "+1+1+1"}, "   localhost:    bogusname = 'bogusname=? 15201'\n", "", 0},
		{"diag (capture 23)", []string{"-d", "3"}, reply(100, "\nHost: vm/vm\n\ndiagnostics complete\n"),
			[]string{"+1+1+2+5diag3", "+1+1+1"}, "\nHost: vm/vm\n\ndiagnostics complete\n\n", "", 0},
		{"cycle (capture 26)", []string{"-C"}, reply(100, "cycle forced"),
			[]string{"+1+1+2+5cycle", "+1+1+1"}, "mom localhost successfully cycled cycle forced\n", "", 0},
		{"clearjob", []string{"-c", "all"}, reply(100, "clear completed"),
			[]string{"+1+1+22+12clearjob=all", "+1+1+1"}, "mom localhost clearjob all: clear completed\n", "", 0},
		{"shutdown", []string{"-s"}, reply(100), []string{"+1+1+4", "+1+1+1"}, "mom localhost successfully shut down\n", "", 0},
		{"reconfig", []string{"-r", cfg}, reply(100), []string{"+1+1+32+21CONFIG:$pbsserver vm\n", "+1+1+1"},
			"mom localhost successfully reconfigured\n", "", 0},
		{"reconfig local", []string{"-r", "LOCAL"}, reply(100), []string{"+1+1+3", "+1+1+1"},
			"mom localhost successfully reconfigured\n", "", 0},
		{"refused", []string{"-r", "LOCAL"}, reply(999), []string{"+1+1+3", "+1+1+1"},
			"", "momctl: localhost: request refused (RM_RSP_ERROR)\n", 1},
		{"two hosts", []string{"-h", "localhost,127.0.0.1", "-q", "ncpus"}, reply(100, "ncpus=2"),
			[]string{"+1+1+2+5ncpus", "+1+1+1", "+1+1+2+5ncpus", "+1+1+1"},
			"   localhost:        ncpus = 'ncpus=2'\n   127.0.0.1:        ncpus = 'ncpus=2'\n", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRM(t, tc.reply)
			var stdout, stderr strings.Builder
			args := append([]string{"-p", strconv.Itoa(f.port)}, tc.args...)
			status := run(args, &stdout, &stderr, testClient())
			if status != tc.status || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, %q, %q", status, stdout.String(), stderr.String(),
					tc.status, tc.stdout, tc.stderr)
			}
			var sent []string
			for len(sent) < len(tc.sent) {
				select {
				case m := <-f.got:
					sent = append(sent, m...)
				case <-time.After(5 * time.Second):
					t.Fatalf("MOM received %q, want %q", sent, tc.sent)
				}
			}
			if strings.Join(sent, "|") != strings.Join(tc.sent, "|") {
				t.Errorf("MOM received %q, want %q", sent, tc.sent)
			}
		})
	}
}

func TestMomctlNoMom(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	c := testClient()
	c.timeout = time.Second
	var stdout, stderr strings.Builder
	if status := run([]string{"-p", strconv.Itoa(port), "-q", "ncpus"}, &stdout, &stderr, c); status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "momctl: localhost: ") || !strings.Contains(stderr.String(), "connection refused") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestMomctlUsage(t *testing.T) {
	for _, args := range [][]string{
		{},                           // no action
		{"-x"},                       // unknown option
		{"-q"},                       // missing argument
		{"-C", "-s"},                 // two actions
		{"-q", "a", "-d", "1"},       // two actions
		{"-d", "x"},                  // bad level
		{"-d", "9"},                  // bad level
		{"-c", "a.b"},                // malformed job id
		{"-C", "-p", "0"},            // bad port
		{"-C", "-h", "a", "-f", "b"}, // two host sources
		{"-C", "extra"},              // operand
		{"-r", "/nonexistent/file"},  // unreadable config
	} {
		var stdout, stderr strings.Builder
		status := run(args, &stdout, &stderr, testClient())
		if status != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), usageText) {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, status, stdout.String(), stderr.String())
		}
	}
}

func TestReadHostFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, []byte("n1 n2,n3\n# comment\n\nn4 # trailing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts, err := readHostFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hosts, ","); got != "n1,n2,n3,n4" {
		t.Errorf("hosts %s", got)
	}
}
