package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/mom/cgroup"
)

// memHog allocates about 120 MB (a shell variable filled from a pipe) and
// keeps it.
const memHog = "#!/bin/sh\nx=$(head -c 120000000 /dev/zero | tr '\\0' a)\necho allocated\nsleep 120\n"

// testCgroupRoot makes a cgroup root for one test's MOM and reports
// whether job cgroups there have the memory controller; ok is false,
// with the reason, where this machine has no writable cgroup v2
// hierarchy.
func testCgroupRoot(t *testing.T) (dir string, memory bool, why string) {
	mount, err := cgroup.Mount()
	if err != nil {
		return "", false, err.Error()
	}
	dir = filepath.Join(mount, "gopbs-e2e-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(t.Name(), "/", "_"))
	root, err := cgroup.Setup(mount, dir)
	if err != nil {
		return "", false, err.Error()
	}
	t.Cleanup(func() { os.Remove(dir) })
	if !root.Memory() {
		return dir, false, "the cgroup v2 hierarchy at " + mount + " has no memory controller for job cgroups (controllers " +
			strconv.Quote(read(filepath.Join(mount, "cgroup.controllers"))) + "; on a hybrid system memory belongs to cgroup v1)"
	}
	return dir, true, ""
}

// TestMemLimitKillsJob: a job allocating past mem=50mb is killed, and its
// exit status, comment, the server log, the abort mail, its stderr file
// and the accounting record say so; in cgroup mode by the kernel's
// memory.max, in polling mode by the MOM's poll of its resident size.
func TestMemLimitKillsJob(t *testing.T) {
	for _, mode := range []string{"cgroup", "poll"} {
		t.Run(mode, func(t *testing.T) {
			dir, memory, why := testCgroupRoot(t)
			cfg := "$enforce mem " + mode + "\n"
			switch {
			case mode == "cgroup" && !memory:
				t.Skip("cgroup mode needs the memory controller: " + why)
			case dir != "":
				cfg += "$cgroup_root " + dir + "\n" // cput and mem also from the job's cgroup
			default:
				t.Logf("jobs run without cgroups: %s", why)
			}
			cl := newCluster(t, cfg)
			id := cl.submit("memhog", memHog, batchreq.NewResourceAttr("Resource_List", "mem", "50mb"))
			cl.run(id)
			cl.waitState(id, "C", 90*time.Second)
			if st := cl.job(id, "exit_status"); st != "-10" {
				t.Errorf("exit_status %q, want -10 (JOB_EXEC_OVERLIMIT)", st)
			}
			killed := regexp.MustCompile(`job killed: mem (\d+) exceeded limit 52428800`)
			comment := cl.job(id, "comment")
			m := killed.FindStringSubmatch(comment)
			if m == nil {
				t.Fatalf("comment %q does not name the mem limit", comment)
			}
			if used, _ := strconv.ParseUint(m[1], 10, 64); used <= 50<<20 {
				t.Errorf("comment %q: used no more than the limit", comment)
			}
			if !strings.Contains(cl.serverLog(), ";Job;"+id+";"+comment+"\n") {
				t.Errorf("server log lacks %q", comment)
			}
			e2e.WaitFor(t, "the abort mail", 20*time.Second, func() bool { return strings.Contains(read(cl.mailFile), comment+"\n.\n") })
			mail := read(cl.mailFile)
			if !strings.Contains(mail, "Job exceeded some resource limit (walltime, mem, etc.). Job was aborted\nSee Administrator for help\n"+comment+"\n") {
				t.Errorf("mail:\n%s", mail)
			}
			if e := read(filepath.Join(cl.outDir, "memhog.err")); !strings.Contains(e, "=>> PBS: job killed: "+strings.TrimPrefix(comment, "job killed: ")+"\n") {
				t.Errorf("stderr file %q", e)
			}
			if o := read(filepath.Join(cl.outDir, "memhog.out")); mode == "cgroup" && o != "" {
				// memory.max: the kernel kills during the allocation
				t.Errorf("stdout %q: the allocation succeeded", o)
			}
			e := cl.record("E", id)
			if !strings.Contains(e, " Exit_status=-10 ") {
				t.Errorf("E record %q", e)
			}
			um := regexp.MustCompile(` resources_used\.mem=(\d+)kb `).FindStringSubmatch(e)
			if um == nil {
				t.Fatalf("E record without resources_used.mem: %q", e)
			}
			if kb, _ := strconv.Atoi(um[1]); kb <= 50*1024 {
				t.Errorf("resources_used.mem %skb, under the 50 MB the job passed", um[1])
			}
			if used := cl.job(id, "resources_used.mem"); used != um[1]+"kb" {
				t.Errorf("qstat resources_used.mem %q, E record %skb", used, um[1])
			}
		})
	}
}

// TestLimitKillsSayWhich: each kind of limit kills the job over it, and
// the job's comment, stderr file and E record name the limit.
func TestLimitKillsSayWhich(t *testing.T) {
	cl := newCluster(t, "")
	busy := "#!/bin/sh\nwhile :; do :; done\n"
	for _, tc := range []struct {
		res, value, script, comment string
	}{
		{"walltime", "00:00:02", "#!/bin/sh\nsleep 120\n", `^job killed: walltime \d+ exceeded limit 2$`},
		{"cput", "1", busy, `^job killed: cput \d+ exceeded limit 1$`},
		{"pcput", "1", "#!/bin/sh\nsh -c 'while :; do :; done'\n", `^job killed: pcput exceeded limit 1$`},
		{"vmem", "50mb", memHog, `^job killed: vmem \d+ exceeded limit 52428800$`},
		{"pmem", "50mb", memHog, `^job killed: pmem exceeded limit 52428800$`},
	} {
		t.Run(tc.res, func(t *testing.T) {
			cl.t = t
			id := cl.submit(tc.res, tc.script, batchreq.NewResourceAttr("Resource_List", tc.res, tc.value))
			cl.run(id)
			cl.waitState(id, "C", 120*time.Second)
			comment := cl.job(id, "comment")
			if st := cl.job(id, "exit_status"); st != "-10" || !regexp.MustCompile(tc.comment).MatchString(comment) {
				t.Errorf("exit_status %s, comment %q; want -10, %s", st, comment, tc.comment)
			}
			if e := read(filepath.Join(cl.outDir, tc.res+".err")); !strings.Contains(e, "=>> PBS: job killed: "+strings.TrimPrefix(comment, "job killed: ")+"\n") {
				t.Errorf("stderr file %q", e)
			}
			if e := cl.record("E", id); !strings.Contains(e, " Exit_status=-10 resources_used.cput=") {
				t.Errorf("E record %q", e)
			}
		})
	}
}
