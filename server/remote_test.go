package server

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/link/remote"
	"gopbs/server/state"
	"gopbs/server/store"
)

// otherServer starts a second server, named "other", configured like the
// capture cluster, and returns it with a root connection.
func otherServer(t *testing.T) (*Server, *client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Home: t.TempDir(), ServerName: "other", InitType: InitCreate, Listener: ln,
		AuthWait: 200 * time.Millisecond, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	root := dialPrivileged(t, s.Addr())
	setupCluster(t, root)
	return s, root
}

// at is the destination queue@127.0.0.1:port of a queue of server s.
func at(queue string, s *Server) string {
	return queue + "@127.0.0.1:" + strconv.Itoa(s.Addr().(*net.TCPAddr).Port)
}

// jobHop returns a job's hop_count (never reported) and whether the
// server has the job.
func jobHop(s *Server, id string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j := s.jobs.Get(id)
	if j == nil {
		return "", false
	}
	return j.Attrs.Get(pbsattr.JobHopCount), true
}

func waitJobAt(t *testing.T, s *Server, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := jobHop(s, id); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s did not reach server %s", id, s.name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestParseDestination(t *testing.T) {
	s := testServer(t, "", InitCreate)
	own := strconv.Itoa(s.Addr().(*net.TCPAddr).Port)
	for _, tc := range []struct {
		in, queue, addr string
		bad             bool
	}{
		{"batch", "batch", "", false},
		{"", "", "", false},
		{"batch@vm", "batch", "", false},
		{"batch@VM", "batch", "", false},
		{"batch@vm:" + own, "batch", "", false},
		{"batch@vm:1", "batch", "vm:1", false},
		{"batch@other", "batch", "other:15001", false},
		{"short@10.1.2.3:16001", "short", "10.1.2.3:16001", false},
		{"@other", "", "other:15001", false},
		{"batch@localhost:" + own, "batch", "", false},
		{"batch@127.0.0.1:" + own, "batch", "", false},
		{"batch@[::1]:" + own, "batch", "", false},
		{"batch@127.0.0.1:1", "batch", "127.0.0.1:1", false},
		{"batch@localhost", "batch", "localhost:15001", false}, // this test server is not on 15001
		{"batch@]", "batch", "", true},
		{"batch@no host", "batch", "", true},
		{"batch@h:99999", "batch", "", true},
		{"batch@*.org", "batch", "", true},
	} {
		d := s.router.Destination(tc.in)
		if d.Queue != tc.queue || d.Addr != tc.addr || d.Bad != tc.bad {
			t.Errorf("parseDestination(%q) = %+v, want queue %q addr %q bad %v", tc.in, d, tc.queue, tc.addr, tc.bad)
		}
	}
	// a MoveJob to an unusable server is refused at once
	root := dialPrivileged(t, s.Addr())
	setupCluster(t, root)
	id := mustSubmit(t, root, "root")
	if p := root.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "root", &batchreq.MoveJob{JobID: id, Destination: "batch@no host"})); p.Code != batchreq.PBSE_BADHOST {
		t.Fatalf("MoveJob to a bad host: %d %q", p.Code, p.Text)
	}
}

