package clitest

import (
	"bytes"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// qsubCase is a qsub command line and what it must submit: the
// QueueJob destination and attributes ("name[.resource]=value"; "{W}"
// stands for the working directory, "{L}" for the login name) and the
// script, or the lines it must print instead.
type qsubCase struct {
	name   string
	argv   []string
	stdin  string
	env    []string
	cfg    string
	files  map[string]string
	dest   string
	attrs  []string // nil: no submission expected
	script string
	// variables, if set, replaces the expected Variable_List value.
	variables string
	replies   []*batchreq.Reply
	stdout    string
	stderr    string
	exit      int
	// requests, if set, are the request lines expected after the
	// submission sequence (e.g. the interactive call-back).
	requests    []string
	minDuration time.Duration
}

// defaultVariables is the Variable_List qsub sends in the test
// environment (spec 04 §5.2).
const defaultVariables = "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
	"PBS_SERVER=vm,PBS_O_WORKDIR={W}"

const sleepScript = "#!/bin/sh\nsleep 20\n"

// defaultsTail are the default attributes qsub appends when no option set
// them, then init_work_dir.
var defaultsTail = []string{"Checkpoint=u", "Hold_Types=n", "Join_Path=n", "Keep_Files=n", "Mail_Points=a",
	"Priority=0", "Rerunable=TRUE", "fault_tolerant=FALSE", "init_work_dir={W}"}

func with(head []string, tail ...string) []string {
	return append(append([]string{}, head...), tail...)
}

func TestQsub(t *testing.T) {
	login := loginName(t)
	primary := ""
	if g, err := user.LookupGroupId(strconv.Itoa(os.Getgid())); err == nil {
		primary = g.Name
	}
	cases := []qsubCase{
		{name: "script", argv: []string{"qsub", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"submit_args=job.sh", "Job_Name=job.sh"}, defaultsTail...), script: sleepScript,
			stdout: "1.vm\n"},
		{name: "stdin", argv: []string{"qsub"}, stdin: "echo hi\r\n",
			attrs: with([]string{"Job_Name=STDIN"}, defaultsTail...), script: "echo hi\n", stdout: "1.vm\n"},
		{name: "command-line order", argv: []string{"qsub", "-r", "n", "-p", "3", "-N", "verifA", "-h", "-m", "n", "-j", "oe", "-z", "job.sh"},
			files: map[string]string{"job.sh": sleepScript},
			attrs: []string{"Rerunable=n", "Priority=3", "Job_Name=verifA", "Hold_Types=u", "Mail_Points=n", "Join_Path=oe",
				"submit_args=-r n -p 3 -N verifA -h -m n -j oe -z job.sh", "Checkpoint=u", "Keep_Files=n",
				"fault_tolerant=FALSE", "init_work_dir={W}"},
			script: sleepScript},
		{name: "directives", argv: []string{"qsub", "-h", "-p", "1", "-q", "batch", "d.sh"},
			files: map[string]string{"d.sh": "#!/bin/sh\n#PBS -N dirname\n#PBS -l walltime=00:02:00\n#PBS -m n\n#PBS -p 7\necho\n#PBS -N late\n"},
			dest:  "batch",
			attrs: []string{"Hold_Types=u", "Priority=1", "submit_args=-h -p 1 -q batch d.sh", "Job_Name=d.sh", "Job_Name=dirname",
				"Resource_List.walltime=00:02:00", "Mail_Points=n", "Checkpoint=u", "Join_Path=n", "Keep_Files=n",
				"Rerunable=TRUE", "fault_tolerant=FALSE", "init_work_dir={W}"},
			script: "#!/bin/sh\n#PBS -N dirname\n#PBS -l walltime=00:02:00\n#PBS -m n\n#PBS -p 7\necho\n#PBS -N late\n",
			stdout: "1.vm\n"},
		{name: "directive prefix", argv: []string{"qsub", "-C", "#X", "d.sh"},
			files:  map[string]string{"d.sh": "#PBS -N ignored\n#X -N named\n"},
			attrs:  with([]string{"submit_args=-C #X d.sh", "Job_Name=d.sh", "Job_Name=named"}, defaultsTail...),
			script: "#PBS -N ignored\n#X -N named\n", stdout: "1.vm\n"},
		{name: "directives disabled", argv: []string{"qsub", "-C", "", "d.sh"},
			files:  map[string]string{"d.sh": "#PBS -N ignored\n"},
			attrs:  with([]string{"submit_args=-C  d.sh", "Job_Name=d.sh"}, defaultsTail...),
			script: "#PBS -N ignored\n", stdout: "1.vm\n"},
		{name: "continued directive and CRLF", argv: []string{"qsub", "d.sh"},
			files: map[string]string{"d.sh": "#!/bin/sh\r\n#PBS -m \\\r\n  ae\r\n  #PBS -N indented\r\nsleep 1\r\n"},
			attrs: []string{"submit_args=d.sh", "Job_Name=d.sh", "Mail_Points=ae", "Job_Name=indented", "Checkpoint=u",
				"Hold_Types=n", "Join_Path=n", "Keep_Files=n", "Priority=0", "Rerunable=TRUE", "fault_tolerant=FALSE",
				"init_work_dir={W}"},
			script: "#!/bin/sh\n#PBS -m \\\n  ae\n  #PBS -N indented\nsleep 1\n", stdout: "1.vm\n"},
		{name: "PBS_DPREFIX", argv: []string{"qsub"}, env: []string{"PBS_DPREFIX=#MY"}, stdin: "#MY -N viaprefix\n#PBS -N not\n",
			attrs:  with([]string{"Job_Name=STDIN", "Job_Name=viaprefix"}, defaultsTail...),
			script: "#MY -N viaprefix\n#PBS -N not\n", stdout: "1.vm\n"},
		{name: "values", argv: []string{"qsub", "-t", "0-3", "-a", "202611220321", "-o", "/tmp/x.out", "-e", "err", "-W", "umask=022",
			"-l", "nodes=1:ppn=1,mem=100mb", "-v", "FOO=bar", "job.sh"},
			env: []string{"TZ=UTC"}, cfg: "QSUBHOST vm\n", files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"job_array_request=0-3", "Execution_Time=1795317660", "Output_Path=vm:/tmp/x.out",
				"Error_Path=vm:{W}/err", "umask=18", "Resource_List.nodes=1:ppn=1", "Resource_List.mem=100mb",
				"submit_args=-t 0-3 -a 202611220321 -o /tmp/x.out -e err -W umask=022 -l nodes=1:ppn=1,mem=100mb -v FOO=bar job.sh",
				"Job_Name=job.sh"}, defaultsTail...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh,PBS_O_TZ=UTC," +
				"PBS_SERVER=vm,PBS_O_WORKDIR={W},FOO=bar",
			script: sleepScript, stdout: "1.vm\n"},
		// -W (spec 05 §2.2): depend ids expanded, fault_tolerant as
		// TRUE/FALSE, other keys sent as attributes of that name (Priority
		// too, and the default Priority=0 still follows), a word without
		// "=" as x=<word>.
		{name: "W attributes", argv: []string{"qsub", "-W", "depend=afterok:3:4.VM,stageout=/tmp/o@vm2:/o",
			"-W", "fault_tolerant=n", "-W", "interactive=true", "-W", "Priority=2000", "-W", "bare", "job.sh"},
			files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"depend=afterok:3.vm:4.vm", "stageout=/tmp/o@vm2:/o", "fault_tolerant=FALSE",
				"interactive=true", "Priority=2000", "x=bare",
				"submit_args=-W depend=afterok:3:4.VM,stageout=/tmp/o@vm2:/o -W fault_tolerant=n -W interactive=true -W Priority=2000 -W bare job.sh",
				"Job_Name=job.sh"}, defaultsTail...),
			script: sleepScript, stdout: "1.vm\n"},
		// qsub's -l rewrites (spec 04 §9): a walltime range, procs inside
		// a nodes spec; a quoted value keeps its comma.
		{name: "resource rewrites", argv: []string{"qsub", "-l", `walltime=00:30:00-01:00:00,nodes=1:procs=2,other="a,b"`, "job.sh"},
			files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"Resource_List.minwclimit=00:30:00", "Resource_List.walltime=01:00:00",
				"Resource_List.nodes=1", "Resource_List.procs=2", `Resource_List.other="a,b"`,
				`submit_args=-l walltime=00:30:00-01:00:00,nodes=1:procs=2,other="a,b" job.sh`,
				"Job_Name=job.sh"}, defaultsTail...),
			script: sleepScript, stdout: "1.vm\n"},
		{name: "bad umask", argv: []string{"qsub", "-W", "umask=abc", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -W value\n" + qsubUsage, exit: 2},
		{name: "more options", argv: []string{"qsub", "-A", "acct", "-c", "enabled,interval=5", "-D", "/r", "-f", "-F", "a b",
			"-J", "7", "-k", "oe", "-M", "alice@vm", "-P", "bob:staff", "-S", "/bin/bash", "-T", "typ", "-u", "alice",
			"-w", "/w", "job.sh"},
			files: map[string]string{"job.sh": sleepScript},
			attrs: []string{"Account_Name=acct", "Checkpoint=enabled,interval=5", "fault_tolerant=TRUE", "job_arguments=a b",
				"job_id=7", "Keep_Files=oe", "Mail_Users=alice@vm", "proxy_user=bob", "group_list=staff",
				"Shell_Path_List=/bin/bash", "jobtype=typ", "User_List=alice", "init_work_dir=/w",
				"submit_args=-A acct -c enabled,interval=5 -D /r -f -F a b -J 7 -k oe -M alice@vm -P bob:staff -S /bin/bash -T typ -u alice -w /w job.sh",
				"Job_Name=job.sh", "Hold_Types=n", "Join_Path=n", "Mail_Points=a", "Priority=0", "Rerunable=TRUE"},
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_ROOTDIR=/r,PBS_O_WORKDIR=/w",
			script: sleepScript, stdout: "1.vm\n"},
		{name: "bad checkpoint", argv: []string{"qsub", "-c", "sometimes", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -c value\n" + qsubUsage, exit: 2},
		{name: "nodes with procs", argv: []string{"qsub", "-l", "nodes=2,procs=4", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -l value\n" + qsubUsage, exit: 2},
		{name: "bad rerunable", argv: []string{"qsub", "-r", "x", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -r value\n" + qsubUsage, exit: 2},
		{name: "bad name", argv: []string{"qsub", "-N", "a b", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -N value\n" + qsubUsage, exit: 2},
		{name: "name with a control character", argv: []string{"qsub", "-N", "a\x01b", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -N value\n" + qsubUsage, exit: 2},
		{name: "name too long", argv: []string{"qsub", "-N", strings.Repeat("n", 257), "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -N value\n" + qsubUsage, exit: 2},
		{name: "bad mail points", argv: []string{"qsub", "-m", "abx", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -m value\n" + qsubUsage, exit: 2},
		{name: "bad join", argv: []string{"qsub", "-j", "x", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -j value\n" + qsubUsage, exit: 2},
		{name: "bad keep", argv: []string{"qsub", "-k", "x", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -k value\n" + qsubUsage, exit: 2},
		{name: "relative shell", argv: []string{"qsub", "-S", "bash", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -S value\n" + qsubUsage, exit: 2},
		{name: "shell host twice", argv: []string{"qsub", "-S", "/bin/sh@a,/bin/bash@a", "job.sh"},
			files: map[string]string{"job.sh": sleepScript}, stderr: "qsub: illegal -S value\n" + qsubUsage, exit: 2},
		{name: "binary script", argv: []string{"qsub", "bin.sh"}, files: map[string]string{"bin.sh": "\x7fELF\x02\x01"},
			stderr: "qsub: file must be an ascii script\n", exit: 1},
		{name: "bad directive", argv: []string{"qsub", "d.sh"}, files: map[string]string{"d.sh": "#PBS -p 99999\n"},
			stderr: "qsub: illegal -p value\n", exit: 1},
		{name: "X11", argv: []string{"qsub", "-X", "job.sh"}, env: []string{"DISPLAY=localhost:10.2"},
			cfg: "XAUTHPATH {W}/xauth\n",
			files: map[string]string{"job.sh": sleepScript,
				"xauth": "#!/bin/sh\necho \"vm/unix:10  MIT-MAGIC-COOKIE-1  0123abcd\"\n"},
			attrs: with([]string{"submit_args=-X job.sh", "forward_x11=MIT-MAGIC-COOKIE-1:0123abcd:2", "Job_Name=job.sh"},
				defaultsTail...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_WORKDIR={W}",
			script: sleepScript, stdout: "1.vm\n"},
		{name: "X11 without DISPLAY", argv: []string{"qsub", "-X", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: DISPLAY not set\n", exit: 1},
		{name: "interactive", argv: []string{"qsub", "-I"}, env: []string{"TERM=vt100"},
			attrs:    with([]string{"interactive=*", "submit_args=-I", "Job_Name=STDIN"}, defaultsTail...),
			requests: []string{"interactive TERM=vt100 WINSIZE 24,80,0,0"},
			stdout:   "qsub: waiting for job 1.vm to start\nqsub: job 1.vm ready\n\njob output\n\nqsub: job 1.vm completed\n"},
		{name: "interactive by directive", argv: []string{"qsub", "i.sh"}, env: []string{"TERM=vt100"},
			files:    map[string]string{"i.sh": "#PBS -I\n#PBS -N inter\n"},
			attrs:    with([]string{"submit_args=i.sh", "Job_Name=i.sh", "interactive=*", "Job_Name=inter"}, defaultsTail...),
			script:   "#PBS -I\n#PBS -N inter\n",
			requests: []string{"interactive TERM=vt100 WINSIZE 24,80,0,0"},
			stdout:   "qsub: waiting for job 1.vm to start\nqsub: job 1.vm ready\n\njob output\n\nqsub: job 1.vm completed\n"},
		{name: "interactive command", argv: []string{"qsub", "-I", "-x", "/bin/hostname"}, env: []string{"TERM=vt100"},
			attrs: with([]string{"interactive=*", "submit_args=-I -x /bin/hostname", "Job_Name=hostname",
				"inter_cmd=/bin/hostname"}, defaultsTail...),
			requests: []string{"interactive TERM=vt100 WINSIZE 24,80,0,0"},
			stdout:   "qsub: waiting for job 1.vm to start\nqsub: job 1.vm ready\n\njob output\n\nqsub: job 1.vm completed\n"},
		{name: "torque.cfg defaults", argv: []string{"qsub", "job.sh"},
			cfg:   "# site settings\nDEFAULTCKPT shutdown\nRERUNNABLEBYDEFAULT false\nFAULT_TOLERANT_BY_DEFAULT true\nQSUBSENDUID true\n",
			files: map[string]string{"job.sh": sleepScript},
			attrs: []string{"submit_args=job.sh", "Job_Name=job.sh", "Checkpoint=shutdown", "Hold_Types=n", "Join_Path=n",
				"Keep_Files=n", "Mail_Points=a", "Priority=0", "Rerunable=FALSE", "fault_tolerant=TRUE", "init_work_dir={W}"},
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_UID=" + strconv.Itoa(os.Getuid()) + ",PBS_O_WORKDIR={W}",
			script: sleepScript, stdout: "1.vm\n"},
		{name: "QSUBSENDGROUPLIST", argv: []string{"qsub", "job.sh"}, cfg: "QSUBSENDGROUPLIST true\n",
			files:  map[string]string{"job.sh": sleepScript},
			attrs:  with([]string{"group_list=" + primary + "," + primary, "submit_args=job.sh", "Job_Name=job.sh"}, defaultsTail...),
			script: sleepScript, stdout: "1.vm\n"},
		{name: "SERVERHOST", argv: []string{"qsub", "job.sh"}, cfg: "SERVERHOST vm2\n",
			files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"submit_args=job.sh", "Job_Name=job.sh"}, defaultsTail...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm2,PBS_O_WORKDIR={W}",
			script: sleepScript, stdout: "1.vm\n"},
		{name: "VALIDATEPATH", argv: []string{"qsub", "-d", "/nonexistent", "job.sh"},
			files: map[string]string{"job.sh": sleepScript}, stderr: "qsub: illegal -d value\n" + qsubUsage, exit: 2},
		{name: "VALIDATEPATH false", argv: []string{"qsub", "-d", "/nonexistent", "job.sh"}, cfg: "VALIDATEPATH false\n",
			files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"init_work_dir=/nonexistent", "submit_args=-d /nonexistent job.sh", "Job_Name=job.sh"},
				defaultsTail[:len(defaultsTail)-1]...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_INITDIR=/nonexistent,PBS_O_WORKDIR={W}",
			script: sleepScript, stdout: "1.vm\n"},
		// -d is made absolute and replaces the trailing init_work_dir
		// (the server keeps the last value of an attribute, so a trailing
		// $PWD would undo it); PBS_O_INITDIR carries it too.
		{name: "relative -d", argv: []string{"qsub", "-d", ".", "job.sh"},
			files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"init_work_dir={W}", "submit_args=-d . job.sh", "Job_Name=job.sh"},
				defaultsTail[:len(defaultsTail)-1]...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_INITDIR={W},PBS_O_WORKDIR={W}",
			script: sleepScript, stdout: "1.vm\n"},
		{name: "-d by directive", argv: []string{"qsub", "job.sh"},
			files: map[string]string{"job.sh": "#!/bin/sh\n#PBS -d /\nsleep 20\n"},
			attrs: with([]string{"submit_args=job.sh", "Job_Name=job.sh", "init_work_dir=/"},
				defaultsTail[:len(defaultsTail)-1]...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_INITDIR=/,PBS_O_WORKDIR={W}",
			script: "#!/bin/sh\n#PBS -d /\nsleep 20\n", stdout: "1.vm\n"},
		{name: "-w", argv: []string{"qsub", "-w", "/", "job.sh"},
			files: map[string]string{"job.sh": sleepScript},
			attrs: with([]string{"init_work_dir=/", "submit_args=-w / job.sh", "Job_Name=job.sh"},
				defaultsTail[:len(defaultsTail)-1]...),
			variables: "PBS_O_HOME={W},PBS_O_LOGNAME={L},PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh," +
				"PBS_SERVER=vm,PBS_O_WORKDIR=/",
			script: sleepScript, stdout: "1.vm\n"},
		{name: "VALIDATEGROUP", argv: []string{"qsub", "-W", "group_list=gopbs-no-such-group", "job.sh"},
			cfg: "VALIDATEGROUP true\n", files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: user " + login + " is not a member of group gopbs-no-such-group\n", exit: 1},
		{name: "QSUBSLEEP", argv: []string{"qsub", "job.sh"}, cfg: "QSUBSLEEP 1\n",
			files:  map[string]string{"job.sh": sleepScript},
			attrs:  with([]string{"submit_args=job.sh", "Job_Name=job.sh"}, defaultsTail...),
			script: sleepScript, stdout: "1.vm\n", minDuration: time.Second},
		{name: "submit filter", argv: []string{"qsub", "-p", "2", "job.sh"}, cfg: "SUBMITFILTER {W}/filter\n",
			files: map[string]string{"job.sh": sleepScript,
				"filter": "#!/bin/sh\necho \"#PBS -N filtered\"\necho \"# args: $*\"\ncat\n"},
			attrs: []string{"Priority=2", "submit_args=-p 2 job.sh", "Job_Name=job.sh", "Job_Name=filtered",
				"Checkpoint=u", "Hold_Types=n", "Join_Path=n", "Keep_Files=n", "Mail_Points=a", "Rerunable=TRUE",
				"fault_tolerant=FALSE", "init_work_dir={W}"},
			script: "#PBS -N filtered\n# args: -p 2 job.sh\n" + sleepScript, stdout: "1.vm\n"},
		{name: "submit filter rejects", argv: []string{"qsub", "job.sh"}, cfg: "SUBMITFILTER {W}/filter\n",
			files: map[string]string{"job.sh": sleepScript, "filter": "#!/bin/sh\necho 'no jobs today' >&2\nexit 255\n"},
			stderr: "no jobs today\nqsub: Your job has been administratively rejected by the queueing system.\n" +
				"qsub: There may be a more detailed explanation prior to this notice.\n", exit: 1},
		{name: "submit filter fails", argv: []string{"qsub", "job.sh"}, cfg: "SUBMITFILTER {W}/filter\n",
			files:  map[string]string{"job.sh": sleepScript, "filter": "#!/bin/sh\nexit 3\n"},
			stderr: "qsub: submit filter returned an error code, aborting job submission.\n", exit: 1},
		{name: "refused", argv: []string{"qsub", "-q", "nosuch", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			replies: []*batchreq.Reply{textReply(15020, "Unknown queue MSG=cannot locate queue")},
			dest:    "nosuch", attrs: with([]string{"submit_args=-q nosuch job.sh", "Job_Name=job.sh"}, defaultsTail...),
			stderr: "qsub: Unknown queue MSG=cannot locate queue\n", exit: 172},
		{name: "retry", argv: []string{"qsub", "-b", "1", "job.sh"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"},
			files: map[string]string{"job.sh": sleepScript},
			stderr: "Retrying for 1 seconds\nCannot connect to default server host 'vm' - check pbs_server daemon.\n" +
				"qsub: cannot connect to server vm (errno=111) Connection refused\n",
			exit: 111, minDuration: time.Second},
		{name: "retry from environment", argv: []string{"qsub", "job.sh"},
			env: []string{"PBS_BATCH_SERVICE_PORT=1", "PBS_CLIENTRETRY=1"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "Retrying for 1 seconds\nCannot connect to default server host 'vm' - check pbs_server daemon.\n" +
				"qsub: cannot connect to server vm (errno=111) Connection refused\n",
			exit: 111, minDuration: time.Second},
		{name: "bad priority", argv: []string{"qsub", "-p", "5000", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "qsub: illegal -p value\n" + qsubUsage, exit: 2},
		{name: "unknown option", argv: []string{"qsub", "-Y", "job.sh"}, files: map[string]string{"job.sh": sleepScript},
			stderr: "{B}/qsub: invalid option -- 'Y'\n" + qsubUsage, exit: 2},
		{name: "two scripts", argv: []string{"qsub", "a.sh", "b.sh"}, stderr: qsubUsage, exit: 2},
		{name: "missing script", argv: []string{"qsub", "none.sh"},
			stderr: "qsub: script file:: No such file or directory\n", exit: 1},
	}
	for _, qc := range cases {
		t.Run(qc.name, func(t *testing.T) {
			tc := testCase{argv: qc.argv, stdin: qc.stdin, env: qc.env, cfg: qc.cfg, files: qc.files, replies: qc.replies}
			got := tc.run(t)
			work := got.work
			expand := func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(s, "{W}", work), "{L}", login), "{B}", got.bin)
			}
			if got.stdout != expand(qc.stdout) {
				t.Errorf("stdout %q, want %q", got.stdout, expand(qc.stdout))
			}
			if got.stderr != expand(qc.stderr) {
				t.Errorf("stderr %q, want %q", got.stderr, expand(qc.stderr))
			}
			if got.exit != qc.exit {
				t.Errorf("exit status %d, want %d", got.exit, qc.exit)
			}
			if got.elapsed < qc.minDuration {
				t.Errorf("took %v, want at least %v", got.elapsed, qc.minDuration)
			}
			if qc.attrs == nil {
				if len(got.sent) != 0 {
					t.Errorf("sent %q, want nothing", got.sent)
				}
				return
			}
			wantAttrs := []string{}
			for _, a := range qc.attrs {
				wantAttrs = append(wantAttrs, expand(a))
			}
			vars := defaultVariables
			if qc.variables != "" {
				vars = qc.variables
			}
			wantAttrs = append(wantAttrs, "Variable_List="+expand(vars))
			checkSubmission(t, got.sent, qc.dest, wantAttrs, qc.script, qc.exit == 0, qc.requests)
		})
	}
}

// checkSubmission decodes the requests of a qsub run and compares them
// with the submission sequence of spec 05 §2.1.
func checkSubmission(t *testing.T, sent []string, dest string, attrs []string, script string, complete bool, after []string) {
	t.Helper()
	var reqs []*batchreq.Request
	var others []string
	for _, raw := range sent {
		req, err := batchreq.ReadRequest(dis.NewReader(strings.NewReader(raw)))
		if err != nil {
			others = append(others, raw)
			continue
		}
		reqs = append(reqs, req)
	}
	if len(reqs) == 0 {
		t.Fatalf("no request sent")
	}
	qj, ok := reqs[0].Body.(*batchreq.QueueJob)
	if !ok {
		t.Fatalf("first request %+v, want QueueJob", reqs[0])
	}
	if qj.JobID != "" || qj.Destination != dest || reqs[0].HasExtension {
		t.Errorf("QueueJob id %q destination %q extension %v, want \"\" %q none", qj.JobID, qj.Destination, reqs[0].HasExtension, dest)
	}
	var got []string
	for _, a := range qj.Attrs {
		s := a.Name
		if a.HasResource {
			s += "." + a.Resource
		}
		if a.Op != batchreq.SET {
			s += " op " + strconv.Itoa(a.Op)
		}
		got = append(got, s+"="+a.Value)
	}
	for i, w := range attrs {
		if i < len(got) && strings.HasSuffix(w, "=*") && strings.HasPrefix(got[i], strings.TrimSuffix(w, "*")) {
			attrs[i] = got[i]
		}
	}
	if strings.Join(got, "\n") != strings.Join(attrs, "\n") {
		t.Errorf("attributes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(attrs, "\n"))
	}
	if !complete {
		return
	}
	var types []int
	var data []byte
	for _, r := range reqs[1:] {
		types = append(types, r.Type)
		if jf, ok := r.Body.(*batchreq.JobFile); ok {
			data = append(data, jf.Data...)
		}
	}
	wantTypes := []int{batchreq.PBS_BATCH_RdytoCommit, batchreq.PBS_BATCH_Commit, batchreq.PBS_BATCH_Disconnect}
	if script != "" {
		wantTypes = append([]int{batchreq.PBS_BATCH_jobscript}, wantTypes...)
	}
	if !equalInts(types, wantTypes) {
		t.Errorf("request types after QueueJob %v, want %v", types, wantTypes)
	}
	if !bytes.Equal(data, []byte(script)) {
		t.Errorf("script %q, want %q", data, script)
	}
	if strings.Join(others, "\n") != strings.Join(after, "\n") {
		t.Errorf("other records %q, want %q", others, after)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const qsubUsage = `usage: qsub [-a date_time] [-A account_string] [-b secs]
      [-c [ none | { enabled | periodic | shutdown |
      depth=<int> | dir=<path> | interval=<minutes>}... ]
      [-C directive_prefix] [-d path] [-D path]
      [-e path] [-h] [-I] [-j oe] [-k {oe}] [-l resource_list] [-m n|{abe}]
      [-M user_list] [-N jobname] [-o path] [-p priority] [-P proxy_user] [-q queue] 
      [-r y|n] [-S path] [-t number_to_submit] [-T type]  [-u user_list] [-w] path
      [-W otherattributes=value...] [-v variable_list] [-V] [-x] [-X] [-z] [script]
`
