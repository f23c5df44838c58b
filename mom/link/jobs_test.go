package link

// Jobs through the MOM: launch, end and obit, walltime changes, signals and
// deletes, recovery at restart, start times, reruns and the deletion of files.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/mom/jobexec"
	"gopbs/mom/procfs"
	"gopbs/momproto"
)

// TestJobLifecycle runs a job through a MOM as pbs_server drives it:
// IS hello and status, launch, status poll, obit, stage-out, delete.
func TestJobLifecycle(t *testing.T) {
	u := requireUser(t)
	srv := newFakeServer(t)
	srv.serve(func(req *batchreq.Request) *batchreq.Reply {
		switch req.Type {
		case batchreq.PBS_BATCH_StatusJob:
			return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{{
				ObjType: batchreq.MGR_OBJ_JOB, Name: req.Body.(*batchreq.StatusReq).ID,
				Attrs: batchreq.AttrList{batchreq.NewAttr("exec_host", "localhost/0")}}}}
		}
		return batchreq.NullReply()
	})
	tm := startMom(t, srv, "$status_update_time 1\n")
	dumpLogOnFailure(t, tm)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// IS: the MOM opens a stream from a privileged port and says hello.
	is, status := acceptIS(t, ctx, srv.ep)
	if is.RemoteAddr().Port() >= 1024 {
		t.Errorf("IS stream from port %d, want a privileged port", is.RemoteAddr().Port())
	}
	for _, want := range []string{"opsys=linux", "state=free", "jobs= ", "varattr= ", "gres="} {
		if !contains(status, want) {
			t.Errorf("IS_STATUS lacks %q: %q", want, status)
		}
	}
	if !hasPrefix(status, "uname=") || !hasPrefix(status, "ncpus=") || !hasPrefix(status, "physmem=") {
		t.Errorf("IS_STATUS incomplete: %q", status)
	}

	outDir := openDir(t, "gopbs-out-", u)

	id := "1.testserver"
	launch(t, tm, id, "echo hello from $PBS_JOBID\nsleep 1\nexit 3\n", outDir)

	// First poll: session_id only (spec 10 §7).
	b := dialBatch(t, tm.batch)
	rep := b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	if rep.Code != 0 || len(rep.Status) != 1 || len(rep.Status[0].Attrs) == 0 {
		t.Fatalf("first StatusJob reply %+v", rep)
	}
	if a := rep.Status[0].Attrs; a[len(a)-1].Name != "session_id" || (len(a) != 1 && len(a) != 5) {
		t.Errorf("first StatusJob reply carries %+v; want session_id, after resources_used if sampled", a)
	}
	rep = b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
	if _, again := rep.Status[0].Attrs.Get("session_id"); again {
		t.Errorf("session_id reported twice")
	}
	rep = b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: "99.nosuch"}, "")
	if rep.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("StatusJob of unknown job: code %d", rep.Code)
	}
	b.disconnect()

	// The job's jobs= status item names it.
	status = recvStatus(t, ctx, is)
	if !contains(status, "jobs="+id) {
		t.Errorf("IS_STATUS while running lacks jobs=%s: %q", id, status)
	}

	// End of job: pre-obit StatusJob, then JobObit, both from privileged
	// ports with user pbs_mom.
	pre := nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	if pre.req.User != "pbs_mom" || pre.peer.Port() >= 1024 {
		t.Errorf("pre-obit from %s port %d", pre.req.User, pre.peer.Port())
	}
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit)
	ob := obit.req.Body.(*batchreq.JobObit)
	if ob.JobID != id || ob.ExitStatus != 3 {
		t.Errorf("obit %+v, want exit 3", ob)
	}
	var names []string
	for _, a := range ob.Attrs {
		names = append(names, a.FullName())
	}
	if got := strings.Join(names, ","); got != "resources_used.cput,resources_used.mem,resources_used.vmem,resources_used.walltime" {
		t.Errorf("obit attributes %s", got)
	}

	// Stage-out of stdout/stderr and delete, on one connection (captures 58, 73).
	b = dialBatch(t, tm.batch)
	rep = b.do(batchreq.PBS_BATCH_CopyFiles, &batchreq.CopyFiles{JobID: id, Owner: testUser, ExecUser: testUser,
		Direction: batchreq.STAGE_DIR_OUT, Pairs: []batchreq.FilePair{
			{Flag: batchreq.STDJOBFILE, Local: id + ".OU", Remote: "localhost:" + outDir + "/t.sh.o1"},
			{Flag: batchreq.STDJOBFILE, Local: id + ".ER", Remote: "localhost:" + outDir + "/t.sh.e1"},
		}}, "")
	if rep.Code != 0 {
		t.Fatalf("CopyFiles: code %d %q", rep.Code, rep.Text)
	}
	out, err := os.ReadFile(filepath.Join(outDir, "t.sh.o1"))
	if err != nil || string(out) != "hello from "+id+"\n" {
		t.Errorf("delivered stdout %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(tm.home, "spool", id+".OU")); err == nil {
		t.Error("spool file left after delivery")
	}
	rep = b.do(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
	if rep.Code != 0 {
		t.Fatalf("DeleteJob: code %d", rep.Code)
	}
	rep = b.do(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
	if rep.Code != batchreq.PBSE_UNKJOBID {
		t.Errorf("second DeleteJob: code %d", rep.Code)
	}
	b.disconnect()
	if _, err := os.Stat(filepath.Join(tm.home, "mom_priv", "jobs", id+".SC")); err == nil {
		t.Error("job script left after DeleteJob")
	}
	// Log lines with the events and classes of the captured mom_logs.
	waitLog(t, tm,
		";0002;   pbs_mom;n/a;mom_server_check_connection;sending hello to server 127.0.0.1\n",
		";0080;   pbs_mom;Svr;preobit_reply;top of preobit_reply\n",
		";0080;   pbs_mom;Svr;preobit_reply;DIS_reply_read/decode_DIS_replySvr worked, top of while loop\n",
		";0080;   pbs_mom;Svr;preobit_reply;in while loop, no error from job stat\n",
		";0080;   pbs_mom;Job;"+id+";obit sent to server\n")
}

// TestModifyWalltime: qalter -l walltime on a running job reaches the
// execution engine, which enforces the new limit; a bad value is refused
// and changes nothing.
func TestModifyWalltime(t *testing.T) {
	requireUser(t)
	srv, tm := startWithServer(t)
	id := "8.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	modify := func(walltime string) int {
		b := dialBatch(t, tm.batch)
		defer b.disconnect()
		return b.do(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
			Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", walltime)}}, "").Code
	}
	if code := modify("bad:x"); code != batchreq.PBSE_BADATVAL {
		t.Errorf("ModifyJob walltime=bad:x: code %d, want PBSE_BADATVAL", code)
	}
	if code := modify("00:00:01"); code != 0 {
		t.Fatalf("ModifyJob walltime=00:00:01: code %d", code)
	}
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != jobexec.JOB_EXEC_OVERLIMIT {
		t.Errorf("obit exit status %d, want JOB_EXEC_OVERLIMIT (%d)", obit.ExitStatus, jobexec.JOB_EXEC_OVERLIMIT)
	}
	// The comment names the limit.
	if c, _ := obit.Attrs.Get("comment"); !strings.HasPrefix(c, "job killed: walltime ") || !strings.HasSuffix(c, " exceeded limit 1") {
		t.Errorf("obit comment %q", c)
	}
}

// TestObitFailureLogged: when the server cannot be reached for the
// pre-obit, the MOM logs the system error in scan_for_exiting as TORQUE
// does ("LOG_ERROR::<strerror> (<errno>) in scan_for_exiting, ") and
// tries again.
func TestObitFailureLogged(t *testing.T) {
	requireUser(t)
	srv := newFakeServer(t)
	srv.ln.Close() // connections to the server are refused
	tm := startMom(t, srv, "")
	dumpLogOnFailure(t, tm)
	launch(t, tm, "9.testserver", "exit 0\n", os.TempDir())
	line := ";0001;   pbs_mom;Svr;pbs_mom;LOG_ERROR::Connection refused (111) in scan_for_exiting, \n"
	waitLog(t, tm, line, line) // and again at the retry
}

// TestSignalAndDelete covers qdel of a running job: SIGTERM, obit with
// 256+15, and the error replies of requests MOM does not support.
func TestSignalAndDelete(t *testing.T) {
	requireUser(t)
	srv, tm := startWithServer(t)
	id := "2.testserver"
	launch(t, tm, id, "exec sleep 60\n", os.TempDir())
	b := dialBatch(t, tm.batch)
	for _, tc := range []struct {
		typ  int
		body batchreq.Body
		code int
	}{
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGBOGUS"}, batchreq.PBSE_UNKSIG},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: "7.x", Signal: "SIGTERM"}, batchreq.PBSE_UNKJOBID},
		{batchreq.PBS_BATCH_CheckpointJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, batchreq.PBSE_NOSUP},
		{batchreq.PBS_BATCH_HoldJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, batchreq.PBSE_NOSUP},
		{batchreq.PBS_BATCH_MessJob, &batchreq.MessJob{JobID: id, FileOpt: batchreq.MSG_ERR, Message: "note"}, 0},
		{batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
			Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", "00:02:00")}}, 0},
		{batchreq.PBS_BATCH_Shutdown, &batchreq.Shutdown{}, batchreq.PBSE_NOSUP},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "suspend"}, 0},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "resume"}, 0},
		{batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGTERM"}, 0},
	} {
		if rep := b.do(tc.typ, tc.body, ""); rep.Code != tc.code {
			t.Errorf("%s: code %d, want %d", batchreq.RequestName(tc.typ), rep.Code, tc.code)
		}
	}
	b.disconnect()
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != 256+15 {
		t.Errorf("obit exit status %d, want 271", obit.ExitStatus)
	}
	if b, err := os.ReadFile(filepath.Join(tm.home, "spool", id+".ER")); err != nil || !strings.Contains(string(b), "note\n") {
		t.Errorf("MessJob text not in stderr spool: %q %v", b, err)
	}
}