// TestMoveToOtherServer moves jobs with MoveJob (qmove queue@server) to a
// second GoPBS server on loopback: the job leaves, keeps its id, owner,
// attributes and script there and counts one more hop; a refusal of the
// other server reaches the client and leaves the job where it was.
func TestMoveToOtherServer(t *testing.T) {
	cl := newCluster(t)
	other, oroot := otherServer(t)
	id := mustSubmit(t, cl.alice, "alice", attr("Hold_Types", "u"), rattr("Resource_List", "walltime", "00:05:00"))
	p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "alice", &batchreq.MoveJob{JobID: id, Destination: at("short", other)}))
	if p.Code != 0 {
		t.Fatalf("MoveJob: %d %q", p.Code, p.Text)
	}
	if r := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id})); r.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("job still on the first server: %+v", r)
	}
	for name, want := range map[string]string{
		"queue": "short", "job_state": "H", "Hold_Types": "u", "Job_Owner": statusOwner(t, cl), "server": "other",
		"Resource_List.walltime": "00:05:00", "Job_Name": "job",
	} {
		if got := statusAttr(t, oroot, id, name); got != want {
			t.Errorf("on the other server %s = %q, want %q", name, got, want)
		}
	}
	if vl := statusAttr(t, oroot, id, "Variable_List"); vl != "PBS_O_QUEUE=batch,PBS_O_HOST=vm,PBS_O_HOME=/home/alice,PBS_O_WORKDIR=/home/alice" {
		t.Errorf("Variable_List %q", vl)
	}
	if hop, _ := jobHop(other, id); hop != "2" {
		t.Errorf("hop_count %q, want 2", hop)
	}
	if logs := readLogs(t, other); !strings.Contains(logs, ";Job;"+id+";enqueuing into short, state 2 hop 2") {
		t.Errorf("the other server's log lacks the enqueuing line with hop 2")
	}
	if b, err := other.store.Get(store.Script, id); err != nil || string(b) != "#!/bin/sh\nsleep 1\n" {
		t.Errorf("script on the other server %q %v", b, err)
	}
	// the other server's refusal is passed on; the job stays
	oroot.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "false")))
	id2 := mustSubmit(t, cl.alice, "alice")
	p = cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "alice", &batchreq.MoveJob{JobID: id2, Destination: at("batch", other)}))
	if p.Code != batchreq.PBSE_QUNOENB {
		t.Fatalf("MoveJob to a disabled queue: %d %q", p.Code, p.Text)
	}
	if st := statusAttr(t, cl.root, id2, "job_state"); st != "Q" {
		t.Fatalf("refused job in state %s", st)
	}
	if _, ok := jobHop(other, id2); ok {
		t.Fatal("refused job exists on the other server")
	}
	// an unreachable server
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "batch@" + ln.Addr().String()
	ln.Close()
	p = cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "alice", &batchreq.MoveJob{JobID: id2, Destination: dead}))
	if p.Code != batchreq.PBSE_ROUTEREJ || statusAttr(t, cl.root, id2, "job_state") != "Q" {
		t.Fatalf("MoveJob to no server: %d %q", p.Code, p.Text)
	}
	// bob may not move alice's job
	if p := cl.bob.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "bob", &batchreq.MoveJob{JobID: id2, Destination: at("short", other)})); p.Code != batchreq.PBSE_PERM {
		t.Fatalf("bob's MoveJob: %d", p.Code)
	}
}

// statusOwner is the Job_Owner the first server gives alice's jobs.
func statusOwner(t *testing.T, cl *cluster) string {
	t.Helper()
	id := mustSubmit(t, cl.alice, "alice")
	return statusAttr(t, cl.root, id, "Job_Owner")
}

// TestRouteToOtherServer routes jobs through route_destinations naming
// another server: a temporary refusal there is retried, a permanent one
// makes the job go on to the next destination.
func TestRouteToOtherServer(t *testing.T) {
	cl := newCluster(t)
	other, oroot := otherServer(t)
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route",
		attr("route_destinations", at("nosuch", other)+","+at("batch", other)+",short"), attr("route_retry_time", "1")))
	// the other server takes it in its batch queue (nosuch refused it)
	p := submitAs(t, cl.alice, "alice", "route")
	if p.Code != 0 {
		t.Fatalf("submit: %d %q", p.Code, p.Text)
	}
	id := p.JobID
	waitJobAt(t, other, id)
	if q := statusAttr(t, oroot, id, "queue"); q != "batch" {
		t.Fatalf("routed into %s", q)
	}
	// The job is listed from RdytoCommit on; its script is durable once
	// the Commit that follows has been served.
	var b []byte
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err = other.store.Get(store.Script, id); err != nil || b != nil {
			break
		}
	}
	if err != nil || string(b) != "#!/bin/sh\nsleep 1\n" {
		t.Errorf("routed job's script on the other server %q %v", b, err)
	}
	if hop, _ := jobHop(other, id); hop != "2" {
		t.Errorf("hop_count %q", hop)
	}
	// every destination refuses for now (other's batch and the local
	// short are disabled): the job waits and is routed on a retry once
	// other's batch takes jobs again
	oroot.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "false")))
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", attr("enabled", "false")))
	p = submitAs(t, cl.alice, "alice", "route", rattr("Resource_List", "walltime", "00:01:00"))
	if p.Code != 0 {
		t.Fatalf("submit: %d %q", p.Code, p.Text)
	}
	id = p.JobID
	time.Sleep(1500 * time.Millisecond)
	if q := statusAttr(t, cl.root, id, "queue"); q != "route" {
		t.Fatalf("job in %q while every destination refuses for now", q)
	}
	oroot.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", attr("enabled", "true")))
	waitJobAt(t, other, id)
	// every destination refuses for good: the job is aborted
	oroot.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", rattr("resources_max", "walltime", "00:00:10")))
	cl.root.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", attr("enabled", "true")))
	p = submitAs(t, cl.alice, "alice", "route", rattr("Resource_List", "walltime", "05:00:00"))
	if p.Code != 0 {
		t.Fatalf("submit: %d %q", p.Code, p.Text)
	}
	id = p.JobID
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
		if r.Code == batchreq.PBSE_UNKJOBID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job refused everywhere still here: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok := jobHop(other, id); ok {
		t.Fatal("refused job on the other server")
	}
}

