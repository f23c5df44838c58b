package batchreq

import (
	"bytes"
	"testing"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{0, "no error"},
		{PBSE_FLOOR, "no error"},
		{PBSE_UNKJOBID, "Unknown Job Id"},
		{PBSE_NOATTR, "Undefined attribute "},
		{PBSE_SYSTEM, " System error: "},
		{PBSE_GAP017, ""},
		{PBSE_READ_REPLY_TIMEOUT, "Timed out wating for a reply"},
		{PBSE_BAD_PARAMETER, "Parameter of function was invalid"},
		{PBSE_CEILING, ""},
		{PBSE_RMFLOOR, ""},
		{PBSE_RMUNKNOWN, "resource unknown"},
		{PBSE_RMSYSTEM, "a system error occured"},
		{PBSE_RMPART, "only part of reservation made"},
		{PBSE_RMCEILING, ""},
		{99999, ""},
	}
	for _, tc := range tests {
		if got := ErrorText(tc.code); got != tc.want {
			t.Errorf("ErrorText(%d) = %q, want %q", tc.code, got, tc.want)
		}
	}
	// Every code strictly between the floor and the ceiling except the
	// gap has a text.
	for c := PBSE_FLOOR + 1; c < PBSE_CEILING; c++ {
		if c != PBSE_GAP017 && ErrorText(c) == "" {
			t.Errorf("code %d has no text", c)
		}
	}
	if got := ReplyBaseText(13); got != "Permission denied" {
		t.Errorf("ReplyBaseText(EACCES) = %q", got)
	}
}

func TestRequestNames(t *testing.T) {
	tests := map[int]string{
		PBS_BATCH_QueueJob: "QueueJob", PBS_BATCH_RdytoCommit: "ReadyToCommit", PBS_BATCH_AuthenUser: "AuthenticateUser",
		PBS_BATCH_Rerun: "RerunJob", PBS_BATCH_Manager: "Manager", 35: "NONE", -1: "NONE", 63: "NONE",
		PBS_BATCH_GpuCtrl: "GPUControl", PBS_BATCH_DelFiles: "DeleteFiles",
	}
	for typ, want := range tests {
		if got := RequestName(typ); got != want {
			t.Errorf("RequestName(%d) = %q, want %q", typ, got, want)
		}
	}
	decodes := 0
	for typ := -1; typ <= PBS_BATCH_CEILING; typ++ {
		if ServerDecodes(typ) {
			decodes++
			if typ != PBS_BATCH_Disconnect && NewBody(typ) == nil {
				t.Errorf("server decodes %d but it has no body kind", typ)
			}
		}
	}
	// 63 types less Connect, 19 gaps, AsySignalJob and the three MOM-only.
	if decodes != 63-1-19-1-3 {
		t.Errorf("server decodes %d types", decodes)
	}
}

func TestServeMux(t *testing.T) {
	var mux ServeMux[*[]string]
	mux.HandleFunc(PBS_BATCH_StatusJob, func(log *[]string, q *Request) { *log = append(*log, "status "+q.User) })
	mux.NotFound = HandlerFunc[*[]string](func(log *[]string, q *Request) { *log = append(*log, "notfound "+RequestName(q.Type)) })
	var log []string
	mux.ServeBatch(&log, NewRequest(PBS_BATCH_StatusJob, "alice", &StatusReq{}))
	mux.ServeBatch(&log, NewRequest(PBS_BATCH_Connect, "bob", nil))
	if len(log) != 2 || log[0] != "status alice" || log[1] != "notfound Connect" {
		t.Errorf("log = %q", log)
	}
	if mux.Handler(PBS_BATCH_QueueJob) != nil || mux.Handler(99) != nil {
		t.Error("unexpected handler")
	}
}

func TestSchedCommand(t *testing.T) {
	var buf bytes.Buffer
	for _, cmd := range []int{SCH_SCHEDULE_RECYC, SCH_ERROR, SCH_SCHEDULE_FIRST} {
		buf.Reset()
		if err := WriteSchedCommand(&buf, cmd); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSchedCommand(&buf)
		if err != nil || got != cmd {
			t.Errorf("round trip %d: got %d, %v", cmd, got, err)
		}
	}
	if got := AppendSchedCommand(nil, SCH_SCHEDULE_RECYC); !bytes.Equal(got, []byte{0, 0, 0, 4}) {
		t.Errorf("RECYC = % x", got)
	}
	if _, err := ReadSchedCommand(bytes.NewReader([]byte{0, 0, 1})); err == nil {
		t.Error("short command accepted")
	}
	for cmd, want := range map[int]string{1: "new", 4: "recyc", 6: "N/A", 10: "scheduler_first", 11: "", -1: ""} {
		if got := SchedCommandName(cmd); got != want {
			t.Errorf("SchedCommandName(%d) = %q, want %q", cmd, got, want)
		}
	}
}

func TestObjectID(t *testing.T) {
	for _, tc := range requestVectors {
		q, err := ReadRequest(reader(tc.wire))
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		switch q.Type {
		case PBS_BATCH_MessJob, PBS_BATCH_SignalJob, PBS_BATCH_CopyFiles, PBS_BATCH_JobObit:
			want = "9.vm"
		case PBS_BATCH_Manager, PBS_BATCH_StatusQue:
			want = "batch"
		case PBS_BATCH_RdytoCommit, PBS_BATCH_Commit:
			want = "1.srv.example.com"
		case PBS_BATCH_ModifyJob, PBS_BATCH_RunJob:
			want = "12.vm"
		}
		if q.Type == PBS_BATCH_StatusJob && q.User == "PBS_Server" {
			want = "9.vm"
		}
		if want != "" && q.ObjectID() != want {
			t.Errorf("%s: ObjectID = %q, want %q", tc.name, q.ObjectID(), want)
		}
	}
}

