package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

// TestExecUserFromUserList: a job whose User_List (qsub -u) names a user
// that allows its owner (a line "<host> <owner>" in the user's ~/.rhosts)
// runs as that user, and euser/egroup say so; the entry naming the
// execution host wins over one without a host; a job naming a user that
// does not allow its owner, or root, is refused (seed 001).
func TestExecUserFromUserList(t *testing.T) {
	cl := newCluster(t, "")
	other := e2e.User(t, "gopbsother")
	other.MakeHome(t)
	third := e2e.User(t, "gopbsthird")
	third.MakeHome(t)
	rhosts := filepath.Join(other.HomeDir, ".rhosts")
	e2e.WriteFile(t, rhosts, "localhost "+testUser+"\n")
	os.Chown(rhosts, other.UID, other.GID)
	os.Chmod(rhosts, 0o600)
	t.Cleanup(func() { os.Remove(rhosts) })
	os.Chmod(cl.outDir, 0o777)

	for ul, queued := range map[string]string{"gopbsother": "gopbsother", testUser + ",gopbsother@localhost": testUser} {
		id := cl.submit("asother", "#!/bin/sh\nid -un\n", batchreq.NewAttr("User_List", ul))
		if eu := cl.job(id, "euser"); eu != queued {
			t.Errorf("User_List %s: queued euser %q, want %q", ul, eu, queued)
		}
		cl.run(id)
		cl.waitState(id, "C", 60*time.Second)
		if eu, eg := cl.job(id, "euser"), cl.job(id, "egroup"); eu != "gopbsother" || eg == "" {
			t.Errorf("User_List %s: euser %q egroup %q", ul, eu, eg)
		}
		if out := read(filepath.Join(cl.outDir, "asother.out")); out != "gopbsother\n" {
			t.Errorf("User_List %s: the job ran as %q", ul, out)
		}
		if s := cl.record("S", id); !strings.Contains(s, ";user=gopbsother ") {
			t.Errorf("S record %q", s)
		}
		os.Remove(filepath.Join(cl.outDir, "asother.out"))
	}
	for _, ul := range []string{"gopbsthird", "root", "gopbsother,gopbsthird@elsewhere"} {
		list := batchreq.AttrList{batchreq.NewAttr("Job_Owner", testUser+"@localhost"), batchreq.NewAttr("User_List", ul)}
		p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list}))
		if p.Code != batchreq.PBSE_BADUSER {
			t.Errorf("User_List %s: code %d %q, want PBSE_BADUSER", ul, p.Code, p.Text)
		}
	}
}