// TestHopCount checks that a server refuses a job that has hopped too
// often (PBSE_HOPCOUNT) and counts the hop of one it accepts.
func TestHopCount(t *testing.T) {
	s, root := otherServer(t)
	send := func(id, hops string) *batchreq.Reply {
		p := root.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "PBS_Server", &batchreq.QueueJob{JobID: id, Destination: "batch", Attrs: batchreq.AttrList{
			attr("Job_Name", "hopper"), attr("Job_Owner", "alice@vm"), attr("hop_count", hops),
			attr("Variable_List", "PBS_O_QUEUE=route,PBS_O_HOST=vm"),
		}}))
		if p.Code != 0 {
			return p
		}
		for _, r := range []*batchreq.Request{
			batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "PBS_Server", &batchreq.JobFile{JobID: id, Data: []byte("true\n")}),
			batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "PBS_Server", &batchreq.JobID{ID: id}),
			batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "PBS_Server", &batchreq.JobID{ID: id}),
		} {
			if p = root.do(r); p.Code != 0 {
				return p
			}
		}
		return p
	}
	// a job from a server must name its owner
	p := root.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "PBS_Server", &batchreq.QueueJob{JobID: "6.vm", Destination: "batch",
		Attrs: batchreq.AttrList{attr("Job_Name", "x")}}))
	if p.Code != batchreq.PBSE_IVALREQ || p.Text != "Invalid request MSG=no job owner specified" {
		t.Fatalf("job without owner: %d %q", p.Code, p.Text)
	}
	if p := send("7.vm", "10"); p.Code != batchreq.PBSE_HOPCOUNT || p.Text != "Job routing over too many hops MSG=max job hop reached" {
		t.Fatalf("11th hop: %d %q", p.Code, p.Text)
	}
	if p := send("8.vm", "9"); p.Code != 0 {
		t.Fatalf("10th hop: %d %q", p.Code, p.Text)
	}
	if hop, _ := jobHop(s, "8.vm"); hop != "10" {
		t.Fatalf("hop_count %q", hop)
	}
	// the moved job took no job number of this server
	if next := mustSubmit(t, root, "alice"); next != "0.other" {
		t.Fatalf("next job %s", next)
	}
	if vl := statusAttr(t, root, "8.vm", "Variable_List"); vl != "PBS_O_QUEUE=route,PBS_O_HOST=vm" {
		t.Fatalf("Variable_List %q", vl)
	}
}

// TestInterruptedMoveRequeued checks that a job saved while being sent to
// another server is queued again by a warm restart.
func TestInterruptedMoveRequeued(t *testing.T) {
	cl := newCluster(t)
	id := mustSubmit(t, cl.alice, "alice")
	cl.s.mu.Lock()
	j := cl.s.jobs.Get(id)
	if _, code := cl.s.router.BeginMove(j, remote.Destination{Queue: "batch", Addr: "127.0.0.1:1"}); code != 0 {
		cl.s.mu.Unlock()
		t.Fatalf("beginMove: %d", code)
	}
	err := cl.s.store.Apply(state.SaveJob(j))
	cl.s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if st := statusAttr(t, cl.root, id, "job_state"); st != "T" {
		t.Fatalf("job in transit shows %s", st)
	}
	cl.s.Shutdown("Quick")
	s2 := testServer(t, cl.home, InitWarm)
	root := dialPrivileged(t, s2.Addr())
	if st, sub := statusAttr(t, root, id, "job_state"), statusAttr(t, root, id, "substate"); st != "Q" || sub != "10" {
		t.Fatalf("after the restart %s/%s, want Q/10", st, sub)
	}
}

