package plus

import (
	"testing"

	"gopbs/batchreq"
)

const (
	t0  = "1795780800" // now
	t1h = "1795784400" // now + 1h
	t2h = "1795788000" // now + 2h
)

func TestReserve(t *testing.T) {
	usage := "usage: " + reserveUsage + "\n"
	runCases(t, Reserve, []testCase{
		{name: "count and end", args: []string{"-s", "13:00", "-e", "14:00", "-n", "2"},
			replies: []*batchreq.Reply{idReply("R12")},
			sent:    []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=2"},
			stdout:  "R12\n"},
		{name: "transaction, duration, everything", args: []string{"-T", "-s", "2026-11-27T13:00:00Z", "-D", "1:00:00",
			"-n", "n1,n2", "-U", "bob,carol", "-mem", "2gb", "-ncpu", "4", "-arch", "x86_64", "-os", "linux",
			"-l", "gpu=1,fast", "-sn", "2"},
			replies: []*batchreq.Reply{idReply("R13")},
			sent: []string{"alice ResvSubmit flags=1 resv_start=" + t1h + " resv_end=" + t2h +
				" resv_nodes=n1+n2 resv_users=bob,carol resv_mem=2147483648 resv_ncpu=4 resv_slots=2 resv_arch=x86_64 resv_opsys=linux resv_resources=gpu=1,fast"},
			stdout: "R13\n"},
		{name: "relative start, xml", args: []string{"-s", "+1h", "-D", "1h", "-n", "1", "-x"},
			replies: []*batchreq.Reply{idReply("R14")},
			sent:    []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=1"},
			stdout:  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plus_result command=\"reserve\">\n  <id>R14</id>\n</plus_result>\n"},
		{name: "print", args: []string{"-s", "+1h", "-D", "1h", "-n", "1", "-p"},
			replies: []*batchreq.Reply{idReply("R15"), statusReply(resvObj("R15", "resv_owner=alice",
				"resv_start="+t1h, "resv_end="+t2h, "resv_nodect=1", "resv_state=CONFIRMED", "resv_exec_nodes=n3"))},
			sent: []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=1",
				"alice ResvStatus id=R15 owner= start=0 end=0 expired=-1"},
			stdout: "R15\n" +
				"ID   Owner  State      Pending  Start                End                  Nodes  Assigned\n" +
				"R15  alice  CONFIRMED  -        2026-11-27 13:00:00  2026-11-27 14:00:00  1      n3\n"},
		{name: "refused by the server", args: []string{"-s", "+1h", "-D", "1h", "-n", "3"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_RESCUNAV, "Resource temporarily unavailable MSG=only 2 of 3 nodes free from 13:00: n3 reserved by R9 until 13:30")},
			sent:    []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=3"},
			stderr:  "plus_reserve: reservation refused: Resource temporarily unavailable MSG=only 2 of 3 nodes free from 13:00: n3 reserved by R9 until 13:30\n",
			exit:    1},
		{name: "refused without text", args: []string{"-s", "+1h", "-D", "1h", "-n", "3"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_PERM, "")},
			sent:    []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=3"},
			stderr:  "plus_reserve: reservation refused: Unauthorized Request \n", exit: 1},
		{name: "partition", args: []string{"-s", "13:00", "-e", "14:00", "-n", "2", "-partition", "p1"},
			replies: []*batchreq.Reply{idReply("R16")},
			sent:    []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=2 resv_partition=p1"},
			stdout:  "R16\n"},
		{name: "partition refused", args: []string{"-s", "13:00", "-e", "14:00", "-n", "1", "-partition", "p9"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_BADATVAL, "Illegal attribute or resource value MSG=unknown partition p9: no node is in it")},
			sent:    []string{"alice ResvSubmit flags=0 resv_start=" + t1h + " resv_end=" + t2h + " resv_nodect=1 resv_partition=p9"},
			stderr:  "plus_reserve: reservation refused: Illegal attribute or resource value MSG=unknown partition p9: no node is in it\n", exit: 1},
		{name: "two partitions", args: []string{"-s", "13:00", "-e", "14:00", "-n", "1", "-partition", "p1,p2"},
			stderr: "plus_reserve: -partition takes one partition name\n" + usage, exit: 2},
		{name: "no start", args: []string{"-e", "14:00", "-n", "2"}, stderr: "plus_reserve: -s startTime is required\n" + usage, exit: 2},
		{name: "no end", args: []string{"-s", "13:00", "-n", "2"}, stderr: "plus_reserve: -e endTime or -D duration is required\n" + usage, exit: 2},
		{name: "end and duration", args: []string{"-s", "13:00", "-e", "14:00", "-D", "1h", "-n", "2"},
			stderr: "plus_reserve: give -e endTime or -D duration, not both\n" + usage, exit: 2},
		{name: "no nodes", args: []string{"-s", "13:00", "-e", "14:00"}, stderr: "plus_reserve: -n numNodes is required\n" + usage, exit: 2},
		{name: "zero nodes", args: []string{"-s", "13:00", "-e", "14:00", "-n", "0"},
			stderr: "plus_reserve: number of nodes must be at least 1\n", exit: 2},
		{name: "end before start", args: []string{"-s", "2026-11-27T14:00", "-e", "2026-11-27T13:00", "-n", "1"},
			stderr: "plus_reserve: end 2026-11-27T13:00:00Z is not after start 2026-11-27T14:00:00Z\n", exit: 2},
		{name: "start in the past", args: []string{"-s", "2026-11-27T10:00", "-e", "2026-11-27T13:00", "-n", "1"},
			stderr: "plus_reserve: start 2026-11-27T10:00:00Z is in the past (now 2026-11-27T12:00:00Z)\n", exit: 2},
		{name: "malformed time", args: []string{"-s", "tomorrow", "-D", "1h", "-n", "1"},
			stderr: "plus_reserve: bad time \"tomorrow\": want an ISO 8601 date and time (2026-11-27T14:00), HH:MM[:SS] or +duration (+1h)\n", exit: 2},
		{name: "malformed duration", args: []string{"-s", "13:00", "-D", "0", "-n", "1"},
			stderr: "plus_reserve: bad time \"0\": a duration must be positive\n", exit: 2},
		{name: "bad memory", args: []string{"-s", "13:00", "-D", "1h", "-n", "1", "-mem", "lots"},
			stderr: "plus_reserve: bad memory size \"lots\": want a number of megabytes or a size such as 512mb, 2gb\n", exit: 2},
		{name: "bad ncpu", args: []string{"-s", "13:00", "-D", "1h", "-n", "1", "-ncpu", "0"},
			stderr: "plus_reserve: bad -ncpu \"0\": want a positive number\n", exit: 2},
		{name: "bad -l", args: []string{"-s", "13:00", "-D", "1h", "-n", "1", "-l", "gpu="},
			stderr: "plus_reserve: bad -l list \"gpu=\": gpu= has no value\n", exit: 2},
		{name: "bad user", args: []string{"-s", "13:00", "-D", "1h", "-n", "1", "-U", "a;b"},
			stderr: "plus_reserve: bad user name \"a;b\"\n", exit: 2},
		{name: "node twice", args: []string{"-s", "13:00", "-D", "1h", "-n", "n1+n1"},
			stderr: "plus_reserve: node n1 listed twice\n", exit: 2},
		{name: "sgeq", args: []string{"-s", "13:00", "-D", "1h", "-n", "1", "-sgeq", "all.q"},
			stderr: "plus_reserve: -sgeq names Grid Engine queues; GoPBS has none (restrict nodes with -l or sched_priv/reservable.ad)\n" + usage, exit: 2},
		{name: "unknown option", args: []string{"-z"}, stderr: "plus_reserve: unknown option -z\n" + usage, exit: 2},
		{name: "missing value", args: []string{"-s"}, stderr: "plus_reserve: option -s needs a value\n" + usage, exit: 2},
		{name: "operand", args: []string{"-s", "13:00", "job"}, stderr: "plus_reserve: unexpected argument \"job\"\n" + usage, exit: 2},
		{name: "help", args: []string{"-help"}, stdout: usage},
	})
}

