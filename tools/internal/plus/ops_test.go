package plus

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gopbs/batchreq"
	"gopbs/pbs"
)

func TestStatus(t *testing.T) {
	usage := "usage: " + statusUsage + "\n"
	two := statusReply(
		resvObj("R1", "resv_owner=alice", "resv_start="+t1h, "resv_end="+t2h, "resv_nodect=2", "resv_state=CONFIRMED",
			"resv_pending=cancel", "resv_exec_nodes=n1+n2", "resv_users=bob"),
		resvObj("R2", "resv_owner=bob", "resv_start="+t0, "resv_end="+t2h, "resv_nodes=n3", "resv_state=RUNNING",
			"resv_mem=1048576", "resv_resources=gpu=1"))
	runCases(t, Status, []testCase{
		{name: "all", replies: []*batchreq.Reply{two},
			sent: []string{"alice ResvStatus id= owner= start=0 end=0 expired=-1"},
			stdout: "ID  Owner  State      Pending  Start                End                  Nodes\n" +
				"R1  alice  CONFIRMED  cancel   2026-11-27 13:00:00  2026-11-27 14:00:00  2\n" +
				"R2  bob    RUNNING    -        2026-11-27 12:00:00  2026-11-27 14:00:00  n3\n"},
		{name: "nodes", args: []string{"-n"}, replies: []*batchreq.Reply{two},
			sent: []string{"alice ResvStatus id= owner= start=0 end=0 expired=-1"},
			stdout: "ID  Owner  State      Pending  Start                End                  Nodes  Assigned\n" +
				"R1  alice  CONFIRMED  cancel   2026-11-27 13:00:00  2026-11-27 14:00:00  2      n1+n2\n" +
				"R2  bob    RUNNING    -        2026-11-27 12:00:00  2026-11-27 14:00:00  n3     -\n"},
		{name: "selection", args: []string{"-r", "r7", "-o", "bob", "-s", "12:30", "-e", "+3h", "-ne", "5"},
			replies: []*batchreq.Reply{statusReply()},
			sent:    []string{"alice ResvStatus id=R7 owner=bob start=1795782600 end=1795791600 expired=5"},
			stdout:  "ID  Owner  State  Pending  Start  End  Nodes\n"},
		{name: "xml", args: []string{"-x"}, replies: []*batchreq.Reply{two},
			sent: []string{"alice ResvStatus id= owner= start=0 end=0 expired=-1"},
			stdout: `<?xml version="1.0" encoding="UTF-8"?>
<plus_status>
  <reservation id="R1">
    <owner>alice</owner>
    <users>
      <user>bob</user>
    </users>
    <state>CONFIRMED</state>
    <pending>cancel</pending>
    <start>2026-11-27T13:00:00Z</start>
    <end>2026-11-27T14:00:00Z</end>
    <duration>3600</duration>
    <nodeCount>2</nodeCount>
    <assignedNodes>
      <node>n1</node>
      <node>n2</node>
    </assignedNodes>
  </reservation>
  <reservation id="R2">
    <owner>bob</owner>
    <state>RUNNING</state>
    <start>2026-11-27T12:00:00Z</start>
    <end>2026-11-27T14:00:00Z</end>
    <duration>7200</duration>
    <nodeCount>1</nodeCount>
    <requestedNodes>
      <node>n3</node>
    </requestedNodes>
    <requirements>
      <mem>1048576</mem>
      <resources>gpu=1</resources>
    </requirements>
  </reservation>
</plus_status>
`},
		{name: "bad reply", replies: []*batchreq.Reply{statusReply(resvObj("R1", "resv_state=NAPPING"))},
			sent:   []string{"alice ResvStatus id= owner= start=0 end=0 expired=-1"},
			stderr: "plus_status: bad reply: reservation R1: bad resv_state \"NAPPING\"\n", exit: 1},
		{name: "unknown id", args: []string{"-r", "R99"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_UNKJOBID, "Unknown Job Id R99")},
			sent:    []string{"alice ResvStatus id=R99 owner= start=0 end=0 expired=-1"},
			stderr:  "plus_status: cannot get the reservations: Unknown Job Id R99\n", exit: 1},
		{name: "negative -ne", args: []string{"-ne", "-1"}, stderr: "plus_status: bad -ne \"-1\": want a number of reservations\n", exit: 2},
		{name: "-ne without value", args: []string{"-ne"}, stderr: "plus_status: option -ne needs a value\n" + usage, exit: 2},
		{name: "bad -ne value", args: []string{"-ne", "x"}, stderr: "plus_status: bad -ne \"x\": want a number of reservations\n", exit: 2},
		{name: "window backwards", args: []string{"-s", "+2h", "-e", "+1h"},
			stderr: "plus_status: end 2026-11-27T13:00:00Z is not after start 2026-11-27T14:00:00Z\n", exit: 2},
		{name: "bad id", args: []string{"-r", "x"}, stderr: "plus_status: bad reservation id \"x\": want R<number>\n", exit: 2},
	})
}

