package reservation

import (
	"testing"
	"time"

	"gopbs/resv"
)

// TestRecordRoundTrip: a reservation's store record reads back as
// written, pending change and usage included.
func TestRecordRoundTrip(t *testing.T) {
	at := time.Unix(1795788000, 0)
	e := &entry{record: record{Reservation: resv.Reservation{ID: "R7", Owner: "alice", Users: []string{"bob"},
		Start: at, End: at.Add(time.Hour), NodeCount: 2, Assigned: []string{"n1", "n2"},
		Status: resv.Status{State: resv.Running, Pending: resv.OpModify}, Change: &resv.Change{NodeCount: 3},
		Usage: resv.Usage{ActualStart: at, Jobs: 2, JobSeconds: 90}}, QueueMade: true, Seen: []string{"1.s"}}}
	got, err := decode("R7", encode(e))
	if err != nil {
		t.Fatal(err)
	}
	if got.num != 7 || got.Owner != "alice" || !got.Start.Equal(at) || got.Change == nil || got.Change.NodeCount != 3 ||
		got.Usage.JobSeconds != 90 || !got.QueueMade || len(got.Seen) != 1 || got.State != resv.Running {
		t.Errorf("round trip: %+v", got)
	}
	if _, err := decode("R8", encode(e)); err == nil {
		t.Error("a record under another id was accepted")
	}
}

// FuzzDecode: no stored bytes crash the table's reader.
func FuzzDecode(f *testing.F) {
	at := time.Unix(1795788000, 0)
	f.Add("R1", encode(&entry{record: record{Reservation: resv.Reservation{ID: "R1", Owner: "a", Start: at, End: at}}}))
	f.Add("R1", []byte(`{"v":1,"ID":"R1","Change":{"Users":null}}`))
	f.Add("#next", []byte("12"))
	f.Add("R2", []byte(`{`))
	f.Fuzz(func(t *testing.T, id string, b []byte) {
		e, err := decode(id, b)
		if err == nil && (e.ID != id || resv.FormatID(e.num) != id) {
			t.Fatalf("decode(%q) gave %q number %d", id, e.ID, e.num)
		}
	})
}
