package server

import (
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

func TestJobRecordRoundTrip(t *testing.T) {
	j := &state.Job{ID: "5[2].vm", Seq: 5, State: pbsattr.StateHeld, Substate: pbsattr.SubHeld, Hold: state.HoldUser, ArrayIndex: 2, Rank: 9, PurgeAt: 7}
	j.Attrs.Set(pbsattr.JobName, "run-2")
	j.Attrs.SetRes(pbsattr.JobResourceList, "walltime", "01:00:00")
	j.Attrs.SetRes(state.UnknownJobAttr, "foo\x1fbar", "x")
	r, err := decodeJob(j.ID, encodeJob(j))
	if err != nil {
		t.Fatal(err)
	}
	g := r.job
	if g.Seq != 5 || g.State != pbsattr.StateHeld || g.Substate != pbsattr.SubHeld || g.Hold != state.HoldUser || g.ArrayIndex != 2 || g.Rank != 9 || g.PurgeAt != 7 {
		t.Fatalf("fixed fields %+v", g)
	}
	if g.Attrs.Get(pbsattr.JobName) != "run-2" || g.Attrs.GetRes(pbsattr.JobResourceList, "walltime") != "01:00:00" || g.Attrs.GetRes(state.UnknownJobAttr, "foo\x1fbar") != "x" {
		t.Fatalf("attributes %+v", g.Attrs)
	}
}

// FuzzDecodeJob: a corrupt store record never panics.
func FuzzDecodeJob(f *testing.F) {
	j := &state.Job{ID: "1.vm", Seq: 1, State: pbsattr.StateQueued, Substate: pbsattr.SubQueued}
	j.Attrs.Set(pbsattr.JobName, "x")
	f.Add(encodeJob(j))
	f.Add([]byte{recordVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeJob("1.vm", b)
		if err == nil && (r.job.State < 0 || r.job.State > pbsattr.StateComplete) {
			t.Fatalf("bad state accepted: %d", r.job.State)
		}
	})
}
