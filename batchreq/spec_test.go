package batchreq

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"gopbs/dis"
)

func reader(s string) *dis.Reader { return dis.NewReader(strings.NewReader(s)) }

// requestVectors are request byte strings quoted in the spec, with the
// fields they must decode to.
var requestVectors = []struct {
	name    string
	wire    string
	want    Request
	momOnly bool // a type pbs_server does not decode
}{
	{
		name: "qmgr list queue (02 §2.1)",
		wire: "+2+12+20+4root+5batch+2+9+7started+0+0+0+9+7enabled+0+0+0+0",
		want: Request{Header: Header{PBS_BATCH_StatusQue, "root"}, Body: &StatusReq{ID: "batch", Attrs: AttrList{
			{Name: "started", Size: 9}, {Name: "enabled", Size: 9}}}},
	},
	{
		name: "qmsg (02 §3.6)",
		wire: "+2+12+10+5alice+49.vm+2+5hello+0",
		want: Request{Header: Header{PBS_BATCH_MessJob, "alice"}, Body: &MessJob{JobID: "9.vm", FileOpt: MSG_ERR, Message: "hello"}},
	},
	{
		name: "qterm -t quick (02 §3.10)",
		wire: "+2+12+17+4root+2+0",
		want: Request{Header: Header{PBS_BATCH_Shutdown, "root"}, Body: &Shutdown{Manner: SHUT_QUICK}},
	},
	{
		name: "qsig (02 §3.11)",
		wire: "+2+12+18+5alice+49.vm+7SIGUSR1+0",
		want: Request{Header: Header{PBS_BATCH_SignalJob, "alice"}, Body: &SignalJob{JobID: "9.vm", Signal: "SIGUSR1"}},
	},
	{
		name: "server SIGTERM relay with garbage extension (02 §3.11)",
		wire: "+2+12+182+10PBS_Server+49.vm+7SIGTERM+1+6\xb0\xd2\x8b\x16\x3f\x56",
		want: Request{Header: Header{PBS_BATCH_SignalJob, "PBS_Server"}, Body: &SignalJob{JobID: "9.vm", Signal: "SIGTERM"},
			HasExtension: true, Extension: "\xb0\xd2\x8b\x16\x3f\x56"},
	},
	{
		name: "rerun relay (10 §4)",
		wire: "+2+12+182+10PBS_Server+49.vm+7SIGKILL+1+5rerun",
		want: Request{Header: Header{PBS_BATCH_SignalJob, "PBS_Server"}, Body: &SignalJob{JobID: "9.vm", Signal: "SIGKILL"},
			HasExtension: true, Extension: "rerun"},
	},
	{
		name: "ResourceQuery (02 §3.14)",
		wire: "+2+12+24+9Scheduler+0+1+7nodes=1+0",
		want: Request{Header: Header{PBS_BATCH_Rescq, "Scheduler"}, Body: &Resc{Queries: []string{"nodes=1"}}},
	},
	{
		name: "AuthenUser (02 §3.15)",
		wire: "+2+12+49+5alice5+34128+0",
		want: Request{Header: Header{PBS_BATCH_AuthenUser, "alice"}, Body: &AuthenUser{Port: 34128}},
	},
	{
		name: "CopyFiles (02 §3.18)",
		wire: "+2+12+542+10PBS_Server+49.vm+5alice+5alice+0+1+2+1+79.vm.OU2+25vm:/home/alice/longjob.o9+1+79.vm.ER2+25vm:/home/alice/longjob.e9+0",
		want: Request{Header: Header{PBS_BATCH_CopyFiles, "PBS_Server"}, Body: &CopyFiles{JobID: "9.vm", Owner: "alice", ExecUser: "alice",
			Direction: STAGE_DIR_OUT, Pairs: []FilePair{
				{STDJOBFILE, "9.vm.OU", "vm:/home/alice/longjob.o9"}, {STDJOBFILE, "9.vm.ER", "vm:/home/alice/longjob.e9"}}}},
		momOnly: true,
	},
	{
		name: "JobObit (02 §3.19)",
		wire: "+2+12+56+7pbs_mom+49.vm3+266+22+292+14resources_used+1+4cput+800:00:00+02+262+14resources_used+1+3mem+768152kb+0+0",
		want: Request{Header: Header{PBS_BATCH_JobObit, "pbs_mom"}, Body: &JobObit{JobID: "9.vm", ExitStatus: 266, Attrs: AttrList{
			{Name: "resources_used", Resource: "cput", HasResource: true, Value: "00:00:00", Size: 29},
			{Name: "resources_used", Resource: "mem", HasResource: true, Value: "68152kb", Size: 26}}}},
	},
	{
		name: "Disconnect (02 §3.20)",
		wire: "+2+12+59+5alice",
		want: Request{Header: Header{PBS_BATCH_Disconnect, "alice"}},
	},
	{
		name: "pbs_iff Disconnect (02 §3.20)",
		wire: "+2+12+592+10PBS_Server",
		want: Request{Header: Header{PBS_BATCH_Disconnect, "PBS_Server"}},
	},
	{
		name: "qdel -W 3 (02 §3.2)",
		wire: "+2+1+6+5alice+1+2+79999.vm+0+12+10deldelay=3",
		want: Request{Header: Header{PBS_BATCH_DeleteJob, "alice"}, Body: &Manage{Command: MGR_CMD_DELETE, ObjType: MGR_OBJ_JOB, ObjName: "9999.vm", Attrs: AttrList{}},
			HasExtension: true, Extension: "deldelay=3"},
	},
	{
		name: "qdel -a (02 §3.2)",
		wire: "+2+1+6+5alice+1+2+79999.vm+0+1+8delasync",
		want: Request{Header: Header{PBS_BATCH_DeleteJob, "alice"}, Body: &Manage{Command: MGR_CMD_DELETE, ObjType: MGR_OBJ_JOB, ObjName: "9999.vm", Attrs: AttrList{}},
			HasExtension: true, Extension: "delasync"},
	},
	{
		name: "qdel -p (02 §3.2)",
		wire: "+2+1+6+5alice+1+2+79999.vm+0+12+10delpurge=1",
		want: Request{Header: Header{PBS_BATCH_DeleteJob, "alice"}, Body: &Manage{Command: MGR_CMD_DELETE, ObjType: MGR_OBJ_JOB, ObjName: "9999.vm", Attrs: AttrList{}},
			HasExtension: true, Extension: "delpurge=1"},
	},
	{
		name: "qdel -m (02 §3.2)",
		wire: "+2+1+6+5alice+1+2+79999.vm+0+1+7bye now",
		want: Request{Header: Header{PBS_BATCH_DeleteJob, "alice"}, Body: &Manage{Command: MGR_CMD_DELETE, ObjType: MGR_OBJ_JOB, ObjName: "9999.vm", Attrs: AttrList{}},
			HasExtension: true, Extension: "bye now"},
	},
	{
		name: "qdel -c (02 §3.2)",
		wire: "+2+1+6+5alice+1+2+0+0+12+24purgecomplete=1795312475",
		want: Request{Header: Header{PBS_BATCH_DeleteJob, "alice"}, Body: &Manage{Command: MGR_CMD_DELETE, ObjType: MGR_OBJ_JOB, Attrs: AttrList{}},
			HasExtension: true, Extension: "purgecomplete=1795312475"},
	},
	{
		name: "QueueJob (02 §6.1)",
		wire: "+2+1+1+5alice+0+0+22+15+8Job_Name+0+5STDIN+02+322+13Resource_List+1+8walltime+801:00:00+0+0",
		want: Request{Header: Header{PBS_BATCH_QueueJob, "alice"}, Body: &QueueJob{Attrs: AttrList{
			{Name: "Job_Name", Value: "STDIN", Size: 15},
			{Name: "Resource_List", Resource: "walltime", HasResource: true, Value: "01:00:00", Size: 32}}}},
	},
	{
		name: "JobScript (02 §6.1)",
		wire: "+2+1+3+5alice+0+02+18+02+18#!/bin/sh\necho hi\n+0",
		want: Request{Header: Header{PBS_BATCH_jobscript, "alice"}, Body: &JobFile{Data: []byte("#!/bin/sh\necho hi\n")}},
	},
	{
		name: "RdytoCommit (02 §6.1)",
		wire: "+2+1+4+5alice2+171.srv.example.com+0",
		want: Request{Header: Header{PBS_BATCH_RdytoCommit, "alice"}, Body: &JobID{ID: "1.srv.example.com"}},
	},
	{
		name: "Commit (02 §6.1)",
		wire: "+2+1+5+5alice2+171.srv.example.com+0",
		want: Request{Header: Header{PBS_BATCH_Commit, "alice"}, Body: &JobID{ID: "1.srv.example.com"}},
	},
	{
		name: "qstat (02 §6.2)",
		wire: "+2+12+19+5alice+0+0+12+16summarize_arrays",
		want: Request{Header: Header{PBS_BATCH_StatusJob, "alice"}, Body: &StatusReq{Attrs: AttrList{}}, HasExtension: true, Extension: "summarize_arrays"},
	},
	{
		name: "StatusServer (02 §6.2)",
		wire: "+2+12+21+5alice+0+0+0",
		want: Request{Header: Header{PBS_BATCH_StatusSvr, "alice"}, Body: &StatusReq{Attrs: AttrList{}}},
	},
	{
		name: "qstat -r SelStat (02 §6.2)",
		wire: "+2+12+51+5alice+12+13+9job_state+0+2RS+4+12+16summarize_arrays",
		want: Request{Header: Header{PBS_BATCH_SelStat, "alice"}, Body: &Select{Attrs: AttrList{{Name: "job_state", Value: "RS", Op: EQ, Size: 13}}},
			HasExtension: true, Extension: "summarize_arrays"},
	},
	{
		name: "qdel 12 (02 §6.3)",
		wire: "+2+1+6+5alice+1+22+1812.srv.example.com+0+0",
		want: Request{Header: Header{PBS_BATCH_DeleteJob, "alice"}, Body: &Manage{Command: MGR_CMD_DELETE, ObjType: MGR_OBJ_JOB, ObjName: "12.srv.example.com", Attrs: AttrList{}}},
	},
	{
		name: "LocateJob (02 §6.3)",
		wire: "+2+1+8+5alice2+109999.vm@vm+0",
		want: Request{Header: Header{PBS_BATCH_LocateJob, "alice"}, Body: &JobID{ID: "9999.vm@vm"}},
	},
	{
		name: "qmgr set queue (02 §6.4)",
		wire: "+2+1+9+4root+2+1+5batch+12+152+11max_running+0+210+0+0",
		want: Request{Header: Header{PBS_BATCH_Manager, "root"}, Body: &Manage{Command: MGR_CMD_SET, ObjType: MGR_OBJ_QUEUE, ObjName: "batch", Attrs: AttrList{
			{Name: "max_running", Value: "10", Size: 15}}}},
	},
	{
		name: "server to MOM StatusJob (10 §6.1)",
		wire: "+2+12+192+10PBS_Server+49.vm+0+0",
		want: Request{Header: Header{PBS_BATCH_StatusJob, "PBS_Server"}, Body: &StatusReq{ID: "9.vm", Attrs: AttrList{}}},
	},
	{
		name: "scheduler SelStat (14 §3)",
		wire: "+2+12+51+9Scheduler+12+182+11destination+0+5short+4+0",
		want: Request{Header: Header{PBS_BATCH_SelStat, "Scheduler"}, Body: &Select{Attrs: AttrList{{Name: "destination", Value: "short", Op: EQ, Size: 18}}}},
	},
	{
		name: "scheduler ModifyJob (14 §3)",
		wire: "+2+12+11+9Scheduler+2+2+512.vm+12+43+7comment+02+34Job started on Sun Nov 22 at 01:24+0+0",
		want: Request{Header: Header{PBS_BATCH_ModifyJob, "Scheduler"}, Body: &Manage{Command: MGR_CMD_SET, ObjType: MGR_OBJ_JOB, ObjName: "12.vm", Attrs: AttrList{
			{Name: "comment", Value: "Job started on Sun Nov 22 at 01:24", Size: 43}}}},
	},
	{
		name: "scheduler RunJob (14 §3)",
		wire: "+2+12+15+9Scheduler+512.vm+0+0+0",
		want: Request{Header: Header{PBS_BATCH_RunJob, "Scheduler"}, Body: &RunJob{JobID: "12.vm"}},
	},
	{
		name: "has_extension with empty string",
		wire: "+2+12+21+5alice+0+0+1+0",
		want: Request{Header: Header{PBS_BATCH_StatusSvr, "alice"}, Body: &StatusReq{Attrs: AttrList{}}, HasExtension: true},
	},
}

