package server

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
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
	t.Logf("%d submissions in %v: %.0f/s, %d commits", n, el, float64(n)/el.Seconds(), s.store.Commits())
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
	t.Logf("warm restart with %d jobs: %v", len(s2.jobs), time.Since(start))
}
