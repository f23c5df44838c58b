package compattests

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/server"
)

// The server replay suite sends the client side of the captured
// conversations with pbs_server to a fresh GoPBS server configured like
// the capture cluster, and compares every reply with the captured one,
// up to the values that must differ (times, rates).
//
// pbs_iff connections are not replayed byte for byte (they name the
// client's source port, which differs): each replayed client connection
// is authenticated through a real AuthenticateUser from a reserved port
// for the user its requests carry.

// replayStep is one scenario of a replay sequence.
type replayStep struct {
	id      int
	pending string // why it cannot match yet ("" = must match)
	// before runs manager requests (as root) to reproduce changes the
	// capture run made between scenarios.
	before []*batchreq.Request
	// setNextJob sets next_job_number from the scenario's first captured
	// Queue reply before replaying (round 2 starts at other numbers).
	setNextJob bool
	// compress replays the pauses between connections (those longer than
	// a second) as short sleeps, for scenarios that wait for timers made
	// short by the before requests.
	compress bool
}

// Reasons the scenarios with jobs 9 and 10 running (started after
// scenario 34 as the capture run's qrun did) do not match yet.
const (
	pendingJobAttrs = "jobs 9 and 10 are submitted by the test, not by the captured qsub: their attribute set differs (Checkpoint, submit_args, Variable_List, ...)"
	pendingCounts   = "the capture's state_count counts array 5[]'s four sub-jobs, listed Q, as Held (Queued:2 Held:6); GoPBS reports Queued:6 Held:2. Likely the array-count defect spec 04 §4 (README deviation 45) says not to reproduce, seen there later as Queued:-4 Held:4"
	pendingUsage    = "the capture's running jobs carry resources_used and session_id from the MOM's status poll; the replay MOM reports no usage"
)

func mgrReq(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, "root", &batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
}

func setServer(name, value string) *batchreq.Request {
	return mgrReq(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr(name, value))
}