// TestRecover restarts a MOM under a running job: mode -p (also the
// default, "") re-attaches it with its original start time; -r kills it
// and -q leaves it running, both reporting it aborted (JOB_EXEC_INITABT).
func TestRecover(t *testing.T) {
	requireUser(t)
	for _, mode := range []string{"", "p", "q", "r"} {
		t.Run("mode="+mode, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.serve(acceptAll)
			base := openDir(t, "gopbs-mom-", nil)
			first := startMomIn(t, srv, "", base, "none")
			id := "3.testserver"
			launch(t, first, id, "exec sleep 60\n", os.TempDir())
			st, err := first.eng.Status(id)
			if err != nil || st.SessionID == 0 {
				t.Fatalf("job not running: %+v %v", st, err)
			}
			sid := st.SessionID
			first.stop()
			// The job started 30 s ago as far as the restarted MOM can
			// tell (no start_time attribute: the job file's stime).
			started := time.Now().Add(-30 * time.Second).Truncate(time.Second)
			jb := filepath.Join(first.home, "mom_priv", "jobs", id+".JB")
			setStime(t, jb, started)
			adopt := mode == "" || mode == "p"
			saved, err := loadJob(jb)
			if err != nil || len(saved.spec.Cookie) != 32 {
				t.Fatalf("job file cookie %q: %v", saved.spec.Cookie, err)
			}

			second := startMomIn(t, srv, "", base, mode)
			dumpLogOnFailure(t, second)
			if adopt {
				// TM still works: the cookie came back from the job file.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				req := &momproto.TMRequest{Version: momproto.TM_PROTOCOL_VER, JobID: id, Cookie: saved.spec.Cookie,
					Command: momproto.TM_INIT, Event: 3, FromTask: 1, Body: momproto.Empty{}}
				tmb := tcpExchange(t, ctx, second.rmTCP, false, req.Append(nil), false)
				cancel()
				if rep, _, err := momproto.DecodeTMReply(tmb, func(int) int { return momproto.TM_INIT }); err != nil || rep.Code != momproto.TM_OKAY {
					t.Errorf("TM_INIT after restart: %q (%v)", tmb, err)
				}
				if st, err := second.eng.Status(id); err != nil || !st.Started.Equal(started) {
					t.Errorf("re-attached job started %v (%v), want %v", st.Started, err, started)
				}
				b := dialBatch(t, second.batch)
				rep := b.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id}, "")
				if rep.Code != 0 || len(rep.Status) != 1 {
					t.Fatalf("recovered job not reported running: %+v", rep)
				}
				if rep := b.do(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGKILL"}, ""); rep.Code != 0 {
					t.Fatalf("SIGKILL of recovered job: code %d", rep.Code)
				}
				b.disconnect()
			}
			nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
			obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
			if !adopt && obit.ExitStatus != jobexec.JOB_EXEC_INITABT {
				t.Errorf("obit exit status %d, want %d", obit.ExitStatus, jobexec.JOB_EXEC_INITABT)
			}
			if mode == "q" {
				// The processes were left running: check, then end them.
				if syscall.Kill(sid, 0) != nil {
					t.Error("-q killed the job's processes")
				}
				syscall.Kill(-sid, syscall.SIGKILL)
			}
			if mode == "r" && !gone(sid) {
				syscall.Kill(-sid, syscall.SIGKILL)
				t.Error("-r left the job's processes running")
			}
		})
	}
}

