package compattests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/e2e"
)

// e2eClientUser is the unprivileged account the end-to-end test runs the
// client commands as.
const e2eClientUser = "gopbsclient"

// TestClientsEndToEnd starts a GoPBS pbs_server on an ephemeral loopback
// port and drives it with the GoPBS client commands: root configures a
// queue with qmgr, and an unprivileged user submits, lists and deletes a
// job, authenticated by the real setuid-root pbs_iff.
func TestClientsEndToEnd(t *testing.T) {
	e2e.RequireRoot(t, "setuid pbs_iff, an unprivileged test user")
	root, err := e2e.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "server", "cmd", "pbs_server", "main.go")); err != nil {
		t.Skip("pbs_server not present yet")
	}
	u := e2e.User(t, e2eClientUser)
	dir := e2e.Dir(t)
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chown(work, u.UID, u.GID)
	bin := e2e.Build(t, "pbs_server", "pbs_iff", "qsub", "qstat", "qdel", "qmgr", "qhold", "qrls", "qalter", "qselect",
		"qmove", "qorder", "qenable", "qdisable", "qterm").Dir

	port := e2e.FreePort(t)
	srv := e2e.Start(t, "pbs_server", exec.Command(filepath.Join(bin, "pbs_server"), "-D", "-f", "-t", "create", "-d", home,
		"-p", strconv.Itoa(port), "-H", "localhost"))
	srv.WaitListening(t, fmt.Sprintf("127.0.0.1:%d", port), 10*time.Second)

	env := []string{"PATH=/usr/bin:/bin", "PBS_DEFAULT=localhost:" + strconv.Itoa(port), "LANG=C", localhostAlias(t, work)}
	stdin := ""
	run := func(asUser bool, name string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Dir = work
		cmd.Env = append([]string(nil), env...)
		if asUser {
			u.AsUser(cmd, work)
		} else {
			cmd.Env = append(cmd.Env, "HOME=/root", "LOGNAME=root", "USER=root")
		}
		return e2e.Run(t, cmd, 30*time.Second)
	}
	expect := func(asUser bool, wantExit int, name string, args ...string) string {
		t.Helper()
		out, errOut, code := run(asUser, name, args...)
		if code != wantExit {
			t.Fatalf("%s %q: exit %d, want %d\nstdout: %s\nstderr: %s\nserver: %s", name, args, code, wantExit, out, errOut, srv.Output())
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