// clusterSetup reproduces the capture cluster (captures README): queues,
// node vm with np=2, server attributes; queues are created in the order
// the capture server listed them.
func clusterSetup(queueOrder []string, extra ...*batchreq.Request) []*batchreq.Request {
	set := func(q string, a ...batchreq.Attr) *batchreq.Request {
		return mgrReq(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, q, a...)
	}
	queues := map[string][]*batchreq.Request{
		"batch": {
			mgrReq(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "batch", batchreq.NewAttr("queue_type", "execution")),
			set("batch", batchreq.NewResourceAttr("resources_default", "nodes", "1")),
			set("batch", batchreq.NewResourceAttr("resources_default", "walltime", "01:00:00")),
			set("batch", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")),
		},
		"short": {
			mgrReq(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "short", batchreq.NewAttr("queue_type", "execution")),
			set("short", batchreq.NewResourceAttr("resources_max", "walltime", "00:10:00")),
			set("short", batchreq.NewResourceAttr("resources_default", "walltime", "00:05:00")),
			set("short", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")),
		},
		"route": {
			mgrReq(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "route", batchreq.NewAttr("queue_type", "route")),
			set("route", batchreq.NewAttr("route_destinations", "batch")),
			set("route", batchreq.NewAttr("enabled", "true"), batchreq.NewAttr("started", "true")),
		},
	}
	reqs := []*batchreq.Request{
		mgrReq(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("tcp_timeout", "")),
		setServer("acl_hosts", "vm"),
		setServer("managers", "root@vm"),
		setServer("operators", "root@vm"),
	}
	for _, q := range queueOrder {
		reqs = append(reqs, queues[q]...)
	}
	reqs = append(reqs,
		setServer("default_queue", "batch"),
		setServer("keep_completed", "0"),
		mgrReq(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "vm", batchreq.NewAttr("np", "2")),
	)
	return append(reqs, extra...)
}

// round1 is the first capture round in order (scenarios 1–69): one server
// for the whole sequence, as in the capture run.
func round1() (setup []*batchreq.Request, steps []replayStep) {
	setup = clusterSetup([]string{"short", "route", "batch"},
		setServer("scheduling", "true"), setServer("next_job_number", "1"))
	steps = []replayStep{
		{id: 1}, {id: 2}, {id: 3}, {id: 4}, {id: 6}, {id: 7}, {id: 8}, {id: 9}, {id: 10}, {id: 11},
		{id: 12}, {id: 14}, {id: 15}, {id: 16}, {id: 17},
		{id: 18}, {id: 20}, {id: 21}, {id: 22},
		{id: 27, before: []*batchreq.Request{setServer("scheduling", "false")}},
		{id: 28}, {id: 29}, {id: 30}, {id: 31}, {id: 32}, {id: 33}, {id: 34},
		// Jobs 9 and 10 of the capture run were submitted between 34 and
		// 35 and then run on node vm's MOM.
		{id: 36, pending: pendingJobAttrs}, {id: 37}, {id: 39, pending: pendingCounts}, {id: 40, pending: pendingCounts},
		{id: 41, pending: pendingCounts}, {id: 44, pending: pendingUsage}, {id: 45, pending: pendingUsage},
		{id: 46}, {id: 47}, {id: 48, pending: pendingUsage}, {id: 49, pending: pendingUsage},
		{id: 50}, {id: 51}, {id: 52}, {id: 54}, {id: 55}, {id: 61}, {id: 63}, {id: 69},
	}
	return setup, steps
}

// round2 holds the second-round scenarios that need no running job.
func round2() (setup []*batchreq.Request, steps []replayStep) {
	setup = clusterSetup([]string{"batch", "short", "route"},
		setServer("scheduling", "false"), setServer("query_other_jobs", "true"),
		setServer("tcp_timeout", "6"))
	steps = []replayStep{
		{id: 80, before: []*batchreq.Request{setServer("next_job_number", "9")}},
		{id: 78, setNextJob: true},
		{id: 88, setNextJob: true, pending: "seed 001 overrides TORQUE here: synccount/syncwith are accepted, TORQUE 2.5.13 rejected them (15002)"},
		// routing retries: route_retry_time 1 s instead of the default 30 s,
		// and the capture's pauses shortened accordingly
		{id: 79, setNextJob: true, compress: true, before: []*batchreq.Request{
			mgrReq(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "route", batchreq.NewAttr("route_retry_time", "1"))}},
	}
	return setup, steps
}

func TestServerReplay(t *testing.T) {
	dir := requireCaptures(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: replayed connections are authenticated through AuthenticateUser from a reserved port")
	}
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int]capture.Scenario{}
	for _, sc := range scenarios {
		byID[sc.ID] = sc
	}
	for _, round := range []struct {
		name string
		def  func() ([]*batchreq.Request, []replayStep)
		mom  bool // node vm's MOM reports to the server after the setup
	}{{"round1", round1, true}, {"round2", round2, false}} {
		setup, steps := round.def()
		t.Run(round.name, func(t *testing.T) {
			r := newReplayer(t)
			for _, req := range setup {
				if p := r.admin(req); p.Code != 0 {
					t.Fatalf("setup: %d %s", p.Code, p.Text)
				}
			}
			if round.mom {
				r.momUp(t, momStatusAt(t, dir))
			}
			for _, st := range steps {
				sc, ok := byID[st.id]
				if !ok {
					continue
				}
				for _, req := range st.before {
					if p := r.admin(req); p.Code != 0 {
						t.Fatalf("before %d: %d %s", st.id, p.Code, p.Text)
					}
				}
				results.run(t, "server-replay", strings.TrimSuffix(sc.Pcap, ".pcap"), st.pending, func(t *testing.T) string {
					return r.replay(t, filepath.Join(dir, sc.Pcap), sc, st)
				})
				if st.id == 34 {
					// jobs 9 and 10 of the capture run, started by qrun
					for _, name := range []string{"longjob", "longjob2"} {
						r.run(t, r.submit(t, name))
					}
				}
			}
		})
	}
}

// replayer drives one in-process server.
type replayer struct {
	t    *testing.T
	s    *server.Server
	mom  *replayMom
	root *replayConn
}

type replayConn struct {
	nc net.Conn
	r  *dis.Reader
}

func newReplayer(t *testing.T) *replayer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mom := newReplayMom(t)
	s, err := server.New(server.Config{Home: t.TempDir(), ServerName: captureHost, InitType: server.InitCreate, Listener: ln,
		MomPort: mom.momPort(), RMPort: int(mom.udp.Port()), ResolveHost: mom.resolve})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	r := &replayer{t: t, s: s, mom: mom}
	r.root = r.dialReserved()
	return r
}

