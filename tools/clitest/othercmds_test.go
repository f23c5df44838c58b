package clitest

import (
	"strings"
	"testing"

	"gopbs/batchreq"
)

// TestQselect covers qselect's options, the reverse order of its
// criteria, the -q server and its error lines (spec 05 §5).
func TestQselect(t *testing.T) {
	runCases(t, []testCase{
		{name: "user", argv: []string{"qselect", "-u", "alice"},
			replies: []*batchreq.Reply{selectReply("1.vm", "5[0].vm")},
			sent:    []string{"+2+12+16{U}+12+16+9User_List+0+5alice+4+0", disconnect},
			stdout:  "1.vm\n5[0].vm\n"},
		{name: "state", argv: []string{"qselect", "-s", "Q"},
			replies: []*batchreq.Reply{selectReply()},
			sent:    []string{"+2+12+16{U}+12+12+9job_state+0+1Q+4+0", disconnect}},
		{name: "five criteria in reverse order", argv: []string{"qselect", "-s", "QH", "-u", "alice", "-N", "foo",
			"-l", "walltime.gt.00:10:00", "-q", "short"},
			sent: []string{"+2+12+16{U}+5" +
				"2+182+11destination+0+5short+4" +
				"2+322+13Resource_List+1+8walltime+800:10:00+7" +
				"2+13+8Job_Name+0+3foo+4" +
				"2+16+9User_List+0+5alice+4" +
				"2+13+9job_state+0+2QH+4" +
				"+0", disconnect}},
		{name: "operators", argv: []string{"qselect", "-p", ".ge.10", "-h", ".ne.n", "-A", "acct"},
			sent: []string{"+2+12+16{U}+3" +
				"2+182+12Account_Name+0+4acct+4" +
				"2+132+10Hold_Types+0+1n+5" +
				"2+12+8Priority+0+210+6" +
				"+0", disconnect}},
		{name: "date and checkpoint", argv: []string{"qselect", "-a", ".gt.202611220321", "-c", "c"}, env: []string{"TZ=UTC"},
			sent: []string{"+2+12+16{U}+2" +
				"2+132+10Checkpoint+0+1c+4" +
				"2+262+14Execution_Time+02+101795317660+7" +
				"+0", disconnect}},
		{name: "resource list reversed", argv: []string{"qselect", "-l", "walltime.gt.00:10:00,mem.lt.1gb"},
			sent: []string{"+2+12+16{U}+2" +
				"2+222+13Resource_List+1+3mem+31gb+9" +
				"2+322+13Resource_List+1+8walltime+800:10:00+7" +
				"+0", disconnect}},
		{name: "rerunable and holds", argv: []string{"qselect", "-r", "y", "-h", "u"},
			sent: []string{"+2+12+16{U}+2" +
				"2+132+10Hold_Types+0+1u+4" +
				"2+12+9Rerunable+0+1y+4" +
				"+0", disconnect}},
		{name: "resource without operator", argv: []string{"qselect", "-l", "walltime=1"}, sent: []string{},
			stderr: qselectUsage, exit: 2},
		{name: "unknown option", argv: []string{"qselect", "-Z"}, sent: []string{},
			stderr: "{B}/qselect: invalid option -- 'Z'\n" + qselectUsage, exit: 2},
		{name: "bad operator", argv: []string{"qselect", "-p", ".xx.1"}, sent: []string{}, stderr: qselectUsage, exit: 2},
		{name: "exec queues only", argv: []string{"qselect", "-e"},
			sent: []string{"+2+12+16{U}+0+12+15exec_queue_only", disconnect}},
		{name: "exec queues by environment", argv: []string{"qselect"}, env: []string{"PBS_QSTAT_EXECONLY=1"},
			sent: []string{"+2+12+16{U}+0+12+15exec_queue_only", disconnect}},
		{name: "server from -q", argv: []string{"qselect", "-q", "@vm2:{P}"},
			sent: []string{"+2+12+16{U}+0+0", disconnect}},
		{name: "error with text", argv: []string{"qselect", "-q", "nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue")},
			stderr:  "qselect: Unknown queue\n", exit: 172},
		{name: "error without text", argv: []string{"qselect"},
			replies: []*batchreq.Reply{errReply(15033)},
			stderr:  "qselect: Error (15033 - Batch protocol error) selecting jobs\n", exit: 185},
		{name: "bad -r", argv: []string{"qselect", "-r", "x"}, sent: []string{},
			stderr: "qsub: illegal -r value\n" + qselectUsage, exit: 2},
		{name: "bad state", argv: []string{"qselect", "-s", "QX"}, sent: []string{}, stderr: qselectUsage, exit: 2},
		{name: "operand", argv: []string{"qselect", "1.vm"}, sent: []string{}, stderr: qselectUsage, exit: 2},
	})
}

