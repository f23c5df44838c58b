package link

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/jobfile"
	"gopbs/mom/jobexec"
)

// setStime rewrites the start time in the fixed part of a job file.
func setStime(t *testing.T, name string, at time.Time) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := jobfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	f.Stime = at.Unix()
	if b, err = f.Marshal(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// torqueJobFile builds the job file a TORQUE 2.5.13 MOM keeps for a
// running job (spec 13 §6, MOM variant): state RUNNING/RUNNING, the HERE
// flag, the MOM union with the server's address, string arrays one
// element per line, session_id, and attributes MOM does not use.
func torqueJobFile(t *testing.T, id string, sid int, started time.Time) []byte {
	t.Helper()
	f := &jobfile.Job{Version: jobfile.QSVersion, State: 4, Substate: 42, Svrflags: 1, Stime: started.Unix(),
		ID: id, Prefix: id, Queue: "batch"}
	f.SetMom(jobfile.Mom{ServerAddr: netip.MustParseAddr("127.0.0.1")})
	for _, a := range jobAttrs(id, os.TempDir()) {
		r := saveAttr(a)
		if a.Name == "Variable_List" {
			r.Value = "PBS_O_QUEUE=batch\nPBS_O_HOST=localhost\nPBS_O_WORKDIR=/tmp\n"
		}
		f.Attrs = append(f.Attrs, r)
	}
	f.Attrs = append(f.Attrs,
		jobfile.Attr{Name: "job_state", Value: "R", Flags: jobfile.FlagSet},
		jobfile.Attr{Name: "session_id", Value: strconv.Itoa(sid), Flags: jobfile.FlagSet},
		jobfile.Attr{Name: "depend", Value: "afterok:1.vm@vm", Size: jobfile.DependFieldSize, Flags: jobfile.FlagSet})
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecoverTorqueJobFile: a job file in TORQUE's layout, as a TORQUE
// MOM leaves it, is recovered: -p re-attaches the job's session with the
// file's start time and reports its end to the server address of the
// union; -r kills the session and reports the job aborted.
func TestRecoverTorqueJobFile(t *testing.T) {
	requireUser(t)
	for _, mode := range []string{"p", "r"} {
		t.Run("mode="+mode, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.serve(acceptAll)
			base := openDir(t, "gopbs-mom-", nil)
			jobs := filepath.Join(base, "torque", "mom_priv", "jobs")
			if err := os.MkdirAll(jobs, 0o750); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sleep", "60")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sid := cmd.Process.Pid
			reaped := make(chan struct{})
			go func() { cmd.Wait(); close(reaped) }()
			t.Cleanup(func() { syscall.Kill(-sid, syscall.SIGKILL); <-reaped })
			id := "7.vm"
			started := time.Now().Add(-time.Minute).Truncate(time.Second)
			if err := os.WriteFile(filepath.Join(jobs, id+".JB"), torqueJobFile(t, id, sid, started), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(jobs, id+".SC"), []byte("sleep 60\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			mom := startMomIn(t, srv, "", base, mode)
			dumpLogOnFailure(t, mom)
			if mode == "p" {
				st, err := mom.eng.Status(id)
				if err != nil || st.SessionID != sid || !st.Started.Equal(started) {
					t.Fatalf("re-attached job: %+v (%v), want session %d started %v", st, err, sid, started)
				}
				b := dialBatch(t, mom.batch)
				if rep := b.do(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGKILL"}, ""); rep.Code != 0 {
					t.Fatalf("SIGKILL of recovered job: code %d", rep.Code)
				}
				b.disconnect()
			}
			nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
			r := nextReq(t, srv, batchreq.PBS_BATCH_JobObit)
			obit := r.req.Body.(*batchreq.JobObit)
			if obit.JobID != id {
				t.Errorf("obit for %q, want %q", obit.JobID, id)
			}
			if mode == "r" && obit.ExitStatus != jobexec.JOB_EXEC_INITABT {
				t.Errorf("obit exit status %d, want %d", obit.ExitStatus, jobexec.JOB_EXEC_INITABT)
			}
			select {
			case <-reaped:
			case <-time.After(10 * time.Second):
				t.Error("the job's session is still running")
			}
		})
	}
}

// TestSavedJobFile: the job file MOM writes for a running job has
// TORQUE's layout and values, and reads back into the same job.
func TestSavedJobFile(t *testing.T) {
	u := requireUser(t)
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	base := openDir(t, "gopbs-mom-", nil)
	mom := startMomIn(t, srv, "", base, "none")
	dumpLogOnFailure(t, mom)
	id := "4.testserver"
	launch(t, mom, id, "exec sleep 60\n", os.TempDir())
	st, err := mom.eng.Status(id)
	if err != nil || st.SessionID == 0 {
		t.Fatalf("job not running: %+v %v", st, err)
	}
	name := filepath.Join(mom.home, "mom_priv", "jobs", id+".JB")
	waitUntil(t, func() bool {
		b, _ := os.ReadFile(name)
		f, err := jobfile.Parse(b)
		_, ok := f.Get("session_id", "")
		return err == nil && ok
	})
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := jobfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	m := f.Mom()
	if f.Version != jobfile.QSVersion || f.State != 4 || f.Substate != 42 || f.Svrflags != 1 || f.ID != id ||
		f.Prefix != id || f.Queue != "batch" || f.UnType != jobfile.UnionMom ||
		m.ServerAddr != netip.MustParseAddr("127.0.0.1") || m.UID != uint32(uid) || m.GID != uint32(gid) {
		t.Errorf("fixed part %+v, union %+v", f, m)
	}
	if f.Stime < time.Now().Add(-time.Minute).Unix() {
		t.Errorf("stime %d", f.Stime)
	}
	for _, w := range []jobfile.Attr{
		{Name: "Variable_List", Value: "PBS_O_QUEUE=batch\nPBS_O_HOST=localhost\nPBS_O_WORKDIR=/tmp\n", Flags: 1},
		{Name: "Resource_List", Resource: "walltime", Value: "00:01:00", Flags: 1},
		{Name: "session_id", Value: strconv.Itoa(st.SessionID), Flags: 1},
	} {
		if v, ok := f.Get(w.Name, w.Resource); !ok || v != w.Value {
			t.Errorf("%s.%s = %q, want %q", w.Name, w.Resource, v, w.Value)
		}
	}
	j, err := loadJob(name)
	if err != nil {
		t.Fatal(err)
	}
	if j.id != id || j.sid != st.SessionID || j.stage != stageRunning || j.server != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("loaded job %+v", j)
	}
	if want := jobAttrs(id, os.TempDir()); !reflect.DeepEqual(j.attrs, want) {
		t.Errorf("loaded attributes\n got %v\nwant %v", j.attrs, want)
	}
}

// TestRecoverEndedJob: a job that had ended before the MOM restarted
// (job file in state EXITING with its exit status) is reported with that
// exit status, whatever the restart mode but -P.
func TestRecoverEndedJob(t *testing.T) {
	requireUser(t)
	for _, mode := range []string{"p", "r"} {
		t.Run("mode="+mode, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.serve(acceptAll)
			base := openDir(t, "gopbs-mom-", nil)
			jobs := filepath.Join(base, "torque", "mom_priv", "jobs")
			if err := os.MkdirAll(jobs, 0o750); err != nil {
				t.Fatal(err)
			}
			id := "8.vm"
			f, err := jobfile.Parse(torqueJobFile(t, id, 999999, time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			f.State, f.Substate = 5, 50
			m := f.Mom()
			m.ExitStatus = 7
			f.SetMom(m)
			b, err := f.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(jobs, id+".JB"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			mom := startMomIn(t, srv, "", base, mode)
			dumpLogOnFailure(t, mom)
			nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
			obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
			if obit.JobID != id || obit.ExitStatus != 7 {
				t.Errorf("obit %s exit %d, want %s exit 7", obit.JobID, obit.ExitStatus, id)
			}
		})
	}
}

// TestModifySavesJobFile: limits changed by ModifyJob are in the job
// file, so they survive a MOM restart.
func TestModifySavesJobFile(t *testing.T) {
	requireUser(t)
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	mom := startMomIn(t, srv, "", openDir(t, "gopbs-mom-", nil), "none")
	dumpLogOnFailure(t, mom)
	id := "6.testserver"
	launch(t, mom, id, "exec sleep 60\n", os.TempDir())
	b := dialBatch(t, mom.batch)
	rep := b.do(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", "walltime", "00:05:00")}}, "")
	if rep.Code != 0 {
		t.Fatalf("ModifyJob: %d", rep.Code)
	}
	b.disconnect()
	j, err := loadJob(filepath.Join(mom.home, "mom_priv", "jobs", id+".JB"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := j.attrs.GetResource("Resource_List", "walltime"); v != "00:05:00" {
		t.Errorf("walltime in the job file %q, want 00:05:00", v)
	}
	mom.eng.Signal(context.Background(), id, "SIGKILL", false)
}

// TestJobFileAttrs: attribute values survive the conversion to and from
// the job file's forms.
func TestJobFileAttrs(t *testing.T) {
	for _, a := range []batchreq.Attr{
		batchreq.NewAttr("Variable_List", `A=1,B=x\,y,C=q\"t`),
		batchreq.NewAttr("Shell_Path_List", "/bin/bash@host,/bin/sh"),
		batchreq.NewAttr("depend", "afterok:1.vm@vm"),
		{Name: "Resource_List", Resource: "nodes", HasResource: true, Value: "1", Op: batchreq.DFLT},
		batchreq.NewAttr("Job_Name", "a,b"),
	} {
		r := saveAttr(a)
		b := jobfile.AppendAttr(nil, r)
		f := &jobfile.Job{Version: jobfile.QSVersion, ID: "1.x", Prefix: "1.x", Attrs: []jobfile.Attr{r}}
		out, err := f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := jobfile.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := loadAttr(back.Attrs[0]); got != a {
			t.Errorf("%v: saved as %q (%d bytes), read back as %v", a, r.Value, len(b), got)
		}
	}
	if r := saveAttr(batchreq.NewAttr("Variable_List", "A=1,B=2")); r.Value != "A=1\nB=2\n" {
		t.Errorf("Variable_List saved as %q", r.Value)
	}
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSortRecords: records are written in attribute-table order, the
// resources of one attribute by name, unknown names last in their order.
func TestSortRecords(t *testing.T) {
	recs := []jobfile.Attr{
		{Name: "zz_unknown2"}, {Name: "Variable_List"}, {Name: "Resource_List", Resource: "walltime"},
		{Name: "zz_unknown1"}, {Name: "Job_Name"}, {Name: "Resource_List", Resource: "nodes"}, {Name: "Job_Owner"},
	}
	sortRecords(recs)
	var got []string
	for _, r := range recs {
		got = append(got, r.Name+"."+r.Resource)
	}
	want := []string{"Job_Name.", "Job_Owner.", "Resource_List.nodes", "Resource_List.walltime", "Variable_List.",
		"zz_unknown2.", "zz_unknown1."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// TestPurgeTargetsInstance: purging an instance of a job that another job
// with the same id has replaced (a server reusing ids) leaves the new job
// running with its files.
func TestPurgeTargetsInstance(t *testing.T) {
	requireUser(t)
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	base := openDir(t, "gopbs-mom-", nil)
	mom := startMomIn(t, srv, "", base, "none")
	dumpLogOnFailure(t, mom)
	id := "6.testserver"
	launch(t, mom, id, "exec sleep 60\n", os.TempDir())
	stale := &job{id: id, prefix: id, stage: stageExited}
	mom.m.purge(stale)
	st, err := mom.eng.Status(id)
	if err != nil || st.SessionID == 0 || st.State != jobexec.StateRunning {
		t.Fatalf("new job after purge of the old instance: %+v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(mom.home, "mom_priv", "jobs", id+".JB")); err != nil {
		t.Errorf("new job's file: %v", err)
	}
	if mom.m.lookup(id) == nil {
		t.Error("new job forgotten")
	}
	// The current instance itself is purged (killed, forgotten).
	cur := mom.m.lookup(id)
	mom.m.purge(cur)
	if _, err := mom.eng.Status(id); err == nil {
		t.Error("purge of the current instance left the engine record")
	}
	if !gone(st.SessionID) {
		t.Error("purge of the current instance left the job running")
	}
}
