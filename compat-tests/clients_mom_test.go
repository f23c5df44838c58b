package compattests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/capture"
	"gopbs/internal/e2e"
	"gopbs/mom/procfs"
)

// momScenarioRun is a round-2 scenario that TestClientsAgainstServerWithMom
// runs on real daemons (pbs_server, pbs_mom for node vm, pbs_sched).
type momScenarioRun struct {
	id int
	// nextJob, when not zero, is the next_job_number set before the
	// scenario (the number its first submission took in the capture).
	nextJob int
	// running, when set, is a job the capture run submitted outside the
	// captured scenarios and that ran when the scenario started: it is
	// submitted (before the next_job_number is set) and waited for.
	running *outsideJob
	// completed names a job that the capture showed completed before the
	// next scenario: the test waits for its state C.
	completed string
	// files are written to alice's home before the scenario, as the
	// capture run had them (name: content).
	files map[string]string
	// deleteJob names a job still running that had ended in the capture
	// before the scenario: it is deleted and waited for.
	deleteJob string
	// mom2 starts node vm2's MOM (on 127.0.0.2) before the scenario's
	// pbsnodes ("start"), or stops it before the scenario ("stop").
	mom2 string
	// ended names a job that had left the server (keep_completed 0)
	// before the capture's next scenario: the test waits for that.
	ended string
}

// outsideJob is a submission the capture run made between scenarios.
type outsideJob struct {
	number int      // the job number it took
	argv   []string // the qsub command line, run as alice
	script int      // the scenario whose capture holds the job script
	// command is the program the job script runs (its process name),
	// waited for before the scenario.
	command string
}

// userRuns reports whether a process of user uid named command exists.
func userRuns(uid int, command string) bool {
	procs, _ := procfs.Default.All()
	for _, p := range procs {
		if p.UID == uid && p.Comm == command {
			return true
		}
	}
	return false
}

// momPhase is one run of the capture cluster: a fresh pbs_server (with
// its MOM and scheduler) and the scenarios run against it.
type momPhase struct {
	name  string
	setup func() []*batchreq.Request // manager requests before the MOM starts
	late  []*batchreq.Request        // manager requests once the scheduler listens
	steps []momScenarioRun
	// qterm: the phase's last command stops pbs_server; the test waits
	// for that and stops the MOM and the scheduler.
	qterm bool
}

// momPhases are the client scenarios that need jobs run on a MOM under
// the scheduler. Round 1's scheduler scenarios (71-76): scheduling
// switched on, jobs run by the scheduler, qterm -t quick. Round 2 (a new
// server, scheduling on): the interactive job of qsub -I (81),
// keep_completed (89-93), the
// submissions of the staging, prologue, limit and memory scenarios
// (94-98), each run to its end, the signals and hold of a running job
// (99-101) and the multi-node scenarios with a second MOM vm2 (104-107).
var momPhases = []momPhase{
	{
		name: "round1-scheduler",
		setup: func() []*batchreq.Request {
			return clusterSetup([]string{"short", "route", "batch"}, setServer("scheduling", "false"))
		},
		steps: []momScenarioRun{
			{id: 71}, {id: 72, nextJob: 12}, {id: 73}, {id: 74}, {id: 76},
		},
		qterm: true,
	},
	{
		name:  "round2-mom",
		setup: func() []*batchreq.Request { s, _ := round2(); return s },
		late:  []*batchreq.Request{setServer("scheduling", "true")},
		steps: []momScenarioRun{
			// qsub -I, run on a terminal; the job's shell exits
			// when the typed line has run.
			{id: 81, nextJob: 9, ended: "9." + captureHost},
			{id: 89, nextJob: 28, completed: "28." + captureHost},
			{id: 90}, {id: 91}, {id: 92}, {id: 93},
			{id: 94, nextJob: 29, ended: "29." + captureHost, files: map[string]string{"in.txt": "stage-in data\n"}},
			{id: 95, ended: "30." + captureHost},
			{id: 96, ended: "31." + captureHost},
			{id: 97, ended: "32." + captureHost},
			{id: 98, ended: "33." + captureHost},
			{id: 99, running: &outsideJob{number: 36, argv: []string{"qsub", "-N", "sigjob", "sleep120.sh"}, script: 96, command: "sleep"}},
			{id: 100}, {id: 101},
			// multi-node (capture: vm2 in a network namespace; here
			// its MOM listens on 127.0.0.2). The commands' output is
			// compared; jobs 39 (vm2 mother superior) and 41 run to
			// their end.
			{id: 104, deleteJob: "36." + captureHost, mom2: "start"},
			{id: 105, nextJob: 39, ended: "39." + captureHost},
			{id: 106, nextJob: 41, ended: "41." + captureHost},
			{id: 107, mom2: "stop"},
		},
	},
}