func TestCancelDestroy(t *testing.T) {
	for _, c := range []struct {
		prog string
		run  func(*Env, []string) int
		req  string
	}{{"plus_cancel", Cancel, "ResvCancel"}, {"plus_destroy", Destroy, "ResvDestroy"}} {
		usage := "usage: " + c.prog + " [-T] [-r rsvID] [-o owner]\n"
		runCases(t, c.run, []testCase{
			{name: "id", args: []string{"-r", "R4"}, sent: []string{"alice " + c.req + " id=R4 owner= flags=0"}},
			{name: "transaction", args: []string{"-T", "-r", "R4"}, sent: []string{"alice " + c.req + " id=R4 owner= flags=1"}},
			{name: "owner", args: []string{"-o", "bob"}, sent: []string{"alice " + c.req + " id= owner=bob flags=0"}},
			{name: "not the owner", args: []string{"-r", "R4"},
				replies: []*batchreq.Reply{text(batchreq.PBSE_PERM, "Unauthorized Request  MSG=R4 belongs to bob")},
				sent:    []string{"alice " + c.req + " id=R4 owner= flags=0"},
				stderr:  c.prog + ": R4: Unauthorized Request  MSG=R4 belongs to bob\n", exit: 1},
			{name: "owner refused", args: []string{"-o", "bob"},
				replies: []*batchreq.Reply{text(batchreq.PBSE_PERM, "Unauthorized Request ")},
				sent:    []string{"alice " + c.req + " id= owner=bob flags=0"},
				stderr:  c.prog + ": reservations of bob: Unauthorized Request \n", exit: 1},
			{name: "owner with -T", args: []string{"-T", "-o", "bob"}, stderr: c.prog + ": -o owner cannot be used with -T\n" + usage, exit: 2},
			{name: "neither", args: nil, stderr: c.prog + ": give -r rsvID or -o owner\n" + usage, exit: 2},
			{name: "both", args: []string{"-r", "R1", "-o", "bob"}, stderr: c.prog + ": give -r rsvID or -o owner\n" + usage, exit: 2},
			{name: "empty owner", args: []string{"-o", ""}, stderr: c.prog + ": -o needs an owner\n" + usage, exit: 2},
		})
	}
}

func TestModify(t *testing.T) {
	usage := "usage: " + modifyUsage + "\n"
	runCases(t, Modify, []testCase{
		{name: "window", args: []string{"-r", "R5", "-s", "13:00", "-e", "14:00"},
			sent: []string{"alice ResvModify id=R5 flags=0 resv_start=" + t1h + " resv_end=" + t2h}},
		{name: "transaction, nodes, users", args: []string{"-T", "-r", "R5", "-n", "3", "-U", "bob,carol"},
			sent: []string{"alice ResvModify id=R5 flags=1 resv_nodect=3 resv_users=bob,carol"}},
		{name: "clear users", args: []string{"-r", "R5", "-U", ""},
			sent: []string{"alice ResvModify id=R5 flags=0 resv_users="}},
		{name: "start and duration", args: []string{"-r", "R5", "-s", "13:00", "-D", "1h"},
			sent: []string{"alice ResvModify id=R5 flags=0 resv_start=" + t1h + " resv_end=" + t2h}},
		{name: "duration alone asks for the start", args: []string{"-r", "R5", "-D", "2h"},
			replies: []*batchreq.Reply{statusReply(resvObj("R5", "resv_start="+t0, "resv_end="+t1h))},
			sent: []string{"alice ResvStatus id=R5 owner= start=0 end=0 expired=-1",
				"alice ResvModify id=R5 flags=0 resv_end=" + t2h}},
		{name: "duration of an unknown reservation", args: []string{"-r", "R5", "-D", "2h"},
			replies: []*batchreq.Reply{statusReply()},
			sent:    []string{"alice ResvStatus id=R5 owner= start=0 end=0 expired=-1"},
			stderr:  "plus_modify: R5: no such reservation\n", exit: 1},
		{name: "refused", args: []string{"-r", "R5", "-n", "9"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_RESCUNAV, "Resource temporarily unavailable MSG=7 nodes free")},
			sent:    []string{"alice ResvModify id=R5 flags=0 resv_nodect=9"},
			stderr:  "plus_modify: R5: Resource temporarily unavailable MSG=7 nodes free\n", exit: 1},
		{name: "nothing", args: []string{"-r", "R5"}, stderr: "plus_modify: nothing to change: give -s, -e, -D, -n or -U\n" + usage, exit: 2},
		{name: "no id", args: []string{"-n", "2"}, stderr: "plus_modify: -r rsvID is required\n" + usage, exit: 2},
		{name: "bad count", args: []string{"-r", "R5", "-n", "0"}, stderr: "plus_modify: bad -n \"0\": want a number of nodes of at least 1\n", exit: 2},
		{name: "backwards", args: []string{"-r", "R5", "-s", "14:00", "-e", "13:00"},
			stderr: "plus_modify: end 2026-11-27T13:00:00Z is not after start 2026-11-27T14:00:00Z\n", exit: 2},
		{name: "end and duration", args: []string{"-r", "R5", "-e", "13:00", "-D", "1h"},
			stderr: "plus_modify: give -e endTime or -D duration, not both\n" + usage, exit: 2},
	})
}

