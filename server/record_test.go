package server

import (
	"slices"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

func TestDecodeJobRecord(t *testing.T) {
	sub := &state.Job{ID: "5[2].vm", Seq: 5, State: pbsattr.StateHeld, Substate: pbsattr.SubHeld, Hold: state.HoldUser, ArrayIndex: 2, Rank: 9, PurgeAt: 7,
		Queue: &state.Queue{Name: "batch"}, Parent: &state.Job{ID: "5[].vm"}}
	sub.Attrs.Set(pbsattr.JobName, "run-2")
	sub.Attrs.SetRes(pbsattr.JobResourceList, "walltime", "01:00:00")
	tmpl := &state.Job{ID: "5[].vm", Seq: 5, State: pbsattr.StateQueued, Substate: pbsattr.SubQueued,
		Array: &state.ArrayInfo{Request: "0-3", Size: 4, OK: 1, NotOK: 2, Started: 3}}

	r, err := DecodeJobRecord(sub.ID, encodeJob(sub))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "5[2].vm" || r.Seq != 5 || r.State != int64(pbsattr.StateHeld) || r.Substate != int64(pbsattr.SubHeld) || r.Hold != state.HoldUser ||
		r.Queue != "batch" || r.Rank != 9 || r.ArrayIndex != 2 || r.Parent != "5[].vm" || r.ArrayRequest != "" ||
		r.PurgeAt != 7 || r.ArrayCounts != nil {
		t.Fatalf("fixed fields %+v", r)
	}
	want := []RecordAttr{{Name: "Job_Name", Value: "run-2"}, {Name: "Resource_List", Resource: "walltime", Value: "01:00:00"}}
	if !slices.Equal(r.Attrs, want) {
		t.Fatalf("attributes %+v, want %+v", r.Attrs, want)
	}

	b := encodeJob(tmpl)
	r, err = DecodeJobRecord(tmpl.ID, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.ArrayRequest != "0-3" || !slices.Equal(r.ArrayCounts, []int64{4, 1, 2, 3}) {
		t.Fatalf("array template %+v", r)
	}
	for n := range b {
		if r, err := DecodeJobRecord(tmpl.ID, b[:n]); err == nil && len(r.ArrayCounts) == 4 {
			t.Errorf("record cut to %d bytes decoded whole", n)
		}
	}
	for _, bad := range [][]byte{nil, {}, {recordVersion + 1}, {recordVersion}, b[:len(b)/2]} {
		if _, err := DecodeJobRecord("1.vm", bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// FuzzDecodeJobRecord: a corrupt store record never panics.
func FuzzDecodeJobRecord(f *testing.F) {
	j := &state.Job{ID: "1.vm", Seq: 1, State: pbsattr.StateQueued, Substate: pbsattr.SubQueued}
	j.Attrs.Set(pbsattr.JobName, "x")
	f.Add(encodeJob(j))
	f.Add([]byte{recordVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeJobRecord("1.vm", b)
	})
}