// runsWithMom reports whether TestClientsAgainstServerWithMom runs scenario
// id.
func runsWithMom(id int) bool {
	for _, p := range momPhases {
		for _, m := range p.steps {
			if m.id == id {
				return true
			}
		}
	}
	return false
}

// TestClientsAgainstServerWithMom runs the client commands of the
// round-2 scenarios that need running jobs against GoPBS daemons set up
// like the capture cluster: pbs_server, pbs_mom for node vm (np=2) and
// pbs_sched with scheduling on, all in the capture namespace. The job
// scripts are the captured ones; stdout, stderr and exit status are
// compared with the manifest after normalising dates, session ids and
// the times that depend on when the job ran.
func TestClientsAgainstServerWithMom(t *testing.T) {
	dir := requireCaptures(t)
	ns := newCaptureNamespace(t)
	// node vm2 of the multi-node scenarios is 127.0.0.2
	ns.hosts = filepath.Join(t.TempDir(), "hosts")
	e2e.WriteFile(t, ns.hosts, "127.0.0.1\t"+captureHost+" localhost\n127.0.0.2\t"+captureHost+"2\n")
	_, byID := readManifest(t, dir)
	norm := standardNormalizer().
		add(`(session_id = )\d+`, "${1}<SID>").
		add(`(<session_id>)\d+(</session_id>)`, "${1}<SID>${2}").
		// sleep 3 takes 3 s of walltime, 4 s on a loaded machine.
		add(`(resources_used\.walltime = |<resources_used>.*<walltime>)00:00:0[34]\b`, "${1}00:00:03").
		// A job's memory is sampled by the MOM's poll after a status
		// report (45 s apart); whether one falls within the 3 s of a
		// sleep 3 is chance (capture 91: none did, 0kb; under make
		// test-foreign at load 30 one did, 7340kb). The kb are this
		// machine's anyway.
		add(`(resources_used\.v?mem = )\d+kb`, "${1}<KB>").
		add(`(<v?mem>)\d+kb(</v?mem>)`, "${1}<KB>${2}").
		add(`(Walltime\.Remaining = )\d+`, "${1}<SECONDS>").
		// node status values of this machine, not of the capture host
		add(`\b(netload|loadave|ncpus|physmem|availmem|totmem|idletime|nusers|nsessions|sessions|uname)=[^,\n]*`, "${1}=<V>").
		add(`(Job started on )\w{3} \w{3} [ \d]\d at \d\d:\d\d`, "${1}<DAY AND TIME>")

	for _, phase := range momPhases {
		cl := startMomCluster(t, ns, phase.setup(), phase.late)
		c := cl.client
		bin, built := buildClientsFor(t, cl.port)
		for _, m := range phase.steps {
			sc, ok := byID[m.id]
			if !ok {
				continue
			}
			if len(m.files) > 0 {
				uid, gid := ensureUser(t, "alice")
				h := ns.home(t, "alice", uid, gid)
				for name, text := range m.files {
					p := filepath.Join(h, name)
					e2e.WriteFile(t, p, text)
					if err := os.Chown(p, uid, gid); err != nil {
						t.Fatal(err)
					}
				}
			}
			if m.deleteJob != "" {
				c.must(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: m.deleteJob})
				e2e.WaitFor(t, "job "+m.deleteJob+" to end", 30*time.Second, func() bool { return c.jobGone(m.deleteJob) })
			}
			if m.mom2 == "stop" && cl.mom2 != nil {
				cl.mom2.Stop()
			}
			if m.nextJob > 0 {
				c.setNextJob(m.nextJob)
			}
			if j := m.running; j != nil {
				c.setNextJob(j.number)
				id := fmt.Sprintf("%d.%s", j.number, captureHost)
				run := clientRun{user: "alice", argv: j.argv, stdout: id + "\n", which: -1}
				if d := runAgainstServer(t, ns, dir, byID[j.script], run, filepath.Join(bin, "qsub"), norm); d != "" {
					t.Fatalf("submitting %s: %s", id, d)
				}
				e2e.WaitFor(t, "job "+id+" to run", 30*time.Second, func() bool { return c.jobState(id) == "R" })
				// The capture's job had been running for a while: wait
				// until its script has started its command, so that a
				// suspend does not find the job still starting.
				uid, _ := ensureUser(t, "alice")
				e2e.WaitFor(t, "job "+id+"'s "+j.command, 30*time.Second, func() bool { return userRuns(uid, j.command) })
			}
			for _, run := range scenarioRuns(sc) {
				name := filepath.Base(run.argv[0])
				if m.mom2 == "start" && name == "pbsnodes" && cl.mom2 == nil {
					cl.startMom2(t, ns)
				}
				label := capLabel(sc.ID, run)
				results.run(t, "clients-server", label, pendingFor(sc.ID, run.which), func(t *testing.T) string {
					if !built[name] {
						t.Skipf("%s is not implemented yet", name)
					}
					if interactive(run.argv) {
						return runOnTerminal(t, ns, dir, sc, run, filepath.Join(bin, name))
					}
					return runAgainstServer(t, ns, dir, sc, run, filepath.Join(bin, name), norm)
				})
			}
			if m.completed != "" {
				e2e.WaitFor(t, "job "+m.completed+" to complete", 30*time.Second, func() bool {
					return c.jobState(m.completed) == "C"
				})
			}
			if m.ended != "" {
				e2e.WaitFor(t, "job "+m.ended+" to end", 60*time.Second, func() bool { return c.jobGone(m.ended) })
			}
		}
		if phase.qterm {
			e2e.WaitFor(t, "pbs_server to stop after qterm", 30*time.Second, func() bool { return !cl.server.Alive() })
			cl.mom.Stop()
			cl.sched.Stop()
		}
	}
}

