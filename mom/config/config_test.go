package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseCapturedConfig(t *testing.T) {
	// The reference cluster's mom_priv/config (captures README).
	in := "$pbsserver vm\n$logevent 255\n$usecp vm:/home /home\n$usecp vm:/tmp /tmp\n"
	c, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PBSServers) != 1 || c.PBSServers[0] != "vm" {
		t.Errorf("servers = %v", c.PBSServers)
	}
	if c.LogEvent != 255 {
		t.Errorf("logevent = %d", c.LogEvent)
	}
	want := []UseCp{{"vm", "/home", "/home"}, {"vm", "/tmp", "/tmp"}}
	if len(c.UseCp) != 2 || c.UseCp[0] != want[0] || c.UseCp[1] != want[1] {
		t.Errorf("usecp = %v", c.UseCp)
	}
	if c.CheckPollTime != 45*time.Second || c.PrologAlarm != 300*time.Second || c.OutputUmask != 0o77 {
		t.Errorf("defaults wrong: %+v", c)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
}

func TestParseDirectives(t *testing.T) {
	in := `# comment

$clienthost srv2
$check_poll_time 2
$status_update_time 10
$prologalarm 7
$tmpdir /scratch
$ideal_load 1.5
$ignwalltime true
$igncput 0
$job_output_file_umask 022
$cputmult 2.5
$node_check_interval 5,jobstart,jobend
$varattr -1 /bin/echo hi
$rcpcmd /usr/bin/scp -rp
$nospool_dir_list /home/*,/scratch
$logevent 0x1ff
arch x86_64
myres !/bin/date
size[fs=/tmp]
$bogus 1
$check_poll_time 0
$tmpdir relative
`
	c, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"servers", len(c.PBSServers) == 1 && c.PBSServers[0] == "srv2"},
		{"poll", c.CheckPollTime == 2*time.Second},
		{"status", c.StatusUpdateTime == 10*time.Second},
		{"prologalarm", c.PrologAlarm == 7*time.Second},
		{"tmpdir", c.TmpDir == "/scratch"},
		{"loads", c.IdealLoad == 1.5 && c.MaxLoad == 1.5},
		{"ign", c.IgnWalltime && !c.IgnCput},
		{"umask", c.OutputUmask == 0o22},
		{"cputmult", c.CputMult == 2.5},
		{"nodecheck", c.NodeCheckInterval == 5 && c.NodeCheckOnJobStart && c.NodeCheckOnJobEnd},
		{"varattr", len(c.VarAttrs) == 1 && c.VarAttrs[0].TTL == -1 && c.VarAttrs[0].Command == "/bin/echo hi"},
		{"rcp", c.RcpCmd == "/usr/bin/scp" && c.RcpArgs == "-rp"},
		{"nospool", len(c.NospoolDirList) == 2 && c.NospoolDirList[1] == "/scratch"},
		{"logevent", c.LogEvent == 0x1ff},
		{"resources", len(c.Resources) == 2 && c.Resources[1].Command && c.Resources[1].Value == "/bin/date"},
		{"sizefs", len(c.SizeFS) == 1 && c.SizeFS[0] == "/tmp"},
		{"warnings", len(c.Warnings) == 3},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s wrong: %+v", ch.name, c)
		}
	}
	if v, ok := c.StaticResource("arch"); !ok || v != "x86_64" {
		t.Errorf("arch = %q %v", v, ok)
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "TRUE": true, "1": true, "on": true, "yes": true,
		"false": false, "0": false, "off": false, "": false} {
		if ParseBool(in) != want {
			t.Errorf("ParseBool(%q) != %v", in, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("$pbsserver vm\n$usecp *:/a /b\nx !y\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Parse(strings.NewReader(s))
	})
}

func TestParseEnforce(t *testing.T) {
	c := Default()
	if c.EnforceMem != EnforceAuto || c.EnforceVmem != EnforcePoll || c.CgroupRoot != "" {
		t.Errorf("defaults: mem %q vmem %q cgroup_root %q", c.EnforceMem, c.EnforceVmem, c.CgroupRoot)
	}
	in := "$enforce mem poll\n$enforce vmem off\n$cgroup_root /sys/fs/cgroup/batch\n" +
		"$enforce mem sometimes\n$enforce vmem cgroup\n$enforce cput poll\n$cgroup_root relative\n"
	c, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if c.EnforceMem != EnforcePoll || c.EnforceVmem != EnforceOff || c.CgroupRoot != "/sys/fs/cgroup/batch" {
		t.Errorf("parsed: mem %q vmem %q cgroup_root %q", c.EnforceMem, c.EnforceVmem, c.CgroupRoot)
	}
	if len(c.Warnings) != 4 {
		t.Errorf("warnings %q, want 4 (bad mem mode, vmem cgroup, cput, relative root)", c.Warnings)
	}
	for _, v := range []string{"cgroup", "OFF", "auto"} {
		c, _ := Parse(strings.NewReader("$enforce mem " + v + "\n$cgroup_root off\n"))
		if c.EnforceMem != strings.ToLower(v) || c.CgroupRoot != CgroupRootOff || len(c.Warnings) != 0 {
			t.Errorf("$enforce mem %s: %q %q %q", v, c.EnforceMem, c.CgroupRoot, c.Warnings)
		}
	}
}
