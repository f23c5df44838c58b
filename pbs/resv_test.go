package pbs

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestResvCalls sends every reservation request through an
// authenticated connection (the stand-in pbs_iff) to a fake server and
// checks what arrived and what the calls return.
func TestResvCalls(t *testing.T) {
	clientEnv(t)
	var bodies []batchreq.Body
	srv := newTestServer(t, func(q *batchreq.Request) *batchreq.Reply {
		bodies = append(bodies, q.Body)
		switch q.Type {
		case batchreq.PBS_BATCH_ResvSubmit:
			return batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, "R7")
		case batchreq.PBS_BATCH_ResvStatus:
			return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{
				{ObjType: batchreq.MGR_OBJ_RESV, Name: "R7", Attrs: batchreq.AttrList{batchreq.NewAttr("resv_state", "CONFIRMED")}}}}
		case batchreq.PBS_BATCH_ResvAvailNodes:
			return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{
				{ObjType: batchreq.MGR_OBJ_NODE, Name: "n1"}, {ObjType: batchreq.MGR_OBJ_NODE, Name: "n2"}}}
		case batchreq.PBS_BATCH_ResvCommit:
			return batchreq.TextReply(batchreq.PBSE_PERM, "Unauthorized Request  MSG=not the owner")
		}
		return null
	})
	c, err := Connect("srva:" + srv.port())
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.ResvSubmit([]Attr{{Name: "resv_nodect", Value: "2"}}, true)
	if err != nil || id != "R7" {
		t.Errorf("ResvSubmit = %q, %v", id, err)
	}
	if err := c.ResvCommit("R7"); Errno(err) != batchreq.PBSE_PERM || ServerText(err) != "Unauthorized Request  MSG=not the owner" {
		t.Errorf("ResvCommit: %v", err)
	}
	for _, call := range []func() error{
		func() error { return c.ResvAbort("R7") },
		func() error { return c.ResvModify("R7", []Attr{{Name: "resv_end", Value: "100"}}, false) },
		func() error { return c.ResvCancel("", "bob", false) },
		func() error { return c.ResvDestroy("R7", "", true) },
	} {
		if err := call(); err != nil {
			t.Error(err)
		}
	}
	st, err := c.ResvStatus(batchreq.ResvStatus{Owner: "bob", Expired: -1})
	if err != nil || len(st) != 1 || st[0].Name != "R7" || st[0].ObjType != batchreq.MGR_OBJ_RESV {
		t.Errorf("ResvStatus = %+v, %v", st, err)
	}
	nodes, err := c.ResvAvailNodes(time.Unix(100, 0), time.Unix(200, 0), nil)
	if err != nil || len(nodes) != 2 {
		t.Errorf("ResvAvailNodes = %+v, %v", nodes, err)
	}
	c.Close()
	want := []string{"ResvSubmit", "ResvCommit R7", "ResvAbort R7", "ResvModify R7", "ResvCancel bob",
		"ResvDestroy R7", "ResvStatus", "ResvAvailNodes", "Disconnect"}
	if got := srv.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q\nwant %q", got, want)
	}
	wantBodies := []batchreq.Body{
		&batchreq.ResvSubmit{Flags: 1, Attrs: batchreq.AttrList{{Name: "resv_nodect", Value: "2", Size: 14}}},
		&batchreq.ResvID{ID: "R7"}, &batchreq.ResvID{ID: "R7"},
		&batchreq.ResvModify{ID: "R7", Attrs: batchreq.AttrList{{Name: "resv_end", Value: "100", Size: 13}}},
		&batchreq.ResvID{Owner: "bob"}, &batchreq.ResvID{ID: "R7", Flags: 1},
		&batchreq.ResvStatus{Owner: "bob", Expired: -1},
		&batchreq.ResvAvail{Start: 100, End: 200, Attrs: batchreq.AttrList{}},
	}
	if !reflect.DeepEqual(bodies, wantBodies) {
		for i := range bodies {
			t.Errorf("body %d: %+v", i, bodies[i])
		}
	}
}

// TestResvSubmitBadReply: a status-kind reply to a submission is a
// protocol error, as for QueueJob.
func TestResvSubmitBadReply(t *testing.T) {
	clientEnv(t)
	srv := newTestServer(t, func(*batchreq.Request) *batchreq.Reply {
		return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status}
	})
	c, err := Connect("srva:" + srv.port())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var pe *Error
	if _, err := c.ResvSubmit(nil, false); !errors.As(err, &pe) || pe.Code != batchreq.PBSE_PROTOCOL {
		t.Errorf("ResvSubmit: %v, want PBSE_PROTOCOL", err)
	}
}