func TestMessages(t *testing.T) {
	if got := ErrorReply(PBSE_BADHOST, "", MsgHostNotAuthorized("h1")).Text; got != "Access from host not allowed, or unknown host MSG=request not authorized from host h1" {
		t.Errorf("BADHOST text = %q", got)
	}
	if got := TextReply(0, MsgStartFailed("vm")).Append(nil); string(got) != "+2+1+0+0+72+23start failed on node vm" {
		t.Errorf("start failed reply = %q", got)
	}
	if MsgStartFailed("") != "start failed on unknown node" {
		t.Error("MsgStartFailed(\"\")")
	}
}

func TestClientAcceptsChoice(t *testing.T) {
	tests := []struct {
		reqType, choice int
		want            bool
	}{
		{PBS_BATCH_QueueJob, BATCH_REPLY_CHOICE_Queue, true},
		{PBS_BATCH_QueueJob, BATCH_REPLY_CHOICE_Text, true},
		{PBS_BATCH_QueueJob, BATCH_REPLY_CHOICE_NULL, false},
		{PBS_BATCH_SelectJobs, BATCH_REPLY_CHOICE_NULL, false},
		{PBS_BATCH_SelectJobs, BATCH_REPLY_CHOICE_Select, true},
		{PBS_BATCH_StatusJob, BATCH_REPLY_CHOICE_NULL, true},
		{PBS_BATCH_SelStat, BATCH_REPLY_CHOICE_Status, true},
		{PBS_BATCH_StatusNode, BATCH_REPLY_CHOICE_Select, false},
		{PBS_BATCH_LocateJob, BATCH_REPLY_CHOICE_Locate, true},
		{PBS_BATCH_LocateJob, BATCH_REPLY_CHOICE_Status, false},
		{PBS_BATCH_Manager, BATCH_REPLY_CHOICE_RescQuery, true},
		{PBS_BATCH_Manager, 0, false},
		{PBS_BATCH_DeleteJob, 10, false},
	}
	for _, tc := range tests {
		if got := ClientAcceptsChoice(tc.reqType, tc.choice); got != tc.want {
			t.Errorf("ClientAcceptsChoice(%s, %d) = %v", RequestName(tc.reqType), tc.choice, got)
		}
	}
}

func TestLogTexts(t *testing.T) {
	got := RejectLogText(ErrorReply(PBSE_UNKJOBID, "", MsgCannotLocateJob), PBS_BATCH_CheckpointJob, "alice", "vm")
	if want := "Reject reply code=15001(Unknown Job Id MSG=cannot locate job), aux=0, type=CheckpointJob, from alice@vm"; got != want {
		t.Errorf("RejectLogText = %q, want %q", got, want)
	}
	if ShutdownName(SHUT_QUICK) != "Quick" || ShutdownName(SHUT_SIG) != "By Signal" || ShutdownName(9) != "" {
		t.Error("ShutdownName")
	}
	if ObjTypeName(MGR_OBJ_JOB) != "Job" || ObjTypeName(MGR_OBJ_NONE) != "" {
		t.Error("ObjTypeName")
	}
}

func TestStrerror(t *testing.T) {
	for errno, want := range map[int]string{0: "Success", 1: "Operation not permitted", 2: "No such file or directory",
		5: "Input/output error", 15000: "Unknown error 15000", -3: "Unknown error -3"} {
		if got := Strerror(errno); got != want {
			t.Errorf("Strerror(%d) = %q, want %q", errno, got, want)
		}
	}
}

func TestAsySignalJob(t *testing.T) {
	wire := "+2+12+60+4root+49.vm+7SIGTERM+0"
	q, err := ReadRequest(reader(wire))
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := q.Body.(*SignalJob); !ok || b.Signal != "SIGTERM" || string(q.Append(nil)) != wire {
		t.Errorf("AsySignalJob decoded as %#v", q.Body)
	}
	if _, err := ReadServerRequest(reader(wire)); ErrorCode(err) != PBSE_UNKREQ {
		t.Errorf("server: err = %v, want UNKREQ", err)
	}
}

func TestAttrSetAndResetSizes(t *testing.T) {
	q, err := ReadRequest(reader("+2+1+9+4root+2+1+5batch+12+502+11max_running+0+210+0+0"))
	if err != nil {
		t.Fatal(err)
	}
	l := q.Body.(*Manage).Attrs
	if l[0].Size != 50 {
		t.Fatalf("size = %d", l[0].Size)
	}
	l[0].Set("5")
	if got := string(l.Append(nil)); got != "+12+142+11max_running+0+15+0" {
		t.Errorf("after Set: %q", got)
	}
	l[0].Size = 50
	l.ResetSizes()
	if got := string(l.Append(nil)); got != "+12+142+11max_running+0+15+0" {
		t.Errorf("after ResetSizes: %q", got)
	}
	if v, ok := l.Get("max_running"); !ok || v != "5" {
		t.Errorf("Get = %q, %v", v, ok)
	}
	if _, ok := l.GetResource("max_running", "x"); ok {
		t.Error("GetResource found a resource entry")
	}
}
