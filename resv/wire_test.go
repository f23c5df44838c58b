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
			Attrs: []Attr{{"gpu", "1"}}, Props: []string{"fast"}},
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
