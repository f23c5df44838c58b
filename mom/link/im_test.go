package link

import (
	"context"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
	"gopbs/rpp"
)

// TestJoinAttrs: IM_JOIN_JOB carries the QueueJob attributes with
// job_state, mtime and cookie where TORQUE's mother superior puts them
// (captures 105, 106).
func TestJoinAttrs(t *testing.T) {
	names := func(l batchreq.AttrList) []string {
		var out []string
		for _, a := range l {
			out = append(out, a.Name)
		}
		return out
	}
	queueJob := batchreq.AttrList{
		batchreq.NewAttr("Job_Name", "multi"), batchreq.NewAttr("Job_Owner", "alice@vm"),
		batchreq.NewAttr("queue", "batch"), batchreq.NewAttr("server", "vm"), batchreq.NewAttr("Checkpoint", "u"),
		batchreq.NewAttr("Error_Path", "vm:/home/alice/multi.e41"), batchreq.NewAttr("exec_host", "vm/0+vm2/0"),
		batchreq.NewAttr("Join_Path", "n"), batchreq.NewAttr("Keep_Files", "n"),
		batchreq.NewAttr("Output_Path", "vm:/home/alice/multi.o41"),
		batchreq.NewResourceAttr("Resource_List", "nodes", "2"), batchreq.NewAttr("euser", "alice"),
		batchreq.NewAttr("hashname", "41.vm"), batchreq.NewAttr("start_time", "1795315294"),
		batchreq.NewAttr("fault_tolerant", "False"),
	}
	want := []string{"Job_Name", "Job_Owner", "job_state", "queue", "server", "Checkpoint", "Error_Path", "exec_host",
		"Join_Path", "Keep_Files", "mtime", "Output_Path", "Resource_List", "euser", "hashname", "cookie", "start_time", "fault_tolerant"}
	now := time.Unix(1795315300, 0)
	got := joinAttrs(queueJob, "C00C1E", now)
	if !slices.Equal(names(got), want) {
		t.Errorf("order %q, want %q", names(got), want)
	}
	for name, value := range map[string]string{"job_state": "T", "mtime": "1795315294", "cookie": "C00C1E"} {
		if v, _ := got.Get(name); v != value {
			t.Errorf("%s = %q, want %q", name, v, value)
		}
	}
	// A cookie the server sent is replaced by the job's, in its place;
	// without start_time, mtime is the time of the join and the cookie
	// comes last.
	got = joinAttrs(batchreq.AttrList{batchreq.NewAttr("cookie", "OLD"), batchreq.NewAttr("Keep_Files", "n")}, "NEW", now)
	if !slices.Equal(names(got), []string{"Keep_Files", "mtime", "cookie"}) {
		t.Errorf("order %q", names(got))
	}
	if v, _ := got.Get("cookie"); v != "NEW" {
		t.Errorf("cookie %q", v)
	}
	if v, _ := got.Get("mtime"); v != "1795315300" {
		t.Errorf("mtime %q", v)
	}
}

// TestNodeOf: TM node numbers are virtual nodes; their host's place in
// exec_host is the node number (PBS_NODENUM).
func TestNodeOf(t *testing.T) {
	vnodes, _ := jobexec.ParseExecHost("a/0+a/1+b/0+c/0+b/1")
	mj := &msJob{vnodes: vnodes, hosts: jobHosts(vnodes)}
	if !slices.Equal(mj.hosts, []string{"a", "b", "c"}) {
		t.Fatalf("hosts %q", mj.hosts)
	}
	for vnode, want := range []int{0, 0, 1, 2, 1} {
		if got, ok := mj.nodeOf(vnode); !ok || got != want {
			t.Errorf("nodeOf(%d) = %d %v, want %d", vnode, got, ok, want)
		}
	}
	for _, bad := range []int{-1, 5} {
		if _, ok := mj.nodeOf(bad); ok {
			t.Errorf("nodeOf(%d) accepted", bad)
		}
	}
	single := &msJob{hosts: []string{"a"}}
	if n, ok := single.nodeOf(0); !ok || n != 0 {
		t.Errorf("job without exec_host: nodeOf(0) = %d %v", n, ok)
	}
}

// fakeSister is a sister MOM's IM endpoint on 127.0.0.2.
type fakeSister struct {
	ep   *rpp.Endpoint
	port int
}

func newFakeSister(t *testing.T) *fakeSister {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("127.0.0.2: %v", err)
	}
	fs := &fakeSister{ep: rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40}),
		port: pc.LocalAddr().(*net.UDPAddr).Port}
	t.Cleanup(func() { fs.ep.Close() })
	return fs
}

