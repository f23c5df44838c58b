package server

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/link/mom"
)

func TestRunJobErrors(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	run := func(id, dest string) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id, Destination: dest}))
	}
	if p := run("99.vm", ""); p.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("unknown job: %d", p.Code)
	}
	// (a job asking for ppn=3 of np=2 is refused at submission:
	// TestInfeasibleNodeRequest; a RunJob destination is not checked then)
	id := submit(t, c, "big")
	if p := run(id, "vm:ppn=3"); p.Code != batchreq.PBSE_RESCUNAV {
		t.Errorf("ppn=3 on np=2: %d %s", p.Code, p.Text)
	}
	if st := jobAttr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("state after failed run %q", st)
	}
	// MOM refuses the job: it is requeued and the nodes are free again.
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_QueueJob] = batchreq.PBSE_MOMREJECT
	mom.mu.Unlock()
	id2 := submit(t, c, "small")
	if p := run(id2, ""); p.Code != batchreq.PBSE_MOMREJECT {
		t.Errorf("MOM reject: %d", p.Code)
	}
	if st, eh := jobAttr(t, c, id2, "job_state"), jobAttr(t, c, id2, "exec_host"); st != "Q" || eh != "" {
		t.Errorf("after MOM reject: state %q exec_host %q", st, eh)
	}
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_QueueJob)
	mom.mu.Unlock()
	// Two jobs fill the two VPs of vm; a third cannot run.
	if p := run(id2, ""); p.Code != 0 {
		t.Fatalf("run: %d", p.Code)
	}
	id3 := submit(t, c, "third")
	if p := run(id3, "vm"); p.Code != 0 {
		t.Fatalf("run with destination: %d %s", p.Code, p.Text)
	}
	if eh := jobAttr(t, c, id3, "exec_host"); eh != "vm/1" {
		t.Errorf("second job exec_host %q", eh)
	}
	if p := run(id2, ""); p.Code != batchreq.PBSE_BADSTATE || !strings.HasSuffix(p.Text, "MSG=job already running") {
		t.Errorf("run running job: %d %q", p.Code, p.Text)
	}
	id4 := submit(t, c, "fourth")
	if p := run(id4, ""); p.Code != batchreq.PBSE_RESCUNAV {
		t.Errorf("full node: %d", p.Code)
	}
	np := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: "vm"}))
	for _, a := range np.Status[0].Attrs {
		switch a.Name {
		case "state":
			if a.Value != "job-exclusive" {
				t.Errorf("node state %q", a.Value)
			}
		case "jobs":
			if a.Value != "0/"+id2+", 1/"+id3 {
				t.Errorf("node jobs %q", a.Value)
			}
		}
	}
}

