package compattests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// e2eClientUser is the unprivileged account the end-to-end test runs the
// client commands as.
const e2eClientUser = "gopbsclient"

// TestClientsEndToEnd starts a GoPBS pbs_server on an ephemeral loopback
// port and drives it with the GoPBS client commands: root configures a
// queue with qmgr, and an unprivileged user submits, lists and deletes a
// job, authenticated by the real setuid-root pbs_iff.
func TestClientsEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: setuid pbs_iff, an unprivileged test user")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "server", "cmd", "pbs_server", "main.go")); err != nil {
		t.Skip("pbs_server not present yet")
	}
	u, err := user.Lookup(e2eClientUser)
	if err != nil {
		if out, err := exec.Command("useradd", "-M", "-r", "-s", "/bin/false", e2eClientUser).CombinedOutput(); err != nil {
			t.Skipf("cannot create user %s: %v %s", e2eClientUser, err, out)
		}
		if u, err = user.Lookup(e2eClientUser); err != nil {
			t.Skip(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	dir, err := os.MkdirTemp("", "gopbs-client-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, home, work := filepath.Join(dir, "bin"), filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{bin, home, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chown(work, uid, gid)
	pkgs := []string{"./server/cmd/pbs_server", "./tools/pbs_iff", "./tools/qsub", "./tools/qstat", "./tools/qdel", "./tools/qmgr",
		"./tools/qhold", "./tools/qrls", "./tools/qalter", "./tools/qselect", "./tools/qmove", "./tools/qorder",
		"./tools/qenable", "./tools/qdisable", "./tools/qterm"}
	build := exec.Command("go", append([]string{"build", "-ldflags", "-X gopbs/pbs.SbinDir=" + bin, "-o", bin + "/"}, pkgs...)...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	iff := filepath.Join(bin, "pbs_iff")
	if err := os.Chown(iff, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(iff, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := exec.Command(filepath.Join(bin, "pbs_server"), "-D", "-f", "-t", "create", "-d", home,
		"-p", strconv.Itoa(port), "-H", "localhost")
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if nc, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pbs_server did not listen:\n%s", srvErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	env := []string{"PATH=/usr/bin:/bin", "PBS_DEFAULT=localhost:" + strconv.Itoa(port), "LANG=C"}
	stdin := ""
	run := func(asUser bool, name string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Dir = work
		if asUser {
			cmd.Env = append(env, "HOME="+work, "LOGNAME="+e2eClientUser, "USER="+e2eClientUser)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		} else {
			cmd.Env = append(env, "HOME=/root", "LOGNAME=root", "USER=root")
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = 5 * time.Second
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s %q hung", name, args)
		}
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	}
	expect := func(asUser bool, wantExit int, name string, args ...string) string {
		t.Helper()
		out, errOut, code := run(asUser, name, args...)
		if code != wantExit {
			t.Fatalf("%s %q: exit %d, want %d\nstdout: %s\nstderr: %s\nserver: %s", name, args, code, wantExit, out, errOut, srvErr.String())
		}
		return out + errOut
	}

	for _, c := range []string{
		"create queue batch queue_type=execution",
		"set queue batch enabled=true, started=true",
		"set server default_queue=batch",
	} {
		if out := expect(false, 0, "qmgr", "-a", "-c", c); out != "" {
			t.Fatalf("qmgr -c %q printed %q", c, out)
		}
	}
	stdin = "active queue batch\nset queue started = true\nlist queue\nprint queue batch\nquit\n"
	session := expect(false, 0, "qmgr")
	stdin = ""
	for _, want := range []string{"Max open servers: 10239\nactive queue batch\n", "\nQueue batch\n\tqueue_type = Execution\n",
		"\n#\n# Create and define queue batch\n#\ncreate queue batch\nset queue batch queue_type = Execution\n", "\nquit\n"} {
		if !strings.Contains(session, want) {
			t.Fatalf("qmgr session lacks %q:\n%s", want, session)
		}
	}
	if out := expect(true, 0, "qstat", "-B"); !strings.Contains(out, "Active") && !strings.Contains(out, "Idle") {
		t.Fatalf("qstat -B as %s:\n%s", e2eClientUser, out)
	}
	script := filepath.Join(work, "job.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n#PBS -N e2ejob\nsleep 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(expect(true, 0, "qsub", "-h", "job.sh"))
	if !strings.HasPrefix(id, "0.") && !strings.Contains(id, ".") {
		t.Fatalf("qsub printed %q", id)
	}
	list := expect(true, 0, "qstat")
	if !strings.Contains(list, "e2ejob") || !strings.Contains(list, e2eClientUser) || !strings.Contains(list, " H ") {
		t.Fatalf("qstat does not list the held job %s:\n%s", id, list)
	}
	full := expect(true, 0, "qstat", "-f", id)
	if !strings.Contains(full, "Job_Owner = "+e2eClientUser+"@") {
		t.Fatalf("qstat -f %s:\n%s", id, full)
	}
	// Job manipulation as the owner.
	expect(false, 0, "qmgr", "-a", "-c", "create queue other queue_type=execution,enabled=true,started=true")
	expect(true, 0, "qalter", "-N", "renamed", "-l", "walltime=00:03:00", id)
	expect(true, 0, "qrls", id)
	expect(true, 0, "qhold", id)
	if out := expect(true, 0, "qselect", "-s", "H", "-u", e2eClientUser); strings.TrimSpace(out) != id {
		t.Fatalf("qselect -s H printed %q, want %s", out, id)
	}
	expect(true, 0, "qmove", "other", id)
	full = expect(true, 0, "qstat", "-f", id)
	for _, want := range []string{"Job_Name = renamed", "Resource_List.walltime = 00:03:00", "queue = other", "Hold_Types = u"} {
		if !strings.Contains(full, want) {
			t.Fatalf("qstat -f after qalter/qmove lacks %q:\n%s", want, full)
		}
	}
	id2 := strings.TrimSpace(expect(true, 0, "qsub", "-h", "-q", "other", "job.sh"))
	expect(true, 0, "qorder", id, id2)
	expect(true, 0, "qdel", id2)
	expect(false, 0, "qdisable", "other")
	if out := expect(true, 175, "qsub", "-q", "other", "job.sh"); !strings.HasPrefix(out, "qsub: Queue is not enabled") {
		t.Fatalf("qsub into a disabled queue printed %q", out)
	}
	expect(false, 0, "qenable", "other")
	expect(true, 0, "qdel", id)
	if out := expect(true, 153, "qstat", id); out != "qstat: Unknown Job Id "+id+"\n" {
		t.Fatalf("qstat of the deleted job printed %q", out)
	}
	// Purging completed jobs (qdel -c, empty object name) is for
	// operators and managers only (spec 02 §5 extensions).
	expect(false, 0, "qdel", "-c")
	if out := expect(true, 159, "qdel", "-c"); !strings.HasPrefix(out, "qdel: Unauthorized Request  MSG=must have operator or manager privilege to use -c parameter") {
		t.Fatalf("qdel -c as %s printed %q", e2eClientUser, out)
	}
	// An unprivileged user may not shut the server down; root may.
	if out := expect(true, 2, "qterm"); !strings.HasPrefix(out, "qterm: Unauthorized Request") {
		t.Fatalf("qterm as %s printed %q", e2eClientUser, out)
	}
	expect(false, 0, "qterm", "-t", "quick")
}