func TestSpecRequests(t *testing.T) {
	for _, tc := range requestVectors {
		t.Run(tc.name, func(t *testing.T) {
			readers := []func(*dis.Reader) (*Request, error){ReadRequest, ReadServerRequest}
			if tc.momOnly {
				readers = readers[:1]
			}
			for _, read := range readers {
				r := reader(tc.wire)
				got, err := read(r)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if r.Offset() != int64(len(tc.wire)) {
					t.Errorf("consumed %d of %d bytes", r.Offset(), len(tc.wire))
				}
				if !reflect.DeepEqual(*got, tc.want) {
					t.Errorf("decoded\n %#v\nwant\n %#v", got, &tc.want)
					if got.Body != nil && tc.want.Body != nil {
						t.Errorf("body %#v, want %#v", got.Body, tc.want.Body)
					}
				}
				if enc := string(got.Append(nil)); enc != tc.wire {
					t.Errorf("re-encoded %q, want %q", enc, tc.wire)
				}
			}
			// Encoding the expected value with Size 0 (computed) gives
			// the same bytes except for status name lists.
			if enc := string(tc.want.Append(nil)); enc != tc.wire {
				t.Errorf("encoded want %q, want %q", enc, tc.wire)
			}
		})
	}
}

func TestComputedSizes(t *testing.T) {
	// Entries built without a Size get the sizes real senders use.
	q := NewRequest(PBS_BATCH_QueueJob, "alice", &QueueJob{Attrs: AttrList{
		NewAttr("Job_Name", "STDIN"),
		NewResourceAttr("Resource_List", "walltime", "01:00:00"),
	}})
	const want = "+2+1+1+5alice+0+0+22+15+8Job_Name+0+5STDIN+02+322+13Resource_List+1+8walltime+801:00:00+0+0"
	if got := string(q.Append(nil)); got != want {
		t.Errorf("QueueJob = %q, want %q", got, want)
	}
	// StatusNames uses the attrl rule (value NULL: name+1).
	s := NewRequest(PBS_BATCH_StatusJob, "PBS_Server", &StatusReq{ID: "9.vm", Attrs: StatusNames("job_state")})
	const want2 = "+2+12+192+10PBS_Server+49.vm+12+10+9job_state+0+0+0+0"
	if got := string(s.Append(nil)); got != want2 {
		t.Errorf("StatusJob = %q, want %q", got, want2)
	}
	// qmgr's empty-string value: name+2.
	if got := AttrSize("started", "", false, ""); got != 9 {
		t.Errorf("AttrSize(started) = %d, want 9", got)
	}
}