// interactive reports whether a command line is an interactive
// submission (qsub -I).
func interactive(argv []string) bool {
	if filepath.Base(argv[0]) != "qsub" {
		return false
	}
	for _, a := range argv[1:] {
		if a == "-I" {
			return true
		}
	}
	return false
}

// Terminal of the interactive scenario (capture 81), and how long its
// steps may take.
const (
	termRows, termCols = 24, 80
	termPromptWait     = 30 * time.Second // for the job's shell to show its prompt
	termSessionWait    = 60 * time.Second // for the whole session
)

// runOnTerminal runs an interactive scenario command (qsub -I) as the
// capture did: as the scenario's user, on a pseudo-terminal of 24x80
// that is its controlling terminal. Once qsub says the job is ready and
// the job's shell has shown its first output (the prompt), the
// scenario's stdin is typed; the transcript (stdout and stderr merged,
// as the terminal shows them) is read until qsub exits and compared with
// the manifest's stdout, unnormalised, and the exit status with its exit
// code.
func runOnTerminal(t *testing.T, ns *captureNamespace, dir string, sc *capture.Scenario, run clientRun, path string) string {
	t.Helper()
	_, _, cmd := userCommand(t, ns, dir, sc, run, path, run.argv[1:])
	term, err := e2e.OpenTerminal(termRows, termCols)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	term.Attach(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.CloseSlave()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	const ready = " ready\r\n\r\n"
	if _, err := term.WaitOutput(termPromptWait, func(s string) bool {
		i := strings.Index(s, ready)
		return i >= 0 && len(s) > i+len(ready)
	}); err != nil {
		t.Logf("typing without a prompt: %v", err)
	}
	if err := term.Type(run.stdin); err != nil {
		t.Logf("%v", err)
	}
	transcript, err := term.WaitClosed(termSessionWait)
	var diffs []string
	if err != nil {
		diffs = append(diffs, err.Error())
	}
	select {
	case <-done:
	case <-time.After(termSessionWait):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		diffs = append(diffs, fmt.Sprintf("qsub did not exit within %v", termSessionWait))
	}
	if got := cmd.ProcessState.ExitCode(); got != run.exit {
		diffs = append(diffs, "exit status "+strconv.Itoa(got)+", want "+strconv.Itoa(run.exit))
	}
	// the terminal merges stderr into stdout
	if d := textDiff("terminal", run.stdout+run.stderr, transcript); d != "" {
		diffs = append(diffs, d)
	}
	return strings.Join(diffs, "\n")
}

// capLabel names a command of scenario id in the results: the scenario
// number and the command line, with "extraN" for the N-th extra command.
func capLabel(id int, run clientRun) string {
	if run.which >= 0 {
		return fmt.Sprintf("%03d-extra%d-%s", id, run.which+1, strings.Join(run.argv, " "))
	}
	return fmt.Sprintf("%03d-%s", id, strings.Join(run.argv, " "))
}

// setNextJob sets the server's next_job_number.
func (c *batchClient) setNextJob(n int) {
	c.must(batchreq.PBS_BATCH_Manager, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SERVER,
		Attrs: batchreq.AttrList{batchreq.NewAttr("next_job_number", strconv.Itoa(n))}})
}

