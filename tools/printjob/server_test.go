package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e/batchconn"
	"gopbs/server"
)

// dialReserved connects to the server under test as root, from a reserved
// port.
func dialReserved(t *testing.T, addr net.Addr) *batchconn.Conn {
	t.Helper()
	c := batchconn.DialReserved(t, addr.String(), 10*time.Second)
	c.Timeout = 10 * time.Second
	return c
}

// TestRealServerStore submits a job to a GoPBS pbs_server, shuts it down
// and prints the job from the store it left, so that printjob's reading of
// the store follows the server's record format.
func TestRealServerStore(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test server trusts reserved ports only")
	}
	home := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Home: home, ServerName: "vm", InitType: "create", Listener: ln,
		AuthWait: 200 * time.Millisecond, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	stopped := false
	defer func() {
		if !stopped {
			s.Shutdown("quick")
		}
	}()

	c := dialReserved(t, s.Addr())
	iff := dialReserved(t, s.Addr())
	iff.Must(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, "root",
		&batchreq.AuthenUser{Port: c.NetConn().LocalAddr().(*net.TCPAddr).Port}))
	mgr := func(cmd, obj int, name string, attrs ...batchreq.Attr) {
		c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root",
			&batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs}))
	}
	mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution"))
	mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true"))
	mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch"))
	mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root"))
	p := c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "printme"),
		batchreq.NewResourceAttr("Resource_List", "walltime", "00:02:00"),
		batchreq.NewAttr("Hold_Types", "u"),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME=/root,PBS_O_WORKDIR=/root"),
	}}))
	id := p.JobID
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte("#!/bin/sh\nsleep 1\n")}))
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}))
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}))
	s.Shutdown("quick")
	stopped = true
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}

	if _, err := os.Stat(filepath.Join(home, "server_priv", storeFile)); err != nil {
		t.Fatalf("server store not where printjob looks: %v", err)
	}
	status, stdout, stderr := runPrintjob("-s", "-d", home, strings.Split(id, ".")[0])
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	for _, want := range []string{
		"jobid:\t" + id + "\n",
		"state:\t\t0x2 (H)\n",
		"queue:\t\tbatch\n",
		"Job_Name = printme\n",
		"Resource_List.walltime = 00:02:00\n",
		"hold:\t\t0x1\n", // Hold_Types u, kept in the record's hold field
		"--script--\n#!/bin/sh\nsleep 1\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
}
