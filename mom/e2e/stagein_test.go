package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

// TestStageInFailure: a job whose stage-in cannot be done is not run: it
// waits (state W, Execution_Time in the future), the files already
// staged in are deleted, and its owner gets the stage-in failure mail
// (seed 001, File Staging).
func TestStageInFailure(t *testing.T) {
	cl := newCluster(t, "")
	good := filepath.Join(cl.outDir, "in.txt")
	e2e.WriteFile(t, good, "staged\n")
	staged := filepath.Join(cl.outDir, "staged.txt")
	id := cl.submit("stagefail", "#!/bin/sh\necho ran\n",
		batchreq.NewAttr("stagein", staged+"@localhost:"+good+","+filepath.Join(cl.outDir, "missing.txt")+"@localhost:"+filepath.Join(cl.outDir, "no-such-file")))
	before := time.Now().Unix()
	p := cl.c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
	if p.Code == 0 {
		t.Fatalf("RunJob of a job whose stage-in fails succeeded")
	}
	if st := cl.job(id, "job_state"); st != "W" {
		t.Errorf("job state %q after the failed stage-in, want W", st)
	}
	if et, _ := strconv.ParseInt(cl.job(id, "Execution_Time"), 10, 64); et <= before {
		t.Errorf("Execution_Time %d not after %d", et, before)
	}
	if read(staged) != "" {
		t.Errorf("a file staged in before the failure is left: %s", staged)
	}
	e2e.WaitFor(t, "the stage-in failure mail", 20*time.Second, func() bool {
		return strings.Contains(read(cl.mailFile), "File stage in failed, see below.\nJob will be retried later, please investigate and correct problem.\n")
	})
	if m := read(cl.mailFile); !strings.Contains(m, "no-such-file") || !strings.Contains(m, "PBS Job Id: "+id+"\n") {
		t.Errorf("mail:\n%s", m)
	}
	if o := read(filepath.Join(cl.outDir, "stagefail.out")); o != "" {
		t.Errorf("the job ran: %q", o)
	}
	if !strings.Contains(cl.serverLog(), ";Job;"+id+";File stage in failed: ") {
		t.Error("server log lacks the stage-in failure")
	}
}