// momUp has node vm's MOM report status and waits for the node to be
// free.
func (r *replayer) momUp(t *testing.T, status []string) {
	r.mom.report(t, r.s.Addr().(*net.TCPAddr).Port, status)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: captureHost}))
		if p.Code == 0 && len(p.Status) == 1 {
			for _, a := range p.Status[0].Attrs {
				if a.Name == "state" && a.Value == "free" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s not free after its MOM reported: %+v", captureHost, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *replayer) dialReserved() *replayConn {
	for p := 1023; p > 600; p-- {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}}
		if nc, err := d.Dial("tcp", r.s.Addr().String()); err == nil {
			return &replayConn{nc: nc, r: dis.NewReader(nc)}
		}
	}
	r.t.Fatal("no free reserved port")
	return nil
}

func (c *replayConn) do(b []byte) (*batchreq.Reply, error) {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		return nil, err
	}
	return batchreq.ReadReply(c.r)
}

func (r *replayer) admin(req *batchreq.Request) *batchreq.Reply {
	p, err := r.root.do(req.Append(nil))
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// submit queues a job as alice over the real authentication path and
// returns its id.
func (r *replayer) submit(t *testing.T, name string) string {
	c := r.userConn(t, "alice")
	defer c.nc.Close()
	p, err := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "alice", &batchreq.QueueJob{Attrs: batchreq.AttrList{
		batchreq.NewAttr("Job_Name", name),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME=/home/alice,PBS_O_WORKDIR=/home/alice"),
	}}).Append(nil))
	if err != nil || p.Code != 0 {
		t.Fatalf("submit: %v %+v", err, p)
	}
	id := p.JobID
	for _, req := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "alice", &batchreq.JobFile{Data: []byte("sleep 600\n")}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "alice", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "alice", &batchreq.JobID{ID: id}),
	} {
		if p, err := c.do(req.Append(nil)); err != nil || p.Code != 0 {
			t.Fatalf("submit: %v %+v", err, p)
		}
	}
	return id
}

// run starts a job on node vm's MOM as qrun does and waits until it runs.
func (r *replayer) run(t *testing.T, id string) {
	if p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("run %s: %d %s", id, p.Code, p.Text)
	}
}

// userConn opens a client connection authenticated as user.
func (r *replayer) userConn(t *testing.T, user string) *replayConn {
	nc, err := net.Dial("tcp", r.s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	iffc := r.dialReserved()
	defer iffc.nc.Close()
	port := nc.LocalAddr().(*net.TCPAddr).Port
	p, err := iffc.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port}).Append(nil))
	if err != nil || p.Code != 0 {
		t.Fatalf("authenticate %s: %v %+v", user, err, p)
	}
	return &replayConn{nc: nc, r: dis.NewReader(nc)}
}

var epochRE = regexp.MustCompile(`1[78]\d{8}`)

