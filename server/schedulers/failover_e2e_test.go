package schedulers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/internal/pgtest"
	"gopbs/server/failover"
	"gopbs/tools/pbsbench/load"
)

// TestSchedulersFailOver: two pbs_server processes share a PostgreSQL
// database (docs/failover.md); the active one starts the scheduler of
// sched object s1. When the active server and s1's process are killed
// (SIGKILL), the standby takes over and starts s1 as the active one did
// (seed 003, interface 4): a new process, driven through its first
// cycle, its state no longer DOWN.
func TestSchedulersFailOver(t *testing.T) {
	e2e.RequireRoot(t, "reserved ports")
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	pg := pgtest.Start(t)
	bin := e2e.Build(t, "pbs_server", "pbs_sched").Dir
	base := e2e.Dir(t)
	ports := e2e.FreePorts(t, 6)
	svPorts := [2]int{ports[0], ports[1]}
	ps := strconv.Itoa
	homes := [2]string{filepath.Join(base, "server1"), filepath.Join(base, "server2")}
	for _, h := range homes {
		if err := e2e.MakeHome(h, "localhost"); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(h, "server_priv", failover.URLFile)
		e2e.WriteFile(t, p, pg.URL+"\n")
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e2e.LogFilesOnFailure(t, 200, filepath.Join(base, "*", "*_logs*", "*"), filepath.Join(base, "*", "sched_priv_s1", "sched_out"))
	start := func(i int, init string) *e2e.Daemon {
		return e2e.Start(t, fmt.Sprintf("pbs_server %d", i+1), exec.Command(filepath.Join(bin, "pbs_server"), "-D", "-f",
			"-t", init, "-d", homes[i], "-p", ps(svPorts[i]), "-M", ps(ports[2]), "-R", ps(ports[3]),
			"-S", "127.0.0.1:"+ps(ports[4]), "-H", "localhost"))
	}
	serverLog := func(home string) string {
		files, _ := filepath.Glob(filepath.Join(home, "server_logs", "*"))
		var b strings.Builder
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.Write(data)
		}
		return b.String()
	}
	first := start(0, "create")
	first.WaitListening(t, "127.0.0.1:"+ps(svPorts[0]), 30*time.Second)
	start(1, "warm")
	e2e.WaitFor(t, "the second server standing by", 30*time.Second, func() bool {
		return strings.Contains(serverLog(homes[1]), "standing by")
	})

	// s1's directories are absolute paths, the same for both servers
	// (on one host here; shared or copied between hosts in a real pair)
	priv := filepath.Join(base, "sched_priv_s1")
	if err := os.MkdirAll(priv, 0o750); err != nil {
		t.Fatal(err)
	}
	e2e.WriteFile(t, filepath.Join(priv, "sched_config"), "sort_by: no_sort\tALL\n")
	t.Cleanup(func() {
		if pid := lockPID(priv); alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	do := func(port int, reqs ...*batchreq.Request) []*batchreq.Reply {
		t.Helper()
		d := &load.Dialer{Addr: "127.0.0.1:" + ps(port), User: "root", Timeout: 30 * time.Second}
		conn, err := d.Dial()
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var out []*batchreq.Reply
		for _, r := range reqs {
			p, err := conn.Do(r)
			if err != nil {
				t.Fatalf("request %s: %v", batchreq.RequestName(r.Type), err)
			}
			out = append(out, p)
		}
		return out
	}
	state := func(port int) string {
		p := do(port, batchreq.NewRequest(batchreq.PBS_BATCH_StatusSched, "root", &batchreq.StatusReq{ID: "s1"}))[0]
		for _, o := range p.Status {
			for _, a := range o.Attrs {
				if a.Name == "state" {
					return a.Value
				}
			}
		}
		return ""
	}
	mgr := func(cmd int, attrs ...batchreq.Attr) *batchreq.Request {
		return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{Command: cmd, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: "s1", Attrs: attrs})
	}
	for _, p := range do(svPorts[0],
		mgr(batchreq.MGR_CMD_CREATE, batchreq.NewAttr("port", ps(ports[5])), batchreq.NewAttr("partitions", "p1"),
			batchreq.NewAttr("sched_priv", priv), batchreq.NewAttr("sched_log", filepath.Join(base, "sched_logs_s1"))),
		mgr(batchreq.MGR_CMD_SET, batchreq.NewAttr("scheduling", "true"))) {
		if p.Code != 0 {
			t.Fatalf("sched s1: code %d %s", p.Code, p.Text)
		}
	}
	e2e.WaitFor(t, "s1 run by the first server", 30*time.Second, func() bool {
		return alive(lockPID(priv)) && state(svPorts[0]) == "IDLE"
	})
	old := lockPID(priv)

	first.Kill()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, "the second server active", 60*time.Second, func() bool {
		return strings.Contains(serverLog(homes[1]), "active: this server holds the failover lock")
	})
	e2e.WaitFor(t, "s1 started by the second server", 60*time.Second, func() bool {
		pid := lockPID(priv)
		return pid != old && alive(pid) && state(svPorts[1]) != "DOWN"
	})
	log := serverLog(homes[1])
	for _, want := range []string{"scheduler s1 started, pid " + ps(lockPID(priv)), "Scheduler s1 was sent the command scheduler_first"} {
		if !strings.Contains(log, want) {
			t.Errorf("the second server's log has no %q", want)
		}
	}
}
