package clitest

import (
	"strings"
	"testing"

	"gopbs/batchreq"
)

// TestQdel covers every qdel option (spec 05 §4, 02 §5.x extensions).
func TestQdel(t *testing.T) {
	runCases(t, []testCase{
		{name: "plain", argv: []string{"qdel", "12"},
			sent: []string{"+2+1+6{U}+1+2+512.vm+0+0", disconnect}},
		{name: "delay", argv: []string{"qdel", "-W", "3", "12.vm"},
			sent: []string{"+2+1+6{U}+1+2+512.vm+0+12+10deldelay=3", disconnect}},
		{name: "purge", argv: []string{"qdel", "-p", "12.vm"},
			sent: []string{"+2+1+6{U}+1+2+512.vm+0+12+10delpurge=1", disconnect}},
		{name: "async", argv: []string{"qdel", "-a", "12.vm"},
			sent: []string{"+2+1+6{U}+1+2+512.vm+0+1+8delasync", disconnect}},
		{name: "message", argv: []string{"qdel", "-m", "bye now", "12.vm"},
			sent: []string{"+2+1+6{U}+1+2+512.vm+0+1+7bye now", disconnect}},
		{name: "array range", argv: []string{"qdel", "-t", "1-3", "5[].vm"},
			sent: []string{"+2+1+6{U}+1+2+65[].vm+0+12+15array_range=1-3", disconnect}},
		{name: "several", argv: []string{"qdel", "1", "2.vm"},
			sent: []string{"+2+1+6{U}+1+2+41.vm+0+0", disconnect, "+2+1+6{U}+1+2+42.vm+0+0", disconnect}},
		{name: "unknown job", argv: []string{"qdel", "9999.vm"},
			replies: []*batchreq.Reply{textReply(15001, "Unknown Job Id"), textReply(15001, "Unknown Job Id")},
			sent: []string{"+2+1+6{U}+1+2+79999.vm+0+0", disconnect,
				"+2+1+8{U}2+109999.vm@vm+0", disconnect},
			stderr: "qdel: Unknown Job Id 9999.vm\n", exit: 153},
		{name: "located elsewhere", argv: []string{"qdel", "7.vm"},
			replies: []*batchreq.Reply{textReply(15001, "Unknown Job Id"), locateReply("vm2:{P}"), nil},
			sent: []string{"+2+1+6{U}+1+2+47.vm+0+0", disconnect,
				"+2+1+8{U}+77.vm@vm+0", disconnect,
				"+2+1+6{U}+1+2+47.vm+0+0", disconnect}},
		{name: "permission", argv: []string{"qdel", "0.vm"},
			replies: []*batchreq.Reply{textReply(15007, "Unauthorized Request  MSG=operation not permitted")},
			sent:    []string{"+2+1+6{U}+1+2+40.vm+0+0", disconnect},
			stderr:  "qdel: Unauthorized Request  MSG=operation not permitted 0.vm\n", exit: 159},
		{name: "no text", argv: []string{"qdel", "0.vm"},
			replies: []*batchreq.Reply{errReply(15004)},
			stderr:  "qdel: Server returned error 15004 for job 0.vm\n", exit: 15004 & 0xff},
		{name: "bad id", argv: []string{"qdel", "{J3}"}, sent: []string{},
			stderr: "qdel: illegally formed job identifier: {J3}\n", exit: 1},
		{name: "all", argv: []string{"qdel", "all"},
			replies: []*batchreq.Reply{statusReply(
				obj(batchreq.MGR_OBJ_JOB, "1.vm", "job_state=Q"),
				obj(batchreq.MGR_OBJ_JOB, "2.vm", "job_state=C"),
				obj(batchreq.MGR_OBJ_JOB, "3.vm", "job_state=R")),
				textReply(15007, "Unauthorized Request  MSG=operation not permitted"), nil},
			sent:   []string{"+2+12+51{U}+0+0", "+2+1+6{U}+1+2+41.vm+0+0", "+2+1+6{U}+1+2+43.vm+0+0", disconnect},
			stdout: "Deletion Error: 15007 (Unauthorized Request )\n",
			stderr: "qdel: Unauthorized Request  MSG=operation not permitted 1.vm\n"},
		{name: "all nothing", argv: []string{"qdel", "ALL"},
			replies: []*batchreq.Reply{statusReply()},
			sent:    []string{"+2+12+51{U}+0+0", disconnect},
			stderr:  "qdel: cannot find any jobs to delete\n"},
		{name: "purge complete", argv: []string{"qdel", "-c"},
			replies: []*batchreq.Reply{textReply(15007, "Unauthorized Request  MSG=must have operator or manager privilege to use -c parameter")},
			check: func(t *testing.T, stdout, stderr string) {
				if stderr != "qdel: Unauthorized Request  MSG=must have operator or manager privilege to use -c parameter \n" {
					t.Errorf("stderr %q", stderr)
				}
			},
			exit: 159},
		{name: "conflicting options", argv: []string{"qdel", "-p", "-W", "3", "1"}, sent: []string{},
			stderr: qdelUsage, exit: 2},
		{name: "no operand", argv: []string{"qdel"}, sent: []string{}, stderr: qdelUsage, exit: 2},
		{name: "unknown option", argv: []string{"qdel", "-z", "1"}, sent: []string{},
			stderr: "{B}/qdel: invalid option -- 'z'\n" + qdelUsage, exit: 2},
		{name: "bad delay", argv: []string{"qdel", "-W", "x", "1"}, sent: []string{}, stderr: qdelUsage, exit: 2},
		{name: "signed delay", argv: []string{"qdel", "-W", "+5", "1"}, sent: []string{}, stderr: qdelUsage, exit: 2},
		{name: "missing argument", argv: []string{"qdel", "-W"}, sent: []string{},
			stderr: "{B}/qdel: option requires an argument -- 'W'\n" + qdelUsage, exit: 2},
		// Job ids are normalised (spec 05 §1.1): the server part is the
		// lower-cased full name ("vm" is its own through the test's
		// HOSTALIASES); with "@server" the parent
		// is sent as written and the request goes to that server.
		{name: "upper-case server", argv: []string{"qdel", "12.VM"},
			sent: []string{"+2+1+6{U}+1+2+512.vm+0+0", disconnect}},
		{name: "current server", argv: []string{"qdel", "12.VM@vm2:{P}"},
			sent: []string{"+2+1+6{U}+1+2+512.VM+0+0", disconnect}},
		{name: "unresolvable server", argv: []string{"qdel", "12.bad..host"}, sent: []string{},
			stderr: "qdel: illegally formed job identifier: 12.bad..host\n", exit: 1},
	})
}

