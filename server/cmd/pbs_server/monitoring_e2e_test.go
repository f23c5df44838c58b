package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/e2e/batchconn"
)

// The monitoring end-to-end test runs pbs_server with -http, a pbs_mom
// with $http_address and pbs_sched as processes in temporary homes on
// free loopback ports, submits jobs and checks what the listeners show:
// the metrics' values, the status page in headless Chromium, and the
// http_address attribute moving and closing the listener.

const monUser = "gopbsmon"

// scrape returns the text a GET of url serves, failing the test on
// anything but 200.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// metric returns the value of the sample named series (name{labels} as
// the text format writes it) in a scrape, or -1 when absent.
func metric(text, series string) float64 {
	for line := range strings.SplitSeq(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

func TestMonitoringEndToEnd(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports and setuid job execution")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	u := e2e.User(t, monUser)
	u.MakeHome(t)
	bins := e2e.Build(t, "pbs_server", "pbs_mom", "pbs_sched")
	base := e2e.Dir(t)
	outDir := filepath.Join(base, "out")
	os.MkdirAll(outDir, 0o777)
	os.Chmod(outDir, 0o777)
	ports := e2e.FreePorts(t, 7)
	svPort, momPort, rmPort, schedPort, httpPort, momHTTP, httpPort2 := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6]
	svHome, momHome, schedHome := filepath.Join(base, "server"), filepath.Join(base, "mom"), filepath.Join(base, "sched")
	for _, h := range []string{svHome, momHome, schedHome} {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
	}
	e2e.LogFilesOnFailure(t, 60, filepath.Join(base, "*", "*_logs", "*"))
	e2e.WriteFile(t, filepath.Join(momHome, "mom_priv", "config"),
		fmt.Sprintf("$pbsserver localhost\n$status_update_time 2\n$check_poll_time 1\n$http_address %d\n", momHTTP))
	ps := strconv.Itoa
	page := fmt.Sprintf("http://127.0.0.1:%d/", httpPort)
	metricsURL := page + "metrics"
	momMetrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", momHTTP)

	e2eStart := func(name string, args ...string) *e2e.Daemon {
		return e2e.Start(t, name, exec.Command(bins.Path(name), args...))
	}
	e2eStart("pbs_server", "-D", "-f", "-t", "create", "-d", svHome, "-p", ps(svPort), "-M", ps(momPort),
		"-R", ps(rmPort), "-S", ps(schedPort), "-H", "localhost", "-a", "false", "-http", ps(httpPort))
	c := batchconn.DialReserved(t, "127.0.0.1:"+ps(svPort), 20*time.Second)
	c.Timeout = 20 * time.Second
	set := func(cmd, obj int, name string, attrs ...batchreq.Attr) {
		t.Helper()
		if p := c.Do(manage("root", cmd, obj, name, attrs...)); p.Code != 0 {
			t.Fatalf("Manager %d %d %s: %d %s", cmd, obj, name, p.Code, p.Text)
		}
	}
	set(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution"))
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true"))
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch"))
	set(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "localhost", batchreq.NewAttr("np", "2"))
	for i := 2; i <= 5; i++ { // nodes without a MOM: down,offline
		set(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, fmt.Sprintf("cn%02d", i), batchreq.NewAttr("np", "4"))
	}
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "cn05", batchreq.NewAttr("state", "offline"))
	e2eStart("pbs_mom", "-D", "-d", momHome, "-H", "localhost", "-M", ps(momPort), "-R", ps(rmPort), "-S", ps(svPort))
	e2e.WaitFor(t, "the MOM's first status", 30*time.Second, func() bool {
		return strings.Contains(scrape(t, page), `data-node="localhost" data-state="free"`)
	})

	submit := func(name, script, walltime string) string {
		t.Helper()
		list := batchreq.AttrList{
			batchreq.NewAttr("Job_Name", name), batchreq.NewAttr("Job_Owner", monUser+"@localhost"),
			batchreq.NewAttr("Output_Path", "localhost:"+filepath.Join(outDir, name+".out")),
			batchreq.NewAttr("Error_Path", "localhost:"+filepath.Join(outDir, name+".err")),
			batchreq.NewAttr("Variable_List", "PBS_O_HOME="+outDir+",PBS_O_WORKDIR="+outDir+",PBS_O_HOST=localhost"),
		}
		if walltime != "" {
			list = append(list, batchreq.Attr{Name: "Resource_List", Resource: "walltime", HasResource: true, Value: walltime})
		}
		p := c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: list}))
		id := p.JobID
		c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte(script)}))
		c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}))
		c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}))
		return id
	}
	long := submit("long", "#!/bin/sh\nsleep 300\n", "")
	over := submit("overlimit", "#!/bin/sh\nsleep 300\n", "00:00:01")
	held := submit("held", "#!/bin/sh\ntrue\n", "")
	queued := submit("waiting", "#!/bin/sh\ntrue\n", "01:00:00")
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_HoldJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: held, Attrs: batchreq.AttrList{batchreq.NewAttr("Hold_Types", "u")}}))
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: long}))

	// The server's metrics after 4 submissions, a hold and a run (whose
	// handler returns a little after its reply).
	e2e.WaitFor(t, "RunJob to be counted", 10*time.Second, func() bool {
		return metric(scrape(t, metricsURL), `gopbs_server_request_duration_seconds_count{request="RunJob"}`) == 1
	})
	m := scrape(t, metricsURL)
	for series, want := range map[string]float64{
		`gopbs_server_jobs{queue="batch",state="running"}`:                     1,
		`gopbs_server_jobs{queue="batch",state="queued"}`:                      2,
		`gopbs_server_jobs{queue="batch",state="held"}`:                        1,
		`gopbs_server_jobs{queue="batch",state="complete"}`:                    0,
		`gopbs_server_queue_started{queue="batch",type="Execution"}`:           1,
		`gopbs_server_nodes{state="free"}`:                                     1,
		`gopbs_server_nodes{state="down,offline"}`:                             3, // no MOM has reported
		`gopbs_server_nodes{state="offline"}`:                                  1, // cn05, set offline
		`gopbs_server_node_vps`:                                                18,
		`gopbs_server_node_vps_assigned`:                                       1,
		`gopbs_server_request_duration_seconds_count{request="QueueJob"}`:      4,
		`gopbs_server_request_duration_seconds_count{request="JobScript"}`:     4,
		`gopbs_server_request_duration_seconds_count{request="Commit"}`:        4,
		`gopbs_server_request_duration_seconds_count{request="HoldJob"}`:       1,
		`gopbs_server_request_duration_seconds_count{request="RunJob"}`:        1,
		`gopbs_server_request_duration_seconds_count{request="Manager"}`:       9,
		`gopbs_server_sched_cycle_duration_seconds_count{scheduler="default"}`: -1,
	} {
		if got := metric(m, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if n := metric(m, "gopbs_server_store_commit_batches_sum"); n < 13 {
		t.Errorf("store commits made %v batches durable, want at least 13 (9 Manager, 4 Commit, hold, run)", n)
	}
	if n := metric(m, "gopbs_server_store_commit_duration_seconds_count"); n < 1 || n > metric(m, "gopbs_server_store_commit_batches_sum") {
		t.Errorf("%v store commits", n)
	}
	if metric(m, "gopbs_server_node_load_sum") < 0 || metric(m, "process_resident_memory_bytes") <= 0 {
		t.Error("no node load or process metrics")
	}

	// The MOM's metrics: the running job, then the one killed over its
	// walltime once it runs.
	e2e.WaitFor(t, "the MOM to report the running job", 20*time.Second, func() bool {
		return metric(scrape(t, momMetrics), `gopbs_mom_jobs{state="running"}`) == 1
	})
	mm := scrape(t, momMetrics)
	if metric(mm, `gopbs_mom_info{node="localhost",version="2.5.13"}`) != 1 || metric(mm, `gopbs_mom_memory_bytes{kind="physical"}`) <= 0 || metric(mm, "gopbs_mom_load1") < 0 {
		t.Errorf("MOM metrics:\n%s", grepLines(mm, "gopbs_mom_"))
	}
	c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: over}))
	e2e.WaitFor(t, "the MOM to kill "+over+" over its walltime", 30*time.Second, func() bool {
		return metric(scrape(t, momMetrics), `gopbs_mom_enforcement_kills_total{resource="walltime"}`) == 1
	})

	// The status page as a person sees it in a browser, once the killed
	// job has left.
	e2e.WaitFor(t, over+" to end", 30*time.Second, func() bool {
		return metric(scrape(t, metricsURL), `gopbs_server_jobs{queue="batch",state="running"}`) == 1 &&
			metric(scrape(t, metricsURL), `gopbs_server_jobs{queue="batch",state="exiting"}`) == 0
	})
	checkPage(t, page, long, held, queued)

	// The scheduler's cycles are timed.
	sched := e2eStart("pbs_sched", "-D", "-d", schedHome, "-S", ps(schedPort), "-R", ps(rmPort))
	sched.WaitListening(t, "127.0.0.1:"+ps(schedPort), 20*time.Second)
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("scheduling", "true"))
	e2e.WaitFor(t, "a timed scheduling cycle", 60*time.Second, func() bool {
		return metric(scrape(t, metricsURL), `gopbs_server_sched_cycle_duration_seconds_count{scheduler="default"}`) >= 1
	})
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("scheduling", "false"))

	// MOM link errors: a node marked down as its MOM falls silent (it is
	// stopped), then, once it is back, a job sent to it after it died.
	momPid := momPID(t, momHome)
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("node_check_rate", "2"))
	syscall.Kill(momPid, syscall.SIGSTOP)
	e2e.WaitFor(t, "the silent MOM's node to be marked down", 30*time.Second, func() bool {
		return metric(scrape(t, metricsURL), `gopbs_server_mom_link_errors_total{kind="silent"}`) == 1
	})
	syscall.Kill(momPid, syscall.SIGCONT)
	e2e.WaitFor(t, "the MOM's node to be up again", 30*time.Second, func() bool {
		return strings.Contains(scrape(t, page), `data-node="localhost" data-state="free"`)
	})
	syscall.Kill(momPid, syscall.SIGKILL)
	e2e.WaitFor(t, "the MOM to die", 10*time.Second, func() bool { return syscall.Kill(momPid, 0) != nil })
	connectErrors := metric(scrape(t, metricsURL), `gopbs_server_mom_link_errors_total{kind="connect"}`)
	dead := submit("tonowhere", "#!/bin/sh\ntrue\n", "")
	if p := c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: dead})); p.Code == 0 {
		t.Errorf("RunJob to a dead MOM accepted")
	}
	if got := metric(scrape(t, metricsURL), `gopbs_server_mom_link_errors_total{kind="connect"}`); got <= connectErrors {
		t.Errorf("connect errors %v after a run on a dead MOM, %v before", got, connectErrors)
	}

	// http_address moves the listener, unset closes it: then nothing
	// listens.
	set(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("http_address", "127.0.0.1:"+ps(httpPort2)))
	page2 := fmt.Sprintf("http://127.0.0.1:%d/", httpPort2)
	e2e.WaitFor(t, "the listener to move", 10*time.Second, func() bool { return listening(httpPort2) && !listening(httpPort) })
	if !strings.Contains(scrape(t, page2), `data-job="`+long+`"`) {
		t.Error("the moved page lacks the running job")
	}
	if p := c.Do(manage("root", batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("http_address", "nowhere:port"))); p.Code != batchreq.PBSE_BADATVAL {
		t.Errorf("bad http_address: %d %s", p.Code, p.Text)
	}
	set(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("http_address", ""))
	e2e.WaitFor(t, "the listener to close", 10*time.Second, func() bool { return !listening(httpPort2) })
	for _, want := range []string{
		fmt.Sprintf("HTTP listener on 127.0.0.1:%d: status page %s, metrics %smetrics", httpPort, page, page),
		fmt.Sprintf("HTTP listener on 127.0.0.1:%d closed", httpPort2),
	} {
		e2e.WaitFor(t, "the server log line "+want, 10*time.Second, func() bool {
			log, _ := os.ReadFile(filepath.Join(svHome, "server_logs", time.Now().Format("20060102")))
			return strings.Contains(string(log), want)
		})
	}
}