// nodeReported reports whether node name is free and has sent its
// status.
func (c *batchClient) nodeReported(name string) bool {
	state, status := c.nodeStatus(name)
	return state == "free" && strings.Contains(status, "uname=")
}

// nodeStatus returns a node's state and status attributes ("" where the
// server reports none).
func (c *batchClient) nodeStatus(name string) (state, status string) {
	rep := c.do(batchreq.PBS_BATCH_StatusNode, &batchreq.StatusReq{ID: name})
	if rep.Code != 0 || len(rep.Status) != 1 {
		return "", ""
	}
	state, _ = rep.Status[0].Attrs.Get("state")
	status, _ = rep.Status[0].Attrs.Get("status")
	return state, status
}

// jobState returns a job's job_state, or "" when the server does not
// report it.
func (c *batchClient) jobState(id string) string {
	rep := c.do(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{ID: id})
	if rep.Code != 0 || len(rep.Status) != 1 {
		return ""
	}
	v, _ := rep.Status[0].Attrs.Get("job_state")
	return v
}

// momCluster is a GoPBS pbs_server, pbs_mom for node vm and pbs_sched
// running in the capture namespace.
type momCluster struct {
	client             *batchClient // root, from a reserved port
	port               int          // the server's
	server, mom, sched *e2e.Daemon
	mom2               *e2e.Daemon // node vm2's, once started

	bin, base       string // daemon binaries, homes
	momPort, rmPort string
}

// momCommand returns the command running pbs_mom with PBS home home for
// node name, its sockets bound to addr.
func (cl *momCluster) momCommand(ns *captureNamespace, home, name, addr string) *exec.Cmd {
	cmd := ns.command("root", 0, 0, filepath.Join(cl.bin, "pbs_mom"), "-D", "-d", home, "-H", name,
		"-M", cl.momPort, "-R", cl.rmPort, "-S", strconv.Itoa(cl.port))
	// after env -i: the address, a GoPBS extension
	for i := 1; i < len(cmd.Args); i++ {
		if cmd.Args[i-1] == "env" && cmd.Args[i] == "-i" {
			cmd.Args = append(cmd.Args[:i+1], append([]string{"GOPBS_MOM_ADDR=" + addr}, cmd.Args[i+1:]...)...)
			break
		}
	}
	return cmd
}

