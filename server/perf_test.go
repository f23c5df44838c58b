package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/alloc"
	"gopbs/server/handler"
	"gopbs/server/state"
	"gopbs/server/store"
)

// TestPerformance measures the goals of the issue; it runs only with
// GOPBS_PERF set (e.g. GOPBS_PERF=100000) because it is long.
func TestPerformance(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GOPBS_PERF"))
	if n == 0 {
		t.Skip("set GOPBS_PERF=<jobs> to run the performance measurement")
	}
	home := t.TempDir()
	s := testServer(t, home, InitCreate)
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	const workers = 8
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wc := dialPrivileged(t, s.Addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/workers; i++ {
				p := wc.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "alice", &batchreq.QueueJob{Attrs: batchreq.AttrList{
					batchreq.NewAttr("Job_Name", "perf"),
					batchreq.NewAttr("Variable_List", "PBS_O_HOME=/home/alice,PBS_O_LANG=C.UTF-8,PBS_O_LOGNAME=alice,PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/bash,PBS_SERVER=vm,PBS_O_WORKDIR=/home/alice"),
					batchreq.NewAttr("Checkpoint", "u"), batchreq.NewAttr("Hold_Types", "n"), batchreq.NewAttr("Join_Path", "n"),
					batchreq.NewAttr("Keep_Files", "n"), batchreq.NewAttr("Mail_Points", "a"), batchreq.NewAttr("Priority", "0"),
					batchreq.NewAttr("Rerunable", "TRUE"), batchreq.NewAttr("fault_tolerant", "FALSE"),
				}}))
				id := p.JobID
				wc.do(batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "alice", &batchreq.JobFile{Data: []byte("#!/bin/sh\nsleep 20\n")}))
				wc.do(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "alice", &batchreq.JobID{ID: id}))
				if p := wc.do(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "alice", &batchreq.JobID{ID: id})); p.Code != 0 {
					t.Error(p.Code)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	t.Logf("%d submissions in %v: %.0f/s, %d commits", n, el, float64(n)/el.Seconds(), s.store.(*store.Bolt).Commits())
	time.Sleep(1500 * time.Millisecond) // let the store checkpoint its log
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use %d MB: %.0f bytes per job", ms.HeapInuse>>20, float64(ms.HeapInuse)/float64(n))
	start = time.Now()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{}))
	t.Logf("StatusJob of %d jobs: %v", len(p.Status), time.Since(start))
	s.Shutdown("Quick")
	start = time.Now()
	s2 := testServer(t, home, InitWarm)
	t.Logf("warm restart with %d jobs: %v", s2.jobs.Len(), time.Since(start))
}