func TestSpecReplies(t *testing.T) {
	tests := []struct {
		name string
		wire string
		want Reply
	}{
		{"NULL", "+2+1+0+0+1", Reply{Choice: BATCH_REPLY_CHOICE_NULL}},
		{"Queue", "+2+1+0+0+22+171.srv.example.com", Reply{Choice: BATCH_REPLY_CHOICE_Queue, JobID: "1.srv.example.com"}},
		{"RdytoCommit", "+2+1+0+0+32+171.srv.example.com", Reply{Choice: BATCH_REPLY_CHOICE_RdytoCommit, JobID: "1.srv.example.com"}},
		{"Commit", "+2+1+0+0+42+171.srv.example.com", Reply{Choice: BATCH_REPLY_CHOICE_Commit, JobID: "1.srv.example.com"}},
		{"array Queue", "+2+1+0+0+2+65[].vm", Reply{Choice: BATCH_REPLY_CHOICE_Queue, JobID: "5[].vm"}},
		{"Status", "+2+1+0+0+6+1+22+171.srv.example.com+22+15+8Job_Name+0+5STDIN+02+12+9job_state+0+1Q+0",
			Reply{Choice: BATCH_REPLY_CHOICE_Status, Status: []StatusObject{{ObjType: MGR_OBJ_JOB, Name: "1.srv.example.com", Attrs: AttrList{
				{Name: "Job_Name", Value: "STDIN", Size: 15}, {Name: "job_state", Value: "Q", Size: 12}}}}}},
		{"MOM session_id", "+2+1+0+0+6+1+2+49.vm+12+172+10session_id+0+516978+0",
			Reply{Choice: BATCH_REPLY_CHOICE_Status, Status: []StatusObject{{ObjType: MGR_OBJ_JOB, Name: "9.vm", Attrs: AttrList{
				{Name: "session_id", Value: "16978", Size: 17}}}}}},
		{"RescQuery", "+2+1+0+0+9+1+1+0+0+0", Reply{Choice: BATCH_REPLY_CHOICE_RescQuery,
			Resc: RescQueryReply{Avail: []int{1}, Alloc: []int{0}, Resvd: []int{0}, Down: []int{0}}}},
		{"RescQuery never", "+2+1+0+0+9+1210+4294967295+0+0+0", Reply{Choice: BATCH_REPLY_CHOICE_RescQuery,
			Resc: RescQueryReply{Avail: []int{-1}, Alloc: []int{0}, Resvd: []int{0}, Down: []int{0}}}},
		{"Select", "+2+1+0+2+5+2+41.vm+42.vm", Reply{AuxCode: 2, Choice: BATCH_REPLY_CHOICE_Select, JobIDs: []string{"1.vm", "2.vm"}}},
		{"Select aux 11 (02 §4.1)", "+2+1+02+11+52+11" + strings.Repeat("+41.vm", 11), Reply{AuxCode: 11, Choice: BATCH_REPLY_CHOICE_Select,
			JobIDs: strings.Split(strings.Repeat("1.vm ", 11)[:54], " ")}},
		{"Locate", "+2+1+0+0+8+2vm", Reply{Choice: BATCH_REPLY_CHOICE_Locate, Location: "vm"}},
		{"UNKREQ", "+2+15+15005+0+72+41Unknown request MSG=cannot decode message", Reply{Code: PBSE_UNKREQ, Choice: 7, Text: "Unknown request MSG=cannot decode message"}},
		{"DISPROTO", "+2+15+15058+0+72+56Bad DIS based Request Protocol MSG=cannot decode message", Reply{Code: PBSE_DISPROTO, Choice: 7, Text: "Bad DIS based Request Protocol MSG=cannot decode message"}},
		{"UNKJOBID", "+2+15+15001+0+72+14Unknown Job Id", Reply{Code: PBSE_UNKJOBID, Choice: 7, Text: "Unknown Job Id"}},
		{"UNKQUE", "+2+15+15020+0+72+37Unknown queue MSG=cannot locate queue", Reply{Code: PBSE_UNKQUE, Choice: 7, Text: "Unknown queue MSG=cannot locate queue"}},
		{"EXCQRESC", "+2+15+15038+0+72+83Job exceeds queue resource limits MSG=cannot satisfy queue max walltime requirement",
			Reply{Code: PBSE_EXCQRESC, Choice: 7, Text: "Job exceeds queue resource limits MSG=cannot satisfy queue max walltime requirement"}},
		{"PERM", "+2+15+15007+0+72+21Unauthorized Request ", Reply{Code: PBSE_PERM, Choice: 7, Text: "Unauthorized Request "}},
		{"IVALREQ", "+2+15+15004+0+72+45Invalid request MSG=job is not checkpointable", Reply{Code: PBSE_IVALREQ, Choice: 7, Text: "Invalid request MSG=job is not checkpointable"}},
		{"BADCRED", "+2+15+15021+0+72+18Invalid credential", Reply{Code: PBSE_BADCRED, Choice: 7, Text: "Invalid credential"}},
		{"MOM start failed", "+2+1+0+0+72+23start failed on node vm", Reply{Choice: 7, Text: "start failed on node vm"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := reader(tc.wire)
			got, err := ReadReply(r)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if r.Offset() != int64(len(tc.wire)) {
				t.Errorf("consumed %d of %d bytes", r.Offset(), len(tc.wire))
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("decoded\n %#v\nwant\n %#v", got, &tc.want)
			}
			if enc := string(got.Append(nil)); enc != tc.wire {
				t.Errorf("re-encoded %q, want %q", enc, tc.wire)
			}
			if enc := string(tc.want.Append(nil)); enc != tc.wire {
				t.Errorf("encoded want %q, want %q", enc, tc.wire)
			}
		})
	}
}

