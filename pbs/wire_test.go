package pbs

import (
	"bytes"
	"testing"

	"gopbs/dis"
)

func TestRequestBytes(t *testing.T) {
	enc := func(f func(e *encoder)) string {
		var e encoder
		f(&e)
		return string(e.b)
	}
	tests := []struct {
		name, got, want string
	}{
		// capture 01
		{"AuthenUser", string(AuthenUserRequest("alice", 34128)), "+2+12+49+5alice5+34128+0"},
		{"Disconnect", string(DisconnectRequest("PBS_Server")), "+2+12+592+10PBS_Server"},
		// capture 06: qstat
		{"StatusJob", enc(func(e *encoder) {
			e.header(PBS_BATCH_StatusJob, "alice")
			e.s("")
			e.attrl(nil)
			e.ext("summarize_arrays")
		}), "+2+12+19+5alice+0+0+12+16summarize_arrays"},
		// capture 10: qmgr create queue
		{"Manager", enc(func(e *encoder) {
			e.header(PBS_BATCH_Manager, "root")
			e.u(MGR_CMD_CREATE)
			e.u(MGR_OBJ_QUEUE)
			e.s("q2")
			e.attropl([]Attr{{Name: "queue_type", Value: "execution"}})
			e.ext("")
		}), "+2+1+9+4root+0+1+2q2+12+212+10queue_type+0+9execution+0+0"},
		// qmgr status list with empty values counted (spec 02 §2.1)
		{"StatusQue qmgr names", enc(func(e *encoder) {
			e.header(PBS_BATCH_StatusQue, "root")
			e.s("batch")
			e.attrl([]Attr{{Name: "started", ValueSet: true}, {Name: "enabled", ValueSet: true}})
			e.ext("")
		}), "+2+12+20+4root+5batch+2+9+7started+0+0+0+9+7enabled+0+0+0+0"},
		// capture 52: resource entry
		{"ModifyJob", enc(func(e *encoder) {
			e.header(PBS_BATCH_ModifyJob, "alice")
			e.u(MGR_CMD_SET)
			e.u(MGR_OBJ_JOB)
			e.s("6.vm")
			e.attropl([]Attr{{Name: "Resource_List", Resource: "walltime", Value: "00:03:00"}})
			e.ext("")
		}), "+2+12+11+5alice+2+2+46.vm+12+322+13Resource_List+1+8walltime+800:03:00+0+0"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestDecodeReply(t *testing.T) {
	tests := []struct {
		in     string
		code   int
		choice int
		text   string
		nobj   int
	}{
		{"+2+1+0+0+1", 0, BATCH_REPLY_CHOICE_NULL, "", 0},
		{"+2+15+15001+0+72+14Unknown Job Id", 15001, BATCH_REPLY_CHOICE_Text, "Unknown Job Id", 0},
		{"+2+1+0+0+2+41.vm", 0, BATCH_REPLY_CHOICE_Queue, "", 0},
		{"+2+1+0+0+6+1+3+2vm+2+11+5state+0+4free+0+5+2np+0+12+0", 0, BATCH_REPLY_CHOICE_Status, "", 1},
	}
	for _, tt := range tests {
		rp, err := decodeReply(dis.NewReader(bytes.NewReader([]byte(tt.in))))
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if rp.code != tt.code || rp.choice != tt.choice || rp.text != tt.text || len(rp.status) != tt.nobj {
			t.Errorf("%q: got code %d choice %d text %q objects %d", tt.in, rp.code, rp.choice, rp.text, len(rp.status))
		}
	}
	rp, _ := decodeReply(dis.NewReader(bytes.NewReader([]byte("+2+1+0+0+6+1+3+2vm+2+11+5state+0+4free+0+5+2np+0+12+0"))))
	if v, ok := rp.status[0].Get("np", ""); !ok || v != "2" {
		t.Errorf("np = %q, %v", v, ok)
	}
	for _, bad := range []string{"", "+3+1+0+0+1", "+2+1+0+0+0", "+2+1+0+0+99", "+2+1+0+0+6+1+3", "+2+1+0+0+5+2+41.vm"} {
		if _, err := decodeReply(dis.NewReader(bytes.NewReader([]byte(bad)))); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

func FuzzDecodeReply(f *testing.F) {
	for _, s := range []string{"+2+1+0+0+1", "+2+15+15001+0+72+14Unknown Job Id",
		"+2+1+0+0+6+1+3+2vm+2+11+5state+0+4free+0+5+2np+0+12+0", "+2+1+02+11+52+11+41.vm+42.vm",
		"+2+1+0+0+9+1+1+0+0+0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeReply(dis.NewReader(bytes.NewReader(b)))
	})
}