// replay replays one capture and returns the differences.
func (r *replayer) replay(t *testing.T, path string, sc capture.Scenario, st replayStep) string {
	c, err := capture.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := time.ParseInLocation("2006-01-02T15:04:05", sc.StartTime, time.Local)
	shift := time.Now().Unix() - start.Unix()
	if st.setNextJob {
		if id := firstQueuedID(c); id != "" {
			r.admin(setServer("next_job_number", jobSeq(id)))
		}
	}
	var diffs []string
	var last time.Time
	for _, conn := range c.Conns {
		if st.compress && !last.IsZero() && conn.Start.Sub(last) > time.Second {
			time.Sleep(1500 * time.Millisecond)
		}
		last = conn.Start
		if conn.Server.Port() != batchreq.PBS_BATCH_SERVICE_PORT {
			if st.pending == "" {
				return fmt.Sprintf("connection to port %d cannot be replayed", conn.Server.Port())
			}
			continue
		}
		if conn.Client.Port() < 1024 {
			continue // pbs_iff, MOM or scheduler: replaced by our own authentication
		}
		turns := conn.Turns()
		var rc *replayConn
		for i, turn := range turns {
			if !turn.FromClient {
				continue
			}
			reqs := splitRequests(turn.Data)
			if len(reqs) == 0 {
				continue
			}
			if rc == nil {
				rc = r.userConn(t, reqs[0].User)
				defer rc.nc.Close()
			}
			var want []*batchreq.Reply
			if i+1 < len(turns) && !turns[i+1].FromClient {
				want = splitReplies(turns[i+1].Data)
			}
			data := shiftEpochs(turn.Data, shift)
			if _, err := rc.nc.Write(data); err != nil {
				diffs = append(diffs, fmt.Sprintf("write: %v", err))
				break
			}
			for k, w := range want {
				rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
				got, err := batchreq.ReadReply(rc.r)
				if err != nil {
					diffs = append(diffs, fmt.Sprintf("request %s: no reply: %v", batchreq.RequestName(reqs[min(k, len(reqs)-1)].Type), err))
					break
				}
				if d := compareReplies(w, got); d != "" {
					diffs = append(diffs, fmt.Sprintf("%s reply differs: %s", batchreq.RequestName(reqs[min(k, len(reqs)-1)].Type), d))
				}
			}
		}
	}
	return strings.Join(diffs, "\n")
}

// firstQueuedID returns the job id of the first Queue reply of a capture.
func firstQueuedID(c *capture.Capture) string {
	for _, conn := range c.Conns {
		if conn.Server.Port() != batchreq.PBS_BATCH_SERVICE_PORT {
			continue
		}
		for _, turn := range conn.Turns() {
			if turn.FromClient {
				continue
			}
			for _, p := range splitReplies(turn.Data) {
				if p.Choice == batchreq.BATCH_REPLY_CHOICE_Queue {
					return p.JobID
				}
			}
		}
	}
	return ""
}

func jobSeq(id string) string {
	if i := strings.IndexAny(id, ".["); i >= 0 {
		return id[:i]
	}
	return id
}

// shiftEpochs moves epoch times in a request by shift seconds (the
// capture's "two hours from now" must stay in the future).
func shiftEpochs(b []byte, shift int64) []byte {
	return epochRE.ReplaceAllFunc(b, func(m []byte) []byte {
		n, _ := strconv.ParseInt(string(m), 10, 64)
		return []byte(strconv.FormatInt(n+shift, 10))
	})
}

func splitRequests(b []byte) []*batchreq.Request {
	rd := dis.NewReader(bytes.NewReader(b))
	var out []*batchreq.Request
	for {
		req, err := batchreq.ReadRequest(rd)
		if err != nil {
			return out
		}
		out = append(out, req)
	}
}

func splitReplies(b []byte) []*batchreq.Reply {
	rd := dis.NewReader(bytes.NewReader(b))
	var out []*batchreq.Reply
	for {
		p, err := batchreq.ReadReply(rd)
		if err != nil {
			return out
		}
		out = append(out, p)
	}
}

// normalizeValue replaces values that must differ between runs.
func normalizeValue(name, v string) string {
	if name == "net_counter" {
		return "<RATE>"
	}
	return epochRE.ReplaceAllString(v, "<EPOCH>")
}

// dropHistory removes resources_assigned entries with value 0: the
// capture server had run a job before the capture, which leaves them
// behind; a fresh server has never assigned resources.
func dropHistory(l batchreq.AttrList) batchreq.AttrList {
	var out batchreq.AttrList
	for _, a := range l {
		if a.Name == "resources_assigned" && a.Value == "0" {
			continue
		}
		out = append(out, a)
	}
	return out
}