const qselectUsage = `usage: qselect [-a [op]date_time] [-A account_string] [-c [op]interval]
	[-h hold_list] [-l resource_list] [-N name] [-p [op]priority]
	[-q destination] [-r y|n] [-s states] [-u user_name]
`

// TestQueueCommands covers qenable, qdisable, qstart and qstop (spec 05
// §4).
func TestQueueCommands(t *testing.T) {
	runCases(t, []testCase{
		{name: "qenable", argv: []string{"qenable", "batch"},
			sent: []string{"+2+1+9{U}+2+1+5batch+12+13+7enabled+0+4TRUE+0+0", disconnect}},
		{name: "qdisable", argv: []string{"qdisable", "batch@vm"},
			sent: []string{"+2+1+9{U}+2+1+5batch+12+14+7enabled+0+5FALSE+0+0", disconnect}},
		{name: "qstart", argv: []string{"qstart", "batch", "short"},
			sent: []string{"+2+1+9{U}+2+1+5batch+12+13+7started+0+4TRUE+0+0", disconnect,
				"+2+1+9{U}+2+1+5short+12+13+7started+0+4TRUE+0+0", disconnect}},
		{name: "qstop", argv: []string{"qstop", "batch"},
			sent: []string{"+2+1+9{U}+2+1+5batch+12+14+7started+0+5FALSE+0+0", disconnect}},
		{name: "qenable refused", argv: []string{"qenable", "nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue")},
			stderr:  "qenable: Unknown queue nosuch\n", exit: 2},
		{name: "qstop bad destination", argv: []string{"qstop", "@vm"}, sent: []string{},
			stderr: "qstop: illegally formed destination: @vm\n", exit: 1},
		{name: "qdisable cannot connect", argv: []string{"qdisable", "batch@vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "Cannot connect to specified server host 'vm2:1'.\n" +
				"qdisable: could not connect to server vm2:1 (111) Connection refused\n", exit: 2},
		{name: "qdisable named server down falls back to the default", argv: []string{"qdisable", "batch@vm2:1", "short"},
			sent: []string{"+2+1+9{U}+2+1+5batch+12+14+7enabled+0+5FALSE+0+0", disconnect,
				"+2+1+9{U}+2+1+5short+12+14+7enabled+0+5FALSE+0+0", disconnect}},
		{name: "qenable error without text", argv: []string{"qenable", "batch"},
			replies: []*batchreq.Reply{errReply(15007)},
			stderr:  "qenable: Unauthorized Request  batch\n", exit: 2},
		{name: "qstart usage", argv: []string{"qstart"}, sent: []string{},
			stderr: "usage: qstart destination ...\n", exit: 1},
	})
}

