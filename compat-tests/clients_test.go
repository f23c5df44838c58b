package compattests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/dis"
	"gopbs/internal/capture"
)

// pendingClient explains why a scenario's command cannot be compared yet.
var pendingClient = map[int]string{}

// TestClientsAgainstCaptures runs, in manifest order, the client command of
// every capture scenario against a fake server that replays the captured
// server replies, and compares the bytes the command sends, its stdout,
// stderr and exit status with the capture.
func TestClientsAgainstCaptures(t *testing.T) {
	dir := requireCaptures(t)
	ns := newCaptureNamespace(t)
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	home, err := os.MkdirTemp("", "gopbs-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte(captureHost+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := os.MkdirTemp("", "gopbs-clients-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	built := buildClients(t, bin, home, port)

	for i := range scenarios {
		sc := &scenarios[i]
		if len(sc.Argv) == 0 {
			continue
		}
		name := filepath.Base(sc.Argv[0])
		if !isClientCommand(name) {
			continue
		}
		label := fmt.Sprintf("%03d-%s", sc.ID, strings.Join(sc.Argv, " "))
		results.run(t, "clients", label, pendingClient[sc.ID], func(t *testing.T) string {
			if !built[name] {
				t.Skipf("%s is not implemented yet", name)
			}
			run := clientRun{user: sc.User, argv: sc.Argv, stdin: sc.Stdin, stdout: sc.Stdout, stderr: sc.Stderr, which: -1}
			if sc.ExitCode != nil {
				run.exit = *sc.ExitCode
			}
			return runScenario(t, ns, dir, sc, run, filepath.Join(bin, name), ln)
		})
	}
	// The other commands run during the second-round captures.
	for i := range scenarios {
		sc := &scenarios[i]
		for k, ec := range sc.ExtraCommands {
			if len(ec.Argv) == 0 || !isClientCommand(filepath.Base(ec.Argv[0])) {
				continue
			}
			name := filepath.Base(ec.Argv[0])
			label := fmt.Sprintf("%03d-extra%d-%s", sc.ID, k+1, strings.Join(ec.Argv, " "))
			results.run(t, "clients", label, pendingExtra[fmt.Sprintf("%d/%d", sc.ID, k+1)], func(t *testing.T) string {
				if !built[name] {
					t.Skipf("%s is not implemented yet", name)
				}
				run := clientRun{user: ec.User, argv: ec.Argv, stdout: ec.Stdout, stderr: ec.Stderr, exit: ec.ExitCode, which: k}
				return runScenario(t, ns, dir, sc, run, filepath.Join(bin, name), ln)
			})
		}
	}
}

func isClientCommand(name string) bool {
	for _, c := range clientCommands {
		if c == name && c != "pbs_iff" {
			return true
		}
	}
	return false
}

// clientRun is one command of a scenario: the main command or one of its
// extra commands (which is then its index, else -1), with what it printed.
type clientRun struct {
	user, stdin    string
	argv           []string
	stdout, stderr string
	exit           int
	which          int
}

// pendingExtra explains why an extra command ("scenario/index") cannot be
// compared yet.
var pendingExtra = map[string]string{}

func runScenario(t *testing.T, ns *captureNamespace, dir string, sc *capture.Scenario, run clientRun, path string, ln *net.TCPListener) string {
	cap, err := capture.ReadFile(filepath.Join(dir, sc.Pcap))
	if err != nil {
		t.Fatal(err)
	}
	login := run.user
	uid, gid := 0, 0
	if login != "root" {
		uid, gid = ensureUser(t, login)
	}
	h := ns.home(t, login, uid, gid)
	conns := conversationOf(cap, sc, run.which)
	if err := writeScripts(h, run.argv, conns, uid, gid); err != nil {
		t.Fatal(err)
	}

	f := &fakeServer{ln: ln, conns: conns}
	done := make(chan struct{})
	var mom *capture.Conn
	if run.which < 0 && sc.QsubListenPort != 0 {
		for _, cn := range cap.Conns {
			if int(cn.Server.Port()) == sc.QsubListenPort {
				mom = cn
			}
		}
	}
	go func() {
		f.serve()
		if mom != nil {
			// The MOM connects back once the submission is done.
			f.callBack(mom)
		}
		close(done)
	}()

	cmd := ns.commandPath(login, uid, gid, capturePath(cap), path, run.argv[1:]...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if run.stdin != "" {
		cmd.Stdin = strings.NewReader(run.stdin)
	}
	runErr := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { runErr <- cmd.Wait() }()
	select {
	case <-runErr:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-runErr
		f.fail("command did not finish within 60 s")
	}
	f.stop()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		f.fail("fake server did not finish")
	}
	f.extra()

	var diffs []string
	diffs = append(diffs, f.diffs...)
	want := run.exit
	if got := cmd.ProcessState.ExitCode(); got != want {
		diffs = append(diffs, "exit status "+strconv.Itoa(got)+", want "+strconv.Itoa(want))
	}
	wantOut, gotOut := run.stdout, stdout.String()
	if mom != nil {
		// The capture's output went through a terminal, which turned
		// every newline into CR LF.
		wantOut = strings.ReplaceAll(wantOut, "\r\n", "\n")
		gotOut = strings.ReplaceAll(gotOut, "\r\n", "\n")
	}
	if d := textDiff("stdout", wantOut, gotOut); d != "" {
		diffs = append(diffs, d)
	}
	if d := textDiff("stderr", run.stderr, stderr.String()); d != "" {
		diffs = append(diffs, d)
	}
	return strings.Join(diffs, "\n")
}

// writeScripts puts the job scripts a scenario submits into the user's
// home: every operand ending in ".sh", with the content the capture's
// JobScript request carries.
func writeScripts(home string, argv []string, conns []*capture.Conn, uid, gid int) error {
	var script []byte
	for _, cn := range conns {
		if s, ok := jobScript(cn.Stream(true)); ok {
			script = s
			break
		}
	}
	if script == nil {
		script = []byte("#!/bin/bash\nsleep 20\n")
	}
	for _, a := range argv[1:] {
		if !strings.HasSuffix(a, ".sh") || strings.Contains(a, "/") {
			continue
		}
		p := filepath.Join(home, a)
		if err := os.WriteFile(p, script, 0o644); err != nil {
			return err
		}
		_ = os.Chown(p, uid, gid)
	}
	return nil
}

// jobScript extracts the data of the first JobScript request of a client
// stream.
func jobScript(s []byte) ([]byte, bool) {
	i := bytes.Index(s, []byte("+2+1+3+"))
	if i < 0 {
		return nil, false
	}
	r := dis.NewReader(bytes.NewReader(s[i:]))
	for k := 0; k < 3; k++ {
		if _, err := r.Uint(); err != nil {
			return nil, false
		}
	}
	if _, err := r.Str(); err != nil { // user
		return nil, false
	}
	for k := 0; k < 3; k++ { // sequence, file type, size
		if _, err := r.Uint(); err != nil {
			return nil, false
		}
	}
	if _, err := r.Str(); err != nil { // job id
		return nil, false
	}
	data, err := r.Bytes()
	if err != nil {
		return nil, false
	}
	return data, true
}