func TestErrorReplies(t *testing.T) {
	tests := []struct {
		reply *Reply
		wire  string
	}{
		{ErrorReply(PBSE_UNKREQ, "", MsgCannotDecode), "+2+15+15005+0+72+41Unknown request MSG=cannot decode message"},
		{ErrorReply(PBSE_DISPROTO, "", MsgCannotDecode), "+2+15+15058+0+72+56Bad DIS based Request Protocol MSG=cannot decode message"},
		{ErrorReply(PBSE_UNKJOBID, "", ""), "+2+15+15001+0+72+14Unknown Job Id"},
		{ErrorReply(PBSE_UNKQUE, "", MsgCannotLocateQue), "+2+15+15020+0+72+37Unknown queue MSG=cannot locate queue"},
		{ErrorReply(PBSE_PERM, "", ""), "+2+15+15007+0+72+21Unauthorized Request "},
		{ErrorReply(PBSE_BADCRED, "", ""), "+2+15+15021+0+72+18Invalid credential"},
		{ErrorReply(PBSE_GAP017, "", ""), "+2+15+15019+0+1"},
		{ErrorReply(PBSE_PERM, "", MsgPrivMParam), "+2+15+15007+0+72+85Unauthorized Request  MSG=must have operator or manager privilege to use -m parameter"},
		{ErrorReply(PBSE_PERM, "", MsgNotPermitted), "+2+15+15007+0+72+49Unauthorized Request  MSG=operation not permitted"},
		{ErrorReply(PBSE_QUNOENB, "", "queue is disabled: user alice@vm, queue short"),
			"+2+15+15023+0+72+70Queue is not enabled MSG=queue is disabled: user alice@vm, queue short"},
		{ErrorReply(PBSE_UNKJOBID, "", MsgCannotLocateJob), "+2+15+15001+0+72+36Unknown Job Id MSG=cannot locate job"},
		{ErrorReply(PBSE_MOMREJECT, "vm", "connection to mom timed out"),
			"+2+15+15043+0+72+76Execution server rejected request REJHOST=vm MSG=connection to mom timed out"},
		{BadAttrReply(PBSE_UNKRESC, &Attr{Name: "Resource_List", Resource: "foo", HasResource: true}),
			"+2+15+15037+0+72+40Unknown resource type  Resource_List.foo"},
		{BadAttrReply(PBSE_NOATTR, &Attr{Name: "bogus"}), "+2+15+15002+0+72+26Undefined attribute  bogus"},
		{SystemErrorReply("PBS_Server", 2, ""), "+2+15+15012+0+72+50PBS_Server System error: No such file or directory"},
	}
	for _, tc := range tests {
		if got := string(tc.reply.Append(nil)); got != tc.wire {
			t.Errorf("got %q, want %q", got, tc.wire)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		wire string
		code int // 0: io.EOF expected
	}{
		{"empty", "", 0},
		{"EOF after type", "+2+1+2", 0},
		{"EOF in count group", "+2+12", 0},
		{"type 0", "+2+1+0+5alice+0", PBSE_UNKREQ},
		{"type 40", "+2+12+40+5alice+0", PBSE_UNKREQ},
		{"type 60", "+2+12+60+5alice+0", PBSE_UNKREQ},
		{"type 63", "+2+12+63+5alice+0", PBSE_DISPROTO},
		{"type -1", "+2+1-1+5alice+0", PBSE_DISPROTO},
		{"version 2", "+2+2+9+5alice+0", PBSE_DISPROTO},
		{"protocol 3", "+3+1+9+5alice+0", PBSE_DISPROTO},
		{"leading zero", "02+1+9", PBSE_DISPROTO},
		{"leading blank", " +2+1+9", PBSE_DISPROTO},
		{"non digit", "hello", PBSE_DISPROTO},
		{"header without body", "+2+1+2+5alice", PBSE_DISPROTO},
		{"user too long", "+2+1+9" + "2+34" + strings.Repeat("u", 34), PBSE_DISPROTO},
		{"signal too long", "+2+12+18+5alice+49.vm2+18" + strings.Repeat("S", 18) + "+0", PBSE_DISPROTO},
		{"attr over budget", "+2+1+9+4root+2+1+5batch+1" + "+9" + "2+11max_running+0+210+0+0", PBSE_DISPROTO},
		{"script size mismatch", "+2+1+3+5alice+0+0+5+0+4abcd+0", PBSE_DISPROTO},
		{"embedded NUL", "+2+1+4+5alice+3a\x00b+0", PBSE_DISPROTO},
		{"TrackJob state 256", "+2+12+22+4root+49.vm+1+2vm3+256+0", PBSE_DISPROTO},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadServerRequest(reader(tc.wire))
			if tc.code == 0 {
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RequestError", err)
			}
			if re.Code != tc.code || ErrorCode(err) != tc.code {
				t.Errorf("code = %d, want %d (%v)", re.Code, tc.code, err)
			}
		})
	}
	// The MOM-side reader decodes the server-to-MOM types the server
	// rejects.
	wire := "+2+12+532+10PBS_Server+49.vm+1+0+0"
	if _, err := ReadServerRequest(reader(wire)); ErrorCode(err) != PBSE_UNKREQ {
		t.Errorf("server ReturnFiles: err = %v, want UNKREQ", err)
	}
	q, err := ReadRequest(reader(wire))
	if err != nil {
		t.Fatal(err)
	}
	if want := (&ReturnFiles{JobID: "9.vm", ReturnStdout: 1}); !reflect.DeepEqual(q.Body, want) {
		t.Errorf("ReturnFiles body = %#v, want %#v", q.Body, want)
	}
}