// startMotherSuperior starts a MOM reporting to a fake server whose jobs'
// second host "sister" is fs.
func startMotherSuperior(t *testing.T, fs *fakeSister) (*fakeServer, *testMom) {
	t.Helper()
	srv := newFakeServer(t)
	srv.serve(acceptAll)
	tm := startMomIn(t, srv, "$check_poll_time 1\n$timeout 3\n", openDir(t, "gopbs-mom-", nil), "none", func(o *Options) {
		o.RMPort = fs.port
		o.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "sister" {
				return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	})
	dumpLogOnFailure(t, tm)
	return srv, tm
}

// launchMulti launches a job on localhost and sister; it returns the
// Commit reply.
func launchMulti(t *testing.T, tm *testMom, id, script string) *batchreq.Reply {
	t.Helper()
	attrs := jobAttrs(id, os.TempDir())
	for i := range attrs {
		if attrs[i].Name == "exec_host" {
			attrs[i].Value, attrs[i].Size = "localhost/0+sister/0", 0
		}
	}
	b := dialBatch(t, tm.batch)
	defer b.disconnect()
	if rep := b.do(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{JobID: id, Attrs: attrs}, ""); rep.Code != 0 {
		t.Fatalf("QueueJob: %d", rep.Code)
	}
	b.do(batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{JobID: id, Data: []byte(script)}, "")
	b.do(batchreq.PBS_BATCH_RdytoCommit, &batchreq.JobID{ID: id}, "")
	return b.do(batchreq.PBS_BATCH_Commit, &batchreq.JobID{ID: id}, "")
}

// TestJoinRefused: a sister that refuses IM_JOIN_JOB fails the job's
// start; the obit carries JOB_EXEC_RETRY (the server requeues the job).
func TestJoinRefused(t *testing.T) {
	requireUser(t)
	fs := newFakeSister(t)
	srv, tm := startMotherSuperior(t, fs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		s, err := fs.ep.Accept(ctx)
		if err != nil {
			return
		}
		b, err := s.Recv(ctx)
		if err != nil {
			return
		}
		if req, err := momproto.DecodeIM(b, nil); err == nil {
			s.Send(imError(req, batchreq.PBSE_BADUSER).Append(nil))
		}
	}()
	rep := launchMulti(t, tm, "30.testserver", "exit 0\n")
	if rep.Choice == batchreq.BATCH_REPLY_CHOICE_Commit {
		t.Errorf("Commit accepted although the sister refused to join")
	}
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus != jobexec.JOB_EXEC_RETRY {
		t.Errorf("obit exit status %d, want %d", obit.ExitStatus, jobexec.JOB_EXEC_RETRY)
	}
}

// TestSisterFailureKillsJob: when the stream to a sister dies while the
// job runs (the sister stops answering the usage polls), the mother
// superior kills the job.
func TestSisterFailureKillsJob(t *testing.T) {
	requireUser(t)
	fs := newFakeSister(t)
	srv, tm := startMotherSuperior(t, fs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	joined := make(chan *momproto.IMMessage, 1)
	go func() {
		s, err := fs.ep.Accept(ctx)
		if err != nil {
			return
		}
		b, err := s.Recv(ctx)
		if err != nil {
			return
		}
		req, err := momproto.DecodeIM(b, nil)
		if err != nil {
			return
		}
		s.Send(imReply(req, momproto.Empty{}).Append(nil))
		s.Flush(ctx)
		joined <- req
		fs.ep.Close() // the sister dies
	}()
	if rep := launchMulti(t, tm, "31.testserver", "exec sleep 60\n"); rep.Choice != batchreq.BATCH_REPLY_CHOICE_Commit {
		t.Fatalf("Commit: %+v", rep)
	}
	select {
	case req := <-joined:
		jb := req.Body.(*momproto.IMJoinJob)
		if req.Command != momproto.IM_JOIN_JOB || jb.NodeID != 1 || jb.NumNodes != 2 || jb.StdoutPort == 0 {
			t.Errorf("join request %+v %+v", req.IMHeader, jb)
		}
		if v, _ := jb.Attrs.Get("cookie"); len(v) != 32 || v != req.Cookie {
			t.Errorf("cookie attribute %q, header %q", v, req.Cookie)
		}
	case <-ctx.Done():
		t.Fatal("no IM_JOIN_JOB")
	}
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
	if obit.ExitStatus <= 256 {
		t.Errorf("obit exit status %d, want a kill by signal", obit.ExitStatus)
	}
	waitLog(t, tm, "(sister) failed")
}