// TestTrackingTable checks LocateJob for jobs that moved away: the
// destination the move recorded, a later location reported by TrackJob
// (servers only), and both after a warm restart.
func TestTrackingTable(t *testing.T) {
	cl := newCluster(t)
	other, _ := otherServer(t)
	id := mustSubmit(t, cl.alice, "alice")
	if p := cl.alice.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "alice", &batchreq.MoveJob{JobID: id, Destination: at("batch", other)})); p.Code != 0 {
		t.Fatalf("MoveJob: %d %q", p.Code, p.Text)
	}
	where := strconv.Itoa(other.Addr().(*net.TCPAddr).Port)
	locate := func(c *client, id string) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_LocateJob, "alice", &batchreq.JobID{ID: id}))
	}
	for _, form := range []string{id, id + "@vm", jobIDSeq(id)} {
		if p := locate(cl.alice, form); p.Code != 0 || p.Choice != batchreq.BATCH_REPLY_CHOICE_Locate || p.Location != "127.0.0.1:"+where {
			t.Fatalf("LocateJob %s of the moved job: %+v", form, p)
		}
	}
	track := func(c *client, user, id string, hop int, loc string) *batchreq.Reply {
		return c.do(batchreq.NewRequest(batchreq.PBS_BATCH_TrackJob, user, &batchreq.TrackJob{JobID: id, HopCount: hop, Location: loc, State: 'Q'}))
	}
	if p := track(cl.alice, "alice", "77.vm", 2, "elsewhere"); p.Code != batchreq.PBSE_IVALREQ {
		t.Fatalf("TrackJob from a user: %d", p.Code)
	}
	if p := track(cl.root, "PBS_Server", "77.vm", 2, "elsewhere"); p.Code != 0 {
		t.Fatalf("TrackJob: %d %q", p.Code, p.Text)
	}
	if p := track(cl.root, "PBS_Server", id, 3, "third:15001"); p.Code != 0 {
		t.Fatalf("TrackJob: %d %q", p.Code, p.Text)
	}
	if p := track(cl.root, "PBS_Server", id, 1, "stale"); p.Code != 0 { // fewer hops: older news
		t.Fatalf("TrackJob: %d %q", p.Code, p.Text)
	}
	if p := locate(cl.alice, "99.vm"); p.Code != batchreq.PBSE_UNKJOBID {
		t.Fatalf("LocateJob of an unknown job: %+v", p)
	}
	cl.s.Shutdown("Quick")
	s2 := testServer(t, cl.home, InitWarm)
	root := dialPrivileged(t, s2.Addr())
	for jid, want := range map[string]string{id: "third:15001", "77.vm": "elsewhere"} {
		if p := locate(root, jid); p.Code != 0 || p.Location != want {
			t.Errorf("after the restart LocateJob %s: %d %q, want %q", jid, p.Code, p.Location, want)
		}
	}
}

// readLogs returns the contents of a server's log files.
func readLogs(t *testing.T, s *Server) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.cfg.Home, "server_logs", "*"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// FuzzParseDestination checks that any destination a client or a
// route_destinations entry gives parses without panicking into a queue
// and, for another server, a dialable host:port.
func FuzzParseDestination(f *testing.F) {
	for _, seed := range []string{"batch", "batch@vm", "batch@other:16001", "@", "q@[::1]:1", "q@:", "a@b@c", "q@h:p:q"} {
		f.Add(seed)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(Config{Home: f.TempDir(), ServerName: "vm", InitType: InitCreate, Listener: ln})
	if err != nil {
		f.Fatal(err)
	}
	go s.Serve()
	f.Cleanup(func() { s.Shutdown("Quick") })
	f.Fuzz(func(t *testing.T, in string) {
		d := s.router.Destination(in)
		if !strings.HasPrefix(in, d.Queue) {
			t.Fatalf("queue %q is not the start of %q", d.Queue, in)
		}
		if d.Addr != "" {
			if _, _, err := net.SplitHostPort(d.Addr); err != nil {
				t.Fatalf("address %q of %q: %v", d.Addr, in, err)
			}
			if d.Bad {
				t.Fatalf("%q: both an address and bad", in)
			}
		}
	})
}
