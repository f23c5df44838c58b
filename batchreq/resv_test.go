package batchreq

import (
	"bytes"
	"reflect"
	"testing"

	"gopbs/dis"
)

// resvVectors are GoPBS reservation requests with their exact bytes.
var resvVectors = []struct {
	name string
	req  *Request
	wire string
}{
	{"submit", NewRequest(PBS_BATCH_ResvSubmit, "alice", &ResvSubmit{Flags: ResvFlagTransaction, Attrs: AttrList{
		NewAttr(ATTR_resv_start, "1795788000"), NewAttr(ATTR_resv_nodect, "2")}}),
		"+2+14+1000+5alice+1+22+222+10resv_start+02+101795788000+02+142+11resv_nodect+0+12+0+0"},
	{"commit", NewRequest(PBS_BATCH_ResvCommit, "alice", &ResvID{ID: "R12"}),
		"+2+14+1001+5alice+3R12+0+0+0"},
	{"abort", NewRequest(PBS_BATCH_ResvAbort, "alice", &ResvID{ID: "R12"}),
		"+2+14+1002+5alice+3R12+0+0+0"},
	{"modify", NewRequest(PBS_BATCH_ResvModify, "alice", &ResvModify{ID: "R3", Flags: 1, Attrs: AttrList{NewAttr(ATTR_resv_users, "")}}),
		"+2+14+1003+5alice+2R3+1+12+122+10resv_users+0+0+0+0"},
	{"cancel by owner", NewRequest(PBS_BATCH_ResvCancel, "root", &ResvID{Owner: "bob"}),
		"+2+14+1004+4root+0+3bob+0+0"},
	{"destroy", NewRequest(PBS_BATCH_ResvDestroy, "alice", &ResvID{ID: "R1", Flags: 1}),
		"+2+14+1005+5alice+2R1+0+1+0"},
	{"status", NewRequest(PBS_BATCH_ResvStatus, "alice", &ResvStatus{Owner: "bob", Start: 100, End: 200, Expired: -1}),
		"+2+14+1006+5alice+0+3bob3+1003+200-1+0"},
	{"avail", NewRequest(PBS_BATCH_ResvAvailNodes, "alice", &ResvAvail{Start: 100, End: 200}),
		"+2+14+1007+5alice3+1003+200+0+0"},
}

func TestResvRequests(t *testing.T) {
	for _, v := range resvVectors {
		bodyAttrs(v.req).ResetSizes()
		got := string(v.req.Append(nil))
		if got != v.wire {
			t.Errorf("%s: encoded\n%q\nwant\n%q", v.name, got, v.wire)
			continue
		}
		q, err := ReadAnyRequest(dis.NewReader(bytes.NewReader([]byte(v.wire))))
		if err != nil {
			t.Errorf("%s: ReadAnyRequest: %v", v.name, err)
			continue
		}
		if q.User != v.req.User || q.Type != v.req.Type || reflect.TypeOf(q.Body) != reflect.TypeOf(v.req.Body) ||
			string(q.Append(nil)) != v.wire || q.ObjectID() != v.req.ObjectID() {
			t.Errorf("%s: decoded %+v, want %+v", v.name, q.Body, v.req.Body)
		}
		// TORQUE's readers refuse the type as a 2.5.13 server does.
		for _, read := range []func(*dis.Reader) (*Request, error){ReadRequest, ReadServerRequest} {
			_, err := read(dis.NewReader(bytes.NewReader([]byte(v.wire))))
			if ErrorCode(err) != PBSE_DISPROTO {
				t.Errorf("%s: TORQUE reader: %v, want PBSE_DISPROTO", v.name, err)
			}
		}
	}
	// Types next to GoPBS's range are still out of range.
	for _, typ := range []string{"3+999", "4+1008"} {
		_, err := ReadAnyRequest(dis.NewReader(bytes.NewReader([]byte("+2+1" + typ + "+5alice+0"))))
		if ErrorCode(err) != PBSE_DISPROTO {
			t.Errorf("type %s: %v, want PBSE_DISPROTO", typ, err)
		}
	}
	// Truncated bodies are protocol errors.
	for _, v := range resvVectors {
		for cut := len(v.wire) - 1; cut > 12; cut -= 3 {
			_, err := ReadAnyRequest(dis.NewReader(bytes.NewReader([]byte(v.wire[:cut]))))
			if err == nil {
				t.Errorf("%s cut at %d decoded", v.name, cut)
			}
		}
	}
}