const qdelUsage = "usage: qdel [{ -a | -c | -p | -t | -W delay | -m message}] [<JOBID>[<JOBID>]|'all'|'ALL']...\n"

// TestJobCommands covers the options, requests, error lines and exit
// statuses of the other job commands (spec 05 §1.3, §4).
func TestJobCommands(t *testing.T) {
	unknown := textReply(15001, "Unknown Job Id MSG=cannot locate job")
	runCases(t, []testCase{
		// qhold / qrls
		{name: "qhold", argv: []string{"qhold", "12"},
			sent: []string{"+2+1+7{U}+2+2+512.vm+12+132+10Hold_Types+0+1u+0+0", disconnect}},
		{name: "qhold -h os", argv: []string{"qhold", "-h", "os", "12.vm"},
			sent: []string{"+2+1+7{U}+2+2+512.vm+12+142+10Hold_Types+0+2os+0+0", disconnect}},
		{name: "qhold -t", argv: []string{"qhold", "-t", "1-2", "5[].vm"},
			sent: []string{"+2+1+7{U}+2+2+65[].vm+12+132+10Hold_Types+0+1u+0+12+15array_range=1-2", disconnect}},
		{name: "qhold owner refused", argv: []string{"qhold", "-h", "o", "4000.vm"},
			replies: []*batchreq.Reply{textReply(15007, "Unauthorized Request ")},
			stderr:  "qhold: Unauthorized Request  4000.vm\n", exit: 159},
		{name: "qhold bad hold type", argv: []string{"qhold", "-h", "x", "1"}, sent: []string{},
			stderr: "usage: qhold [-h {u|o|s}] [-t array_range] job_identifier...\n", exit: 2},
		{name: "qrls none is no hold type", argv: []string{"qrls", "-h", "n", "1"}, sent: []string{},
			stderr: "usage: qrls [-h {u|o|s}] [-t array_range] job_identifier...\n", exit: 2},
		{name: "qhold usage", argv: []string{"qhold"}, sent: []string{},
			stderr: "usage: qhold [-h {u|o|s}] [-t array_range] job_identifier...\n", exit: 2},
		{name: "qrls -h o -t", argv: []string{"qrls", "-h", "o", "-t", "1-2", "5[].vm"},
			sent: []string{"+2+12+13{U}+2+2+65[].vm+12+132+10Hold_Types+0+1o+0+12+15array_range=1-2", disconnect}},
		{name: "qrls usage", argv: []string{"qrls", "-x", "1"}, sent: []string{},
			stderr: "{B}/qrls: invalid option -- 'x'\nusage: qrls [-h {u|o|s}] [-t array_range] job_identifier...\n", exit: 2},

		// qmove
		{name: "qmove", argv: []string{"qmove", "batch", "12"},
			sent: []string{"+2+12+12{U}+512.vm+5batch+0", disconnect}},
		{name: "qmove unknown queue", argv: []string{"qmove", "nosuch", "4000.vm"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue")},
			stderr:  "qmove: Unknown queue 4000.vm\n", exit: 172},
		{name: "qmove bad destination", argv: []string{"qmove", "@", "1"}, sent: []string{},
			stderr: "qmove: illegally formed destination: @\n", exit: 2},
		{name: "qmove usage", argv: []string{"qmove", "batch"}, sent: []string{},
			stderr: "usage: qmove destination job_identifier...\n", exit: 2},

		// qorder
		{name: "qorder", argv: []string{"qorder", "1", "2.vm"},
			sent: []string{"+2+12+50{U}+41.vm+42.vm+0", disconnect}},
		{name: "qorder error", argv: []string{"qorder", "1", "2"},
			replies: []*batchreq.Reply{textReply(15001, "Unknown Job Id")},
			stderr:  "qorder: Unknown Job Id \n", exit: 153},
		{name: "qorder same server in other case", argv: []string{"qorder", "1.VM", "2.vm"},
			sent: []string{"+2+12+50{U}+41.vm+42.vm+0", disconnect}},
		{name: "qorder servers differ", argv: []string{"qorder", "1.vm", "2.vm2"}, sent: []string{},
			stderr: "qorder: both jobs ids must specify the same server\n", exit: 1},
		{name: "qorder usage", argv: []string{"qorder", "1"}, sent: []string{},
			stderr: "usage: qorder job_identifier job_identifier\n", exit: 2},

		// qrun
		{name: "qrun", argv: []string{"qrun", "9"},
			sent: []string{"+2+12+15{U}+49.vm+0+0+0", disconnect}},
		{name: "qrun -a -H", argv: []string{"qrun", "-a", "-H", "vm", "9.vm"},
			sent: []string{"+2+12+23{U}+49.vm+2vm+0+0", disconnect}},
		{name: "qrun refused", argv: []string{"qrun", "4000.vm"},
			replies: []*batchreq.Reply{textReply(15007, "Unauthorized Request ")},
			stderr:  "qrun: Unauthorized Request  4000.vm\n", exit: 2},
		{name: "qrun unknown node", argv: []string{"qrun", "-H", "nodeaaaaaaaaaaaaaaaaa", "9"},
			replies: []*batchreq.Reply{errReply(15064)},
			stderr:  "qrun: Unknown node in hostlist 'nodeaaaaaaaaaaaa...' for job 9.vm\n", exit: 2},
		{name: "qrun usage", argv: []string{"qrun"}, sent: []string{},
			stderr: "usage: qrun [-a] [-H <HOST>] <JOBID>[ <JOBID>]...\n", exit: 2},

		// qrerun
		{name: "qrerun", argv: []string{"qrerun", "9"},
			sent: []string{"+2+12+14{U}+49.vm+0", disconnect}},
		{name: "qrerun -f", argv: []string{"qrerun", "-f", "9"},
			sent: []string{"+2+12+14{U}+49.vm+1+5force", disconnect}},
		{name: "qrerun -m", argv: []string{"qrerun", "-m", "node died", "9"},
			sent: []string{"+2+12+14{U}+49.vm+1+9node died", disconnect}},
		{name: "qrerun unknown", argv: []string{"qrerun", "9.vm"},
			replies: []*batchreq.Reply{unknown, unknown},
			stderr:  "qrerun: Unknown Job Id MSG=cannot locate job 9.vm\n", exit: 153},
		{name: "qrerun queued", argv: []string{"qrerun", "0.vm"},
			replies: []*batchreq.Reply{textReply(15018, "Request invalid for state of job")},
			stderr:  "qrerun: Request invalid for state of job 0.vm\n", exit: 170},
		{name: "qrerun -m with =", argv: []string{"qrerun", "-m", "a=b", "9"}, sent: []string{},
			stderr: "usage: qrerun [-f] [-m message] job_identifier...\n", exit: 2},

		// qsig
		{name: "qsig", argv: []string{"qsig", "9"},
			sent: []string{"+2+12+18{U}+49.vm+7SIGTERM+0", disconnect}},
		{name: "qsig -s -a", argv: []string{"qsig", "-a", "-s", "suspend", "9"},
			sent: []string{"+2+12+18{U}+49.vm+7suspend+0", disconnect}},
		{name: "qsig usage", argv: []string{"qsig", "-s"}, sent: []string{},
			stderr: "{B}/qsig: option requires an argument -- 's'\nusage: qsig [-s signal] job_identifier...\n", exit: 2},

		// qmsg
		{name: "qmsg", argv: []string{"qmsg", "hello", "9"},
			sent: []string{"+2+12+10{U}+49.vm+2+5hello+0", disconnect}},
		{name: "qmsg -O", argv: []string{"qmsg", "-O", "hello", "9"},
			sent: []string{"+2+12+10{U}+49.vm+1+5hello+0", disconnect}},
		{name: "qmsg -E -O", argv: []string{"qmsg", "-E", "-O", "hello", "9"},
			sent: []string{"+2+12+10{U}+49.vm+3+5hello+0", disconnect}},
		{name: "qmsg queued", argv: []string{"qmsg", "hi", "0.vm"},
			replies: []*batchreq.Reply{textReply(15018, "Request invalid for state of job")},
			stderr:  "qmsg: Request invalid for state of job 0.vm\n", exit: 170},
		{name: "qmsg usage", argv: []string{"qmsg", "hello"}, sent: []string{},
			stderr: "usage: qmsg [-O] [-E] msg_string job_identifier...\n", exit: 2},

		// qchkpt
		{name: "qchkpt", argv: []string{"qchkpt", "11"},
			sent: []string{"+2+12+27{U}+2+2+511.vm+0+0", disconnect}},
		{name: "qchkpt not checkpointable", argv: []string{"qchkpt", "11.vm"},
			replies: []*batchreq.Reply{textReply(15004, "Invalid request MSG=job is not checkpointable")},
			stderr:  "qchkpt: Invalid request MSG=job is not checkpointable 11.vm\n", exit: 156},
		{name: "qchkpt usage", argv: []string{"qchkpt"}, sent: []string{},
			stderr: "usage: qchkpt job_identifier...\n", exit: 2},
	})
}

const qalterUsage = `usage: qalter [-a date_time] [-A account_string] [-c interval] [-e path] 
	[-h hold_list] [-j y|n] [-k keep] [-l resource_list] [-m mail_options] 
	[-M user_list] [-N jobname] [-o path] [-p priority] [-q] [-r y|n] [-S path] 
	[-u user_list] [-v variable_list] [-W dependency_list] [-t array_range] job_identifier...
`

// TestQalter covers qalter's options, requests and errors (spec 05 §4).
func TestQalter(t *testing.T) {
	runCases(t, []testCase{
		{name: "resources and name in order", argv: []string{"qalter", "-l", "walltime=00:10:00", "-N", "newname", "12"},
			sent: []string{"+2+12+11{U}+2+2+512.vm+2" +
				"2+322+13Resource_List+1+8walltime+800:10:00+0" +
				"2+17+8Job_Name+0+7newname+0" +
				"+0", disconnect}},
		{name: "depend qualified", argv: []string{"qalter", "-W", "depend=afterok:3", "12"},
			sent: []string{"+2+12+11{U}+2+2+512.vm+12+20+6depend+02+12afterok:3.vm+0+0", disconnect}},
		{name: "holds, priority, array range", argv: []string{"qalter", "-h", "n", "-p", "-5", "-t", "2", "5[].vm"},
			sent: []string{"+2+12+11{U}+2+2+65[].vm+2" +
				"2+132+10Hold_Types+0+1n+0" +
				"2+12+8Priority+0+2-5+0" +
				"+12+13array_range=2", disconnect}},
		{name: "asynchronous", argv: []string{"qalter", "-q", "-A", "acct", "12"},
			sent: []string{"+2+12+28{U}+2+2+512.vm+12+182+12Account_Name+0+4acct+0+0", disconnect}},
		{name: "unknown resource", argv: []string{"qalter", "-l", "bogusres=1", "4000.vm"},
			replies: []*batchreq.Reply{textReply(15037, "Unknown resource type Resource_List.bogusres")},
			stderr:  "qalter: Unknown resource type Resource_List.bogusres 4000.vm\n", exit: 189},
		{name: "read only", argv: []string{"qalter", "-x", "vm/0", "4000.vm"},
			replies: []*batchreq.Reply{textReply(15003, "Cannot set attribute, read only or insufficient permission ")},
			stderr:  "qalter: Cannot set attribute, read only or insufficient permission  4000.vm\n", exit: 155},
		// Every other option, each an entry with op SET in command-line
		// order (spec 05 §4); -v is sent raw, -e/-o become host:path,
		// -a an epoch.
		{name: "all options", argv: []string{"qalter", "-a", "202611220321", "-c", "c=10", "-e", "/tmp/e", "-o", "vm2:/tmp/o",
			"-j", "oe", "-k", "n", "-m", "ae", "-M", "bob@vm", "-r", "y", "-S", "/bin/sh", "-u", "alice",
			"-v", "A=1,B", "-W", "stagein=/tmp/a@vm:/a,group_list=staff", "12"},
			env: []string{"TZ=UTC"},
			sent: []string{"+2+12+11{U}+2+2+512.vm" + attrList("Execution_Time=1795317660", "Checkpoint=c=10",
				"Error_Path="+hostName(t)+":/tmp/e", "Output_Path=vm2:/tmp/o", "Join_Path=oe", "Keep_Files=n",
				"Mail_Points=ae", "Mail_Users=bob@vm", "Rerunable=y", "Shell_Path_List=/bin/sh", "User_List=alice",
				"Variable_List=A=1,B", "stagein=/tmp/a@vm:/a", "group_list=staff") + "+0", disconnect}},
		{name: "bad name", argv: []string{"qalter", "-N", "1abc", "12"}, sent: []string{}, stderr: qalterUsage, exit: 2},
		{name: "bad rerunable", argv: []string{"qalter", "-r", "x", "12"}, sent: []string{}, stderr: qalterUsage, exit: 2},
		{name: "bad priority", argv: []string{"qalter", "-p", "2000", "12"}, sent: []string{}, stderr: qalterUsage, exit: 2},
		{name: "bad date", argv: []string{"qalter", "-a", "25:00", "12"}, sent: []string{}, stderr: qalterUsage, exit: 2},
		{name: "bad id", argv: []string{"qalter", "-A", "x", "x.vm"}, sent: []string{},
			stderr: "qalter: illegally formed job identifier: x.vm\n", exit: 1},
		{name: "bad holds", argv: []string{"qalter", "-h", "x", "12"}, sent: []string{}, stderr: qalterUsage, exit: 2},
		{name: "bad checkpoint", argv: []string{"qalter", "-c", "enabled", "12"}, sent: []string{}, stderr: qalterUsage, exit: 2},
		{name: "no job", argv: []string{"qalter", "-A", "x"}, sent: []string{}, stderr: qalterUsage, exit: 2},
	})
}

// TestJobCommandUsage checks, for every job command, that an unknown
// option prints glibc's complaint and the command's usage and exits 2
// without contacting the server, and that a malformed job id is reported
// as "illegally formed job identifier" with exit status 1 (spec 05 §1.4,
// §3.8) while the other operands are still handled.
func TestJobCommandUsage(t *testing.T) {
	usages := map[string]string{
		"qdel":   qdelUsage,
		"qhold":  "usage: qhold [-h {u|o|s}] [-t array_range] job_identifier...\n",
		"qrls":   "usage: qrls [-h {u|o|s}] [-t array_range] job_identifier...\n",
		"qalter": qalterUsage,
		"qrerun": "usage: qrerun [-f] [-m message] job_identifier...\n",
		"qsig":   "usage: qsig [-s signal] job_identifier...\n",
		"qchkpt": "usage: qchkpt job_identifier...\n",
		"qrun":   "usage: qrun [-a] [-H <HOST>] <JOBID>[ <JOBID>]...\n",
	}
	// The request each command sends for job 2.vm, after a malformed id.
	second := map[string]string{
		"qdel":   "+2+1+6{U}+1+2+42.vm+0+0",
		"qhold":  "+2+1+7{U}+2+2+42.vm+12+132+10Hold_Types+0+1u+0+0",
		"qrls":   "+2+12+13{U}+2+2+42.vm+12+132+10Hold_Types+0+1u+0+0",
		"qalter": "+2+12+11{U}+2+2+42.vm+12+182+12Account_Name+0+4acct+0+0",
		"qrerun": "+2+12+14{U}+42.vm+0",
		"qsig":   "+2+12+18{U}+42.vm+7SIGTERM+0",
		"qchkpt": "+2+12+27{U}+2+2+42.vm+0+0",
		"qrun":   "+2+12+15{U}+42.vm+0+0+0",
	}
	var cases []testCase
	for _, cmd := range []string{"qdel", "qhold", "qrls", "qalter", "qrerun", "qsig", "qchkpt", "qrun"} {
		cases = append(cases, testCase{name: cmd + " unknown option", argv: []string{cmd, "-Z", "1"}, sent: []string{},
			stderr: "{B}/" + cmd + ": invalid option -- 'Z'\n" + usages[cmd], exit: 2})
		argv := []string{cmd, "1x.vm", "2"}
		if cmd == "qalter" {
			argv = []string{cmd, "-A", "acct", "1x.vm", "2"}
		}
		cases = append(cases, testCase{name: cmd + " malformed id", argv: argv,
			sent:   []string{second[cmd], disconnect},
			stderr: cmd + ": illegally formed job identifier: 1x.vm\n", exit: 1})
	}
	cases = append(cases,
		testCase{name: "qmsg unknown option", argv: []string{"qmsg", "-Z", "hi", "1"}, sent: []string{},
			stderr: "{B}/qmsg: invalid option -- 'Z'\nusage: qmsg [-O] [-E] msg_string job_identifier...\n", exit: 2},
		testCase{name: "qmsg too long", argv: []string{"qmsg", strings.Repeat("m", 257), "1"}, sent: []string{},
			stderr: "usage: qmsg [-O] [-E] msg_string job_identifier...\n", exit: 2},
		testCase{name: "qmove unknown option", argv: []string{"qmove", "-Z", "batch", "1"}, sent: []string{},
			stderr: "{B}/qmove: invalid option -- 'Z'\nusage: qmove destination job_identifier...\n", exit: 2},
		testCase{name: "qmove malformed id", argv: []string{"qmove", "batch", "x"}, sent: []string{},
			stderr: "qmove: illegally formed job identifier: x\n", exit: 1},
		testCase{name: "qorder malformed id", argv: []string{"qorder", "1", "x"}, sent: []string{},
			stderr: "qorder: illegally formed job identifier: x\n", exit: 1},
	)
	runCases(t, cases)
}
