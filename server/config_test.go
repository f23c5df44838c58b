package server

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestHomeLayoutAndDaemonOptions checks what pbs_server's options map to
// (server.Config): the PBS_HOME layout and lock file, the server name
// from server_name (-H unset), -a overriding the saved scheduling
// attribute, -L and -A naming the log and accounting files.
func TestHomeLayoutAndDaemonOptions(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte("headnode:15001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "server.log")
	acctFile := filepath.Join(t.TempDir(), "acct")
	start := func(init, scheduling string) *Server {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Home: home, InitType: init, Listener: ln, Scheduling: scheduling, LogFile: logFile, AcctFile: acctFile,
			AuthWait: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		return s
	}
	s := start(InitCreate, "true")
	if s.name != "headnode" {
		t.Errorf("server name %q from server_name, want headnode", s.name)
	}
	for _, p := range []string{"server_priv", "server_priv/accounting", "server_logs", "server_priv/server.lock", "server_priv/serverdb.bolt"} {
		if _, err := os.Stat(filepath.Join(home, p)); err != nil {
			t.Errorf("PBS_HOME: %v", err)
		}
	}
	root := dialPrivileged(t, s.Addr())
	schedulingIs := func(c *client, want string) {
		t.Helper()
		p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("scheduling")}))
		if v, _ := p.Status[0].Attrs.Get("scheduling"); v != want {
			t.Errorf("scheduling %q, want %q", v, want)
		}
	}
	schedulingIs(root, "True")
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", attr("queue_type", "execution")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "true"), attr("started", "true")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("default_queue", "batch")),
	} {
		if p := root.do(r); p.Code != 0 {
			t.Fatalf("setup: %d %q", p.Code, p.Text)
		}
	}
	id := mustSubmit(t, root, "alice")
	if !strings.HasSuffix(id, ".headnode") {
		t.Errorf("job id %s", id)
	}
	s.Shutdown("Quick")
	// warm start: the saved scheduling value stays unless -a overrides it
	s = start(InitWarm, "")
	root = dialPrivileged(t, s.Addr())
	schedulingIs(root, "True")
	s.Shutdown("Quick")
	s = start(InitWarm, "false")
	root = dialPrivileged(t, s.Addr())
	schedulingIs(root, "False")
	s.Shutdown("Quick")
	logs, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{";PBS_Server;Svr;PBS_Server;Server headnode started, initialization type = 4", ";Job;" + id + ";Job Queued at request of alice@"} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("-L file lacks %q", want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "server_logs")); len(entries) != 0 {
		t.Errorf("server_logs used despite -L: %d files", len(entries))
	}
	acct, err := os.ReadFile(acctFile)
	if err != nil || !strings.Contains(string(acct), ";Q;"+id+";queue=batch") {
		t.Errorf("-A file %q %v", acct, err)
	}
}
