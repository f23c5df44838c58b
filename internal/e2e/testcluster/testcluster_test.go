package testcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// TestCluster: a cluster of the three daemons on localhost runs a job the
// scheduler starts, its output delivered and the server's mail stub
// called; the helpers wait for what the daemons report.
func TestCluster(t *testing.T) {
	c := New(t, Options{Mail: true, MomConfig: "$status_update_time 1\n"})
	u := e2e.User(t, "gopbsclustertest")
	u.MakeHome(t)
	out := filepath.Join(c.Base, "out")
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chown(out, u.UID, u.GID)
	c.StartServer("create")
	c.DefaultQueue("batch")
	c.CreateNodes(1, "localhost")
	c.StartMom("localhost")
	c.WaitReported("localhost")
	c.StartSched("")
	c.SetServer(batchreq.NewAttr("scheduling", "true"))
	id := c.Conn.Submit(batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "hello"), batchreq.NewAttr("Job_Owner", u.Name+"@localhost"),
		batchreq.NewAttr("Mail_Points", "e"), batchreq.NewAttr("Join_Path", "oe"),
		batchreq.NewAttr("Output_Path", "localhost:"+filepath.Join(out, "hello.out")),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME="+out+",PBS_O_WORKDIR="+out+",PBS_O_HOST=localhost"),
	}, "#!/bin/sh\necho hello from $PBS_JOBID\n")
	c.WaitState(id, "", 60*time.Second)
	if b, err := os.ReadFile(filepath.Join(out, "hello.out")); err != nil || string(b) != "hello from "+id+"\n" {
		t.Errorf("job output %q %v", b, err)
	}
	if !strings.Contains(c.ServerLog(), id) {
		t.Error("the server log does not name the job")
	}
	var ended bool
	for _, r := range c.Accounting() {
		ended = ended || strings.Contains(r, ";E;"+id+";")
	}
	if !ended {
		t.Errorf("no E record of %s: %q", id, c.Accounting())
	}
	e2e.WaitFor(t, "the end-of-job mail", 30*time.Second, func() bool {
		b, _ := os.ReadFile(c.MailFile)
		return strings.Contains(string(b), id)
	})
	sched, _ := filepath.Glob(filepath.Join(c.SchedHome, "sched_logs", "*"))
	if len(sched) == 0 {
		t.Error("no scheduler log")
	}
}
