package state

import (
	"slices"
	"testing"

	"gopbs/attr"
)

func TestDecodeJobRecord(t *testing.T) {
	sub := &Job{ID: "5[2].vm", Seq: 5, State: attr.StateHeld, Substate: attr.SubHeld, Hold: HoldUser, ArrayIndex: 2, Rank: 9, PurgeAt: 7,
		Queue: &Queue{Name: "batch"}, Parent: &Job{ID: "5[].vm"}}
	sub.Attrs.Set(attr.JobName, "run-2")
	sub.Attrs.SetRes(attr.JobResourceList, "walltime", "01:00:00")
	tmpl := &Job{ID: "5[].vm", Seq: 5, State: attr.StateQueued, Substate: attr.SubQueued,
		Array: &ArrayInfo{Request: "0-3", Size: 4, OK: 1, NotOK: 2, Started: 3}}

	r, err := DecodeJobRecord(sub.ID, EncodeJob(sub))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "5[2].vm" || r.Seq != 5 || r.State != int64(attr.StateHeld) || r.Substate != int64(attr.SubHeld) || r.Hold != HoldUser ||
		r.Queue != "batch" || r.Rank != 9 || r.ArrayIndex != 2 || r.Parent != "5[].vm" || r.ArrayRequest != "" ||
		r.PurgeAt != 7 || r.ArrayCounts != nil {
		t.Fatalf("fixed fields %+v", r)
	}
	want := []RecordAttr{{Name: "Job_Name", Value: "run-2"}, {Name: "Resource_List", Resource: "walltime", Value: "01:00:00"}}
	if !slices.Equal(r.Attrs, want) {
		t.Fatalf("attributes %+v, want %+v", r.Attrs, want)
	}

	b := EncodeJob(tmpl)
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
	for _, bad := range [][]byte{nil, {}, {RecordVersion + 1}, {RecordVersion}, b[:len(b)/2]} {
		if _, err := DecodeJobRecord("1.vm", bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// FuzzDecodeJobRecord: a corrupt store record never panics.
func FuzzDecodeJobRecord(f *testing.F) {
	j := &Job{ID: "1.vm", Seq: 1, State: attr.StateQueued, Substate: attr.SubQueued}
	j.Attrs.Set(attr.JobName, "x")
	f.Add(EncodeJob(j))
	f.Add([]byte{RecordVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeJobRecord("1.vm", b)
	})
}
