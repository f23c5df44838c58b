package sysinfo

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/mom/config"
)

// fakeProc builds a /proc tree. procs maps pid → (uid, session).
func fakeProc(t *testing.T, procs map[int][2]int) string {
	t.Helper()
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("meminfo", "MemTotal:       24731708 kB\nMemFree:        24423040 kB\nMemAvailable:   24500000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n")
	write("cpuinfo", "processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nmodel name\t: x\n")
	write("loadavg", "0.37 0.20 0.10 1/100 1234\n")
	write("uptime", "223631.55 400000.00\n")
	write("net/dev", "Inter-|   Receive                                                |  Transmit\n"+
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"+
		"    lo: 52000000     100    0    0    0     0          0         0 172429     100    0    0    0     0       0          0\n"+
		"  eth0:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\n")
	for pid, us := range procs {
		dir := filepath.Join(root, itoa(pid))
		write(filepath.Join(itoa(pid), "stat"), itoa(pid)+" (bash) S 1 "+itoa(us[1])+" "+itoa(us[1])+" 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 100 4000000 700 0")
		if err := os.Chown(dir, us[0], 0); err != nil {
			t.Skipf("chown needs root: %v", err)
		}
	}
	return root
}

func itoa(n int) string { return strconv.Itoa(n) }

func testUname() (string, string, string, string, string, error) {
	return "Linux", "vm", "6.18.44-fc-v657", "#1 SMP PREEMPT_DYNAMIC @0", "x86_64", nil
}

func TestStatusIdleNodeMatchesCapture26(t *testing.T) {
	root := fakeProc(t, map[int][2]int{1: {0, 1}, 50: {0, 50}})
	c := &Collector{Proc: root, Dev: t.TempDir(), Uname: testUname, Config: config.Default()}
	got := c.Status(Dynamic{State: "free"})
	want := []string{
		"opsys=linux",
		"uname=Linux vm 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0 x86_64",
		"sessions=? 15201",
		"nsessions=? 15201",
		"nusers=0",
		"idletime=223631",
		"totmem=24731708kb",
		"availmem=24423040kb",
		"physmem=24731708kb",
		"ncpus=2",
		"loadave=0.37",
		"gres=",
		"netload=52172429",
		"state=free",
		"jobs= ",
		"varattr= ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Status =\n%q\nwant\n%q", got, want)
	}
}

func TestStatusWithJobsAndConfig(t *testing.T) {
	root := fakeProc(t, map[int][2]int{1: {0, 1}, 16978: {1001, 16978}, 16980: {1001, 16978}, 17140: {1001, 17140}, 17200: {1002, 17200}})
	cfg, err := config.Parse(strings.NewReader("arch x86_64\nbigmem true\nsoftware !echo matlab\n$max_load 4\nsize[fs=/]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{Proc: root, Dev: t.TempDir(), Uname: testUname, Config: cfg,
		Now: func() time.Time { return time.Unix(1e9, 0) }}
	got := c.Status(Dynamic{State: "busy", Jobs: []string{"9.vm", "10.vm"}, Message: "ERROR: disk", VarAttr: "a;b"})
	joined := strings.Join(got, "\n")
	for _, w := range []string{"arch=x86_64\nopsys=linux\n", "sessions=16978 17140 17200\nnsessions=3\nnusers=2\n",
		"message=ERROR: disk\ngres=bigmem:true\nnetload=", "\nstate=busy\njobs=9.vm 10.vm\nvarattr=a;b"} {
		if !strings.Contains(joined, w) {
			t.Errorf("status lacks %q:\n%s", w, joined)
		}
	}
	if !strings.Contains(joined, "\nsize=") {
		t.Errorf("no size item:\n%s", joined)
	}
	answers := map[string]string{
		"arch": "arch=x86_64", "software": "software=matlab", "max_load": "max_load=4",
		"ideal_load": "ideal_load=4", "bogusname": "bogusname=? 15201", "ncpus": "ncpus=2",
		"size[fs=/nonexistent-fs]": "size[fs=/nonexistent-fs]=? 15204", "size[x]": "size[x]=? 15202",
		"size": "size=? 15203", "validuser": "validuser=? 15203", "validuser[root]": "validuser[root]=yes",
	}
	for q, want := range answers {
		if a := c.Answer(q); a != want {
			t.Errorf("Answer(%q) = %q, want %q", q, a, want)
		}
	}
	c.Config = nil
	if a := c.Answer("arch"); a != "arch=linux" {
		t.Errorf("unconfigured arch: %q", a)
	}
	if a := c.Answer("max_load"); a != "max_load=? 15201" {
		t.Errorf("unconfigured max_load: %q", a)
	}
}

func TestRealSystem(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc")
	}
	c := &Collector{}
	st := c.Status(Dynamic{State: "free"})
	if len(st) < 14 || st[0] != "opsys=linux" || !strings.HasPrefix(st[1], "uname=Linux ") {
		t.Errorf("status %q", st)
	}
}
