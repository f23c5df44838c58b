package clitest

import (
	"strings"
	"testing"

	"gopbs/batchreq"
)

const (
	statJobsAll  = "+2+12+19{U}+0+0+12+16summarize_arrays"
	statServer   = "+2+12+21{U}+0+0+0"
	jobHeader    = "Job ID                    Name             User            Time Use S Queue\n------------------------- ---------------- --------------- -------- - -----\n"
	altHeader    = "\nvm: \n                                                                                  Req'd    Req'd       Elap\nJob ID                  Username    Queue    Jobname          SessID  NDS   TSK   Memory   Time    S   Time\n----------------------- ----------- -------- ---------------- ------ ----- ------ ------ --------- - ---------\n"
	qstatUsage   = "usage: \nqstat [-f [-1]] [-W site_specific] [-x] [ job_identifier... | destination... ]\nqstat [-a|-i|-r|-e] [-u user] [-n [-1]] [-s] [-G|-M] [-R] [job_id... | destination...]\nqstat -Q [-f [-1]] [-W site_specific] [ destination... ]\nqstat -q [-G|-M] [ destination... ]\nqstat -B [-f [-1]] [-W site_specific] [ server_name... ]\nqstat -t\n"
	conflictLine = "qstat: conflicting options.\n"
)

func queuedJob() batchreq.StatusObject {
	return obj(batchreq.MGR_OBJ_JOB, "1.vm", "Job_Name=sleep20.sh", "Job_Owner=alice@vm", "job_state=Q", "queue=batch",
		"ctime=1795310482", "Resource_List.nodect=1", "Resource_List.nodes=1", "Resource_List.walltime=01:00:00")
}

func runningJob() batchreq.StatusObject {
	return obj(batchreq.MGR_OBJ_JOB, "9.vm", "Job_Name=abcdefghijklmnopqrstuvwxyz0123", "Job_Owner=alice@vm",
		"resources_used.cput=00:00:01", "job_state=R", "queue=batch", "exec_host=vm.example.com/0+vm.example.com/1",
		"session_id=16978", "comment=started <now> & running", "Resource_List.mem=100mb", "Resource_List.nodect=1",
		"Resource_List.nodes=1:ppn=2", "Resource_List.walltime=01:00:00", "Walltime.Remaining=3589")
}

