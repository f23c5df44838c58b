package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e/batchconn"
)

// TestRootJobNeedsACLRoots: with real daemons, root's job is refused
// while acl_roots does not list root, and runs as root once it does.
func TestRootJobNeedsACLRoots(t *testing.T) {
	cl := newCluster(t, "")
	owner := batchreq.NewAttr("Job_Owner", "root@localhost")
	p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: batchreq.AttrList{owner}}))
	if p.Code != batchreq.PBSE_BADUSER || p.Text != "Bad UID for job execution MSG=root user root not allowed" {
		t.Fatalf("root's job without acl_roots: %d %q", p.Code, p.Text)
	}
	cl.c.Must(batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root@localhost")))
	id := cl.submit("asroot", "#!/bin/sh\nid -u\n", owner)
	if eu := cl.job(id, "euser"); eu != "root" {
		t.Fatalf("euser %q", eu)
	}
	cl.run(id)
	cl.waitState(id, "C", 60*time.Second)
	if out := read(filepath.Join(cl.outDir, "asroot.out")); out != "0\n" {
		t.Fatalf("root's job printed %q", out)
	}
}