func TestAttrBudgetWrap(t *testing.T) {
	// A name that fills the budget exactly makes the remainder wrap:
	// the later strings are unbounded (spec 02 §2.1 edge case).
	wire := "+2+1+9+4root+2+1+5batch+1" + "2+11" + "2+11max_running" + "+0" + "2+10" + "0123456789" + "+0" + "+0"
	q, err := ReadServerRequest(reader(wire))
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Body.(*Manage).Attrs[0].Value; got != "0123456789" {
		t.Errorf("value = %q", got)
	}
	if enc := string(q.Append(nil)); enc != wire {
		t.Errorf("re-encoded %q", enc)
	}
}

func TestBadReplies(t *testing.T) {
	for _, wire := range []string{
		"", "+3+1+0+0+1", "+2+2+0+0+1", "+2+1+0+0+0", "+2+1+0+0+2+5ab", "+2+1+0+0+7+5abc",
		"+2+1+0+0+8" + "4+1026" + strings.Repeat("h", 1026),
	} {
		if p, err := ReadReply(reader(wire)); err == nil {
			t.Errorf("ReadReply(%q) = %+v, want error", wire, p)
		}
	}
}

func TestAllBodiesRoundTrip(t *testing.T) {
	bodies := map[int]Body{
		PBS_BATCH_JobCred:       &JobCred{Data: []byte("cr\x00ed")},
		PBS_BATCH_MvJobFile:     &JobFile{Seq: 2, FileType: StdErr, JobID: "3.vm", Data: []byte{0, 1, 2}},
		PBS_BATCH_Rerun:         &JobID{ID: "3.vm"},
		PBS_BATCH_HoldJob:       &Manage{Command: MGR_CMD_SET, ObjType: MGR_OBJ_JOB, ObjName: "3.vm", Attrs: AttrList{{Name: "Hold_Types", Value: "u", Size: 13}}},
		PBS_BATCH_OrderJob:      &MoveJob{JobID: "3.vm", Destination: "4.vm"},
		PBS_BATCH_StageIn:       &RunJob{JobID: "3.vm", Destination: "vm", ResourceHandle: 7},
		PBS_BATCH_TrackJob:      &TrackJob{JobID: "3.vm", HopCount: 2, Location: "srv", State: 'R'},
		PBS_BATCH_ReserveResc:   &Resc{Handle: -3, Queries: []string{"nodes=2:ppn=4", "nodes=1"}},
		PBS_BATCH_RegistDep:     &RegistDep{Owner: "alice", ParentID: "1.vm", ChildID: "2.vm", DepType: JOB_DEPEND_TYPE_BEFOREOK, Op: JOB_DEPEND_OP_REGISTER, Cost: -1 << 40},
		PBS_BATCH_DelFiles:      &CopyFiles{JobID: "3.vm", Owner: "a", ExecUser: "a", ExecGroup: "g", Direction: STAGE_DIR_IN, Pairs: []FilePair{{STAGEFILE, "/tmp/x", ""}}},
		PBS_BATCH_AltAuthenUser: &AltAuthenUser{Port: 1023, Credential: "MUNGE:abc"},
		PBS_BATCH_GpuCtrl:       &GpuCtrl{MomNode: "vm", GpuID: "0", Mode: 2, ResetPerm: -1, ResetVol: -1},
		PBS_BATCH_StatusNode:    &StatusReq{ID: ":ALL", Attrs: StatusNames("state", "np")},
	}
	for typ, b := range bodies {
		q := NewRequest(typ, "PBS_Server", b)
		q.SetExtension("x")
		wire := q.Append(nil)
		got, err := ReadRequest(dis.NewReader(bytes.NewReader(wire)))
		if err != nil {
			t.Errorf("%s: %v", RequestName(typ), err)
			continue
		}
		if !reflect.DeepEqual(got.Body, b) || got.Extension != "x" {
			t.Errorf("%s: decoded %#v, want %#v", RequestName(typ), got.Body, b)
		}
		if again := got.Append(nil); !bytes.Equal(again, wire) {
			t.Errorf("%s: re-encoded %q, want %q", RequestName(typ), again, wire)
		}
	}
	// GpuCtrl's client quirk writes a second extension block.
	q := NewRequest(PBS_BATCH_GpuCtrl, "root", &GpuCtrl{MomNode: "vm", GpuID: "0", Mode: -1, ResetPerm: 1, ResetVol: 0, ClientQuirk: true})
	if got, want := string(q.Append(nil)), "+2+12+62+4root+2vm+10210+4294967295+1+0+0+0"; got != want {
		t.Errorf("GpuCtrl quirk = %q, want %q", got, want)
	}
}

func TestGpuCtrlDoubleExtension(t *testing.T) {
	// The 2.5.13 client's GpuCtrl carries an extension block inside the
	// body and the normal one after it (02 §3.22): the receiver takes the
	// first as the extension and leaves the second unread, to be
	// discarded with the rest of the input.
	wire := "+2+12+62+4root+2vm+10210+4294967295+1+0+0+0"
	r := reader(wire)
	q, err := ReadServerRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	if q.HasExtension || r.Offset() != int64(len(wire)-2) || r.DiscardBuffered() != 2 {
		t.Errorf("offset %d of %d, extension %v", r.Offset(), len(wire), q.HasExtension)
	}
	want := &GpuCtrl{MomNode: "vm", GpuID: "0", Mode: -1, ResetPerm: 1, ResetVol: 0}
	if !reflect.DeepEqual(q.Body, want) {
		t.Errorf("body %#v, want %#v", q.Body, want)
	}
}
