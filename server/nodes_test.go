package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

func readNodes(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNodesFileManager: qmgr's node operations through the server keep
// server_priv/nodes in TORQUE's format, each change in the file by the
// time it is acknowledged.
func TestNodesFileManager(t *testing.T) {
	cl := newCluster(t)
	path := filepath.Join(cl.home, "server_priv", "nodes")
	// setupCluster created node vm
	if got := readNodes(t, path); got != "vm np=2\n" {
		t.Fatalf("nodes file of the set-up: %q", got)
	}
	for _, r := range []struct {
		req  *batchreq.Request
		want string
	}{
		{mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n1", attr("np", "4"), attr("properties", "fast")), "vm np=2\nn1 np=4 fast\n"},
		{mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n2"), "vm np=2\nn1 np=4 fast\nn2\n"},
		{mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n3", attr("ntype", "time-shared"), attr("gpus", "2")), "vm np=2\nn1 np=4 fast\nn2\nn3:ts gpus=2\n"},
		{mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "n2", attr("np", "2")), "vm np=2\nn1 np=4 fast\nn2 np=2\nn3:ts gpus=2\n"},
		{mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "n2", attr("note", "no change to the file")), "vm np=2\nn1 np=4 fast\nn2 np=2\nn3:ts gpus=2\n"},
		{mgr(batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_NODE, "n1"), "vm np=2\nn2 np=2\nn3:ts gpus=2\n"},
		{mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "n4", attr("np", "8")), "vm np=2\nn2 np=2\nn3:ts gpus=2\nn4 np=8\n"},
	} {
		if p := cl.root.do(r.req); p.Code != 0 {
			t.Fatalf("%s %s: %d %q", batchreq.RequestName(r.req.Type), r.req.Body.(*batchreq.Manage).ObjName, p.Code, p.Text)
		}
		if got := readNodes(t, path); got != r.want {
			t.Fatalf("after %s: %q, want %q", r.req.Body.(*batchreq.Manage).ObjName, got, r.want)
		}
	}
}

// TestNodesFileSurvivesKill: pbs_server is killed with SIGKILL right
// after acknowledging the last of a series of node creations: every
// acknowledged node is in server_priv/nodes, and a warm restart has all
// of them.
func TestNodesFileSurvivesKill(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	start, home, port := e2eServerProcess(t)
	server := start("create")
	c := e2eDial(t, port)
	const n = 300
	var want strings.Builder
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("sim%04d", i)
		if p := c.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, name, attr("np", "8"))); p.Code != 0 {
			t.Fatalf("create %s: %d %q", name, p.Code, p.Text)
		}
		want.WriteString(name + " np=8\n")
	}
	server.Kill()
	c.nc.Close()
	if got := readNodes(t, filepath.Join(home, "server_priv", "nodes")); got != want.String() {
		t.Fatalf("nodes file after SIGKILL: %d lines, want %d", strings.Count(got, "\n"), n)
	}
	start("warm")
	c = e2eDial(t, port)
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{}))
	if p.Code != 0 || len(p.Status) != n {
		t.Fatalf("nodes after the warm restart: %d, code %d", len(p.Status), p.Code)
	}
}