func TestDeleteSignalRerunRunningJob(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "sig")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)

	// qsig is relayed unchanged.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: "SIGUSR1"})); p.Code != 0 {
		t.Fatalf("SignalJob: %d", p.Code)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != "SIGUSR1" || sj.JobID != id {
		t.Errorf("relayed %+v", sj)
	}
	// MOM errors come back to the client.
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_SignalJob] = batchreq.PBSE_UNKSIG
	mom.mu.Unlock()
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: "SIGFOO"})); p.Code != batchreq.PBSE_UNKSIG {
		t.Errorf("bad signal: %d", p.Code)
	}
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_SignalJob)
	mom.mu.Unlock()
	// suspend and resume: qstat shows S, the node is free meanwhile
	for _, sig := range []string{"suspend", "resume"} {
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: sig})); p.Code != 0 {
			t.Fatalf("%s: %d", sig, p.Code)
		}
		mom.next(batchreq.PBS_BATCH_SignalJob)
		want, jobs := "S", ""
		if sig == "resume" {
			want, jobs = "R", "0/"+id
		}
		if st := jobAttr(t, c, id, "job_state"); st != want {
			t.Errorf("after %s: job_state %q", sig, st)
		}
		if got := nodeAttr(t, c, "jobs"); got != jobs {
			t.Errorf("after %s: node jobs %q", sig, got)
		}
	}
	// qmsg
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_MessJob, "root", &batchreq.MessJob{JobID: id, FileOpt: 1, Message: "hi"})); p.Code != 0 {
		t.Fatalf("MessJob: %d", p.Code)
	}
	if mj := mom.next(batchreq.PBS_BATCH_MessJob).Body.(*batchreq.MessJob); mj.Message != "hi" {
		t.Errorf("relayed %+v", mj)
	}
	// qchkpt of a non-checkpointable job
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_CheckpointJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})); p.Code != batchreq.PBSE_IVALREQ {
		t.Errorf("qchkpt: %d", p.Code)
	}
	// qrerun: SIGKILL with extension rerun; the obit requeues the job.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "root", &batchreq.JobID{ID: id})); p.Code != 0 {
		t.Fatalf("Rerun: %d", p.Code)
	}
	rr := mom.next(batchreq.PBS_BATCH_SignalJob)
	if rr.Body.(*batchreq.SignalJob).Signal != "SIGKILL" || rr.Extension != "rerun" {
		t.Errorf("rerun signal %+v ext %q", rr.Body, rr.Extension)
	}
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_DeleteJob)
	waitFor(t, "requeue", func() bool { return jobAttr(t, c, id, "job_state") == "Q" })
	if eh := jobAttr(t, c, id, "exec_host"); eh != "" {
		t.Errorf("exec_host after rerun %q", eh)
	}
	if acct := readAccounting(t, s); !strings.Contains(acct, ";R;"+id+";\n") {
		t.Errorf("no R record:\n%s", acct)
	}

	// Run again, then qdel: SIGTERM, and SIGKILL after deldelay.
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob again: %d", p.Code)
	}
	if sc := jobAttr(t, c, id, "start_count"); sc != "2" {
		t.Errorf("start_count %q", sc)
	}
	d := batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})
	d.SetExtension("deldelay=1")
	if p := c.do(d); p.Code != 0 {
		t.Fatalf("DeleteJob: %d", p.Code)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != "SIGTERM" {
		t.Errorf("delete signal %q", sj.Signal)
	}
	if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != "SIGKILL" {
		t.Errorf("second delete signal %q", sj.Signal)
	}
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: 271})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	waitFor(t, "purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
	acct := readAccounting(t, s)
	if !strings.Contains(acct, ";D;"+id+";requestor=root@vm") || !strings.Contains(acct, "Exit_status=271\n") {
		t.Errorf("accounting:\n%s", acct)
	}
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	var all string
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		all += string(b)
	}
	for _, want := range []string{";Job sent signal SIGTERM on delete", ";Job sent signal SIGKILL on delete", ";Job Rerun at request of root@vm", ";Exit_status=271"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func TestObitStartFailureRequeues(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "retry")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)
	// JOB_EXEC_RETRY: the MOM drops its copy and the job is queued again
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: -3})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_DeleteJob)
	waitFor(t, "requeue", func() bool { return jobAttr(t, c, id, "job_state") == "Q" })
	if got := nodeAttr(t, c, "jobs"); got != "" {
		t.Errorf("node still lists %q", got)
	}
	// a second obit for a job that is no longer running
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != batchreq.PBSE_BADSTATE {
		t.Errorf("obit of a queued job: %d", p.Code)
	}
	// an obit from an unprivileged connection is refused
	u := dialUser(t, s.Addr())
	if p := u.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code == 0 {
		t.Errorf("unprivileged obit accepted")
	}
}

