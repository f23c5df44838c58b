package momproto

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"gopbs/batchreq"
	"gopbs/dis"
)

func TestIS(t *testing.T) {
	tests := []struct {
		wire string
		want ISMessage
	}{
		{"+4+1+1", ISMessage{Version: 1, Command: IS_HELLO}},
		{"+4+1+0", ISMessage{Version: 1, Command: IS_NULL}},
		{"+4+1+2210+2130706433", ISMessage{Version: 1, Command: IS_CLUSTER_ADDRS, Addrs: []uint32{2130706433}}},
		{"+4+1+2210+21307064339+184156162", ISMessage{Version: 1, Command: IS_CLUSTER_ADDRS, Addrs: []uint32{2130706433, 184156162}}},
		{"+4+1+32+64", ISMessage{Version: 1, Command: IS_UPDATE, State: INUSE_BUSY}},
		{"+4+1+42+11opsys=linux+6jobs= +9varattr= ", ISMessage{Version: 1, Command: IS_STATUS, Status: []string{"opsys=linux", "jobs= ", "varattr= "}}},
		{"+4+1+4", ISMessage{Version: 1, Command: IS_STATUS}},
	}
	for _, tt := range tests {
		got, err := DecodeIS([]byte(tt.wire))
		if err != nil {
			t.Errorf("DecodeIS(%q): %v", tt.wire, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("DecodeIS(%q) = %+v, want %+v", tt.wire, *got, tt.want)
		}
		if enc := string(tt.want.Append(nil)); enc != tt.wire {
			t.Errorf("Append(%+v) = %q, want %q", tt.want, enc, tt.wire)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]byte) error
		wire   string
		offset int
		want   error
	}{
		{"IS wrong protocol", isErr, "+3+1+1", 0, ErrBadProtocol},
		{"IS unknown command", isErr, "+4+1+9", 4, ErrUnknownCmd},
		{"IS hello with body", isErr, "+4+1+1+0", 6, ErrTrailing},
		{"IS status cut short", isErr, "+4+1+4+5abc", 6, dis.ErrProto},
		{"IS bad address", isErr, "+4+1+2-1", 6, dis.ErrBadSign},
		{"IS empty", isErr, "", 0, dis.ErrEOF},
		{"RM unknown command", rmErr, "+1+1+7", 4, ErrUnknownCmd},
		{"RM close with body", rmErr, "+1+1+1+3abc", 6, ErrTrailing},
		{"RM config twice", rmErr, "+1+1+3+1a+1b", 9, ErrTrailing},
		{"IM okay without context", imErr, "+3+1+41.vm+1C+0+1+0+3", 19, ErrNoContext},
		{"IM unknown command", imErr, "+3+1+41.vm+1C2+50+1+0", 13, ErrUnknownCmd},
		{"IM join attrs", imErr, "+3+1+41.vm+1C+1+1+0+1+2+3+4+1", 27, dis.ErrEOF},
		{"TM unknown command", tmErr, "+2+1+41.vm+1C3+110+1+1+0", 13, ErrUnknownCmd},
		{"TM negative argc", tmErr, "+2+1+41.vm+1C3+102+1+1+0-1", 24, dis.ErrBadSign},
		{"TM reply without context", tmReplyErr, "+2+1+0+5+0", 8, ErrNoContext},
		{"TM reply bad code", tmReplyErr, "+2+1+7+5", 4, ErrUnknownCmd},
	}
	for _, tt := range tests {
		err := tt.decode([]byte(tt.wire))
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: error %v is not a *DecodeError", tt.name, err)
			continue
		}
		if !errors.Is(err, tt.want) || de.Offset != tt.offset {
			t.Errorf("%s: got %v (offset %d), want %v at offset %d", tt.name, err, de.Offset, tt.want, tt.offset)
		}
	}
}

func isErr(b []byte) error { _, err := DecodeIS(b); return err }
func rmErr(b []byte) error { _, err := DecodeRMRequest(b); return err }
func imErr(b []byte) error { _, err := DecodeIM(b, nil); return err }
func tmErr(b []byte) error { _, _, err := DecodeTMRequest(b); return err }
func tmReplyErr(b []byte) error {
	_, _, err := DecodeTMReply(b, func(int) int { return -1 })
	return err
}

