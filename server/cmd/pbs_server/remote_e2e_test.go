package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

// buildClients compiles qmove and qstat once per test binary.
func buildClients(t *testing.T) string {
	t.Helper()
	return e2e.Build(t, "qmove", "qstat").Dir
}

// TestMoveBetweenServerProcesses runs two pbs_server processes on
// loopback and moves a job from one to the other with the real qmove
// (destination queue@host:port); the first server then sends qstat to
// the second through LocateJob and its tracking table.
func TestMoveBetweenServerProcesses(t *testing.T) {
	b := build(t)
	clients := buildClients(t)
	var ports [2]int
	var roots [2]*clientConn
	for i := range ports {
		ports[i] = e2e.FreePort(t)
		startServer(t, b, t.TempDir(), ports[i], "create")
		roots[i] = connect(t, b, ports[i], nil, false)
		roots[i].must(manage("root", batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution")))
		roots[i].must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch",
			batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")))
		roots[i].must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch")))
		roots[i].must(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root")))
	}
	id := roots[0].submit("root", "#!/bin/sh\nsleep 1\n")
	run := func(port int, name string, args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(clients, name), args...)
		cmd.Env = append(os.Environ(), "PBS_DEFAULT=localhost", "PBS_BATCH_SERVICE_PORT="+strconv.Itoa(port),
			"PBSBINDIR="+b.Dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	dest := "batch@127.0.0.1:" + strconv.Itoa(ports[1])
	if out, err := run(ports[0], "qmove", dest, id); err != nil {
		t.Fatalf("qmove %s %s: %v\n%s", dest, id, err, out)
	}
	if _, ok := roots[0].jobs("root")[id]; ok {
		t.Fatalf("job %s still on the first server", id)
	}
	if _, ok := roots[1].jobs("root")[id]; !ok {
		t.Fatalf("job %s not on the second server", id)
	}
	// qstat asks the first server, which no longer has the job and
	// answers LocateJob with the second server
	out, err := run(ports[0], "qstat", id)
	if err != nil || !strings.Contains(out, id) || !strings.Contains(out, " Q batch") {
		t.Fatalf("qstat %s through the first server: %v\n%s", id, err, out)
	}
}