// startMom2 starts node vm2's MOM on 127.0.0.2 and waits for its status.
func (cl *momCluster) startMom2(t *testing.T, ns *captureNamespace) {
	t.Helper()
	home := filepath.Join(cl.base, "mom2")
	if err := e2e.MakeHome(home, captureHost); err != nil {
		t.Fatal(err)
	}
	e2e.WriteFile(t, filepath.Join(home, "mom_priv", "config"), momConfig)
	name := captureHost + "2"
	before := cl.client.nodeRectime(captureHost)
	cl.mom2 = e2e.Start(t, "pbs_mom "+name, cl.momCommand(ns, home, name, "127.0.0.2"))
	e2e.WaitFor(t, "node "+name+" to report its status", 30*time.Second, func() bool { return cl.client.nodeReported(name) })
	// The server sends the node addresses again to every MOM 2 s after
	// the new one's hello, and node vm's MOM answers with a fresh status
	// (capture 104).
	e2e.WaitFor(t, "a fresh status of node "+captureHost, 30*time.Second, func() bool { return cl.client.nodeRectime(captureHost) != before })
}

// nodeRectime returns the rectime item of a node's status ("" if none).
func (c *batchClient) nodeRectime(name string) string {
	_, status := c.nodeStatus(name)
	for _, item := range strings.Split(status, ",") {
		if v, ok := strings.CutPrefix(item, "rectime="); ok {
			return v
		}
	}
	return ""
}

// momConfig is the captured MOMs' mom_priv/config (captures README).
const momConfig = "$pbsserver " + captureHost + "\n$logevent 255\n$usecp *:/home /home\n"

// startMomCluster starts pbs_server, applies the setup requests (which
// create node vm), starts pbs_mom and waits for node vm's status, starts
// pbs_sched and applies the late requests.
func startMomCluster(t *testing.T, ns *captureNamespace, setup, late []*batchreq.Request) *momCluster {
	t.Helper()
	bin := e2e.Build(t, "pbs_server", "pbs_mom", "pbs_sched").Dir
	base := e2e.Dir(t)
	svHome, momHome, schedHome := filepath.Join(base, "server"), filepath.Join(base, "mom"), filepath.Join(base, "sched")
	for _, h := range []string{svHome, momHome, schedHome} {
		if err := e2e.MakeHome(h, captureHost); err != nil {
			t.Fatal(err)
		}
	}
	e2e.WriteFile(t, filepath.Join(momHome, "mom_priv", "config"), momConfig)
	// pbs_sched's FIFO defaults.
	e2e.WriteFile(t, filepath.Join(schedHome, "sched_priv", "sched_config"), "sort_by: no_sort\n")
	e2e.LogFilesOnFailure(t, 0, filepath.Join(base, "*", "*_logs", "*"))

	ports := e2e.FreePorts(t, 4)
	sv, mom, rm, sched := strconv.Itoa(ports[0]), strconv.Itoa(ports[1]), strconv.Itoa(ports[2]), strconv.Itoa(ports[3])
	cl := &momCluster{port: ports[0], bin: bin, base: base, momPort: mom, rmPort: rm}
	cl.server = startNSDaemon(t, ns, filepath.Join(bin, "pbs_server"), "-D", "-f", "-t", "create", "-d", svHome,
		"-p", sv, "-M", mom, "-R", rm, "-S", "127.0.0.1:"+sched, "-H", captureHost)
	cl.server.WaitListening(t, net.JoinHostPort("127.0.0.1", sv), 10*time.Second)
	c := dialServer(t, ports[0])
	cl.client = c
	for _, req := range setup {
		if rep := c.Do(req); rep.Code != 0 {
			t.Fatalf("setup: %d %s", rep.Code, rep.Text)
		}
	}
	cl.mom = e2e.Start(t, "pbs_mom", cl.momCommand(ns, momHome, captureHost, "127.0.0.1"))
	e2e.WaitFor(t, "node "+captureHost+" to report its status", 30*time.Second, c.nodeUp)
	cl.sched = startNSDaemon(t, ns, filepath.Join(bin, "pbs_sched"), "-D", "-d", schedHome, "-S", sched, "-R", rm, "-listen", "127.0.0.1")
	cl.sched.WaitListening(t, net.JoinHostPort("127.0.0.1", sched), 10*time.Second)
	for _, req := range late {
		if rep := c.Do(req); rep.Code != 0 {
			t.Fatalf("setup: %d %s", rep.Code, rep.Text)
		}
	}
	return cl
}