// TestQterm covers qterm's shutdown manners and error lines.
func TestQterm(t *testing.T) {
	runCases(t, []testCase{
		{name: "quick by default", argv: []string{"qterm"}, sent: []string{"+2+12+17{U}+2+0", disconnect}},
		{name: "immediate", argv: []string{"qterm", "-t", "immediate"}, sent: []string{"+2+12+17{U}+0+0", disconnect}},
		{name: "delay", argv: []string{"qterm", "-t", "delay", "vm"}, sent: []string{"+2+12+17{U}+1+0", disconnect}},
		{name: "refused", argv: []string{"qterm", "vm2:{P}"},
			replies: []*batchreq.Reply{textReply(15007, "Unauthorized Request ")},
			check: func(t *testing.T, stdout, stderr string) {
				if want := "qterm: Unauthorized Request vm2:"; len(stderr) < len(want) || stderr[:len(want)] != want {
					t.Errorf("stderr %q, want %q + port", stderr, want)
				}
			},
			exit: 2},
		{name: "cannot connect", argv: []string{"qterm", "vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "Cannot connect to specified server host 'vm2:1'.\n" +
				"qterm: could not connect to server 'vm2:1' (111) Connection refused\n", exit: 2},
		{name: "default server refused", argv: []string{"qterm"},
			replies: []*batchreq.Reply{textReply(15007, "Unauthorized Request ")},
			stderr:  "qterm: Unauthorized Request vm\n", exit: 2},
		{name: "unknown option", argv: []string{"qterm", "-x"}, sent: []string{},
			stderr: "{B}/qterm: invalid option -- 'x'\nusage: qterm [-t immediate|delay|quick] [server ...]\n", exit: 1},
		{name: "bad manner", argv: []string{"qterm", "-t", "soon"}, sent: []string{},
			stderr: "usage: qterm [-t immediate|delay|quick] [server ...]\n", exit: 1},
	})
}

// TestPbsnodes covers pbsnodes' modes, requests and output (spec 05 §7).
func TestPbsnodes(t *testing.T) {
	node := obj(batchreq.MGR_OBJ_NODE, "vm", "state=free", "np=2", "ntype=cluster",
		"status=rectime=1,state=free", "note=verif note", "gpus=0")
	down := obj(batchreq.MGR_OBJ_NODE, "vm2", "state=down,offline", "np=2", "jobs=? 15201")
	busy := obj(batchreq.MGR_OBJ_NODE, "vm3", "state=job-exclusive", "np=2")
	unknown := obj(batchreq.MGR_OBJ_NODE, "vm4", "state=state-unknown,down", "np=2")
	runCases(t, []testCase{
		{name: "all", argv: []string{"pbsnodes", "-a"},
			replies: []*batchreq.Reply{statusReply(node, down)},
			sent:    []string{"+2+12+58{U}+0+0+0", disconnect},
			stdout: "vm\n     state = free\n     np = 2\n     ntype = cluster\n     status = rectime=1,state=free\n" +
				"     note = verif note\n     gpus = 0\n\nvm2\n     state = down,offline\n     np = 2\n\n"},
		{name: "named", argv: []string{"pbsnodes", "vm"},
			replies: []*batchreq.Reply{statusReply(node)},
			sent:    []string{"+2+12+58{U}+2vm+0+0", disconnect},
			check:   func(*testing.T, string, string) {}},
		{name: "xml", argv: []string{"pbsnodes", "-x", "vm2"},
			replies: []*batchreq.Reply{statusReply(down)},
			stdout:  "<Data><Node><name>vm2</name><state>down,offline</state><np>2</np><jobs>? 15201</jobs></Node></Data>\n"},
		{name: "list down", argv: []string{"pbsnodes", "-l"},
			replies: []*batchreq.Reply{statusReply(node, down)},
			stdout:  "vm2                  down,offline\n"},
		{name: "list all with notes", argv: []string{"pbsnodes", "-l", "-n", "all"},
			replies: []*batchreq.Reply{statusReply(node, down)},
			stdout:  "vm                   free                       verif note\nvm2                  down,offline\n"},
		{name: "list up", argv: []string{"pbsnodes", "-l", "UP"},
			replies: []*batchreq.Reply{statusReply(node, down)},
			stdout:  "vm                   free\n"},
		{name: "list free", argv: []string{"pbsnodes", "-l", "free"},
			replies: []*batchreq.Reply{statusReply(node, down, busy, unknown)},
			stdout:  "vm                   free\n"},
		{name: "list down includes state-unknown", argv: []string{"pbsnodes", "-l", "down"},
			replies: []*batchreq.Reply{statusReply(node, down, busy, unknown)},
			stdout:  "vm2                  down,offline\nvm4                  state-unknown,down\n"},
		{name: "list offline", argv: []string{"pbsnodes", "-l", "Offline"},
			replies: []*batchreq.Reply{statusReply(node, down, busy, unknown)},
			stdout:  "vm2                  down,offline\n"},
		{name: "list active", argv: []string{"pbsnodes", "-l", "active"},
			replies: []*batchreq.Reply{statusReply(node, down, busy, unknown)},
			stdout:  "vm3                  job-exclusive\n"},
		{name: "list job-exclusive", argv: []string{"pbsnodes", "-l", "job-exclusive"},
			replies: []*batchreq.Reply{statusReply(node, down, busy, unknown)},
			stdout:  "vm3                  job-exclusive\n"},
		{name: "list default", argv: []string{"pbsnodes", "-l"},
			replies: []*batchreq.Reply{statusReply(node, down, busy, unknown)},
			stdout:  "vm2                  down,offline\nvm4                  state-unknown,down\n"},
		// An operand that is no state name is a node: the default filter
		// applies to the named nodes.
		{name: "list named nodes", argv: []string{"pbsnodes", "-l", "vm", "vm2"},
			replies: []*batchreq.Reply{statusReply(node), statusReply(down)},
			sent:    []string{"+2+12+58{U}+2vm+0+0", "+2+12+58{U}+3vm2+0+0", disconnect},
			stdout:  "vm2                  down,offline\n"},
		{name: "list with state and nodes", argv: []string{"pbsnodes", "-l", "all", "vm"},
			replies: []*batchreq.Reply{statusReply(node)},
			sent:    []string{"+2+12+58{U}+2vm+0+0", disconnect},
			stdout:  "vm                   free\n"},
		{name: "several named", argv: []string{"pbsnodes", "-a", "vm", "vm2"},
			replies: []*batchreq.Reply{statusReply(node), statusReply(down)},
			sent:    []string{"+2+12+58{U}+2vm+0+0", "+2+12+58{U}+3vm2+0+0", disconnect},
			stdout: "vm\n     state = free\n     np = 2\n     ntype = cluster\n     status = rectime=1,state=free\n" +
				"     note = verif note\n     gpus = 0\n\nvm2\n     state = down,offline\n     np = 2\n\n"},
		{name: "server option", argv: []string{"pbsnodes", "-s", "vm2:{P}", "-a"},
			replies: []*batchreq.Reply{statusReply(node)},
			sent:    []string{"+2+12+58{U}+0+0+0", disconnect},
			check:   func(*testing.T, string, string) {}},
		{name: "offline several", argv: []string{"pbsnodes", "-o", "vm", "vm2"},
			sent: []string{"+2+1+9{U}+2+3+2vm+12+14+5state+0+7offline+2+0",
				"+2+1+9{U}+2+3+3vm2+12+14+5state+0+7offline+2+0", disconnect}},
		{name: "long note", argv: []string{"pbsnodes", "-N", strings.Repeat("x", 257), "vm"},
			stderr: "Warning: note exceeds length limit (256) - server may reject it...\n"},
		{name: "status error without text", argv: []string{"pbsnodes", "-a"},
			replies: []*batchreq.Reply{errReply(15033)},
			stderr:  "{B}/pbsnodes: Error 15033 (Batch protocol error)\n", exit: 1},
		{name: "note error keeps status 0", argv: []string{"pbsnodes", "-N", "hi", "nosuch"},
			replies: []*batchreq.Reply{textReply(15062, "Unknown node ")},
			stderr:  "Error setting note attribute for nosuch - Unknown node \n"},
		{name: "two modes", argv: []string{"pbsnodes", "-o", "-c", "vm"}, sent: []string{},
			stderr: pbsnodesUsage, exit: 1},
		{name: "unknown option", argv: []string{"pbsnodes", "-Z"}, sent: []string{},
			stderr: "{B}/pbsnodes: invalid option -- 'Z'\n" + pbsnodesUsage, exit: 1},
		{name: "offline", argv: []string{"pbsnodes", "-o", "vm"},
			sent: []string{"+2+1+9{U}+2+3+2vm+12+14+5state+0+7offline+2+0", disconnect}},
		{name: "clear", argv: []string{"pbsnodes", "-c", "vm"},
			sent: []string{"+2+1+9{U}+2+3+2vm+12+14+5state+0+7offline+3+0", disconnect}},
		{name: "reset", argv: []string{"pbsnodes", "-r", "vm"},
			sent: []string{"+2+1+9{U}+2+3+2vm+22+14+5state+0+7offline+32+11+5state+0+4down+2+0", disconnect}},
		{name: "note", argv: []string{"pbsnodes", "-N", "note", "vm"},
			sent: []string{"+2+1+9{U}+2+3+2vm+12+10+4note+0+4note+0+0", disconnect}},
		{name: "empty note", argv: []string{"pbsnodes", "-N", "n", "vm"},
			sent: []string{"+2+1+9{U}+2+3+2vm+1+6+4note+0+0+0+0", disconnect}},
		{name: "note with newline", argv: []string{"pbsnodes", "-N", "a\nb", "vm"},
			stderr: "Warning: note contains a newline - server may reject it...\n"},
		{name: "marking error keeps status 0", argv: []string{"pbsnodes", "-o", "nosuch"},
			replies: []*batchreq.Reply{textReply(15062, "Unknown node ")},
			stderr:  "Error marking node nosuch - Unknown node \n"},
		{name: "quiet", argv: []string{"pbsnodes", "-q", "-o", "nosuch"},
			replies: []*batchreq.Reply{textReply(15062, "Unknown node ")}},
		{name: "status error", argv: []string{"pbsnodes", "nosuch"},
			replies: []*batchreq.Reply{textReply(15062, "Unknown node  MSG=cannot locate specified node")},
			stderr:  "{B}/pbsnodes: Unknown node  MSG=cannot locate specified node\n", exit: 1},
		{name: "no nodes", argv: []string{"pbsnodes"},
			replies: []*batchreq.Reply{statusReply()},
			stderr:  "{B}/pbsnodes: No nodes found\n", exit: 2},
		{name: "accepted no-ops", argv: []string{"pbsnodes", "-d", "vm"}, sent: []string{disconnect}},
		{name: "usage", argv: []string{"pbsnodes", "-o"}, sent: []string{}, stderr: pbsnodesUsage, exit: 1},
	})
}

const pbsnodesUsage = "usage:\t{B}/pbsnodes [-{c|d|l|o|p|r}] [-s server] [-n] [-N \"note\"] [-q] node ...\n" +
	"\t{B}/pbsnodes [-{a|x}] [-s server] [-q] [node]\n"
