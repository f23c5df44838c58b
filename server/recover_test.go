package server

import (
	"os"
	"path/filepath"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/importdb"
	"gopbs/server/state"
	"gopbs/server/store"
)

// TestRecoverCutShortMove: a job saved in TRANSIT/TRNOUT (a move to
// another server cut short by a crash) is recovered out of transit and
// re-evaluated (spec 12 §14): with a user hold it is HELD, and it is
// saved so, in recovery's clean-up batch.
func TestRecoverCutShortMove(t *testing.T) {
	d := importdb.New()
	if err := d.AddQueue("batch", []state.RecordAttr{{Name: "queue_type", Value: "Execution"}}); err != nil {
		t.Fatal(err)
	}
	j := &state.Job{ID: "3.vm", Seq: 1, State: pbsattr.StateTransit, Substate: pbsattr.SubTrnOut, Hold: state.HoldUser,
		Rank: 1, ArrayIndex: -1, Queue: &state.Queue{Name: "batch"}}
	j.Attrs.Set(pbsattr.JobOwner, "alice@vm")

	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "server_priv"), 0o750); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(home, "server_priv", "serverdb.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(append(d.Ops(), state.SaveJob(j))...); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	s := testServer(t, home, InitWarm)
	s.mu.RLock()
	got := s.jobs.Get("3.vm")
	s.mu.RUnlock()
	if got == nil || got.State != pbsattr.StateHeld {
		t.Fatalf("recovered job %+v, want it held", got)
	}
	b, err := s.store.Get(store.Jobs, "3.vm")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := state.DecodeJob("3.vm", b)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Job.State != pbsattr.StateHeld {
		t.Errorf("saved state %v after recovery, want held", saved.Job.State)
	}
}
