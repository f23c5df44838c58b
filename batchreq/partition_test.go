package batchreq

import (
	"bytes"
	"testing"

	"gopbs/dis"
)

func TestSchedErrorCodes(t *testing.T) {
	want := map[int]string{
		15215: "Another Sched object also has same value for its sched_log directory",
		15216: "Another Sched object also has same value for its sched_priv directory",
		15217: "Can not assign a partition to route queue",
		15218: "Route queues are incompatible with the partition attribute ",
		15219: "Queue is not part of partition for node",
		15220: "Partition is not part of queue for node",
		15221: "Invalid partition in queue",
		15222: "Partition is already associated with another scheduler",
		15223: "Operation is not permitted on default scheduler",
		15224: "Scheduler name is too long",
		15225: "Unknown scheduler",
		15226: "Scheduler already exists",
	}
	for code, text := range want {
		if got := ErrorText(code); got != text {
			t.Errorf("ErrorText(%d) = %q, want %q", code, got, text)
		}
		if !IsSchedError(code) {
			t.Errorf("IsSchedError(%d) = false", code)
		}
	}
	// Out of TORQUE's way: no TORQUE batch or resource-monitor code, and
	// the codes around the range have no text.
	if PBSE_SCHEDFLOOR < PBSE_CEILING || PBSE_SCHEDFLOOR < PBSE_RMCEILING {
		t.Errorf("sched codes start at %d, inside TORQUE's codes", PBSE_SCHEDFLOOR)
	}
	for _, code := range []int{15214, 15227} {
		if IsSchedError(code) || ErrorText(code) != "" {
			t.Errorf("code %d is taken for a sched error", code)
		}
	}
	for _, typ := range []int{MGR_OBJ_NONE, MGR_OBJ_SERVER, MGR_OBJ_QUEUE, MGR_OBJ_JOB, MGR_OBJ_NODE, MGR_OBJ_RESV} {
		if typ == MGR_OBJ_SCHED {
			t.Errorf("MGR_OBJ_SCHED collides with object type %d", typ)
		}
	}
	if ObjTypeName(MGR_OBJ_SCHED) != "Sched" {
		t.Errorf("ObjTypeName(MGR_OBJ_SCHED) = %q", ObjTypeName(MGR_OBJ_SCHED))
	}
}

func TestSchedRequestTypes(t *testing.T) {
	for typ, name := range map[int]string{PBS_BATCH_StatusSched: "StatusSched", PBS_BATCH_SchedHello: "SchedHello", 1010: "NONE", 1019: "NONE"} {
		if got := RequestName(typ); got != name {
			t.Errorf("RequestName(%d) = %q, want %q", typ, got, name)
		}
	}
	if IsGoPBSRequest(1010) {
		t.Error("an unused GoPBS number is taken for a request type")
	}
	for _, typ := range []int{PBS_BATCH_StatusSched, PBS_BATCH_SchedHello} {
		b := NewRequest(typ, "root", &StatusReq{ID: "s1", Attrs: StatusNames("state")}).Append(nil)
		got, err := ReadAnyRequest(dis.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("%s: %v", RequestName(typ), err)
		}
		if got.Type != typ || got.Body.(*StatusReq).ID != "s1" || len(got.Body.(*StatusReq).Attrs) != 1 {
			t.Errorf("%s: decoded %+v", RequestName(typ), got)
		}
	}
}
