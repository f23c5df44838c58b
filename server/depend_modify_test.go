package server

import (
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

// TestModifyDependSurvivesKill SIGKILLs pbs_server right after a qalter
// -W depend=afterok:P of job C was acknowledged: after a warm start the
// parent P still records its child (beforeok:C), saved in the same
// transaction as C (it was not saved at all before: the parent lost the
// registration a restart later, and its end would not release C).
func TestModifyDependSurvivesKill(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	start, _, port := e2eServerProcess(t)
	server := start("create")
	c := e2eDial(t, port)
	e2eBatchQueue(t, c)
	parent := submit(t, c, "parent", attr("Hold_Types", "u"))
	child := submit(t, c, "child", attr("Hold_Types", "u"))
	alter := batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "root", &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: child,
		Attrs: batchreq.AttrList{attr("depend", "afterok:"+parent)},
	})
	if p := c.do(alter); p.Code != 0 {
		t.Fatalf("ModifyJob depend: %d %q", p.Code, p.Text)
	}
	wantParent := "beforeok:" + child + "@localhost"
	wantChild := "afterok:" + parent + "@localhost"
	if got := jobAttr(t, c, parent, "depend"); got != wantParent {
		t.Fatalf("parent depend before the kill = %q, want %q", got, wantParent)
	}
	server.Kill()
	c.nc.Close()
	start("warm")
	c = e2eDial(t, port)
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	if got := jobAttr(t, c, child, "depend"); got != wantChild {
		t.Errorf("child depend after SIGKILL and warm start = %q, want %q", got, wantChild)
	}
	if got := jobAttr(t, c, parent, "depend"); got != wantParent {
		t.Errorf("parent depend after SIGKILL and warm start = %q, want %q", got, wantParent)
	}
}
