package clitest

import (
	"strings"
	"testing"

	"gopbs/batchreq"
)

// TestQmgr covers qmgr's grammar, requests, output, error lines and exit
// statuses (spec 05 §6).
func TestQmgr(t *testing.T) {
	batch := obj(batchreq.MGR_OBJ_QUEUE, "batch", "queue_type=Execution", "total_jobs=0", "mtime=1795310302",
		"resources_default.walltime=01:00:00", "acl_users=alice@vm,bob@vm", "enabled=True", "started=True")
	runCases(t, []testCase{
		{name: "add an operator", argv: []string{"qmgr", "-c", "set server operators += bob@vm"},
			sent: []string{"+2+1+9{U}+2+0+0+12+17+9operators+0+6bob@vm2+12+0", disconnect}},
		{name: "remove an operator", argv: []string{"qmgr", "-c", "s s operators -= bob@vm"},
			sent: []string{"+2+1+9{U}+2+0+0+12+17+9operators+0+6bob@vm+3+0", disconnect}},
		{name: "unset", argv: []string{"qmgr", "-c", "unset server comment"},
			sent: []string{"+2+1+9{U}+3+0+0+1+9+7comment+0+0+0+0", disconnect}},
		{name: "create queue", argv: []string{"qmgr", "-c", "create queue q2 queue_type=execution"},
			sent: []string{"+2+1+9{U}+0+1+2q2+12+212+10queue_type+0+9execution+0+0", disconnect}},
		{name: "delete queue", argv: []string{"qmgr", "-c", "delete queue q2"},
			sent: []string{"+2+1+9{U}+1+1+2q2+0+0", disconnect}},
		{name: "attributes in reverse order", argv: []string{"qmgr", "-c", "set queue q2 enabled = true, started='TRUE'"},
			sent: []string{"+2+1+9{U}+2+1+2q2+2" + "2+13+7started+0+4TRUE+0" + "2+13+7enabled+0+4true+0" + "+0", disconnect}},
		{name: "two commands", argv: []string{"qmgr", "-c", "set node vm np=4; set node vm note=hi # comment"},
			sent: []string{"+2+1+9{U}+2+3+2vm+1+5+2np+0+14+0+0", "+2+1+9{U}+2+3+2vm+1+8+4note+0+2hi+0+0", disconnect}},
		{name: "create node", argv: []string{"qmgr", "-c", "create node n2 np=2"},
			sent: []string{"+2+1+9{U}+0+3+2n2+1+5+2np+0+12+0+0", disconnect}},
		{name: "delete node", argv: []string{"qmgr", "-c", "d n n2"},
			sent: []string{"+2+1+9{U}+1+3+2n2+0+0", disconnect}},
		{name: "list node", argv: []string{"qmgr", "-c", "list node vm"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_NODE, "vm", "state=free", "np=2"))},
			sent:    []string{"+2+12+58{U}+2vm+0+0", disconnect},
			stdout:  "Node vm\n\tstate = free\n\tnp = 2\n\n"},
		{name: "list server by name with attributes", argv: []string{"qmgr", "-c", "list server vm scheduling"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_SERVER, "vm", "scheduling=True"))},
			// "vm" is a server of its own: a second connection.
			sent:   []string{disconnect, "+2+12+21{U}+0+12+122+10scheduling+0+0+0+0", disconnect},
			stdout: "Server vm\n\tscheduling = True\n\n"},
		{name: "print node", argv: []string{"qmgr", "-c", "print node vm"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_NODE, "vm", "state=free", "np=2", "jobs=0/1.vm",
				"status=rectime=1795310414,state=free", "note=hi"))},
			sent: []string{"+2+12+58{U}+2vm+0+0", disconnect},
			stdout: "#\n# Create nodes and set their properties.\n#\n#\n# Create and define node vm\n#\ncreate node vm\n" +
				"set node vm state = free\nset node vm np = 2\nset node vm status = rectime=1795310414\n" +
				"set node vm status += state=free\nset node vm note = hi\n"},
		{name: "active server", argv: []string{"qmgr", "-c", "active server default; active server"},
			sent: []string{disconnect}, stdout: "Active servers:\ndefault\n"},
		{name: "active node missing", argv: []string{"qmgr", "-c", "active node nosuch"},
			replies: []*batchreq.Reply{textReply(15062, "Unknown node")},
			sent:    []string{"+2+12+58{U}+6nosuch+1+7+5state+0+0+0+0", disconnect},
			stderr:  "Node does not exist: nosuch.\n"},
		{name: "unset forbids a value", argv: []string{"qmgr", "-c", "unset server comment=x"},
			stderr: "qmgr: syntax error - checklist failed\nunset server comment=x\n                     ^\n"},
		{name: "active forbids attributes", argv: []string{"qmgr", "-c", "active queue batch enabled"},
			stderr: "qmgr: Syntax error - operation does not allow attribute\nactive queue batch enabled\n                          ^\n"},
		{name: "several names", argv: []string{"qmgr", "-c", "set queue a,b enabled=true"},
			sent: []string{"+2+1+9{U}+2+1+1a+12+13+7enabled+0+4true+0+0", "+2+1+9{U}+2+1+1b+12+13+7enabled+0+4true+0+0", disconnect}},
		{name: "quoted value with comma and a resource", argv: []string{"qmgr", "-c",
			`set queue batch acl_users = "a@b,c@d", resources_max.walltime=01:00:00`},
			sent: []string{"+2+1+9{U}+2+1+5batch+2" + "2+322+13resources_max+1+8walltime+801:00:00+0" +
				"2+18+9acl_users+0+7a@b,c@d+0" + "+0", disconnect}},
		{name: "every queue of a server", argv: []string{"qmgr", "-c", "list queue @vm"},
			sent: []string{disconnect, "+2+12+20{U}+0+0+0", disconnect}},
		// "@active" stands for every active server: here the default one.
		{name: "queue at the active servers", argv: []string{"qmgr", "-c", "set queue batch@active enabled=true"},
			sent: []string{"+2+1+9{U}+2+1+5batch+12+13+7enabled+0+4true+0+0", disconnect}},
		{name: "list queue", argv: []string{"qmgr", "-c", "list queue batch"}, env: []string{"TZ=UTC"},
			replies: []*batchreq.Reply{statusReply(batch)},
			sent:    []string{"+2+12+20{U}+5batch+0+0", disconnect},
			stdout: "Queue batch\n\tqueue_type = Execution\n\ttotal_jobs = 0\n\tmtime = Sun Nov 22 01:18:22 2026\n" +
				"\tresources_default.walltime = 01:00:00\n\tacl_users = alice@vm,bob@vm\n\tenabled = True\n\tstarted = True\n\n"},
		{name: "list folds at 80", argv: []string{"qmgr", "-c", "list node vm"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_NODE, "vm",
				"status=rectime=1795310414,varattr=,jobs=,state=free,netload=52172429,gres=,loadave=0.69,ncpus=2,"+
					"physmem=24731708kb,availmem=24501544kb,totmem=24731708kb,idletime=223587,nusers=0,nsessions=? 15201"))},
			stdout: "Node vm\n\tstatus = rectime=1795310414,varattr=,jobs=,state=free,netload=52172429,\n" +
				"                 gres=,loadave=0.69,ncpus=2,physmem=24731708kb,\n" +
				"                 availmem=24501544kb,totmem=24731708kb,idletime=223587,nusers=0,\n" +
				"                 nsessions=? 15201\n\n"},
		{name: "print queue", argv: []string{"qmgr", "-c", "print queue batch"},
			replies: []*batchreq.Reply{statusReply(batch)},
			stdout: "#\n# Create queues and set their attributes.\n#\n#\n# Create and define queue batch\n#\ncreate queue batch\n" +
				"set queue batch queue_type = Execution\nset queue batch resources_default.walltime = 01:00:00\n" +
				"set queue batch acl_users = alice@vm\nset queue batch acl_users += bob@vm\n" +
				"set queue batch enabled = True\nset queue batch started = True\n"},
		{name: "print server sends StatusQue then StatusSvr", argv: []string{"qmgr", "-c", "print server"},
			replies: []*batchreq.Reply{statusReply(), statusReply(obj(batchreq.MGR_OBJ_SERVER, "vm", "scheduling=True", "total_jobs=3"))},
			sent:    []string{"+2+12+20{U}+0+0+0", "+2+12+21{U}+0+0+0", disconnect},
			stdout: "#\n# Create queues and set their attributes.\n#\n#\n# Set server attributes.\n#\n" +
				"set server scheduling = True\n"},
		{name: "server error", argv: []string{"qmgr", "-c", "list queue nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue MSG=cannot locate queue")},
			stderr:  "qmgr obj=nosuch svr=default: Unknown queue MSG=cannot locate queue\n"},
		{name: "server error aborts", argv: []string{"qmgr", "-a", "-c", "list queue nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue MSG=cannot locate queue")},
			stderr:  "qmgr obj=nosuch svr=default: Unknown queue MSG=cannot locate queue\n", exit: 2},
		{name: "error without text", argv: []string{"qmgr", "-c", "set server scheduling=true"},
			replies: []*batchreq.Reply{errReply(15007)},
			stderr:  "qmgr: Error (15007 - Unauthorized Request ) returned from server\n"},
		{name: "quiet", argv: []string{"qmgr", "-z", "-c", "list queue nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue")}},
		{name: "illegal operation", argv: []string{"qmgr", "-c", "bogus"}, sent: []string{disconnect},
			stderr: "qmgr: Illegal operation: bogus\nTry 'help' if you are having trouble.\n"},
		{name: "illegal operation aborts", argv: []string{"qmgr", "-a", "-c", "bogus"}, sent: []string{disconnect},
			stderr: "qmgr: Illegal operation: bogus\nTry 'help' if you are having trouble.\n", exit: 1},
		{name: "no object", argv: []string{"qmgr", "-c", "list"}, stderr: "qmgr: No object type given\n"},
		{name: "illegal object", argv: []string{"qmgr", "-c", "list job"}, stderr: "qmgr: Illegal object type: job.\n"},
		{name: "unknown attribute", argv: []string{"qmgr", "-c", "set server bogusattr=1"}, sent: []string{disconnect},
			stderr: "qmgr: Syntax error - cannot locate attribute\nset server bogusattr=1\n                    ^\n"},
		{name: "attribute required", argv: []string{"qmgr", "-c", "set queue batch"},
			stderr: "qmgr: Syntax error - attribute required for operation\nset queue batch\n               ^\n"},
		{name: "value required", argv: []string{"qmgr", "-c", "set queue batch enabled"},
			stderr: "qmgr: syntax error - checklist failed\nset queue batch enabled\n                       ^\n"},
		{name: "no active queues", argv: []string{"qmgr", "-c", "set queue started=false"},
			stdout: "No Active Queues, nothing done.\n"},
		{name: "active queues", argv: []string{"qmgr", "-c", "active queue batch; set queue started=false; active queue"},
			replies: []*batchreq.Reply{statusReply(batch)},
			sent: []string{"+2+12+20{U}+5batch+12+122+10queue_type+0+0+0+0",
				"+2+1+9{U}+2+1+5batch+12+14+7started+0+5false+0+0", disconnect},
			stdout: "Active queues:\nbatch@default\n"},
		{name: "active queue missing", argv: []string{"qmgr", "-a", "-c", "active queue nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue")},
			stderr:  "Queue does not exist: nosuch.\n", exit: 4},
		{name: "syntax check only", argv: []string{"qmgr", "-n", "-c", "set server scheduling=true"}, sent: []string{}},
		{name: "echo", argv: []string{"qmgr", "-e", "-c", "set server scheduling=true"},
			stdout: "set server scheduling=true\n"},
		{name: "commands on stdin", argv: []string{"qmgr"}, stdin: "set server scheduling=true\nquit\nset server scheduling=false\n",
			sent:   []string{"+2+1+9{U}+2+0+0+12+162+10scheduling+0+4true+0+0", disconnect},
			stdout: "Max open servers: 10239\nset server scheduling=true\nquit\n"},
		{name: "comma word taken for server names", argv: []string{"qmgr", "-c", "list server scheduling,log_events"},
			stderr: "qmgr: Protocol error, server disconnected\n", exit: 1},
		{name: "cannot connect", argv: []string{"qmgr", "-c", "list server"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"},
			sent: []string{},
			stderr: "Cannot connect to default server host 'vm' - check pbs_server daemon.\n" +
				"qmgr: cannot connect to server  (errno=111) Connection refused\n", exit: 3},
		{name: "named server down falls back to the default", argv: []string{"qmgr", "-a", "-c", "list server vm2:1"},
			sent: []string{disconnect, "+2+12+21{U}+0+0+0", disconnect}},
		{name: "help topic", argv: []string{"qmgr", "-c", "help operators"}, sent: []string{disconnect},
			stdout: "Operators: = sets a value, += adds to it, -= removes from it.\n"},
		{name: "help", argv: []string{"qmgr", "-c", "h"}, sent: []string{disconnect},
			check: func(t *testing.T, stdout, stderr string) {
				if !strings.Contains(stdout, "Help topics: active create delete set unset list print quit exit operators names "+
					"values attributes serverpublic serverro queuepublic queueexec queueroute queuero nodeattr\n") || stderr != "" {
					t.Errorf("stdout %q stderr %q", stdout, stderr)
				}
			}},
		{name: "continued line", argv: []string{"qmgr"}, stdin: "set server \\\nscheduling=true\n",
			sent:   []string{"+2+1+9{U}+2+0+0+12+162+10scheduling+0+4true+0+0", disconnect},
			stdout: "Max open servers: 10239\nset server scheduling=true\n"},
		{name: "usage", argv: []string{"qmgr", "-x"}, sent: []string{},
			stderr: "{B}/qmgr: invalid option -- 'x'\nUsage: {B}/qmgr [-a] [-c command] [-e] [-n] [-z] [server...]\n", exit: 1},
	})
}
