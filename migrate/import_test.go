package migrate

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopbs/jobfile"
	"gopbs/migrate/torque"
	"gopbs/server/importdb"
	"gopbs/server/state"
	"gopbs/server/store"
)

// sharedCopy copies ../shared/torque-home into a temporary directory, or
// skips the test saying it is absent.
func sharedCopy(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "shared", "torque-home")
	if _, err := os.Stat(filepath.Join(src, "server_priv")); err != nil {
		t.Skipf("../shared/torque-home is absent: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "torque")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// jobs returns the job records and scripts of a database's operations.
func jobs(t *testing.T, db *importdb.Database) (map[string]*state.JobRecord, map[string]string) {
	t.Helper()
	recs, scripts := map[string]*state.JobRecord{}, map[string]string{}
	for _, op := range db.Ops() {
		switch op.Bucket {
		case store.Jobs:
			r, err := state.DecodeJobRecord(op.Key, op.Value)
			if err != nil {
				t.Fatalf("job %s: %v", op.Key, err)
			}
			recs[op.Key] = r
		case store.Script:
			scripts[op.Key] = string(op.Value)
		}
	}
	return recs, scripts
}

func attrOf(r *state.JobRecord, name, res string) (string, bool) {
	for _, a := range r.Attrs {
		if a.Name == name && a.Resource == res {
			return a.Value, true
		}
	}
	return "", false
}

func buildHome(t *testing.T, home string, opt Options) (*importdb.Database, *Result, error) {
	t.Helper()
	h, err := torque.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	return build(h, opt)
}

func TestBuildSharedHome(t *testing.T) {
	home := sharedCopy(t)
	db, res, err := buildHome(t, home, Options{Running: Keep})
	if err != nil {
		t.Fatal(err)
	}
	if res.Queues != 4 || res.Nodes != 1 || res.Jobs != 14 || !slices.Equal(res.Kept, []string{"0.vm"}) || len(res.Dropped) != 0 {
		t.Errorf("result %+v", res)
	}
	recs, scripts := jobs(t, db)
	if len(recs) != 14 || len(scripts) != 10 || scripts["3[].vm"] == "" || scripts["3[0].vm"] != "" {
		t.Fatalf("%d jobs, scripts for %d", len(recs), len(scripts))
	}
	for id, prefix := range map[string]string{"0.vm": "0.vm", "3[].vm": "3.vm", "9.vm": "9.vm"} {
		sc, err := os.ReadFile(filepath.Join(home, "server_priv", "jobs", prefix+".SC"))
		if err != nil || scripts[id] != string(sc) {
			t.Errorf("script of %s %q, want the .SC file's %q (%v)", id, scripts[id], sc, err)
		}
	}
	check := func(id string, f func(r *state.JobRecord) bool) {
		t.Helper()
		if r := recs[id]; r == nil || !f(r) {
			t.Errorf("job %s: %+v", id, r)
		}
	}
	check("0.vm", func(r *state.JobRecord) bool {
		h, _ := attrOf(r, "exec_host", "")
		return r.State == 4 && r.Substate == 42 && r.Seq == 1 && r.Rank == 1 && h == "vm/0"
	})
	check("1.vm", func(r *state.JobRecord) bool { return r.State == 2 && r.Hold == 1 })
	check("4.vm", func(r *state.JobRecord) bool {
		d, _ := attrOf(r, "depend", "")
		return r.Hold == 4 && r.Substate == 22 && d == "afterok:0.vm@vm"
	})
	check("3[].vm", func(r *state.JobRecord) bool {
		w, _ := attrOf(r, "Resource_List", "walltime") // from queue batch's resources_default
		return r.ArrayRequest == "0-3" && slices.Equal(r.ArrayCounts, []int64{4, 0, 0, 0}) && r.Seq == 4 && w == "01:00:00"
	})
	check("3[2].vm", func(r *state.JobRecord) bool {
		return r.Parent == "3[].vm" && r.ArrayIndex == 2 && r.Hold == 8 && r.Rank == 13 && r.Seq == 11
	})
	check("6.vm", func(r *state.JobRecord) bool {
		w, _ := attrOf(r, "Resource_List", "walltime") // from queue short's
		_, nodes := attrOf(r, "Resource_List", "nodes")
		return w == "00:05:00" && !nodes
	})
	check("9.vm", func(r *state.JobRecord) bool { return r.State == 6 && r.PurgeAt == 1795770610+3600 })
	check("5.vm", func(r *state.JobRecord) bool {
		v, _ := attrOf(r, "Variable_List", "")
		return strings.HasPrefix(v, "PBS_O_QUEUE=batch,PBS_O_HOST=vm,") && !strings.Contains(v, "\n")
	})
	for id, r := range recs {
		for _, a := range r.Attrs {
			switch a.Name {
			case "job_state", "substate", "queue", "server", "queue_rank", "queue_type", "Hold_Types":
				t.Errorf("job %s stores %s, which its record's fields hold", id, a.Name)
			}
		}
	}
}

// rewriteJob changes one attribute of a TORQUE job file.
func rewriteJob(t *testing.T, path, name, value string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := jobfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range j.Attrs {
		if j.Attrs[i].Name == name {
			j.Attrs[i].Value = value
		}
	}
	if b, err = j.Marshal(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRunningPolicies(t *testing.T) {
	home := sharedCopy(t)
	if _, _, err := buildHome(t, home, Options{}); err == nil || !strings.Contains(err.Error(), "running when TORQUE stopped: 0.vm;") {
		t.Errorf("refuse: %v", err)
	}
	db, res, err := buildHome(t, home, Options{Running: Requeue})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := jobs(t, db)
	r := recs["0.vm"]
	_, host := attrOf(r, "exec_host", "")
	_, sid := attrOf(r, "session_id", "")
	if !slices.Equal(res.Requeued, []string{"0.vm"}) || r.State != 1 || r.Substate != 10 || host || sid {
		t.Errorf("requeued %v: %+v", res.Requeued, r)
	}
	rewriteJob(t, filepath.Join(home, "server_priv", "jobs", "0.vm.JB"), "Rerunable", "False")
	if _, _, err := buildHome(t, home, Options{Running: Requeue}); err == nil || !strings.Contains(err.Error(), "cannot be requeued: 0.vm (not rerunnable)") {
		t.Errorf("requeue of a job that is not rerunnable: %v", err)
	}
}

func TestParseRunning(t *testing.T) {
	for s, want := range map[string]Running{"refuse": Refuse, "requeue": Requeue, "keep": Keep} {
		if got, err := ParseRunning(s); err != nil || got != want {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseRunning("drain"); err == nil {
		t.Error("unknown policy accepted")
	}
}

func TestPendingSubjobsRefused(t *testing.T) {
	home := sharedCopy(t)
	path := filepath.Join(home, "server_priv", "arrays", "3.vm.AR")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[3264] = 1 // one pending range of 32 bytes
	b = append(b, make([]byte, 32)...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := buildHome(t, home, Options{Running: Keep}); err == nil || !strings.Contains(err.Error(), "had not created all sub-jobs of 3[].vm") {
		t.Errorf("pending sub-jobs: %v", err)
	}
}

func TestImportWritesHome(t *testing.T) {
	src := sharedCopy(t)
	dst := filepath.Join(t.TempDir(), "gopbs")
	res, err := Import(src, dst, Options{Running: Keep})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"server_name": "vm\n", "server_priv/nodes": "vm np=2 fast\n"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
	acct, _ := os.ReadFile(filepath.Join(src, "server_priv", "accounting", "20261127"))
	if b, err := os.ReadFile(filepath.Join(dst, "server_priv", "accounting", "20261127")); err != nil || string(b) != string(acct) {
		t.Errorf("accounting file not copied: %v", err)
	}
	ro, err := store.OpenReadOnly(res.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	keys, err := ro.Keys(store.Jobs, "")
	if err != nil || len(keys) != 14 {
		t.Errorf("stored jobs %v %v", keys, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dst, "server_priv")); len(ents) != 3 {
		t.Errorf("server_priv holds %v (temporary files left?)", ents)
	}
	if _, err := Import(src, dst, Options{Running: Keep}); err == nil || !strings.Contains(err.Error(), "importing twice is refused") {
		t.Errorf("second import: %v", err)
	}
}

func TestTransitJobs(t *testing.T) {
	home := sharedCopy(t)
	dir := filepath.Join(home, "server_priv", "jobs")
	setState := func(file string, state, sub int32) {
		t.Helper()
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jobfile.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		j.State, j.Substate = state, sub
		if b, err = j.Marshal(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setState("5.vm.JB", 0, 0) // TRANSIT/TRANSIN: still being received
	setState("6.vm.JB", 0, 2) // TRANSIT/TRNOUT: a move cut short
	db, res, err := buildHome(t, home, Options{Running: Keep})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := jobs(t, db)
	if !slices.Equal(res.Skipped, []string{"5.vm"}) || recs["5.vm"] != nil {
		t.Errorf("skipped %v, 5.vm %+v", res.Skipped, recs["5.vm"])
	}
	if r := recs["6.vm"]; r == nil || r.State != 1 || r.Substate != 10 {
		t.Errorf("6.vm %+v, want queued", r)
	}
}