func TestRelayModifyAndHoldOfRunningJob(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "relay")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)
	modify := func(a batchreq.Attr) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
			Attrs: batchreq.AttrList{a}}))
	}
	// a resource change is relayed; the MOM's error is the reply
	if p := modify(rattr("Resource_List", "walltime", "02:00:00")); p.Code != 0 {
		t.Fatalf("qalter walltime: %d", p.Code)
	}
	if m := mom.next(batchreq.PBS_BATCH_ModifyJob).Body.(*batchreq.Manage); m.ObjName != id || len(m.Attrs) != 1 || m.Attrs[0].Value != "02:00:00" {
		t.Errorf("relayed %+v", m)
	}
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_ModifyJob] = batchreq.PBSE_BADATVAL
	mom.mu.Unlock()
	if p := modify(rattr("Resource_List", "walltime", "03:00:00")); p.Code != batchreq.PBSE_BADATVAL {
		t.Errorf("MOM error not returned: %d", p.Code)
	}
	// other attributes stay on the server
	if p := modify(attr("Checkpoint", "enabled")); p.Code != 0 {
		t.Fatalf("qalter -c: %d", p.Code)
	}
	// hold of a running checkpointable job goes to the MOM; without
	// checkpoint support (PBSE_NOSUP) the hold is only recorded (seed
	// 001; TORQUE dropped it) and the job runs on
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_HoldJob] = batchreq.PBSE_NOSUP
	mom.mu.Unlock()
	hold := batchreq.NewRequest(batchreq.PBS_BATCH_HoldJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{attr("Hold_Types", "u")}})
	if p := c.do(hold); p.Code != 0 {
		t.Fatalf("qhold: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_HoldJob)
	if h, st := jobAttr(t, c, id, "Hold_Types"), jobAttr(t, c, id, "job_state"); h != "u" || st != "R" {
		t.Errorf("after NOSUP: Hold_Types %q state %q", h, st)
	}
	// with checkpoint support the job ends checkpointed and comes back held
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_HoldJob)
	mom.mu.Unlock()
	if p := c.do(hold); p.Code != 0 {
		t.Fatalf("qhold: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_HoldJob)
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	waitFor(t, "held", func() bool { return jobAttr(t, c, id, "job_state") == "H" })
	if acct := readAccounting(t, s); !strings.Contains(acct, ";C;"+id+";Checkpointed and held\n") {
		t.Errorf("no C record:\n%s", acct)
	}
}

func TestObitFromOtherHostAndUnreachableMom(t *testing.T) {
	s := runServerWith(t, nil, 0, func(s *Server) {
		s.run.Resolve = func(string) []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.1")} }
		s.run.Dial = func(context.Context, string) (net.Conn, error) { return nil, errors.New("connection refused") }
		s.run.RetryDelay = 10 * time.Millisecond
	})
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "nomom")
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
	if p.Code != batchreq.PBSE_MOMREJECT || !strings.HasSuffix(p.Text, "connection to mom timed out") {
		t.Errorf("RunJob: %d %q", p.Code, p.Text)
	}
	if st := nodeAttr(t, c, "state"); st != "down" {
		t.Errorf("node %q", st)
	}
	if st := jobAttr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("job %q", st)
	}
	// a job that is not running elsewhere is still refused from a host
	// that is not its mother superior
	s.mu.Lock()
	j := s.findJob(id)
	j.Attrs.Set(pbsattr.JobExecHost, "vm/0")
	s.jobs.SetState(j, pbsattr.StateRunning, pbsattr.SubRunning)
	s.mu.Unlock()
	if p := privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != batchreq.PBSE_CLEANEDOUT {
		t.Errorf("obit from a stranger: %d", p.Code)
	}
	// qrerun needs the MOM, qrerun -f requeues without it
	rerun := batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "root", &batchreq.JobID{ID: id})
	if p := c.do(rerun); p.Code != batchreq.PBSE_NORELYMOM {
		t.Errorf("qrerun with the node down: %d", p.Code)
	}
	rerun.SetExtension("force")
	if p := c.do(rerun); p.Code != 0 {
		t.Fatalf("qrerun -f: %d", p.Code)
	}
	if st, eh := jobAttr(t, c, id, "job_state"), jobAttr(t, c, id, "exec_host"); st != "Q" || eh != "" {
		t.Errorf("after qrerun -f: %q %q", st, eh)
	}
}

