package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestRefusedBeforeRegistration checks what capture 82 shows when a
// beforeok registration is refused because its parent has no on:N
// (PBSE_BADDEPEND): the child loses the dependency and gets Hold_Types u
// while it stays queued and runnable; the hold counts from the next
// re-evaluation on.
func TestRefusedBeforeRegistration(t *testing.T) {
	mom := newFakeMom(t)
	dir := t.TempDir()
	mailed := filepath.Join(dir, "mail.txt")
	script := filepath.Join(dir, "fakemail")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"ARGS: $*\"; cat; echo '.'; } >> "+mailed+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	s := runServerAt(t, home, InitCreate, mom, 0, func(s *Server) { s.mailer.Program = script })
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)

	// refused submits a parent without on:N and a child with
	// depend=beforeok:<parent>, and returns their ids.
	refused := func(t *testing.T) (parent, child string) {
		t.Helper()
		parent = submit(t, c, "depX")
		child = submit(t, c, "depY", attr("depend", "beforeok:"+parent))
		return parent, child
	}
	want := func(t *testing.T, id string, attrs map[string]string) {
		t.Helper()
		for name, v := range attrs {
			if got := jobAttr(t, c, id, name); got != v {
				t.Errorf("%s %s = %q, want %q", id, name, got, v)
			}
		}
	}
	hold := func(t *testing.T, typ int, id, letters string) {
		t.Helper()
		if p := c.do(jobReq(typ, "root", id, attr("Hold_Types", letters))); p.Code != 0 {
			t.Fatalf("%s %s: %d %s", batchreq.RequestName(typ), id, p.Code, p.Text)
		}
	}

	t.Run("capture 82", func(t *testing.T) {
		parent, child := refused(t)
		want(t, child, map[string]string{"job_state": "Q", "substate": "10", "Hold_Types": "u", "depend": ""})
		want(t, parent, map[string]string{"job_state": "Q", "Hold_Types": "n", "depend": ""})
		waitFor(t, "the abort mail", func() bool {
			b, _ := os.ReadFile(mailed)
			return strings.Contains(string(b), "Subject: PBS JOB "+child+"\n") && strings.HasSuffix(string(b), "\n.\n")
		})
		b, _ := os.ReadFile(mailed)
		if body := "PBS Job Id: " + child + "\nJob Name:   depY\nAborted by PBS Server \nDependency request for job rejected by " + parent + "\n.\n"; !strings.Contains(string(b), body) {
			t.Errorf("mail %q lacks %q", b, body)
		}
		log := serverLog(t, home)
		for _, line := range []string{
			"0080;PBS_Server;Req;req_reject;Reject reply code=15056(Invalid Job Dependency), aux=0, type=RegisterDependency, from root@vm",
			"0008;PBS_Server;Job;" + child + ";Dependency request for job rejected by " + parent,
		} {
			if !strings.Contains(log, line) {
				t.Errorf("log lacks %q", line)
			}
		}
		if strings.Contains(log, "Job held for unknown job dep") {
			t.Errorf("log has the unknown-dependency line of other refusals")
		}
		// not really held: the scheduler runs it, as in the capture
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "Scheduler", &batchreq.RunJob{JobID: child})); p.Code != 0 {
			t.Fatalf("RunJob %s: %d %s", child, p.Code, p.Text)
		}
		want(t, child, map[string]string{"job_state": "R", "Hold_Types": "u"})
	})

	t.Run("qrls releases the hold", func(t *testing.T) {
		_, child := refused(t)
		hold(t, batchreq.PBS_BATCH_ReleaseJob, child, "u")
		want(t, child, map[string]string{"job_state": "Q", "Hold_Types": "n"})
	})

	t.Run("later evaluations count the hold", func(t *testing.T) {
		_, child := refused(t)
		if p := c.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "root", child, attr("Priority", "5"))); p.Code != 0 {
			t.Fatalf("ModifyJob: %d %s", p.Code, p.Text)
		}
		want(t, child, map[string]string{"job_state": "H", "Hold_Types": "u", "Priority": "5"})
		hold(t, batchreq.PBS_BATCH_ReleaseJob, child, "u")
		want(t, child, map[string]string{"job_state": "Q", "Hold_Types": "n"})

		_, child = refused(t)
		hold(t, batchreq.PBS_BATCH_HoldJob, child, "o")
		want(t, child, map[string]string{"job_state": "H", "Hold_Types": "ou"})
		hold(t, batchreq.PBS_BATCH_ReleaseJob, child, "o")
		want(t, child, map[string]string{"job_state": "H", "Hold_Types": "u"})
	})

	t.Run("qalter adds a refused dependency", func(t *testing.T) {
		parent := submit(t, c, "depX")
		child := submit(t, c, "depY")
		if p := c.do(jobReq(batchreq.PBS_BATCH_ModifyJob, "root", child, attr("depend", "beforeok:"+parent))); p.Code != 0 {
			t.Fatalf("ModifyJob: %d %s", p.Code, p.Text)
		}
		want(t, child, map[string]string{"job_state": "Q", "Hold_Types": "u", "depend": ""})
	})

	t.Run("other refusals hold at once", func(t *testing.T) {
		// spec 12 §6.2: an unknown parent holds the child (state H)
		child := submit(t, c, "orphan", attr("depend", "afterok:999.vm"))
		want(t, child, map[string]string{"job_state": "H", "Hold_Types": "u", "depend": ""})
		if !strings.Contains(serverLog(t, home), "0008;PBS_Server;Job;"+child+";Job held for unknown job dep, use 'qrls' to release") {
			t.Errorf("log lacks the unknown-dependency line of %s", child)
		}
	})
}

// serverLog returns today's server log of home without the time stamps.
func serverLog(t *testing.T, home string) string {
	t.Helper()
	time.Sleep(10 * time.Millisecond)
	b, err := os.ReadFile(filepath.Join(home, "server_logs", time.Now().Format("20060102")))
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(l, ";", 2); len(f) == 2 {
			body = append(body, f[1])
		}
	}
	return strings.Join(body, "\n")
}
