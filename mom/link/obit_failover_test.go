package link

import (
	"fmt"
	"os"
	"testing"

	"gopbs/batchreq"
)

// TestObitToOtherServer: the server that ran the job refuses connections
// (it died; its standby took over), so the pre-obit and the obit go to
// the next $pbsserver server, which the log names.
func TestObitToOtherServer(t *testing.T) {
	requireUser(t)
	dead, standby := newFakeServer(t), newFakeServer(t)
	dead.ln.Close()
	standby.serve(acceptAll)
	tm := startMomIn(t, dead, "", openDir(t, "gopbs-mom-", nil), "none", func(o *Options) {
		o.Servers = []string{fmt.Sprintf("127.0.0.1:%d", dead.port), fmt.Sprintf("127.0.0.1:%d", standby.port)}
	})
	dumpLogOnFailure(t, tm)
	launch(t, tm, "12.testserver", "exit 0\n", os.TempDir())
	nextReq(t, standby, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, standby, batchreq.PBS_BATCH_JobObit)
	if id := obit.req.Body.(*batchreq.JobObit).JobID; id != "12.testserver" {
		t.Errorf("obit of %q", id)
	}
	waitLog(t, tm, fmt.Sprintf("server 127.0.0.1:%d unreachable, 127.0.0.1:%d answered", dead.port, standby.port))
}
