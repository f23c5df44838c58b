package attr

import (
	"fmt"
	"testing"
)

// capture58 is the StatusJob reply entry list the server sent to the MOM
// (privileged) for running job 9.vm in capture 58, in wire order.
var capture58 = [][3]string{
	{"Job_Name", "", "longjob"},
	{"Job_Owner", "", "alice@vm"},
	{"resources_used", "cput", "00:00:00"},
	{"resources_used", "mem", "8120kb"},
	{"resources_used", "vmem", "11772kb"},
	{"resources_used", "walltime", "00:00:08"},
	{"job_state", "", "R"},
	{"queue", "", "batch"},
	{"server", "", "vm"},
	{"Checkpoint", "", "u"},
	{"ctime", "", "1795310495"},
	{"Error_Path", "", "vm:/home/alice/longjob.e9"},
	{"exec_host", "", "vm/0"},
	{"Hold_Types", "", "n"},
	{"Join_Path", "", "n"},
	{"Keep_Files", "", "n"},
	{"Mail_Points", "", "a"},
	{"mtime", "", "1795310501"},
	{"Output_Path", "", "vm:/home/alice/longjob.o9"},
	{"Priority", "", "0"},
	{"qtime", "", "1795310495"},
	{"Rerunable", "", "True"},
	{"Resource_List", "neednodes", "1"},
	{"Resource_List", "nodect", "1"},
	{"Resource_List", "nodes", "1"},
	{"Resource_List", "walltime", "01:00:00"},
	{"session_id", "", "16978"},
	{"substate", "", "42"},
	{"Variable_List", "", "PBS_O_QUEUE=batch,PBS_O_HOST=vm,PBS_O_HOME=/home/alice,PBS_O_LANG=C.UTF-8,PBS_O_LOGNAME=alice,PBS_O_PATH=/opt/torque/bin:/opt/torque/sbin:/usr/bin:/bin:/usr/sbin:/sbin,PBS_O_SHELL=/bin/bash,PBS_SERVER=vm,PBS_O_WORKDIR=/home/alice"},
	{"euser", "", "alice"},
	{"egroup", "", "alice"},
	{"hashname", "", "9.vm"},
	{"queue_rank", "", "12"},
	{"queue_type", "", "E"},
	{"etime", "", "1795310495"},
	{"submit_args", "", "-N longjob long.sh"},
	{"start_time", "", "1795310501"},
	{"Walltime", "Remaining", "3546"},
	{"start_count", "", "1"},
	{"fault_tolerant", "", "False"},
	{"submit_host", "", "vm"},
}

func TestStatusOrderCapture58(t *testing.T) {
	s := NewSet(JobTable())
	// Decode in a scrambled order: the reply order must come from the table.
	for k := len(capture58) - 1; k >= 0; k-- {
		e := capture58[k]
		if e[0] == "Walltime" {
			continue
		}
		if err := s.Decode(e[0], e[1], e[1] != "", e[2]); err != nil {
			t.Fatalf("Decode %v: %v", e, err)
		}
	}
	after := func(dst []Entry, i int) []Entry {
		if i == JobStartTime {
			dst = append(dst, Entry{Name: "Walltime", Resource: "Remaining", HasResource: true, Value: "3546"})
		}
		return dst
	}
	got := s.AppendEntries(nil, &EncodeOptions{Access: AccessPrivileged, After: after})
	if len(got) != len(capture58) {
		t.Errorf("got %d entries, want %d", len(got), len(capture58))
	}
	for k := 0; k < len(got) && k < len(capture58); k++ {
		g := [3]string{got[k].Name, got[k].Resource, got[k].Value}
		if g != capture58[k] {
			t.Errorf("entry %d = %q, want %q", k, g, capture58[k])
		}
	}
	// A plain user (the owner) does not see substate, euser, egroup,
	// hashname, queue_rank, queue_type or neednodes.
	user := s.Status(AccessUser, true)
	for _, e := range user {
		switch e.Name + "." + e.Resource {
		case "substate.", "euser.", "egroup.", "hashname.", "queue_rank.", "queue_type.", "Resource_List.neednodes":
			t.Errorf("user status shows %s.%s", e.Name, e.Resource)
		}
	}
	if want := len(capture58) - 1 - 7; len(user) != want {
		t.Errorf("user status has %d entries, want %d", len(user), want)
	}
	// A non-owner does not see Variable_List.
	for _, e := range s.Status(AccessUser, false) {
		if e.Name == "Variable_List" {
			t.Error("non-owner sees Variable_List")
		}
	}
}

func TestNodesDerivation(t *testing.T) {
	s := NewSet(JobTable())
	for _, kv := range [][2]string{{"walltime", "00:05:00"}, {"nodes", "1:ppn=1"}, {"mem", "100mb"}} {
		if err := s.Decode("Resource_List", kv[0], true, kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for rd, v := range s.Resources(JobResourceList) {
		got = append(got, rd.Name+"="+v.String())
	}
	want := "[mem=100mb neednodes=1:ppn=1 nodect=1 nodes=1:ppn=1 procct=1 walltime=00:05:00]"
	if fmt.Sprint(got) != want {
		t.Errorf("resources = %v, want %v", got, want)
	}
	if err := s.ModifyText("Resource_List", "nodes", "2:ppn=4+node01", OpSet); err != nil {
		t.Fatal(err)
	}
	if n := s.ResourceByName(JobResourceList, "nodect").Int(); n != 3 {
		t.Errorf("nodect = %d, want 3", n)
	}
	if n := s.ResourceByName(JobResourceList, "procct").Int(); n != 9 {
		t.Errorf("procct = %d, want 9", n)
	}
	if err := s.ModifyText("Resource_List", "procs", "3", OpSet); err != nil {
		t.Fatal(err)
	}
	if n := s.ResourceByName(JobResourceList, "procct").Int(); n != 12 {
		t.Errorf("procct = %d, want 12", n)
	}
}
