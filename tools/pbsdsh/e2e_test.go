package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/testcluster"
	"gopbs/mom/jobexec"
)

// The end-to-end test runs pbs_server and two pbs_mom processes, "nodea"
// on 127.0.0.2 and "nodeb" on 127.0.0.3 (a private /etc/hosts in a mount
// namespace of their own; each MOM bound to its address with
// GOPBS_MOM_ADDR, the same ports), and multi-node jobs that run pbsdsh:
// the mother superior joins the sister over IM, pbsdsh spawns a task on
// every virtual node over TM, the sister's output reaches the job's output
// file through the mother superior's demultiplexer, and qdel kills the
// tasks on both hosts.

const mnUser = "gopbsmntest"

func TestMain(m *testing.M) {
	jobexec.RunStarterIfRequested()
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// userProcs returns the live processes of uid, as "pid command line".
func userProcs(uid int) []string {
	var out []string
	for _, p := range e2e.Processes(uid) {
		out = append(out, p.String())
	}
	return out
}

func TestMultiNodeEndToEnd(t *testing.T) {
	tc := testcluster.New(t, testcluster.Options{
		Programs: []string{"pbsdsh"},
		Nodes:    map[string]string{"nodea": "127.0.0.2", "nodeb": "127.0.0.3"},
		// $exec_with_exec: the login shell execs the job script, so the
		// script's own shell is the job's top process. A job is
		// signalled in every process of its session, and the login
		// shell, which runs the script as a child otherwise, would die
		// of the SIGUSR1 below, ending the job (its tasks killed before
		// they answer) whatever the script traps.
		MomConfig: "$status_update_time 2\n$check_poll_time 1\n$exec_with_exec true\n",
		MomEnvironment: func(node string) string {
			return "PATH=/usr/bin:/bin\nPBS_MOMHOST=" + node + "\n"
		},
	})
	u := e2e.User(t, mnUser)
	u.MakeHome(t)
	uid := u.UID
	outDir := filepath.Join(tc.Base, "out")
	os.MkdirAll(outDir, 0o777)
	os.Chown(outDir, u.UID, u.GID)
	tc.StartServer("create")
	c := tc.Conn
	c.Timeout = 10 * time.Second
	tc.DefaultQueue("batch")
	tc.CreateNodes(1, "nodea", "nodeb")
	momHome := map[string]string{}
	for _, node := range []string{"nodea", "nodeb"} {
		momHome[node] = tc.StartMom(node).Home
	}
	tc.WaitReported("nodea", "nodeb")
	status := func(typ int, id string) map[string]string { return c.Status(typ, id) }

	pbsdsh := tc.Programs.Path("pbsdsh")
	submit := func(name, nodes, script string) string {
		t.Helper()
		list := batchreq.AttrList{
			batchreq.NewAttr("Job_Name", name), batchreq.NewAttr("Job_Owner", mnUser+"@localhost"),
			batchreq.NewAttr("Checkpoint", "u"), batchreq.NewAttr("Join_Path", "n"), batchreq.NewAttr("Keep_Files", "n"),
			batchreq.NewAttr("Output_Path", "localhost:"+filepath.Join(outDir, name+".out")),
			batchreq.NewAttr("Error_Path", "localhost:"+filepath.Join(outDir, name+".err")),
			batchreq.NewResourceAttr("Resource_List", "nodes", nodes),
			batchreq.NewAttr("Variable_List", "PBS_O_HOME="+outDir+",PBS_O_WORKDIR="+outDir+",PBS_O_HOST=localhost"),
		}
		id := c.Submit(list, script)
		c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
		return id
	}
	gone := func(id string) func() bool {
		return func() bool { return status(batchreq.PBS_BATCH_StatusJob, id) == nil }
	}

	// nodes=2 and nodes=a:ppn=1+b:ppn=1: one task per virtual node, the
	// sister's output in the job's output file.
	script := "#!/bin/sh\necho top on $PBS_MOMHOST\ncat $PBS_NODEFILE\n" + pbsdsh +
		" -v /bin/sh -c 'echo task $PBS_TASKNUM vnode $PBS_VNODENUM node $PBS_NODENUM on $PBS_MOMHOST as $USER'\necho pbsdsh exit $?\n"
	for _, tc := range []struct{ name, nodes string }{{"two", "2"}, {"pair", "nodea:ppn=1+nodeb:ppn=1"}} {
		id := submit(tc.name, tc.nodes, script)
		var execHost string
		e2e.WaitFor(t, "job "+id+" to run", 20*time.Second, func() bool {
			execHost = status(batchreq.PBS_BATCH_StatusJob, id)["exec_host"]
			return execHost != "" || status(batchreq.PBS_BATCH_StatusJob, id) == nil
		})
		e2e.WaitFor(t, "job "+id+" to finish", 40*time.Second, gone(id))
		out, err := os.ReadFile(filepath.Join(outDir, tc.name+".out"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		hostsOf := strings.Split(execHost, "+")
		if len(hostsOf) != 2 {
			t.Fatalf("%s: exec_host %q", tc.name, execHost)
		}
		ms, sister := strings.Split(hostsOf[0], "/")[0], strings.Split(hostsOf[1], "/")[0]
		if tc.nodes != "2" && (ms != "nodea" || sister != "nodeb") {
			t.Errorf("%s: exec_host %q", tc.name, execHost)
		}
		text := string(out)
		t.Logf("%s exec_host %s output:\n%s", tc.name, execHost, text)
		for _, want := range []string{
			"top on " + ms + "\n", ms + "\n" + sister + "\n",
			"vnode 0 node 0 on " + ms + " as " + mnUser + "\n",
			"vnode 1 node 1 on " + sister + " as " + mnUser + "\n",
			"pbsdsh exit 0\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s (exec_host %s): output lacks %q:\n%s", tc.name, execHost, want, text)
			}
		}
		if errText, _ := os.ReadFile(filepath.Join(outDir, tc.name+".err")); !strings.Contains(string(errText), "exit status 0") {
			t.Errorf("%s: stderr %q", tc.name, errText)
		}
	}

	// TM from a task on the sister: pbsdsh started there by pbsdsh asks
	// the sister's MOM, which relays to the mother superior (task ids,
	// the task on node 0) and starts its own task itself.
	inner := pbsdsh + " -v /bin/sh -c \"echo nested task \\$PBS_TASKNUM on \\$PBS_MOMHOST\"; echo inner exit $? on $PBS_MOMHOST"
	id := submit("nested", "nodea:ppn=1+nodeb:ppn=1", "#!/bin/sh\n"+pbsdsh+" -n 1 /bin/sh -c '"+inner+"'\necho outer exit $?\n")
	e2e.WaitFor(t, "job "+id+" to finish", 40*time.Second, gone(id))
	out, err := os.ReadFile(filepath.Join(outDir, "nested.out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"on nodea\n", "on nodeb\n", "inner exit 0 on nodeb\n", "outer exit 0\n"} {
		if !strings.Contains(string(out), want) {
			errText, _ := os.ReadFile(filepath.Join(outDir, "nested.err"))
			t.Errorf("nested: output lacks %q:\n%s\nstderr:\n%s", want, out, errText)
		}
	}
	if n := strings.Count(string(out), "nested task "); n != 2 {
		t.Errorf("nested: %d nested tasks ran, want 2:\n%s", n, out)
	}

	// A signal to a running multi-node job (qsig) reaches the tasks on
	// both hosts: the sister's through IM_SIGNAL_TASK.
	// The job's top shell ignores the signal and outlives the tasks
	// (which exit on it, and then pbsdsh) until the test has seen both
	// tasks' answers in the job's output; the job then ends normally
	// (Exit_status=0, not 256+SIGUSR1).
	sigDone := filepath.Join(outDir, "sigdone")
	sigScript := "#!/bin/sh\ntrap '' USR1\n" + pbsdsh +
		" /bin/sh -c 'trap \"echo task got usr1 on $PBS_MOMHOST; exit 0\" USR1; echo started on $PBS_MOMHOST; while :; do sleep 1; done' &\n" +
		"while [ ! -e " + sigDone + " ]; do sleep 0.2; done\n"
	id = submit("sig", "nodea:ppn=1+nodeb:ppn=1", sigScript)
	spool := filepath.Join(momHome["nodea"], "spool")
	e2e.WaitFor(t, "tasks of "+id+" on both hosts", 20*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(spool, id+".OU"))
		return strings.Contains(string(b), "started on nodea") && strings.Contains(string(b), "started on nodeb")
	})
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: "SIGUSR1"}))
	e2e.WaitFor(t, "both tasks of "+id+" to answer the signal", 20*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(spool, id+".OU"))
		return strings.Contains(string(b), "task got usr1 on nodea") && strings.Contains(string(b), "task got usr1 on nodeb")
	})
	e2e.WriteFile(t, sigDone, "")
	e2e.WaitFor(t, "job "+id+" to end", 40*time.Second, gone(id))
	if rec := accountingRecord(tc.ServerHome, "E", id); !strings.Contains(rec, " Exit_status=0 ") {
		t.Errorf("sig: the job did not end normally after the signal: %q", rec)
	}
	out, _ = os.ReadFile(filepath.Join(outDir, "sig.out"))
	for _, want := range []string{"task got usr1 on nodea\n", "task got usr1 on nodeb\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("sig: output lacks %q:\n%s", want, out)
		}
	}
	waitNoProcs(t, id, uid)

	// qdel of a running multi-node job kills the tasks on both hosts and
	// the sister forgets the job.
	id = submit("long", "nodea:ppn=1+nodeb:ppn=1", "#!/bin/sh\n"+pbsdsh+" /bin/sh -c 'echo started on $PBS_MOMHOST; exec sleep 300'\n")
	e2e.WaitFor(t, "tasks of "+id+" on both hosts", 20*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(spool, id+".OU"))
		return strings.Contains(string(b), "started on nodea") && strings.Contains(string(b), "started on nodeb")
	})
	if n := len(userProcs(uid)); n < 3 {
		t.Errorf("expected the shell, pbsdsh and two tasks running, found %d: %q", n, userProcs(uid))
	}
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}))
	e2e.WaitFor(t, "job "+id+" to be deleted", 40*time.Second, gone(id))
	e2e.WaitFor(t, "the job's processes to be gone", 20*time.Second, func() bool { return len(userProcs(uid)) == 0 })
	for node, home := range momHome {
		left, _ := filepath.Glob(filepath.Join(home, "mom_priv", "jobs", id+"*"))
		aux, _ := filepath.Glob(filepath.Join(home, "aux", id+"*"))
		if len(left)+len(aux) > 0 {
			t.Errorf("%s: files of %s left: %q %q", node, id, left, aux)
		}
	}

	// A mother superior restarted with -p while the job runs takes it
	// back: the sister listed the job in its jobs= status and kept it on
	// disk (job and task files), the tasks on both hosts are re-attached,
	// a signal still reaches the sister's task, and the job's end kills
	// it there.
	gofile := filepath.Join(outDir, "go")
	t.Cleanup(func() {
		// Whatever happened, the job's processes must not outlive the
		// test: they belong to the test's own user.
		os.WriteFile(gofile, nil, 0o644)
		for _, p := range userProcs(uid) {
			if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	// The tasks' output connections to the demultiplexer die with the
	// mother superior's process: after the start line, nothing more is
	// written there (the shell would report the killed sleep on stderr).
	task := "trap \"touch " + outDir + "/usr1.$PBS_MOMHOST\" USR1; echo started on $PBS_MOMHOST; exec >/dev/null 2>&1; while :; do sleep 1; done"
	id = submit("restart", "nodea:ppn=1+nodeb:ppn=1", "#!/bin/sh\ntrap '' USR1\n"+pbsdsh+" /bin/sh -c '"+task+
		"' &\nwhile [ ! -e "+gofile+" ]; do sleep 0.2; done\n")
	e2e.WaitFor(t, "tasks of "+id+" on both hosts", 20*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(spool, id+".OU"))
		return strings.Contains(string(b), "started on nodea") && strings.Contains(string(b), "started on nodeb")
	})
	e2e.WaitFor(t, "nodeb to list "+id+" in jobs=", 20*time.Second, func() bool {
		return strings.Contains(status(batchreq.PBS_BATCH_StatusNode, "nodeb")["status"], "jobs="+id)
	})
	for _, suffix := range []string{".JB", ".TK"} {
		if _, err := os.Stat(filepath.Join(momHome["nodeb"], "mom_priv", "jobs", id+suffix)); err != nil {
			t.Errorf("sister's %s file: %v", suffix, err)
		}
	}
	// sisterSignalled sends the job SIGUSR1 and reports whether the
	// sister's task has marked it.
	sisterSignalled := func() bool {
		c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: "SIGUSR1"}))
		time.Sleep(time.Second)
		_, err := os.Stat(filepath.Join(outDir, "usr1.nodeb"))
		return err == nil
	}
	tc.Mom("nodea").Daemon.Stop()
	tc.StartMom("nodea", "-p")
	e2e.WaitFor(t, "a signal to reach the sister's task after the restart", 30*time.Second, sisterSignalled)
	if _, err := os.Stat(filepath.Join(outDir, "usr1.nodea")); err != nil {
		t.Errorf("the mother superior's re-attached task got no signal: %v", err)
	}
	// The sister restarted with -p takes its part back: the mother
	// superior, its polls unanswered on the old stream, reaches it on a
	// new one, and a signal gets to the task there again.
	os.Remove(filepath.Join(outDir, "usr1.nodeb"))
	tc.Mom("nodeb").Daemon.Stop()
	tc.StartMom("nodeb", "-p")
	e2e.WaitFor(t, "a signal to reach the task of the restarted sister", 40*time.Second, sisterSignalled)
	e2e.WriteFile(t, gofile, "")
	e2e.WaitFor(t, "job "+id+" to end", 40*time.Second, gone(id))
	waitNoProcs(t, id, uid)
	for node, home := range momHome {
		left, _ := filepath.Glob(filepath.Join(home, "mom_priv", "jobs", id+"*"))
		if len(left) > 0 {
			t.Errorf("%s: files of %s left: %q", node, id, left)
		}
	}
}

// waitNoProcs waits for the job user's processes to be gone; it reports
// those left.
func waitNoProcs(t *testing.T, id string, uid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if len(userProcs(uid)) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("processes of %s left: %q", id, userProcs(uid))
}

// accountingRecord returns the server's accounting record of type typ for
// job id, "" if none.
func accountingRecord(serverHome, typ, id string) string {
	files, _ := filepath.Glob(filepath.Join(serverHome, "server_priv", "accounting", "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, ";"+typ+";"+id+";") {
				return line
			}
		}
	}
	return ""
}