// checkPage loads the status page in headless Chromium and checks the
// queue counts, the jobs and the node grid a person would see; with
// GOPBS_SCREENSHOT_DIR set the screenshot is kept there.
func checkPage(t *testing.T, page, running, held, queued string) {
	t.Helper()
	b := e2e.Chromium(t)
	dom := b.DOM(t, page)
	for _, want := range []string{
		`<td class="num">0</td><td class="num">1</td><td class="num">1</td><td class="num">0</td><td class="num">1</td><td class="num">0</td><td class="num">0</td><td class="num">3</td></tr>`, // batch: T Q H W R E C, total
		`<tr data-job="` + running + `"><td>` + running + `</td><td>long</td><td>` + monUser + `</td><td>batch</td><td><span class="pill st-running">R</span></td><td>localhost</td>`,
		`<tr data-job="` + held + `">`,
		`<span class="pill st-held">H</span>`,
		`<td>01:00:00</td>`,
		`data-node="localhost" data-state="free"`,
		`<div class="node busy" data-node="localhost" data-state="free"`,
		`<div class="node down" data-node="cn02" data-state="down,offline"`,
		`<div class="node offline" data-node="cn05" data-state="offline"`,
		`3 jobs · 1 running · 1 queued · 5 nodes (4 down or offline) · 1 of 18 processors in use`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page in the browser lacks %s", want)
		}
	}
	if strings.Count(dom, `class="node `) != 5 {
		t.Errorf("%d node tiles, want 5", strings.Count(dom, `class="node `))
	}
	dom = b.DOM(t, page+"?state=Q&user="+monUser)
	if !regexp.MustCompile(`<tr data-job="`+regexp.QuoteMeta(queued)+`">`).MatchString(dom) || strings.Contains(dom, `data-job="`+running+`"`) {
		t.Errorf("filtered page (queued jobs of %s) wrong", monUser)
	}
	path := ""
	if dir := os.Getenv("GOPBS_SCREENSHOT_DIR"); dir != "" {
		path = filepath.Join(dir, "statuspage.png")
	}
	img := b.Screenshot(t, page, 1200, 760, path)
	if n := e2e.CountColor(img, 0xc62828, 6); n < 3*3000 {
		t.Errorf("%d pixels of the down colour, want the tiles of 3 nodes without a MOM", n)
	}
	if n := e2e.CountColor(img, 0x6b7075, 6); n < 3000 {
		t.Errorf("%d pixels of the offline colour, want cn05's tile", n)
	}
	if n := e2e.CountColor(img, 0x2b7bb9, 6); n < 3000 {
		t.Errorf("%d pixels of the partly-used colour, want localhost's tile", n)
	}
}

// listening reports whether something accepts connections on the
// loopback port.
func listening(port int) bool {
	nc, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	nc.Close()
	return true
}

// momPID reads the pid pbs_mom wrote into its lock file.
func momPID(t *testing.T, home string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "mom_priv", "mom.lock"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("mom.lock %q", b)
	}
	return pid
}

func grepLines(text, prefix string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
