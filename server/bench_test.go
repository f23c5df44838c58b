package server

// Hot-path benchmarks of pbs_server, through the wire on loopback (a
// privileged connection, so they need root) and of the store alone:
//
//	go test -run '^$' -bench . -benchtime 2000x ./server/
//
// The figures and what limits them are in docs/performance.md.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/state"
	"gopbs/server/store"
)

// benchServer starts a server in a temporary home with an execution
// queue "batch" as the default queue.
func benchServer(b *testing.B) *Server { return benchServerMode(b, false) }

// benchServerMode is benchServer serving its connections on the event
// loop or, with goroutine set, on a goroutine each.
func benchServerMode(b *testing.B, goroutine bool) *Server {
	b.Helper()
	if syscall.Geteuid() != 0 {
		b.Skip("needs root for a reserved source port")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Home: b.TempDir(), ServerName: "vm", InitType: InitCreate, Listener: ln, GoroutinePerConn: goroutine})
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	b.Cleanup(func() { s.Shutdown("Quick") })
	c := benchDial(b, s)
	defer c.nc.Close()
	for _, r := range []*batchreq.Request{
		benchMgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution")),
		benchMgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")),
		benchMgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", "batch")),
		benchMgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("acl_roots", "root")),
	} {
		if p := c.do(b, r); p.Code != 0 {
			b.Fatalf("setup: %d %s", p.Code, p.Text)
		}
	}
	return s
}

func benchMgr(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

// benchConn is a privileged connection (from a reserved port).
type benchConn struct {
	nc  net.Conn
	r   *dis.Reader
	buf []byte
}

var benchPortMu sync.Mutex

func benchDial(b *testing.B, s *Server) *benchConn {
	b.Helper()
	benchPortMu.Lock()
	defer benchPortMu.Unlock()
	for p := 1023; p > 600; p-- {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}}
		nc, err := d.Dial("tcp", s.Addr().String())
		if err == nil {
			return &benchConn{nc: nc, r: dis.NewReader(nc)}
		}
	}
	b.Fatal("no free reserved port")
	return nil
}

func (c *benchConn) do(b *testing.B, req *batchreq.Request) *batchreq.Reply {
	c.nc.SetDeadline(time.Now().Add(time.Minute))
	c.buf = req.Append(c.buf[:0])
	if _, err := c.nc.Write(c.buf); err != nil {
		b.Fatal(err)
	}
	p, err := batchreq.ReadReply(c.r)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

var benchJobAttrs = batchreq.AttrList{
	batchreq.NewAttr("Job_Name", "bench"),
	batchreq.NewAttr("Variable_List", "PBS_O_HOME=/root,PBS_O_LANG=C,PBS_O_LOGNAME=root,PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh,PBS_O_HOST=localhost,PBS_O_WORKDIR=/root"),
	batchreq.NewAttr("Checkpoint", "u"), batchreq.NewAttr("Hold_Types", "u"), batchreq.NewAttr("Join_Path", "n"),
	batchreq.NewAttr("Keep_Files", "n"), batchreq.NewAttr("Mail_Points", "a"), batchreq.NewAttr("Priority", "0"),
	batchreq.NewAttr("Rerunable", "True"), batchreq.NewAttr("fault_tolerant", "False"),
}

// submit runs qsub's four requests.
func (c *benchConn) submit(b *testing.B) {
	p := c.do(b, batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: benchJobAttrs}))
	if p.Code != 0 {
		b.Fatalf("QueueJob: %d %s", p.Code, p.Text)
	}
	id := p.JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte("#!/bin/sh\nsleep 60\n")}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	} {
		if p := c.do(b, r); p.Code != 0 {
			b.Fatalf("%s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
	}
}

// BenchmarkStatusServer is one request through decode, dispatch and
// encode without touching the store: a StatusSvr round trip.
func BenchmarkStatusServer(b *testing.B) {
	s := benchServer(b)
	c := benchDial(b, s)
	req := batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{})
	b.ResetTimer()
	for b.Loop() {
		if p := c.do(b, req); p.Code != 0 {
			b.Fatal(p.Code)
		}
	}
}

// BenchmarkSubmit is one durable submission (four requests, one fsync)
// at a time on one connection.
func BenchmarkSubmit(b *testing.B) {
	s := benchServer(b)
	c := benchDial(b, s)
	b.ResetTimer()
	for b.Loop() {
		c.submit(b)
	}
}

// BenchmarkSubmitParallel8 is submissions from eight connections at
// once, which share fsyncs (group commit), served by the event loop and
// by a goroutine per connection.
func BenchmarkSubmitParallel8(b *testing.B) {
	for _, m := range connModes {
		b.Run(m.name, func(b *testing.B) {
			s := benchServerMode(b, m.goroutine)
			conns := make(chan *benchConn, 8)
			for range 8 {
				conns <- benchDial(b, s)
			}
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				c := <-conns
				for pb.Next() {
					c.submit(b)
				}
				conns <- c
			})
		})
	}
}

