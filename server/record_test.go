package server

import (
	"slices"
	"testing"

	pbsattr "gopbs/attr"
)

func TestDecodeJobRecord(t *testing.T) {
	sub := &Job{id: "5[2].vm", seq: 5, state: pbsattr.StateHeld, substate: pbsattr.SubHeld, hold: holdUser, arrayIdx: 2, rank: 9, purgeAt: 7,
		queue: &Queue{name: "batch"}, parent: &Job{id: "5[].vm"}}
	sub.attrs.set(pbsattr.JobName, "run-2")
	sub.attrs.setRes(pbsattr.JobResourceList, "walltime", "01:00:00")
	tmpl := &Job{id: "5[].vm", seq: 5, state: pbsattr.StateQueued, substate: pbsattr.SubQueued,
		array: &arrayInfo{request: "0-3", size: 4, ok: 1, notOK: 2, started: 3}}

	r, err := DecodeJobRecord(sub.id, encodeJob(sub))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "5[2].vm" || r.Seq != 5 || r.State != int64(pbsattr.StateHeld) || r.Substate != int64(pbsattr.SubHeld) || r.Hold != holdUser ||
		r.Queue != "batch" || r.Rank != 9 || r.ArrayIndex != 2 || r.Parent != "5[].vm" || r.ArrayRequest != "" ||
		r.PurgeAt != 7 || r.ArrayCounts != nil {
		t.Fatalf("fixed fields %+v", r)
	}
	want := []RecordAttr{{Name: "Job_Name", Value: "run-2"}, {Name: "Resource_List", Resource: "walltime", Value: "01:00:00"}}
	if !slices.Equal(r.Attrs, want) {
		t.Fatalf("attributes %+v, want %+v", r.Attrs, want)
	}

	b := encodeJob(tmpl)
	r, err = DecodeJobRecord(tmpl.id, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.ArrayRequest != "0-3" || !slices.Equal(r.ArrayCounts, []int64{4, 1, 2, 3}) {
		t.Fatalf("array template %+v", r)
	}
	for n := range b {
		if r, err := DecodeJobRecord(tmpl.id, b[:n]); err == nil && len(r.ArrayCounts) == 4 {
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
	j := &Job{id: "1.vm", seq: 1, state: pbsattr.StateQueued, substate: pbsattr.SubQueued}
	j.attrs.set(pbsattr.JobName, "x")
	f.Add(encodeJob(j))
	f.Add([]byte{recordVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeJobRecord("1.vm", b)
	})
}
