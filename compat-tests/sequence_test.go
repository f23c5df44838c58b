package compattests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/e2e"
)

// TestTorqueSequence drives pbs_server, pbs_mom and the client commands
// built from the tree through a sequence of its own, checking the exact
// output, exit status and node states TORQUE 2.5.13 gives for what real
// TORQUE clients, Maui and workflow tools met (issue 14 items 1-5):
//
//   - a node that has not reported is not free: "down,offline" when created
//     with qmgr, read from the nodes file or loaded at server start, free
//     once its MOM reports, and a node without a MOM stays down,offline;
//   - qsub -W x=... (scheduler extensions) is kept and shown by qstat -f;
//   - a node request no configured node can satisfy is refused at
//     submission (exit 190), a down or busy node does not make one so;
//   - the owner's qrerun of a queued job is refused for its state;
//   - qdel A B, B depending afterok on A, deletes both and exits 0.
func TestTorqueSequence(t *testing.T) {
	e2e.RequireRoot(t, "setuid pbs_iff, reserved ports, jobs run as test users")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	c := &schedCluster{t: t, acctSeen: map[string]int{}}
	for i, name := range schedE2EUsers {
		c.users[i] = e2e.User(t, name)
		c.users[i].MakeHome(t)
	}
	c.bin = e2e.Build(t, "pbs_server", "pbs_mom", "pbs_iff", "qsub", "qstat", "qmgr", "pbsnodes", "qdel", "qrerun").Dir
	c.base = e2e.Dir(t)
	c.work = filepath.Join(c.base, "work")
	c.svHome, c.momHome = filepath.Join(c.base, "server"), filepath.Join(c.base, "mom")
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(c.work, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{c.svHome, c.momHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	e2e.WriteFile(t, filepath.Join(c.momHome, "mom_priv", "config"), "$pbsserver localhost\n$status_update_time 2\n")
	ports := e2e.FreePorts(t, 4)
	c.svPort, c.momPort, c.rmPort, c.schdPort = ports[0], ports[1], ports[2], ports[3]
	e2e.LogFilesOnFailure(t, 20000, filepath.Join(c.base, "*", "*_logs", "*"))
	ps := strconv.Itoa
	startServer := func(init string) *e2e.Daemon {
		args := []string{"-D", "-t", init, "-d", c.svHome, "-p", ps(c.svPort), "-M", ps(c.momPort),
			"-R", ps(c.rmPort), "-S", ps(c.schdPort), "-H", "localhost"}
		if init == "create" {
			args = append(args, "-f")
		}
		d := c.start("pbs_server", args...)
		d.WaitListening(t, c.addr(c.svPort), 10*time.Second)
		return d
	}
	startMom := func() *e2e.Daemon {
		return c.start("pbs_mom", "-D", "-d", c.momHome, "-H", "localhost", "-M", ps(c.momPort), "-R", ps(c.rmPort), "-S", ps(c.svPort))
	}
	// expect runs a command and compares its stdout, stderr and exit
	// status with TORQUE's.
	expect := func(who int, want [3]string, name string, args ...string) string {
		t.Helper()
		out, errOut, code := c.run(who, name, args...)
		if want[0] != "*" && out != want[0] || errOut != want[1] || strconv.Itoa(code) != want[2] {
			t.Errorf("%s %q: stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %s", name, args, out, errOut, code, want[0], want[1], want[2])
		}
		return out
	}
	nodeState := func(name string) string {
		t.Helper()
		out, errOut, code := c.run(-1, "pbsnodes", name)
		if code != 0 {
			t.Fatalf("pbsnodes %s: exit %d %s", name, code, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "     state = "); ok {
				return v
			}
		}
		t.Fatalf("pbsnodes %s: no state in %q", name, out)
		return ""
	}
	wantState := func(name, want string) {
		t.Helper()
		if got := nodeState(name); got != want {
			t.Errorf("node %s: state = %s, want %s", name, got, want)
		}
	}

	srv := startServer("create")
	c.qmgr("create queue batch queue_type=execution",
		"set queue batch enabled=true",
		"set queue batch started=true",
		"set queue batch resources_default.nodes=1",
		"set server default_queue=batch",
		"set server scheduling=false",
		"set server keep_completed=0")

	// 1. Nodes created with qmgr: down,offline until their MOM reports.
	c.qmgr("create node localhost np=2", "create node ghost np=1")
	expect(-1, [3]string{"localhost\n     state = down,offline\n     np = 2\n     ntype = cluster\n     gpus = 0\n\n", "", "0"}, "pbsnodes", "localhost")
	wantState("ghost", "down,offline")

	// 3. Infeasible node requests are refused at submission; the nodes
	// being down does not make a request infeasible.
	script := filepath.Join(c.work, "job.sh")
	e2e.WriteFile(t, script, "#!/bin/sh\nsleep 0\n")
	const infeasible = "qsub: Job exceeds queue resource limits MSG=cannot locate feasible nodes (nodes file is empty or all systems are busy)\n"
	for _, spec := range []string{"nodes=1:ppn=3", "nodes=5", "nodes=ghost:ppn=2", "nodes=2:ppn=2"} {
		expect(0, [3]string{"", infeasible, "190"}, "qsub", "-l", spec, script)
	}
	idWide := strings.TrimSpace(expect(0, [3]string{"*", "", "0"}, "qsub", "-h", "-l", "nodes=localhost:ppn=2+ghost", script))
	if !strings.HasSuffix(idWide, ".localhost") {
		t.Fatalf("qsub printed %q", idWide)
	}

	// 1. The MOM reports: its node is free; the node without a MOM stays
	// down,offline and is listed by pbsnodes -l.
	mom := startMom()
	c.waitFor("node localhost to be free", 30*time.Second, func() bool { return nodeState("localhost") == "free" })
	wantState("ghost", "down,offline")
	expect(-1, [3]string{"ghost                down,offline\n", "", "0"}, "pbsnodes", "-l")

	// 2. Scheduler extensions pass through.
	idX := strings.TrimSpace(expect(0, [3]string{"*", "", "0"}, "qsub", "-h", "-W", "x=ADVRES:R12", script))
	full := expect(0, [3]string{"*", "", "0"}, "qstat", "-f", idX)
	if !strings.Contains(full, "\n    x = ADVRES:R12\n") {
		t.Errorf("qstat -f %s does not show x = ADVRES:R12:\n%s", idX, full)
	}

	// 4. The owner's qrerun of a queued job: its state is checked before
	// the privilege rerun needs.
	expect(0, [3]string{"", "qrerun: Request invalid for state of job " + idX + "\n", "170"}, "qrerun", idX)
	// another user's: not permitted
	expect(1, [3]string{"", "qrerun: Unauthorized Request  MSG=operation not permitted " + idX + "\n", "159"}, "qrerun", idX)

	// 5. qdel A B, B depending afterok on A: both deleted, exit 0.
	idA := strings.TrimSpace(expect(0, [3]string{"*", "", "0"}, "qsub", "-h", script))
	idB := strings.TrimSpace(expect(0, [3]string{"*", "", "0"}, "qsub", "-W", "depend=afterok:"+idA, script))
	expect(0, [3]string{"", "", "0"}, "qdel", idA, idB)
	for _, id := range []string{idA, idB} {
		expect(0, [3]string{"", "qstat: Unknown Job Id " + id + "\n", "153"}, "qstat", id)
	}

	// 1. At server start, nodes loaded from the store and read from the
	// nodes file are down,offline until their MOM reports.
	mom.Stop()
	srv.Stop()
	nodes := filepath.Join(c.svHome, "server_priv", "nodes")
	b, err := os.ReadFile(nodes)
	if err != nil {
		t.Fatal(err)
	}
	e2e.WriteFile(t, nodes, string(b)+"filenode np=4 fast\n")
	startServer("warm")
	for _, n := range []string{"localhost", "ghost", "filenode"} {
		wantState(n, "down,offline")
	}
	startMom()
	c.waitFor("node localhost to be free after the restart", 30*time.Second, func() bool { return nodeState("localhost") == "free" })
	wantState("filenode", "down,offline")
	// filenode counts for feasibility though it has not reported.
	expect(0, [3]string{"*", "", "0"}, "qsub", "-h", "-l", "nodes=1:fast:ppn=4", script)
	expect(0, [3]string{"", infeasible, "190"}, "qsub", "-l", "nodes=1:fast:ppn=5", script)
}

// localhostAlias returns the HOSTALIASES setting under which the client
// commands take "localhost", the name the tests' servers have, as its
// own full name (a HOSTALIASES name is, spec 05 §1.1): the job ids they
// print do not depend on what 127.0.0.1 reverse-resolves to on this
// machine (its host name first, on some). The file is written in dir,
// which the test users can read.
func localhostAlias(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "hostaliases")
	if _, err := os.Stat(path); err != nil {
		if err := os.WriteFile(path, []byte("localhost 127.0.0.1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("HOSTALIASES=%s", path)
}