func bodyAttrs(q *Request) AttrList {
	switch b := q.Body.(type) {
	case *ResvSubmit:
		return b.Attrs
	case *ResvModify:
		return b.Attrs
	case *ResvAvail:
		return b.Attrs
	}
	return nil
}

func TestResvNamesAndChoices(t *testing.T) {
	names := map[int]string{PBS_BATCH_ResvSubmit: "ResvSubmit", PBS_BATCH_ResvCommit: "ResvCommit",
		PBS_BATCH_ResvAbort: "ResvAbort", PBS_BATCH_ResvModify: "ResvModify", PBS_BATCH_ResvCancel: "ResvCancel",
		PBS_BATCH_ResvDestroy: "ResvDestroy", PBS_BATCH_ResvStatus: "ResvStatus", PBS_BATCH_ResvAvailNodes: "ResvAvailNodes",
		999: "NONE", 1008: "NONE", PBS_BATCH_QueueJob: "QueueJob"}
	for typ, want := range names {
		if got := RequestName(typ); got != want {
			t.Errorf("RequestName(%d) = %q, want %q", typ, got, want)
		}
	}
	choices := []struct {
		typ, choice int
		ok          bool
	}{
		{PBS_BATCH_ResvSubmit, BATCH_REPLY_CHOICE_Queue, true},
		{PBS_BATCH_ResvSubmit, BATCH_REPLY_CHOICE_Text, true},
		{PBS_BATCH_ResvSubmit, BATCH_REPLY_CHOICE_Status, false},
		{PBS_BATCH_ResvStatus, BATCH_REPLY_CHOICE_Status, true},
		{PBS_BATCH_ResvStatus, BATCH_REPLY_CHOICE_Queue, false},
		{PBS_BATCH_ResvAvailNodes, BATCH_REPLY_CHOICE_NULL, true},
		{PBS_BATCH_ResvCommit, BATCH_REPLY_CHOICE_NULL, true},
	}
	for _, c := range choices {
		if got := ClientAcceptsChoice(c.typ, c.choice); got != c.ok {
			t.Errorf("ClientAcceptsChoice(%d, %d) = %v", c.typ, c.choice, got)
		}
	}
	if ServerDecodes(PBS_BATCH_ResvSubmit) {
		t.Error("a 2.5.13 server does not decode ResvSubmit")
	}
}

func TestMuxGoPBSTypes(t *testing.T) {
	var m ServeMux[*[]int]
	var got []int
	m.HandleFunc(PBS_BATCH_ResvStatus, func(c *[]int, q *Request) { *c = append(*c, q.Type) })
	m.NotFound = HandlerFunc[*[]int](func(c *[]int, q *Request) { *c = append(*c, -q.Type) })
	m.ServeBatch(&got, &Request{Header: Header{Type: PBS_BATCH_ResvStatus}})
	m.ServeBatch(&got, &Request{Header: Header{Type: PBS_BATCH_ResvCommit}})
	if !reflect.DeepEqual(got, []int{PBS_BATCH_ResvStatus, -PBS_BATCH_ResvCommit}) {
		t.Errorf("dispatched %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Handle(5000) did not panic")
		}
	}()
	m.HandleFunc(5000, func(*[]int, *Request) {})
}

// FuzzReadAnyRequest: ReadAnyRequest never panics, and a request it
// decodes encodes canonically (encode, decode, encode is stable).
func FuzzReadAnyRequest(f *testing.F) {
	for _, v := range resvVectors {
		f.Add([]byte(v.wire))
	}
	for _, v := range requestVectors {
		f.Add([]byte(v.wire))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := dis.NewReader(bytes.NewReader(data))
		r.MaxString = 1 << 20
		q, err := ReadAnyRequest(r)
		if err != nil {
			return
		}
		enc := q.Append(nil)
		q2, err := ReadAnyRequest(dis.NewReader(bytes.NewReader(enc)))
		if err != nil {
			t.Fatalf("re-decoding %q: %v", enc, err)
		}
		if enc2 := q2.Append(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%q\n%q", enc, enc2)
		}
	})
}