func TestRM(t *testing.T) {
	const reqWire = "+1+1+2+5ncpus+7loadave"
	req, err := DecodeRMRequest([]byte(reqWire))
	if err != nil {
		t.Fatal(err)
	}
	if want := (RMRequest{Version: 1, Command: RM_CMD_REQUEST, Lines: []string{"ncpus", "loadave"}}); !reflect.DeepEqual(*req, want) {
		t.Errorf("request %+v", *req)
	}
	const repWire = "3+100+7ncpus=82+12loadave=0.01"
	rep, err := DecodeRMReply([]byte(repWire))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Code != RM_RSP_OK || !reflect.DeepEqual(rep.Answers, []string{"ncpus=8", "loadave=0.01"}) {
		t.Errorf("reply %+v", *rep)
	}
	if string(req.Append(nil)) != reqWire || string(rep.Append(nil)) != repWire {
		t.Errorf("re-encoding differs: %q %q", req.Append(nil), rep.Append(nil))
	}
	for _, w := range []string{"+1+1+1", "+1+1+4", "+1+1+3", "+1+1+3+7CONFIG:"} {
		r, err := DecodeRMRequest([]byte(w))
		if err != nil || string(r.Append(nil)) != w {
			t.Errorf("%q: %v, %q", w, err, r.Append(nil))
		}
	}
	if RMCommandName(RM_CMD_CONFIG) != "RM_CMD_CONFIG" || RMCodeName(RM_RSP_ERROR) != "RM_RSP_ERROR" || RMCommandName(9) != "RM_CMD_UNKNOWN(9)" {
		t.Error("RM names")
	}
}

func TestIMConversation(t *testing.T) {
	const hdr = "+3+1+539.vm2+32A81159280AD1480083AF0921F93C3CE1"
	ms := mustAddr(t, "10.250.0.2:1023")
	sister := mustAddr(t, "10.250.0.1:15003")
	steps := []struct {
		from, to string
		wire     string
		replyTo  int
		body     Body
	}{
		{"ms", "sis", hdr + "+1+1+0+1+25+601895+58675+12+15+8Job_Name+0+5multi+0", -1,
			&IMJoinJob{NodeID: 1, NumNodes: 2, StdoutPort: 60189, StderrPort: 58675,
				Attrs: batchreq.AttrList{{Name: "Job_Name", Value: "multi", Size: 15}}}},
		{"sis", "ms", hdr + "+0+1+0", IM_JOIN_JOB, Empty{}},
		{"ms", "sis", hdr + "+3+3+1+0+3+4none+8hostname+02+14PBS_VNODENUM=1", -1,
			&IMSpawnTask{ParentNode: 0, TaskID: 3, GlobalID: "none", Argv: []string{"hostname"}, Env: []string{"PBS_VNODENUM=1"}}},
		{"sis", "ms", hdr + "+0+3+1+3", IM_SPAWN_TASK, &Ints{Values: []int{3}}},
		{"ms", "sis", hdr + "+6+5+1+0+3", -1, &Ints{Values: []int{0, 3}}},
		{"sis", "ms", hdr + "+0+5+1-9", IM_OBIT_TASK, &Ints{Values: []int{-9}}},
		{"ms", "sis", hdr + "+2+2+0", -1, Empty{}},
		{"sis", "ms", hdr + "+0+2+0+1+2+3", IM_KILL_JOB, &IMUsage{CPUT: 1, Mem: 2, Vmem: 3}},
		{"ms", "sis", hdr + "+7+6+0", -1, Empty{}},
		{"sis", "ms", hdr + "+0+6+0+1+1+2+3", IM_POLL_JOB, &IMUsage{HasExiting: true, Exiting: 1, CPUT: 1, Mem: 2, Vmem: 3}},
		{"ms", "sis", hdr + "+8+7+0+1+2+4name", -1, &IMGetInfo{Node: 1, Task: 2, Name: "name"}},
		{"sis", "ms", hdr + "+0+7+0+3a\x00b", IM_GET_INFO, &IMData{Data: []byte("a\x00b")}},
		{"ms", "sis", hdr + "+4+8+0+1", -1, &Ints{Values: []int{1}}},
		{"sis", "ms", hdr + "+0+8+0+1+2+3", IM_GET_TASKS, &Ints{Values: []int{1, 2, 3}}},
		{"ms", "sis", hdr + "+5+9+0+1+2+9", -1, &Ints{Values: []int{1, 2, 9}}},
		{"sis", "ms", hdr + "2+99+9+05+15001", IM_SIGNAL_TASK, &Ints{Values: []int{15001}}},
	}
	var tr IMTracker
	for i, s := range steps {
		from, to := ms, sister
		if s.from == "sis" {
			from, to = sister, ms
		}
		msg, err := tr.Decode(from, to, []byte(s.wire))
		if err != nil {
			t.Errorf("step %d: %v", i, err)
			continue
		}
		if msg.ReplyTo != s.replyTo || !reflect.DeepEqual(msg.Body, s.body) {
			t.Errorf("step %d: reply to %d body %#v, want %d %#v", i, msg.ReplyTo, msg.Body, s.replyTo, s.body)
		}
		if got := string(msg.Append(nil)); got != s.wire {
			t.Errorf("step %d: re-encoded %q, want %q", i, got, s.wire)
		}
	}
	if IMCommandName(IM_ERROR) != "IM_ERROR" || IMCommandName(IM_GET_TID) != "IM_GET_TID" || IMCommandName(50) != "IM_UNKNOWN(50)" {
		t.Error("IM names")
	}
}