func TestAvailNodes(t *testing.T) {
	usage := "usage: plus_availnodes -s startTime -e endTime [-x] [-partition name]\n"
	nodes := statusReply(batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_NODE, Name: "n1"},
		batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_NODE, Name: "n3"})
	runCases(t, AvailNodes, []testCase{
		{name: "count", args: []string{"-s", "13:00", "-e", "14:00"}, replies: []*batchreq.Reply{nodes},
			sent: []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h}, stdout: "2\n"},
		{name: "xml", args: []string{"-s", "13:00", "-e", "14:00", "-x"}, replies: []*batchreq.Reply{nodes},
			sent: []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h},
			stdout: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plus_availnodes>\n  <start>2026-11-27T13:00:00Z</start>\n" +
				"  <end>2026-11-27T14:00:00Z</end>\n  <count>2</count>\n  <nodes>\n    <node>n1</node>\n    <node>n3</node>\n  </nodes>\n</plus_availnodes>\n"},
		{name: "none", args: []string{"-s", "13:00", "-e", "14:00"}, replies: []*batchreq.Reply{statusReply()},
			sent: []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h}, stdout: "0\n"},
		{name: "server error", args: []string{"-s", "13:00", "-e", "14:00"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_UNKREQ, "Unknown request")},
			sent:    []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h},
			stderr:  "plus_availnodes: cannot get the available nodes: Unknown request\n", exit: 1},
		{name: "partition", args: []string{"-s", "13:00", "-e", "14:00", "-partition", "p1"}, replies: []*batchreq.Reply{nodes},
			sent: []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h + " resv_partition=p1"}, stdout: "2\n"},
		{name: "partition xml", args: []string{"-partition", "p1", "-x", "-s", "13:00", "-e", "14:00"}, replies: []*batchreq.Reply{statusReply()},
			sent: []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h + " resv_partition=p1"},
			stdout: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plus_availnodes>\n  <start>2026-11-27T13:00:00Z</start>\n" +
				"  <end>2026-11-27T14:00:00Z</end>\n  <partition>p1</partition>\n  <count>0</count>\n</plus_availnodes>\n"},
		{name: "partition refused", args: []string{"-s", "13:00", "-e", "14:00", "-partition", "p9"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_BADATVAL, "Illegal attribute or resource value MSG=unknown partition p9: no node is in it")},
			sent:    []string{"alice ResvAvailNodes start=" + t1h + " end=" + t2h + " resv_partition=p9"},
			stderr:  "plus_availnodes: cannot get the available nodes: Illegal attribute or resource value MSG=unknown partition p9: no node is in it\n", exit: 1},
		{name: "two partitions", args: []string{"-s", "13:00", "-e", "14:00", "-partition", "p1,p2"},
			stderr: "plus_availnodes: -partition takes one partition name\n" + usage, exit: 2},
		{name: "empty partition", args: []string{"-s", "13:00", "-e", "14:00", "-partition", ""},
			stderr: "plus_availnodes: -partition takes one partition name\n" + usage, exit: 2},
		{name: "partition without name", args: []string{"-s", "13:00", "-e", "14:00", "-partition"},
			stderr: "plus_availnodes: option -partition needs a value\n" + usage, exit: 2},
		{name: "no end", args: []string{"-s", "13:00"}, stderr: "plus_availnodes: -s startTime and -e endTime are required\n" + usage, exit: 2},
		{name: "backwards", args: []string{"-s", "2026-11-27T14:00", "-e", "2026-11-27T13:00"},
			stderr: "plus_availnodes: end 2026-11-27T13:00:00Z is not after start 2026-11-27T14:00:00Z\n", exit: 2},
		{name: "duration not taken", args: []string{"-s", "13:00", "-D", "1h"}, stderr: "plus_availnodes: unknown option -D\n" + usage, exit: 2},
	})
}

// TestConnectFailure: a server that cannot be reached is exit 1 with the
// reason.
func TestConnectFailure(t *testing.T) {
	var out, errOut strings.Builder
	env := &Env{Stdout: &out, Stderr: &errOut, Now: now, User: "alice",
		Connect: func() (*pbs.Conn, error) { return nil, syscall.ECONNREFUSED }}
	if code := Commit(env, []string{"-r", "R1"}); code != ExitFailed ||
		errOut.String() != "plus_commit: cannot connect to the server: connection refused\n" {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