func TestWarmRestartKeepsRunningJob(t *testing.T) {
	mom := newFakeMom(t)
	home := t.TempDir()
	s := runServerAt(t, home, InitCreate, mom, 0, nil)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "survivor")
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_StatusJob)
	waitFor(t, "session id", func() bool { return jobAttr(t, c, id, "session_id") != "" })
	c.nc.Close()
	s.Shutdown("Quick")
	<-s.Done()

	s = runServerAt(t, home, InitWarm, mom, 0, nil)
	momsReported(s)
	c = privConn(t, s)
	if st, eh := jobAttr(t, c, id, "job_state"), jobAttr(t, c, id, "exec_host"); st != "R" || eh != "vm/0" {
		t.Fatalf("after restart: state %q exec_host %q", st, eh)
	}
	if got := nodeAttr(t, c, "jobs"); got != "0/"+id {
		t.Errorf("node jobs after restart %q", got)
	}
	momc := privConn(t, s)
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
		t.Fatalf("obit after restart: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_DeleteJob)
	waitFor(t, "purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
}

func TestJobMail(t *testing.T) {
	mom := newFakeMom(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "mail.txt")
	script := filepath.Join(dir, "fakemail")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"ARGS: $*\"; cat; echo '.'; } >> "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := runServerWith(t, mom, 0, func(s *Server) { s.mailer.Program = script })
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	id := submit(t, c, "mailjob", attr("Mail_Points", "be"), attr("Mail_Users", "alice@example"))
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	waitFor(t, "begin mail", func() bool {
		b, _ := os.ReadFile(out)
		return strings.HasSuffix(string(b), "\n.\n")
	})
	momc := privConn(t, s)
	obit := &batchreq.JobObit{JobID: id, ExitStatus: 3, Attrs: batchreq.AttrList{batchreq.NewResourceAttr("resources_used", "cput", "00:00:01")}}
	if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", obit)); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	want := "ARGS: -f adm alice@example\nTo: alice@example \nSubject: PBS JOB " + id + "\nPrecedence: bulk\n\n" +
		"PBS Job Id: " + id + "\nJob Name:   mailjob\nExec host:  vm/0\nBegun execution\n.\n" +
		"ARGS: -f adm alice@example\nTo: alice@example \nSubject: PBS JOB " + id + "\nPrecedence: bulk\n\n" +
		"PBS Job Id: " + id + "\nJob Name:   mailjob\nExec host:  vm/0\nExecution terminated\nExit_status=3\nresources_used.cput=00:00:01\n.\n"
	var got string
	// The fake mailer writes a mail in three steps: wait for the end of
	// the second.
	waitFor(t, "two mails", func() bool {
		b, _ := os.ReadFile(out)
		got = string(b)
		return strings.Count(got, "ARGS:") == 2 && strings.HasSuffix(got, "\n.\n")
	})
	if got != want {
		t.Errorf("mail\n got %q\nwant %q", got, want)
	}
}

func TestShutdownImmediateRequeuesRunningJobs(t *testing.T) {
	mom := newFakeMom(t)
	home := t.TempDir()
	s := runServerAt(t, home, InitCreate, mom, 0, nil)
	c := privConn(t, s)
	setupCluster(t, c)
	// a MOM without checkpoint support: the jobs (Checkpoint u) are
	// offered a checkpoint first (seed 001), then requeued or killed
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_HoldJob] = batchreq.PBSE_NOSUP
	mom.mu.Unlock()
	momsReported(s)
	rerun := submit(t, c, "rerunnable")
	kill := submit(t, c, "fixed", attr("Rerunable", "False"))
	for _, id := range []string{rerun, kill} {
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
			t.Fatalf("RunJob %s: %d", id, p.Code)
		}
		mom.next(batchreq.PBS_BATCH_Commit)
	}
	done := make(chan *batchreq.Reply, 1)
	go func() {
		done <- c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_IMMEDIATE}))
	}()
	signals := map[string]string{}
	for i := 0; i < 2; i++ {
		r := mom.next(batchreq.PBS_BATCH_SignalJob)
		sj := r.Body.(*batchreq.SignalJob)
		signals[sj.JobID] = sj.Signal + "/" + r.Extension
	}
	if signals[rerun] != "SIGKILL/rerun" || signals[kill] != "SIGKILL/" {
		t.Errorf("signals %v", signals)
	}
	momc := privConn(t, s)
	for _, id := range []string{rerun, kill} {
		if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: 265})); p.Code != 0 {
			t.Fatalf("obit %s: %d", id, p.Code)
		}
	}
	select {
	case p := <-done:
		if p.Code != 0 {
			t.Fatalf("shutdown: %d", p.Code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	<-s.Done()
	s = runServerAt(t, home, InitWarm, mom, 0, nil)
	momsReported(s)
	c = privConn(t, s)
	if st := jobAttr(t, c, rerun, "job_state"); st != "Q" {
		t.Errorf("rerunnable job after restart: %q", st)
	}
	if st := jobAttr(t, c, kill, "job_state"); st != "" {
		t.Errorf("killed job after restart: %q", st)
	}
}

func TestDeleteNannyAndForceCancel(t *testing.T) {
	mom := newFakeMom(t)
	s := runServerWith(t, mom, 0, func(s *Server) { s.run.NannyInterval = 100 * time.Millisecond })
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("job_nanny", "true"))); p.Code != 0 {
		t.Fatalf("job_nanny: %d", p.Code)
	}
	del := func(id string) {
		d := batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})
		d.SetExtension("deldelay=0")
		if p := c.do(d); p.Code != 0 {
			t.Fatalf("DeleteJob: %d", p.Code)
		}
	}
	run := func(name string) string {
		id := submit(t, c, name)
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
			t.Fatalf("RunJob: %d", p.Code)
		}
		mom.next(batchreq.PBS_BATCH_Commit)
		return id
	}
	id := run("stubborn")
	del(id)
	for _, want := range []string{"SIGTERM", "SIGKILL", "SIGKILL"} {
		if sj := mom.next(batchreq.PBS_BATCH_SignalJob).Body.(*batchreq.SignalJob); sj.Signal != want {
			t.Fatalf("signal %q, want %q", sj.Signal, want)
		}
	}
	// the MOM no longer knows the job: the nanny purges it
	mom.mu.Lock()
	mom.reject[batchreq.PBS_BATCH_SignalJob] = batchreq.PBSE_UNKJOBID
	mom.mu.Unlock()
	waitFor(t, "nanny purge", func() bool { return jobAttr(t, c, id, "job_state") == "" })
	mom.mu.Lock()
	delete(mom.reject, batchreq.PBS_BATCH_SignalJob)
	mom.mu.Unlock()

	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("job_nanny", "false"), attr("job_force_cancel_time", "1"))); p.Code != 0 {
		t.Fatalf("job_force_cancel_time: %d", p.Code)
	}
	id2 := run("hung")
	del(id2)
	waitFor(t, "forced purge", func() bool { return jobAttr(t, c, id2, "job_state") == "" })
	if got := nodeAttr(t, c, "jobs"); got != "" {
		t.Errorf("node jobs after purge %q", got)
	}
	logs, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	var all string
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		all += string(b)
	}
	for _, want := range []string{"exiting job '" + id + "' still exists, sending a SIGKILL", id2 + ";purging job without checking MOM"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// privConn connects to the server from a reserved port with
// SO_REUSEADDR, so that the many daemon connections of these tests do
// not use up the reserved ports while earlier ones sit in TIME_WAIT.
func privConn(t *testing.T, s *Server) *client {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a reserved source port")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := mom.DialReserved(ctx, s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, r: dis.NewReader(nc)}
}

func TestDependentReleasedAtObit(t *testing.T) {
	mom := newFakeMom(t)
	mom.gating = true
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	parent := submit(t, c, "parent")
	child := submit(t, c, "child", attr("depend", "afterok:"+parent))
	if st := jobAttr(t, c, child, "job_state"); st != "H" {
		t.Fatalf("child before: %q", st)
	}
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: parent})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	if p := privConn(t, s).do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: parent})); p.Code != 0 {
		t.Fatalf("obit: %d", p.Code)
	}
	// the parent's files are still being delivered (the MOM holds the
	// end-of-job connection), yet the child is already released
	waitFor(t, "child released", func() bool { return jobAttr(t, c, child, "job_state") == "Q" })
	if st := jobAttr(t, c, parent, "job_state"); st != "E" {
		t.Errorf("parent %q", st)
	}
	mom.release(parent)
	waitFor(t, "parent gone", func() bool { return jobAttr(t, c, parent, "job_state") == "" })
	if st := jobAttr(t, c, child, "job_state"); st != "Q" {
		t.Errorf("child after: %q", st)
	}
}

// TestAfterDependentReleasedAtStart: an after: child is released when its
// parent's launch succeeds (spec 12 §6.4), through the RunJob path, and
// the release is saved with the start.
func TestAfterDependentReleasedAtStart(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	parent := submit(t, c, "parent")
	child := submit(t, c, "child", attr("depend", "after:"+parent))
	if st := jobAttr(t, c, child, "job_state"); st != "H" {
		t.Fatalf("child before: %q", st)
	}
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: parent})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	if st := jobAttr(t, c, parent, "job_state"); st != "R" {
		t.Fatalf("parent %q", st)
	}
	if st := jobAttr(t, c, child, "job_state"); st != "Q" {
		t.Errorf("after: child not released at the parent's start: %q", st)
	}
	if d := jobAttr(t, c, child, "depend"); d != "" {
		t.Errorf("child's depend after the release: %q", d)
	}
}