func mustAddr(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// encoder is a decoded message that encodes itself again.
type encoder interface{ Append([]byte) []byte }

// decodeAll decodes the messages filling stream one after the other with
// decode, checking that each encodes again to the bytes it came from. It
// returns those decoded up to the first that does not decode or encode
// back, and that one's error.
func decodeAll[M encoder](stream []byte, decode func([]byte) (M, int, error)) ([]M, error) {
	var out []M
	for off := 0; off < len(stream); {
		m, n, err := decode(stream[off:])
		if err != nil {
			return out, fmt.Errorf("offset %d: %w", off, err)
		}
		if got := m.Append(nil); !bytes.Equal(got, stream[off:off+n]) {
			return out, fmt.Errorf("offset %d: re-encoded as %q, want %q", off, got, stream[off:off+n])
		}
		out = append(out, m)
		off += n
	}
	return out, nil
}

// mustDecodeAll is decodeAll that fails the test on error, naming what
// the messages are.
func mustDecodeAll[M encoder](t *testing.T, what string, stream []byte, decode func([]byte) (M, int, error)) []M {
	t.Helper()
	out, err := decodeAll(stream, decode)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return out
}

func TestTMConversation(t *testing.T) {
	const hdr = "+2+1+539.vm2+32A81159280AD1480083AF0921F93C3CE1"
	client := hdr + "3+100+1+1" + hdr + "3+102+2+1+0+1+8hostname+0" + hdr + "3+104+4+1+0+2"
	server := "+2+1+0+1+2+0+1+539.vm-1+0" + "+2+1+0+2+2" + "+2+1+0+4+0" + "+2+13+999+95+17004"
	var tr TMTracker
	var cmds []int
	for _, req := range mustDecodeAll(t, "request", []byte(client), tr.DecodeRequest) {
		cmds = append(cmds, req.Command)
	}
	if !reflect.DeepEqual(cmds, []int{TM_INIT, TM_SPAWN, TM_OBIT}) {
		t.Errorf("commands %v", cmds)
	}
	var bodies []Body
	for _, rep := range mustDecodeAll(t, "reply", []byte(server), tr.DecodeReply) {
		bodies = append(bodies, rep.Body)
	}
	want := []Body{
		&TMInitReply{Nodes: []int{0, 1}, JobID: "39.vm", Parent: -1, Last: 0},
		&Ints{Values: []int{2}},
		&Ints{Values: []int{0}},
		&Ints{Values: []int{TM_ENOTIMPLEMENTED}},
	}
	if !reflect.DeepEqual(bodies, want) {
		t.Errorf("bodies %#v", bodies)
	}
	if TMCommandName(TM_ADOPT_JOBID) != "TM_ADOPT_JOBID" || TMCommandName(99) != "TM_UNKNOWN(99)" {
		t.Error("TM names")
	}
}

// TestTMOutlineRequests: the TM requests outside the captures, after the
// outline of spec 10 §11.2, round-trip with their replies.
func TestTMOutlineRequests(t *testing.T) {
	const hdr = "+2+1+541.vm2+320D86E11CE0191DC7CB7BD159ABA22740"
	client := hdr + "3+101+6+1+1" + hdr + "3+103+7+1+1+32+15" + hdr + "3+105+8+1+0" + hdr + "3+112+9+1"
	server := "+2+1+0+6+2+3+4" + "+2+1+0+7" + "+2+13+999+85+17004"
	var tr TMTracker
	var reqs []string
	for _, req := range mustDecodeAll(t, "request", []byte(client), tr.DecodeRequest) {
		reqs = append(reqs, fmt.Sprintf("%s %v", TMCommandName(req.Command), req.Body))
	}
	wantReqs := []string{"TM_TASKS &{[1]}", "TM_SIGNAL &{[1 3 15]}", "TM_RESOURCES &{[0]}", "TM_FINALIZE {}"}
	if !reflect.DeepEqual(reqs, wantReqs) {
		t.Errorf("requests %q, want %q", reqs, wantReqs)
	}
	var bodies []Body
	for _, rep := range mustDecodeAll(t, "reply", []byte(server), tr.DecodeReply) {
		bodies = append(bodies, rep.Body)
	}
	want := []Body{&TMTasksReply{Tasks: []int{3, 4}}, Empty{}, &Ints{Values: []int{TM_ENOTIMPLEMENTED}}}
	if !reflect.DeepEqual(bodies, want) {
		t.Errorf("bodies %#v", bodies)
	}
	// A request cut short is reported as such, so a reader can wait for
	// the rest.
	if _, _, err := DecodeTMRequest([]byte(hdr + "3+103+7+1+1")); !errors.Is(err, dis.ErrEOF) && !errors.Is(err, dis.ErrEOD) {
		t.Errorf("truncated TM_SIGNAL: %v", err)
	}
}