func TestCommitAbort(t *testing.T) {
	runCases(t, Commit, []testCase{
		{name: "commit", args: []string{"-r", "R12"}, sent: []string{"alice ResvCommit id=R12 owner= flags=0"}},
		{name: "number only", args: []string{"-r", "12"}, sent: []string{"alice ResvCommit id=R12 owner= flags=0"}},
		{name: "nothing pending", args: []string{"-r", "R12"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_BADSTATE, "Request invalid for state of job MSG=commit of a CONFIRMED reservation: no operation is waiting for commit or abort")},
			sent:    []string{"alice ResvCommit id=R12 owner= flags=0"},
			stderr:  "plus_commit: R12: Request invalid for state of job MSG=commit of a CONFIRMED reservation: no operation is waiting for commit or abort\n", exit: 1},
		{name: "no id", args: nil, stderr: "plus_commit: -r reservationID is required\nusage: plus_commit -r reservationID\n", exit: 2},
		{name: "bad id", args: []string{"-r", "J5"}, stderr: "plus_commit: bad reservation id \"J5\": want R<number>\n", exit: 2},
	})
	runCases(t, Abort, []testCase{
		{name: "abort", args: []string{"-r", "R3"}, sent: []string{"alice ResvAbort id=R3 owner= flags=0"}},
		{name: "not the owner", args: []string{"-r", "R3"},
			replies: []*batchreq.Reply{text(batchreq.PBSE_PERM, "Unauthorized Request  MSG=only the owner or a manager may abort R3")},
			sent:    []string{"alice ResvAbort id=R3 owner= flags=0"},
			stderr:  "plus_abort: R3: Unauthorized Request  MSG=only the owner or a manager may abort R3\n", exit: 1},
		{name: "extra option", args: []string{"-r", "R3", "-T"}, stderr: "plus_abort: unknown option -T\nusage: plus_abort -r reservationID\n", exit: 2},
	})
}