// envValueReference is envValue as it was written before the in-place
// scan: split the whole list, then look for the name.
func envValueReference(vl, name string) string {
	for _, kv := range state.SplitEscaped(vl, ',') {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func TestEnvValue(t *testing.T) {
	for _, tc := range []struct{ vl, name, want string }{
		{"PBS_O_HOST=vm,PBS_O_WORKDIR=/home/a", "PBS_O_WORKDIR", "/home/a"},
		{"PBS_O_HOST=vm,PBS_O_WORKDIR=/home/a", "PBS_O_HOST", "vm"},
		{"PBS_O_HOST=vm", "PBS_O_WORKDIR", ""},
		{"", "PBS_O_HOST", ""},
		{"A=x\\,y,PBS_O_HOST=h", "A", "x,y"},
		{"A=x\\,PBS_O_HOST=h", "PBS_O_HOST", ""},
		{"PBS_O_HOST=h\\", "PBS_O_HOST", "h\\"},
		{"X=1,,PBS_O_HOST=", "PBS_O_HOST", ""},
		{"P\\BS_O_HOST=e", "PBS_O_HOST", "e"},
	} {
		if got := envValue(tc.vl, tc.name); got != tc.want {
			t.Errorf("envValue(%q, %q) = %q, want %q", tc.vl, tc.name, got, tc.want)
		}
		if ref := envValueReference(tc.vl, tc.name); ref != tc.want {
			t.Errorf("reference(%q, %q) = %q, want %q", tc.vl, tc.name, ref, tc.want)
		}
	}
}

func FuzzEnvValue(f *testing.F) {
	f.Add("PBS_O_HOST=vm,PBS_O_WORKDIR=/home/a\\,b", "PBS_O_WORKDIR")
	f.Fuzz(func(t *testing.T, vl, name string) {
		if got, want := envValue(vl, name), envValueReference(vl, name); got != want {
			t.Fatalf("envValue(%q, %q) = %q, reference %q", vl, name, got, want)
		}
	})
}

// TestPrimaryGroupCache checks that submissions reuse a user's primary
// group for groupCacheTTL, and that failed lookups are not remembered.
func TestPrimaryGroupCache(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	calls := map[string]int{}
	s := &Server{now: func() time.Time { return now }, groupOf: func(u string) string {
		calls[u]++
		if u == "nobody-here" {
			return ""
		}
		return u + "grp"
	}}
	for range 3 {
		if g := s.primaryGroup("alice"); g != "alicegrp" {
			t.Fatalf("group %q", g)
		}
		s.primaryGroup("nobody-here")
	}
	if calls["alice"] != 1 || calls["nobody-here"] != 3 {
		t.Fatalf("lookups %v, want alice once and the unknown user every time", calls)
	}
	now = now.Add(groupCacheTTL)
	s.primaryGroup("alice")
	if calls["alice"] != 2 {
		t.Fatalf("lookups after the TTL: %v", calls)
	}
}

// TestUsedVPs checks the node bookkeeping built from the running jobs'
// exec_host: VP order, several hosts per job, hosts revisited, suspended
// and damaged entries.
func TestUsedVPs(t *testing.T) {
	s, _ := allocServer(3, 2, 1) // node0000 full: 0.srv on VP 0, 1.srv on VP 1
	add := func(id, execHost string) {
		j := &state.Job{ID: id, State: pbsattr.StateQueued}
		s.jobs.Link(j)
		j.Attrs.Set(pbsattr.JobExecHost, execHost)
		s.jobs.SetState(j, pbsattr.StateRunning, pbsattr.SubRunning)
	}
	add("multi.srv", "node0002/1+node0001/0+node0002/0")
	add("bad.srv", "node0001/x+node0001/-1+node0001/99999999+nohost")
	add("susp.srv", "node0001/1")
	s.run.SetSuspended("susp.srv", true)
	s.refreshNodeJobs()
	want := map[string]string{
		"node0000": "0/0.srv, 1/1.srv",
		"node0001": "0/multi.srv",
		"node0002": "0/multi.srv, 1/multi.srv",
	}
	for _, n := range s.nodes {
		if got := n.Attrs.Get(pbsattr.NodeJobs); got != want[n.Name] {
			t.Errorf("%s jobs = %q, want %q", n.Name, got, want[n.Name])
		}
		if excl := n.State&state.NodeStateJobExclusive != 0; excl != (n.Name != "node0001") {
			t.Errorf("%s job-exclusive = %v", n.Name, excl)
		}
	}
	used := s.cluster().UsedVPs()
	if got := alloc.FreeVPs(s.nodes[1], used["node0001"]); len(got) != 1 || got[0] != 1 {
		t.Errorf("free VPs of node0001 = %v, want [1]", got)
	}
	s.run.SetSuspended("susp.srv", false)
	s.refreshNodeJobs()
	if got := s.nodes[1].Attrs.Get(pbsattr.NodeJobs); got != "0/multi.srv, 1/susp.srv" {
		t.Errorf("node0001 jobs after resume = %q", got)
	}
}

// A StatusJob naming attributes answers from a view of those attributes
// only; the answer is the one the full view gives.
func TestStatusWantedAttrs(t *testing.T) {
	s := testServer(t, t.TempDir(), InitCreate)
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	mustSubmit(t, c, "root", attr("Hold_Types", "u"), rattr("Resource_List", "walltime", "00:20:00"))
	mustSubmit(t, c, "root", attr("Job_Name", "second"))
	for _, want := range []batchreq.AttrList{
		batchreq.StatusNames("job_state"),
		batchreq.StatusNames("Job_Name", "queue", "Resource_List", "Hold_Types", "server"),
		{batchreq.NewResourceAttr("Resource_List", "walltime", ""), batchreq.NewAttr("substate", ""), batchreq.NewAttr("queue_rank", "")},
		batchreq.StatusNames("Job_Owner", "queue_type", "euser", "Variable_List", "job_state"),
	} {
		p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{Attrs: want}))
		if p.Code != 0 || len(p.Status) != 2 {
			t.Fatalf("%v: code %d, %d objects", want, p.Code, len(p.Status))
		}
		s.mu.RLock()
		for _, o := range p.Status {
			j := s.findJob(o.Name)
			ref, _ := statusList(state.JobDefs, clientView(s.jobView(j)), &handler.Asker{Manager: true, Operator: true, Privileged: true}, true, want)
			if attrText(o.Attrs) != attrText(ref) || len(ref) == 0 {
				t.Errorf("%s %v:\n got %v\nwant %v", o.Name, want, o.Attrs, ref)
			}
		}
		s.mu.RUnlock()
	}
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("job_state", "no_such_attr")}))
	if p.Code != batchreq.PBSE_NOATTR {
		t.Errorf("unknown attribute: code %d, want PBSE_NOATTR", p.Code)
	}
}

// attrText prints the names, resources and values of l.
func attrText(l batchreq.AttrList) string {
	var b strings.Builder
	for _, a := range l {
		fmt.Fprintf(&b, "%s.%s=%s;", a.Name, a.Resource, a.Value)
	}
	return b.String()
}
