package compattests

// This file holds the MOM replay suites' MOM under test: a GoPBS pbs_mom
// started in the capture namespace with the sockets that play its
// server, the captures it is replayed from, and the server's requests
// both suites send it outside the captures (killJob, deleteJob). The
// suites are in mom_replay_rpp_test.go and mom_replay_jobs_test.go.

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/capture"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
)

// The MOM replay suite starts a GoPBS pbs_mom with the capture host name
// and plays both of its peers from the captures: pbs_server (the launch,
// polls, stage-out and delete connections to the batch port; the IS
// stream) and momctl (RM over RPP). Every MOM message is compared with the
// captured one after normalising the values that must differ (session
// ids, resource usage, memory sizes, load, the kernel, keys).

// momUnderTest is a GoPBS pbs_mom daemon plus the sockets that play its
// server.
type momUnderTest struct {
	home              string
	batchPort, rmPort int
	serverPort        int
	srvTCP            net.Listener
	srvUDP            *net.UDPConn
	cmd               *exec.Cmd // daemon's
	daemon            *e2e.Daemon
	ns                *captureNamespace
	serverDatagrams   chan udpPacket
}

type udpPacket struct {
	from netip.AddrPort
	b    []byte
	at   time.Time // when it was read
}

// startCaptureMom builds pbs_mom and runs it in the capture namespace
// (host name vm, /home of the capture users) with cfg as mom_priv/config
// and env (NAME=value) added to its environment.
func startCaptureMom(t *testing.T, cfg string, env ...string) *momUnderTest {
	t.Helper()
	ns := newCaptureNamespace(t)
	bin := e2e.Build(t, "pbs_mom").Path("pbs_mom")
	base := e2e.Dir(t)
	ports := e2e.FreePorts(t, 3)
	m := &momUnderTest{home: filepath.Join(base, "torque"), batchPort: ports[0], rmPort: ports[1], serverPort: ports[2],
		ns: ns, serverDatagrams: make(chan udpPacket, 256)}
	var err error
	if err := os.MkdirAll(filepath.Join(m.home, "mom_priv"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.home, "mom_priv", "config"), []byte("$pbsserver vm\n"+cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if m.srvTCP, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", m.serverPort)); err != nil {
		t.Fatal(err)
	}
	if m.srvUDP, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(m.serverPort)))); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(m.serverDatagrams)
		buf := make([]byte, 65536)
		for {
			n, from, err := m.srvUDP.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			m.serverDatagrams <- udpPacket{netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), bytes.Clone(buf[:n]), time.Now()}
		}
	}()
	args := append(append([]string(nil), env...), bin, "-D", "-d", m.home, "-M", strconv.Itoa(m.batchPort),
		"-R", strconv.Itoa(m.rmPort), "-S", strconv.Itoa(m.serverPort))
	// (cleanups run last first: this one after the daemon's stop)
	t.Cleanup(func() {
		m.srvTCP.Close()
		m.srvUDP.Close()
		if t.Failed() {
			if logs, _ := filepath.Glob(filepath.Join(m.home, "mom_logs", "*")); len(logs) > 0 {
				b, _ := os.ReadFile(logs[len(logs)-1])
				t.Logf("mom_logs:\n%s", b)
			}
		}
	})
	m.daemon = e2e.Start(t, "pbs_mom", ns.command("root", 0, 0, "/usr/bin/env", args...))
	m.cmd = m.daemon.Cmd
	m.daemon.WaitListening(t, fmt.Sprintf("127.0.0.1:%d", m.batchPort), 10*time.Second)
	return m
}

func loadCapture(t *testing.T, id int) *capture.Capture {
	t.Helper()
	dir := requireCaptures(t)
	names, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%d-*.pcap", id)))
	if len(names) != 1 {
		t.Skipf("capture %d not found", id)
	}
	c, err := capture.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// batchConn connects to the MOM's batch port from a reserved port, as
// the server does; the test fails when the MOM does not accept within
// limit, which also bounds each exchange.
func (m *momUnderTest) batchConn(t *testing.T, limit time.Duration) *batchconn.Conn {
	t.Helper()
	c := batchconn.DialReserved(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(m.batchPort)), limit)
	c.Timeout = limit
	return c
}

// killJob ends a replayed job that would otherwise run on, whatever the
// MOM answers.
func killJob(t *testing.T, m *momUnderTest, id string) {
	c := m.batchConn(t, 10*time.Second)
	defer c.Close()
	c.Try(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "PBS_Server", &batchreq.SignalJob{JobID: id, Signal: "SIGKILL"}))
}

// deleteJob sends a DeleteJob from the server, whatever its outcome.
func deleteJob(t *testing.T, m *momUnderTest, id string) {
	c := m.batchConn(t, 10*time.Second)
	defer c.Close()
	c.Try(batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "PBS_Server", &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}))
}
