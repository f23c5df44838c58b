package server

import (
	"testing"

	pbsattr "gopbs/attr"
)

func TestJobRecordRoundTrip(t *testing.T) {
	j := &Job{id: "5[2].vm", seq: 5, state: pbsattr.StateHeld, substate: pbsattr.SubHeld, hold: holdUser, arrayIdx: 2, rank: 9, purgeAt: 7}
	j.attrs.set(pbsattr.JobName, "run-2")
	j.attrs.setRes(pbsattr.JobResourceList, "walltime", "01:00:00")
	j.attrs.setRes(unknownJobAttr, "foo\x1fbar", "x")
	r, err := decodeJob(j.id, encodeJob(j))
	if err != nil {
		t.Fatal(err)
	}
	g := r.job
	if g.seq != 5 || g.state != pbsattr.StateHeld || g.substate != pbsattr.SubHeld || g.hold != holdUser || g.arrayIdx != 2 || g.rank != 9 || g.purgeAt != 7 {
		t.Fatalf("fixed fields %+v", g)
	}
	if g.attrs.get(pbsattr.JobName) != "run-2" || g.attrs.getRes(pbsattr.JobResourceList, "walltime") != "01:00:00" || g.attrs.getRes(unknownJobAttr, "foo\x1fbar") != "x" {
		t.Fatalf("attributes %+v", g.attrs)
	}
}

// FuzzDecodeJob: a corrupt store record never panics.
func FuzzDecodeJob(f *testing.F) {
	j := &Job{id: "1.vm", seq: 1, state: pbsattr.StateQueued, substate: pbsattr.SubQueued}
	j.attrs.set(pbsattr.JobName, "x")
	f.Add(encodeJob(j))
	f.Add([]byte{recordVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeJob("1.vm", b)
		if err == nil && (r.job.state < 0 || r.job.state > pbsattr.StateComplete) {
			t.Fatalf("bad state accepted: %d", r.job.state)
		}
	})
}
