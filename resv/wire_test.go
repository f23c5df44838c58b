package resv

import (
	"reflect"
	"testing"
	"time"

	"gopbs/batchreq"
)

func TestWireRoundTrip(t *testing.T) {
	r := &Reservation{ID: "R4", Owner: "alice", Users: []string{"bob"},
		Start: time.Unix(1795788000, 0), End: time.Unix(1795791600, 0), NodeCount: 2,
		Req: Requirements{MemBytes: 1 << 30, NCPU: 4, Slots: 2, Arch: "x86_64", OS: "linux",
			Attrs: []Attr{{"gpu", "1"}}, Props: []string{"fast"}}, Partition: "p1",
		Status: Status{State: Confirmed, Pending: OpCancel}, Assigned: []string{"n1", "n2"}, Created: time.Unix(1795780000, 0)}
	l := r.StatusAttrs()
	back, err := FromAttrs("R4", l.Get)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip\n%+v\nwant\n%+v", back, r)
	}
	list := &Reservation{Owner: "a", Nodes: []string{"n1", "n3"}, Start: time.Unix(10, 0), End: time.Unix(20, 0)}
	if v, _ := list.SubmitAttrs().Get(batchreq.ATTR_resv_nodes); v != "n1+n3" {
		t.Errorf("node list %q", v)
	}
	if _, ok := list.SubmitAttrs().Get(batchreq.ATTR_resv_nodect); ok {
		t.Error("node count sent with a node list")
	}
	c := &Change{End: time.Unix(30, 0), SetUsers: true}
	cb, err := ChangeFromAttrs(c.ChangeAttrs().Get)
	if err != nil || !cb.SetUsers || cb.Users != nil || !cb.End.Equal(c.End) || !cb.Start.IsZero() {
		t.Errorf("change %+v, %v", cb, err)
	}
	for _, bad := range []batchreq.AttrList{
		{batchreq.NewAttr(batchreq.ATTR_resv_start, "x")},
		{batchreq.NewAttr(batchreq.ATTR_resv_nodect, "-1")},
		{batchreq.NewAttr(batchreq.ATTR_resv_state, "NAPPING")},
		{batchreq.NewAttr(batchreq.ATTR_resv_pending, "dance")},
		{batchreq.NewAttr(batchreq.ATTR_resv_mem, "lots")},
		{batchreq.NewAttr(batchreq.ATTR_resv_resources, "a=,b")},
	} {
		if _, err := FromAttrs("R1", bad.Get); err == nil {
			t.Errorf("FromAttrs accepted %v", bad)
		}
	}
}

// FuzzFromAttrs: the attributes of a ResvSubmit, ResvModify or status
// object, as a server will decode them from any client, never panic;
// what FromAttrs accepts and Validate passes encodes and decodes to the
// same reservation.
func FuzzFromAttrs(f *testing.F) {
	f.Add("resv_start", "1795788000", "resv_nodect", "2", "resv_resources", "gpu=1,fast")
	f.Add("resv_nodes", "n1+n2", "resv_users", "bob,carol", "resv_mem", "1073741824")
	f.Add("resv_state", "CONFIRMED", "resv_pending", "cancel", "resv_end", "1795791600")
	now := time.Unix(1795780800, 0)
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		l := batchreq.AttrList{batchreq.NewAttr(k1, v1), batchreq.NewAttr(k2, v2), batchreq.NewAttr(k3, v3),
			batchreq.NewAttr(batchreq.ATTR_resv_owner, "alice")}
		r, err := FromAttrs("R1", l.Get)
		if _, cerr := ChangeFromAttrs(l.Get); (cerr == nil) != (err == nil) {
			t.Fatalf("FromAttrs %v but ChangeFromAttrs %v", err, cerr)
		}
		if err != nil || r.Validate(now) != nil {
			return
		}
		back, err := FromAttrs("R1", r.StatusAttrs().Get)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if !reflect.DeepEqual(back.SubmitAttrs(), r.SubmitAttrs()) {
			t.Fatalf("round trip %v != %v", back.SubmitAttrs(), r.SubmitAttrs())
		}
	})
}

// FuzzParseMem: -mem never panics and never yields a negative size.
func FuzzParseMem(f *testing.F) {
	for _, s := range []string{"512", "2gb", "1024KB", "10b", "1t", "99999999999999gb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseMem(s); err == nil && n < 0 {
			t.Fatalf("ParseMem(%q) = %d", s, n)
		}
	})
}
