package state

import (
	"testing"

	"gopbs/attr"
)

func TestJobRecordRoundTrip(t *testing.T) {
	j := &Job{ID: "5[2].vm", Seq: 5, State: attr.StateHeld, Substate: attr.SubHeld, Hold: HoldUser, ArrayIndex: 2, Rank: 9, PurgeAt: 7}
	j.Attrs.Set(attr.JobName, "run-2")
	j.Attrs.SetRes(attr.JobResourceList, "walltime", "01:00:00")
	j.Attrs.SetRes(UnknownJobAttr, "foo\x1fbar", "x")
	r, err := DecodeJob(j.ID, EncodeJob(j))
	if err != nil {
		t.Fatal(err)
	}
	g := r.Job
	if g.Seq != 5 || g.State != attr.StateHeld || g.Substate != attr.SubHeld || g.Hold != HoldUser || g.ArrayIndex != 2 || g.Rank != 9 || g.PurgeAt != 7 {
		t.Fatalf("fixed fields %+v", g)
	}
	if g.Attrs.Get(attr.JobName) != "run-2" || g.Attrs.GetRes(attr.JobResourceList, "walltime") != "01:00:00" || g.Attrs.GetRes(UnknownJobAttr, "foo\x1fbar") != "x" {
		t.Fatalf("attributes %+v", g.Attrs)
	}
}

// FuzzDecodeJob: a corrupt store record never panics.
func FuzzDecodeJob(f *testing.F) {
	j := &Job{ID: "1.vm", Seq: 1, State: attr.StateQueued, Substate: attr.SubQueued}
	j.Attrs.Set(attr.JobName, "x")
	f.Add(EncodeJob(j))
	f.Add([]byte{RecordVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeJob("1.vm", b)
		if err == nil && (r.Job.State < 0 || r.Job.State > attr.StateComplete) {
			t.Fatalf("bad state accepted: %d", r.Job.State)
		}
	})
}