// gone waits up to 5 s for a process to end (a zombie counts as ended:
// the test process, not the MOM, would have to reap it).
func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if p, err := procfs.ParseStat(stat); err == nil && p.State == 'Z' {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// TestStartTime: a recovered job's start is its start_time attribute,
// else the job file's modification time.
func TestStartTime(t *testing.T) {
	file := filepath.Join(t.TempDir(), "1.x.JB")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1700000000, 0)
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		attrs batchreq.AttrList
		want  time.Time
	}{
		{batchreq.AttrList{batchreq.NewAttr("start_time", "1763780000")}, time.Unix(1763780000, 0)},
		{batchreq.AttrList{batchreq.NewAttr("start_time", "bogus")}, mtime},
		{nil, mtime},
	} {
		j := &job{attrs: tc.attrs}
		if got := j.startTime(file); !got.Equal(tc.want) {
			t.Errorf("startTime with %v = %v, want %v", tc.attrs, got, tc.want)
		}
	}
}

// TestRerunAndDelFiles: Rerun sends the spooled stdout and stderr back to
// the server with MvJobFile and removes them; DelFiles removes files as
// the job's user.
func TestRerunAndDelFiles(t *testing.T) {
	u := requireUser(t)
	srv, tm := startWithServer(t)
	id := "4.testserver"
	launch(t, tm, id, "echo out\necho err >&2\n", os.TempDir())
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	nextReq(t, srv, batchreq.PBS_BATCH_JobObit)

	b := dialBatch(t, tm.batch)
	if rep := b.do(batchreq.PBS_BATCH_Rerun, &batchreq.JobID{ID: id}, ""); rep.Code != 0 {
		t.Fatalf("Rerun: code %d %q", rep.Code, rep.Text)
	}
	for _, want := range []struct {
		typ  int
		data string
	}{{batchreq.StdOut, "out\n"}, {batchreq.StdErr, "err\n"}} {
		f := nextReq(t, srv, batchreq.PBS_BATCH_MvJobFile).req.Body.(*batchreq.JobFile)
		if f.JobID != id || f.FileType != want.typ || string(f.Data) != want.data || f.Seq != 0 {
			t.Errorf("MvJobFile %+v, want type %d data %q", f, want.typ, want.data)
		}
	}
	for _, suffix := range []string{".OU", ".ER"} {
		if _, err := os.Stat(filepath.Join(tm.home, "spool", id+suffix)); err == nil {
			t.Errorf("spool file %s left after Rerun", suffix)
		}
	}

	dir := openDir(t, "gopbs-delfiles-", u)
	uid, _ := strconv.Atoi(u.Uid)
	victim := filepath.Join(dir, "stagein.dat")
	os.WriteFile(victim, []byte("x"), 0o644)
	os.Chown(victim, uid, -1)
	rep := b.do(batchreq.PBS_BATCH_DelFiles, &batchreq.CopyFiles{JobID: id, Owner: testUser, ExecUser: testUser,
		Direction: batchreq.STAGE_DIR_IN, Pairs: []batchreq.FilePair{{Flag: batchreq.STAGEFILE, Local: victim, Remote: "localhost:/nowhere"}}}, "")
	if rep.Code != 0 {
		t.Errorf("DelFiles: code %d %q", rep.Code, rep.Text)
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("DelFiles left the file")
	}
	b.disconnect()
}