func compareReplies(want, got *batchreq.Reply) string {
	if want.Code != got.Code || want.AuxCode != got.AuxCode || want.Choice != got.Choice {
		return fmt.Sprintf("code/aux/choice %d/%d/%d, want %d/%d/%d (text %q, want %q)",
			got.Code, got.AuxCode, got.Choice, want.Code, want.AuxCode, want.Choice, got.Text, want.Text)
	}
	if want.Text != got.Text || want.JobID != got.JobID || want.Location != got.Location {
		return fmt.Sprintf("text %q id %q loc %q, want %q %q %q", got.Text, got.JobID, got.Location, want.Text, want.JobID, want.Location)
	}
	if strings.Join(want.JobIDs, ",") != strings.Join(got.JobIDs, ",") {
		return fmt.Sprintf("job ids %v, want %v", got.JobIDs, want.JobIDs)
	}
	if len(want.Status) != len(got.Status) {
		var gn, wn []string
		for _, o := range got.Status {
			gn = append(gn, o.Name)
		}
		for _, o := range want.Status {
			wn = append(wn, o.Name)
		}
		return fmt.Sprintf("%d status objects %v, want %d %v", len(got.Status), gn, len(want.Status), wn)
	}
	for i := range want.Status {
		w, g := want.Status[i], got.Status[i]
		if w.Name != g.Name || w.ObjType != g.ObjType {
			return fmt.Sprintf("object %d is %d %q, want %d %q", i, g.ObjType, g.Name, w.ObjType, w.Name)
		}
		wl, gl := dropHistory(w.Attrs), dropHistory(g.Attrs)
		for k := 0; k < max(len(wl), len(gl)); k++ {
			var wa, ga string
			if k < len(wl) {
				wa = wl[k].FullName() + "=" + normalizeValue(wl[k].Name, wl[k].Value)
			}
			if k < len(gl) {
				ga = gl[k].FullName() + "=" + normalizeValue(gl[k].Name, gl[k].Value)
			}
			if wa != ga {
				return fmt.Sprintf("object %q attribute %d: %q, want %q", w.Name, k, ga, wa)
			}
		}
	}
	return ""
}

// replayMom is a MOM for node vm on loopback: the replayed server finds
// it through server.Config.ResolveHost, so the test does not depend on
// this machine's host name. It speaks IS over RPP (spec 10 §5): HELLO,
// then one STATUS with the items the capture cluster's MOM reported; on
// its batch port it accepts job launches (spec 10 §6.1) and answers
// status polls for the jobs it was given. It runs nothing.
type replayMom struct {
	ep  *rpp.Endpoint
	udp netip.AddrPort // the MOM's RPP address (the server's RMPort)
	ln  net.Listener   // the MOM's batch port (the server's MomPort)

	mu   sync.Mutex
	jobs map[string]bool // jobs launched here
}

func newReplayMom(t *testing.T) *replayMom {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
	t.Cleanup(func() { ep.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	m := &replayMom{ep: ep, udp: netip.MustParseAddrPort(pc.LocalAddr().String()), ln: ln, jobs: map[string]bool{}}
	go m.accept()
	return m
}

// momPort is the MOM's batch port.
func (m *replayMom) momPort() int { return m.ln.Addr().(*net.TCPAddr).Port }

func (m *replayMom) accept() {
	for {
		nc, err := m.ln.Accept()
		if err != nil {
			return
		}
		go m.serve(nc)
	}
}

// serve answers the server's requests on one connection.
func (m *replayMom) serve(nc net.Conn) {
	defer nc.Close()
	r := dis.NewReader(nc)
	for {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		req, err := batchreq.ReadRequest(r)
		if err != nil || req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		var p *batchreq.Reply
		switch b := req.Body.(type) {
		case *batchreq.QueueJob:
			p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, b.JobID)
		case *batchreq.JobID:
			switch req.Type {
			case batchreq.PBS_BATCH_RdytoCommit:
				p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, b.ID)
			case batchreq.PBS_BATCH_Commit:
				m.mu.Lock()
				m.jobs[b.ID] = true
				m.mu.Unlock()
				p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, b.ID)
			}
		case *batchreq.StatusReq:
			m.mu.Lock()
			known := m.jobs[b.ID]
			m.mu.Unlock()
			if known {
				p = &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{{ObjType: batchreq.MGR_OBJ_JOB, Name: b.ID}}}
			} else {
				p = batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "")
			}
		}
		if p == nil {
			p = batchreq.NullReply()
		}
		if _, err := nc.Write(p.Append(nil)); err != nil {
			return
		}
	}
}