func TestQstat(t *testing.T) {
	server := statusReply(obj(batchreq.MGR_OBJ_SERVER, "vm"))
	runCases(t, []testCase{
		{name: "no jobs", argv: []string{"qstat"}, sent: []string{statJobsAll, disconnect}},
		{name: "default display", argv: []string{"qstat"},
			replies: []*batchreq.Reply{statusReply(queuedJob(), runningJob())},
			stdout: jobHeader +
				"1.vm                       sleep20.sh       alice                  0 Q batch          \n" +
				"9.vm                       ...rstuvwxyz0123 alice           00:00:01 R batch          \n"},
		{name: "long ids", argv: []string{"qstat", "-l"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_JOB, "12.srv.example.com", "Job_Name=x", "job_state=Q"))},
			stdout:  jobHeader + "12.srv.example.com         x                                       0 Q                \n"},
		{name: "short ids", argv: []string{"qstat"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_JOB, "12.srv.example.com", "Job_Name=x", "job_state=Q"))},
			stdout:  jobHeader + "12.srv                     x                                       0 Q                \n"},
		{name: "arrays", argv: []string{"qstat", "-t"}, sent: []string{"+2+12+19{U}+0+0+0", disconnect}},
		{name: "exec queues", argv: []string{"qstat", "-e", "short"},
			sent: []string{"+2+12+51{U}+12+182+11destination+0+5short+4+12+15exec_queue_only", disconnect}},
		// The destination criteria accumulate across operands (TORQUE's
		// quirk): the second SelStat asks for jobs in both queues, and an
		// "@server" operand after them still carries both.
		{name: "criteria accumulate", argv: []string{"qstat", "short", "batch", "@vm"},
			sent: []string{
				"+2+12+51{U}+12+182+11destination+0+5short+4+12+16summarize_arrays", disconnect,
				"+2+12+51{U}+22+182+11destination+0+5batch+42+182+11destination+0+5short+4+12+16summarize_arrays", disconnect,
				"+2+12+51{U}+22+182+11destination+0+5batch+42+182+11destination+0+5short+4+12+16summarize_arrays", disconnect,
			}},
		{name: "own extension", argv: []string{"qstat", "-E", "xyz"}, sent: []string{"+2+12+19{U}+0+0+1+3xyz", disconnect}},
		{name: "job", argv: []string{"qstat", "-f", "2"},
			sent: []string{"+2+12+19{U}+42.vm+0+12+16summarize_arrays", disconnect}},
		{name: "full", argv: []string{"qstat", "-f", "1.vm"}, env: []string{"TZ=UTC"},
			replies: []*batchreq.Reply{statusReply(queuedJob())},
			stdout: "Job Id: 1.vm\n    Job_Name = sleep20.sh\n    Job_Owner = alice@vm\n    job_state = Q\n    queue = batch\n" +
				"    ctime = Sun Nov 22 01:21:22 2026\n    Resource_List.nodect = 1\n    Resource_List.nodes = 1\n" +
				"    Resource_List.walltime = 01:00:00\n\n"},
		{name: "xml", argv: []string{"qstat", "-x", "9.vm"},
			replies: []*batchreq.Reply{statusReply(runningJob())},
			stdout: "<Data><Job><Job_Id>9.vm</Job_Id><Job_Name>abcdefghijklmnopqrstuvwxyz0123</Job_Name>" +
				"<Job_Owner>alice@vm</Job_Owner><resources_used><cput>00:00:01</cput></resources_used>" +
				"<job_state>R</job_state><queue>batch</queue><exec_host>vm.example.com/0+vm.example.com/1</exec_host>" +
				"<session_id>16978</session_id><comment>started &lt;now&gt; &amp; running</comment>" +
				"<Resource_List><mem>100mb</mem><nodect>1</nodect><nodes>1:ppn=2</nodes><walltime>01:00:00</walltime></Resource_List>" +
				"<Walltime><Remaining>3589</Remaining></Walltime></Job></Data>\n"},
		{name: "alternate", argv: []string{"qstat", "-a"},
			replies: []*batchreq.Reply{server, statusReply(queuedJob(), runningJob())},
			sent:    []string{statServer, statJobsAll, disconnect},
			stdout: altHeader +
				"1.vm                    alice       batch    sleep20.sh          --      1      1    --   01:00:00 Q       -- \n" +
				"9.vm                    alice       batch    abcdefghijklmnop  16978     1      2  100mb  01:00:00 R  00:00:11\n"},
		{name: "nodes and comments", argv: []string{"qstat", "-n", "-s", "1.vm", "9.vm"},
			replies: []*batchreq.Reply{server, statusReply(queuedJob()), statusReply(runningJob())},
			sent: []string{statServer, "+2+12+19{U}+41.vm+0+12+16summarize_arrays", disconnect,
				"+2+12+19{U}+49.vm+0+12+16summarize_arrays", disconnect},
			stdout: altHeader +
				"1.vm                    alice       batch    sleep20.sh          --      1      1    --   01:00:00 Q       -- \n" +
				"    -- \n    -- \n" +
				"9.vm                    alice       batch    abcdefghijklmnop  16978     1      2  100mb  01:00:00 R  00:00:11\n" +
				"   vm+vm\n   started <now> & running\n"},
		{name: "one line", argv: []string{"qstat", "-n", "-1", "-G"},
			replies: []*batchreq.Reply{server, statusReply(runningJob())},
			stdout: altHeader +
				"9.vm                    alice       batch    abcdefghijklmnop  16978     1      2    1gb  01:00:00 R  00:00:11   vm+vm\n"},
		// -M shows memory in megawords (8-byte words), rounded up:
		// 100mb = 13107200 words = 12.5 mw -> 13mw.
		{name: "megawords", argv: []string{"qstat", "-M"},
			replies: []*batchreq.Reply{server, statusReply(runningJob())},
			stdout: altHeader +
				"9.vm                    alice       batch    abcdefghijklmnop  16978     1      2   13mw  01:00:00 R  00:00:11\n"},
		// -u with a destination: SelStat on both criteria, destination
		// first; the header's StatusSvr once.
		{name: "user and destination", argv: []string{"qstat", "-u", "alice", "short"},
			sent: []string{statServer, "+2+12+51{U}+2" + "2+182+11destination+0+5short+4" + "2+16+9User_List+0+5alice+4" +
				"+12+16summarize_arrays", disconnect}},
		// "@server" without criteria: StatusJob of every job at that
		// server.
		{name: "server operand", argv: []string{"qstat", "@vm2:{P}"},
			sent: []string{statJobsAll, disconnect}},
		{name: "queues full", argv: []string{"qstat", "-Qf", "batch"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_QUEUE, "batch", "queue_type=Execution", "mtime=1795310302",
				"acl_users="+strings.Repeat("user@host,", 8)+"last@host"))},
			sent: []string{"+2+12+20{U}+5batch+0+0", disconnect},
			stdout: "Queue: batch\n    queue_type = Execution\n    mtime = 1795310302\n" +
				"    acl_users = user@host,user@host,user@host,user@host,user@host,user@host,\n" +
				"\tuser@host,user@host,last@host\n\n"},
		{name: "full on one line", argv: []string{"qstat", "-f", "-1", "-Q", "batch"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_QUEUE, "batch",
				"acl_users="+strings.Repeat("user@host,", 8)+"last@host"))},
			stdout: "Queue: batch\n    acl_users = " + strings.Repeat("user@host,", 8) + "last@host\n\n"},
		{name: "resources", argv: []string{"qstat", "-R"},
			replies: []*batchreq.Reply{server, statusReply(runningJob())},
			stdout: "\nvm: \n" +
				"                                                           Req'd     Req'd        Elap\n" +
				"Job ID                  Username    Queue      NDS    TSK Memory      Time S      Time   BIG  FAST   PFS\n" +
				"----------------------- ----------- -------- ----- ------ ------ --------- - --------- ----- ----- -----\n" +
				"9.vm                    alice       batch        1      2  100mb  01:00:00 R  00:00:11   --    --    -- \n"},
		{name: "user", argv: []string{"qstat", "-u", "alice"},
			sent: []string{statServer, "+2+12+51{U}+12+16+9User_List+0+5alice+4+12+16summarize_arrays", disconnect}},
		{name: "running", argv: []string{"qstat", "-r"},
			sent: []string{statServer, "+2+12+51{U}+12+13+9job_state+0+2RS+4+12+16summarize_arrays", disconnect}},
		{name: "idle", argv: []string{"qstat", "-i"},
			sent: []string{statServer, "+2+12+51{U}+12+16+9job_state+0+5EHQTW+4+12+16summarize_arrays", disconnect}},
		{name: "queues", argv: []string{"qstat", "-Q"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_QUEUE, "batch", "queue_type=Execution", "total_jobs=1",
				"state_count=Transit:0 Queued:1 Held:0 Waiting:0 Running:0 Exiting:0", "enabled=True", "started=False"))},
			sent: []string{"+2+12+20{U}+0+0+0", disconnect},
			stdout: "Queue              Max   Tot   Ena   Str   Que   Run   Hld   Wat   Trn   Ext T         \n" +
				"----------------   ---   ---   ---   ---   ---   ---   ---   ---   ---   --- -         \n" +
				"batch                0     1   yes    no     1     0     0     0     0     0 E         \n"},
		{name: "illegal queue destination", argv: []string{"qstat", "-Q", "bad queue", "batch"},
			replies: []*batchreq.Reply{statusReply()},
			sent:    []string{"+2+12+20{U}+5batch+0+0", disconnect},
			stderr:  "qstat: illegal 'destination' value\n", exit: 1},
		{name: "illegal job destination", argv: []string{"qstat", "bad queue"}, sent: []string{},
			stderr: "qstat: illegally formed destination: bad queue\n", exit: 1},
		{name: "unknown queue", argv: []string{"qstat", "-Q", "nosuchq"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue MSG=cannot locate queue")},
			stderr:  "qstat: Unknown queue MSG=cannot locate queue nosuchq\n", exit: 172},
		{name: "server", argv: []string{"qstat", "-B"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_SERVER, "vm", "server_state=Active", "total_jobs=1",
				"state_count=Transit:0 Queued:1 Held:0 Waiting:0 Running:0 Exiting:0"))},
			sent: []string{statServer, disconnect},
			stdout: "Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status    \n" +
				"----------------   ---   ---   ---   ---   ---   ---   ---   --- ----------\n" +
				"vm                   0     1     1     0     0     0     0     0 Active    \n"},
		{name: "server full", argv: []string{"qstat", "-Bf"},
			replies: []*batchreq.Reply{statusReply(obj(batchreq.MGR_OBJ_SERVER, "vm", "server_state=Active", "mtime=1795310302"))},
			stdout:  "Server: vm\n    server_state = Active\n    mtime = 1795310302\n\n"},
		{name: "queue summary", argv: []string{"qstat", "-q"},
			replies: []*batchreq.Reply{statusReply(
				obj(batchreq.MGR_OBJ_QUEUE, "batch", "state_count=Transit:0 Queued:1 Held:0 Waiting:0 Running:2 Exiting:0",
					"enabled=True", "started=True"),
				obj(batchreq.MGR_OBJ_QUEUE, "short", "state_count=Transit:0 Queued:0 Held:1 Waiting:0 Running:0 Exiting:0",
					"resources_max.walltime=00:10:00", "max_running=4", "enabled=False", "started=True"))},
			stdout: "\nserver: vm\n\nQueue            Memory CPU Time Walltime Node  Run Que Lm  State\n" +
				"---------------- ------ -------- -------- ----  --- --- --  -----\n" +
				"batch              --      --       --      --    2   1 --   E R\n" +
				"short              --      --    00:10:00   --    0   1  4   D R\n" +
				"                                               ----- -----\n" +
				"                                                   2     2\n"},
		{name: "unknown job", argv: []string{"qstat", "9999.vm"},
			replies: []*batchreq.Reply{textReply(15001, "Unknown Job Id"), textReply(15001, "Unknown Job Id")},
			stderr:  "qstat: Unknown Job Id 9999.vm\n", exit: 153},
		{name: "unknown destination", argv: []string{"qstat", "-x", "nosuch"},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue")},
			stderr:  "qstat: Unknown queue destination nosuch\n", exit: 172},
		{name: "bad job id", argv: []string{"qstat", "12.vm@"}, sent: []string{},
			stderr: "qstat: illegally formed job identifier: 12.vm@\n", exit: 1},
		{name: "f after a", argv: []string{"qstat", "-a", "-f"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "f before a", argv: []string{"qstat", "-f", "-a"},
			replies: []*batchreq.Reply{server, statusReply(queuedJob())},
			check: func(t *testing.T, stdout, stderr string) {
				if !strings.HasPrefix(stdout, altHeader) {
					t.Errorf("stdout %q, want the -a display", stdout)
				}
			}},
		{name: "one without n or f", argv: []string{"qstat", "-1"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "M and G", argv: []string{"qstat", "-M", "-G"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "B and Q", argv: []string{"qstat", "-B", "-Q"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "q and f", argv: []string{"qstat", "-q", "-f"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "Q and B", argv: []string{"qstat", "-Q", "-B"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "alternate then Q", argv: []string{"qstat", "-a", "-Q"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "Q then alternate", argv: []string{"qstat", "-Q", "-u", "alice"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "B and alternate", argv: []string{"qstat", "-B", "-n"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "i and r", argv: []string{"qstat", "-i", "-r"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "a and q", argv: []string{"qstat", "-a", "-q"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "f after s", argv: []string{"qstat", "-s", "-f"}, sent: []string{}, stderr: conflictLine + qstatUsage, exit: 2},
		{name: "missing argument", argv: []string{"qstat", "-u"}, sent: []string{},
			stderr: "{B}/qstat: option requires an argument -- 'u'\n" + qstatUsage, exit: 2},
		{name: "unknown option", argv: []string{"qstat", "-Z"}, sent: []string{},
			stderr: "{B}/qstat: invalid option -- 'Z'\n" + qstatUsage, exit: 2},
		{name: "version", argv: []string{"qstat", "--version"}, sent: []string{}, stderr: "version: 2.5.13\n"},
		{name: "unresolvable server", argv: []string{"qstat", "-B", "bad..host"}, sent: []string{},
			stderr: "qstat: Error (15033 - Batch protocol error) getting status of server bad..host\n", exit: 185},
	})
}

// TestQstatReservation: qstat -f prints the reservation attributes of
// look-ahead scheduling (seed 004) as TORQUE's qstat prints any attribute
// it does not know: name = value, in the order the server sends them.
func TestQstatReservation(t *testing.T) {
	job := obj(batchreq.MGR_OBJ_JOB, "12.vm", "Job_Name=big", "Job_Owner=alice@vm", "job_state=Q", "queue=batch",
		"Resource_List.nodect=2",
		"Resource_List.nodes=2:ppn=8", "Resource_List.walltime=04:00:00", "reserve=y",
		"estimated_start_time=1795363200", "estimated_exec_host=n01:ppn=8+n02:ppn=8")
	runCases(t, []testCase{
		{name: "full with a plan", argv: []string{"qstat", "-f", "12.vm"}, env: []string{"TZ=UTC"},
			replies: []*batchreq.Reply{statusReply(job)},
			stdout: "Job Id: 12.vm\n    Job_Name = big\n    Job_Owner = alice@vm\n    job_state = Q\n    queue = batch\n" +
				"    Resource_List.nodect = 2\n    Resource_List.nodes = 2:ppn=8\n    Resource_List.walltime = 04:00:00\n" +
				"    reserve = y\n    estimated_start_time = 1795363200\n    estimated_exec_host = n01:ppn=8+n02:ppn=8\n\n"},
	})
}