// BenchmarkStatusJob10k is a full StatusJob (qstat -f) of 10,000 jobs;
// BenchmarkStatusJob10kState asks for job_state only.
func BenchmarkStatusJob10k(b *testing.B) { benchStatusJob10k(b, nil) }

func BenchmarkStatusJob10kState(b *testing.B) {
	benchStatusJob10k(b, batchreq.StatusNames("job_state"))
}

func benchStatusJob10k(b *testing.B, want batchreq.AttrList) {
	s := benchServer(b)
	var wg sync.WaitGroup
	for range 8 {
		c := benchDial(b, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10000 / 8 {
				c.submit(b)
			}
		}()
	}
	wg.Wait()
	c := benchDial(b, s)
	req := batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{Attrs: want})
	b.ResetTimer()
	for b.Loop() {
		if p := c.do(b, req); p.Code != 0 || len(p.Status) != 10000 {
			b.Fatalf("status: %d, %d jobs", p.Code, len(p.Status))
		}
	}
}

// BenchmarkStoreApply is one durable store batch (a job record and its
// script) at a time; BenchmarkStoreApplyParallel8 has eight writers.
func BenchmarkStoreApply(b *testing.B)          { benchStore(b, 1) }
func BenchmarkStoreApplyParallel8(b *testing.B) { benchStore(b, 8) }

func benchStore(b *testing.B, writers int) {
	st, err := store.OpenBolt(filepath.Join(b.TempDir(), "serverdb.bolt"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	job := make([]byte, 1500)
	script := make([]byte, 40)
	var mu sync.Mutex
	n := 0
	next := func() int { mu.Lock(); defer mu.Unlock(); n++; return n }
	b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("%d.vm", next())
			if err := st.Apply(store.Put(store.Jobs, id, job), store.Put(store.Script, id, script)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHeapPerQueuedJob fills a server with 20,000 held jobs (8
// clients) and reports the live heap per queued job after a collection;
// run it with -benchtime 1x, and GOPBS_HEAPPROFILE=file to write a heap
// profile while the jobs are queued.
func BenchmarkHeapPerQueuedJob(b *testing.B) {
	const jobs = 20000
	for b.Loop() {
		s := benchServer(b)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		for range 8 {
			c := benchDial(b, s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range jobs / 8 {
					c.submit(b)
				}
			}()
		}
		wg.Wait()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/jobs, "heap-bytes/job")
		if path := os.Getenv("GOPBS_HEAPPROFILE"); path != "" {
			// the heap while the jobs are queued (-memprofile would
			// see it after the server is gone)
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			pprof.WriteHeapProfile(f)
			f.Close()
		}
		s.Shutdown("Quick")
	}
}

// allocServer returns a server with nodes nodes of np VPs each, running
// jobs holding every VP of the first busy nodes (exec_host set), and one
// queued job asking for one node with np VPs: the state in which a
// scheduling cycle sends RunJobs.
func allocServer(nodes, np, busy int) (*Server, *state.Job) {
	s := &Server{nodeByName: map[string]*state.Node{}}
	s.run = runHost{s}.newLink()
	q := &state.Queue{Name: "batch"}
	for i := range nodes {
		n := &state.Node{Name: fmt.Sprintf("node%04d", i), NP: np}
		s.nodes = append(s.nodes, n)
		s.nodeByName[n.Name] = n
	}
	seq := 0
	for _, n := range s.nodes[:busy] {
		for vp := range np {
			j := &state.Job{ID: fmt.Sprintf("%d.srv", seq), State: pbsattr.StateQueued}
			seq++
			s.jobs.Link(j)
			s.jobs.Enqueue(j, q)
			j.Attrs.Set(pbsattr.JobExecHost, n.Name+"/"+strconv.Itoa(vp))
			s.jobs.SetState(j, pbsattr.StateRunning, pbsattr.SubRunning)
		}
	}
	j := &state.Job{ID: "queued.srv", State: pbsattr.StateQueued}
	s.jobs.Link(j)
	s.jobs.Enqueue(j, q)
	j.Attrs.SetRes(pbsattr.JobResourceList, "neednodes", "1:ppn="+strconv.Itoa(np))
	return s, j
}

// BenchmarkAllocate1kNodes: what a RunJob costs to choose VPs with 1,000
// nodes of 8 VPs, 8,000 jobs running on 999 of them (one node free).
func BenchmarkAllocate1kNodes(b *testing.B) {
	s, j := allocServer(1000, 8, 999)
	for b.Loop() {
		slots, p := s.cluster().Allocate(j, "", nil)
		if p != nil || len(slots) != 8 {
			b.Fatalf("allocate: %v %+v", slots, p)
		}
	}
}

// BenchmarkRefreshNodeJobs1kNodes: the node bookkeeping redone after a
// job starts or ends, same cluster.
func BenchmarkRefreshNodeJobs1kNodes(b *testing.B) {
	s, _ := allocServer(1000, 8, 999)
	for b.Loop() {
		s.refreshNodeJobs()
	}
}