// resolve maps node vm to loopback; no other name resolves.
func (m *replayMom) resolve(name string) []netip.Addr {
	if name == captureHost {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	return nil
}

// report says hello to the server at port and sends one IS_STATUS with
// the given items; the stream stays open (the node stays up) until the
// test ends.
func (m *replayMom) report(t *testing.T, port int, status []string) {
	st, err := m.ep.Open(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	if err != nil {
		t.Fatal(err)
	}
	send := func(msg *momproto.ISMessage) {
		msg.Version = momproto.IS_PROTOCOL_VER
		if err := st.Send(msg.Append(nil)); err != nil {
			t.Fatalf("MOM: send %s: %v", momproto.ISCommandName(msg.Command), err)
		}
	}
	send(&momproto.ISMessage{Command: momproto.IS_HELLO})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := st.Recv(ctx)
	if err != nil {
		t.Fatalf("MOM: no reply to IS_HELLO: %v", err)
	}
	if msg, err := momproto.DecodeIS(b); err != nil || msg.Command != momproto.IS_CLUSTER_ADDRS {
		t.Fatalf("MOM: reply to IS_HELLO: %+v %v", msg, err)
	}
	send(&momproto.ISMessage{Command: momproto.IS_STATUS, Status: status})
	go func() { // drain pings until the stream or endpoint closes
		for {
			if _, err := st.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
}

// capturedMomStatus returns the items of the first IS_STATUS the capture
// cluster's MOM sent in capture file, as the MOM words them.
func capturedMomStatus(t *testing.T, file string) []string {
	c, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var asm rpp.Assembler
	for _, d := range c.Datagrams {
		p, err := rpp.Parse(d.Payload)
		if err != nil {
			continue
		}
		res := asm.Add(d.Src, d.Dst, p)
		if res.Message == nil || d.Dst.Port() != batchreq.PBS_BATCH_SERVICE_PORT {
			continue
		}
		if msg, err := momproto.DecodeIS(res.Message.Data); err == nil && msg.Command == momproto.IS_STATUS {
			return msg.Status
		}
	}
	t.Fatalf("%s: no IS_STATUS from the MOM", file)
	return nil
}

// capturedNodeStatus returns the status attribute of node vm in the first
// StatusNode reply of capture file.
func capturedNodeStatus(t *testing.T, file string) string {
	c, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, conn := range c.Conns {
		for _, turn := range conn.Turns() {
			if turn.FromClient {
				continue
			}
			for _, p := range splitReplies(turn.Data) {
				for _, o := range p.Status {
					if o.Name != captureHost {
						continue
					}
					for _, a := range o.Attrs {
						if a.Name == "status" {
							return a.Value
						}
					}
				}
			}
		}
	}
	t.Fatalf("%s: no status attribute of node %s", file, captureHost)
	return ""
}

// momStatusAt returns the MOM's IS_STATUS items (names, order and wording
// of capture 75) carrying the values the server showed in the node's
// status attribute of capture 15: the machine's load, memory and idle
// time moved between the two captures. Items the status attribute shows
// blank keep the MOM's wording ("jobs= ").
func momStatusAt(t *testing.T, dir string) []string {
	items := capturedMomStatus(t, filepath.Join(dir, "75-idle-65s.pcap"))
	shown := map[string]string{}
	for _, kv := range strings.Split(capturedNodeStatus(t, filepath.Join(dir, "15-qmgr-list-node-vm.pcap")), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			shown[k] = v
		}
	}
	out := make([]string, len(items))
	for i, kv := range items {
		out[i] = kv
		if k, _, ok := strings.Cut(kv, "="); ok {
			if v := shown[k]; v != "" {
				out[i] = k + "=" + v
			}
		}
	}
	return out
}
